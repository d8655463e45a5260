/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/test_settings.c — the settings table and its two front ends: every row is
 * consistent and its defaults pass its own bounds and the engine's check; for every
 * setting with both a variable and a flag, the environment and the command line accept
 * and reject the same values and make the same link; the tools' own options (long and
 * short), operands and the variables they read; the rendered docs cover the rows. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <ctype.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "sd_settings.h"

#define ROW(id) (&sd_settings_table[id])

static void clear_env(void)
{
    for (int id = 0; id < SD_SET_COUNT; id++)
        if (ROW(id)->env)
            unsetenv(ROW(id)->env);
    setenv("SMBDIRECT_CONFIG", "", 1); /* no configuration file, whatever /etc holds */
}

static int setup(void **state)
{
    (void)state;
    clear_env();
    sd_log_set_level(SD_LOG_OFF); /* the provider tests' expected errors stay quiet */
    return 0;
}

/* ---- a tool's own options (one with a value, one without; letters: -t and -s too) ---- */

enum { OWN_TARGET = 't', OWN_STATS = 's' };

static const struct option own_options[] = {
    { "target", required_argument, NULL, OWN_TARGET },
    { "log-stats", no_argument, NULL, OWN_STATS },
};

struct own_seen {
    const char *target;
    int stats;
};

static int own_cb(void *ctx, int val, const char *arg, char *err, size_t errlen)
{
    struct own_seen *seen = ctx;

    if (val == OWN_TARGET && strcmp(arg, "refuse") == 0) {
        snprintf(err, errlen, "--target refused");
        return -1;
    }
    if (val == OWN_TARGET)
        seen->target = arg;
    else
        seen->stats++;
    return 0;
}

/* prog's settings from the defaults, the file (none here) and the environment: 0, or
 * -1 with the first error in err. */
static int load_env(struct sd_settings *s, enum sd_program prog, char *err, size_t errlen)
{
    struct sd_settings_report r;
    int rc = sd_settings_load(s, prog, NULL, NULL, &r);

    snprintf(err, errlen, "%s", r.error);
    return rc;
}

/* prog's settings with the NULL-terminated words after the program name as its command
 * line: the index of the first operand, or -1 with the command line's error or else
 * the first of the other front ends' in err. */
static int parse_words(struct sd_settings *s, enum sd_program prog, struct own_seen *seen,
                       char *err, size_t errlen, const char *const *words)
{
    struct sd_settings_flags flags;
    struct sd_settings_report r;
    char *argv[16] = { "tool" };
    int argc = 1, first;

    while (*words)
        argv[argc++] = (char *)*words++;
    argv[argc] = NULL;
    first = sd_settings_parse_argv(prog, argc, argv, own_options, 2, own_cb, seen, &flags, err,
                                   errlen);
    if (first < 0)
        return -1;
    if (sd_settings_load(s, prog, NULL, &flags, &r) == 0)
        return first;
    snprintf(err, errlen, "%s", r.error);
    return -1;
}

#define PARSE(s, prog, seen, err, ...) \
    parse_words(s, prog, seen, err, sizeof(err), (const char *const[]){ __VA_ARGS__, NULL })

/* ---- the table ---- */

static void test_rows_are_consistent(void **state)
{
    struct sd_settings s;
    char why[256];

    (void)state;
    for (int id = 0; id < SD_SET_COUNT; id++) {
        const struct sd_setting *r = ROW(id);

        /* Every program taking a setting reads its variable and its key in the file. */
        assert_non_null(r->env);
        assert_true(r->env_progs != 0);
        assert_true(!r->flag == !r->flag_progs);
        assert_int_equal(r->flag_progs & ~r->env_progs, 0);
        assert_int_equal(r->env_progs & ~((1u << SD_PROG_COUNT) - 1), 0);
        assert_int_equal(r->flag_progs & SD_PROG_BIT(SD_PROG_SHIM), 0); /* no argv */
        /* A flag is taken by every tool reading the variable (README.md's table names
         * the flag without its programs). */
        if (r->flag)
            assert_int_equal(r->flag_progs, r->env_progs & ~SD_PROG_BIT(SD_PROG_SHIM));
        assert_true(strncmp(r->env, "SMBDIRECT_", 10) == 0);
        assert_true(r->help && *r->help);
        assert_true(r->help[strlen(r->help) - 1] != '.'); /* the renderers end it */
        if (r->brief) { /* shorter than help, or left out */
            assert_true(*r->brief && r->brief[strlen(r->brief) - 1] != '.');
            assert_true(strlen(r->brief) < strlen(r->help));
        }
        if (r->kind == SD_KIND_NUMBER)
            assert_true(r->min <= r->max && r->max <= UINT32_MAX);
        if (r->kind == SD_KIND_CHOICE)
            assert_true(r->choices && r->choices[0] && r->choices[1]);
        for (int other = 0; other < id; other++) {
            if (r->env && ROW(other)->env)
                assert_string_not_equal(r->env, ROW(other)->env);
            if (r->flag && ROW(other)->flag)
                assert_string_not_equal(r->flag, ROW(other)->flag);
        }
        /* Each program's default passes the row's own bounds, spelled out (an empty
         * text would mean "the default" and prove nothing). */
        for (int p = 0; p < SD_PROG_COUNT; p++) {
            const char *def = r->def[p];

            assert_non_null(def);
            if (!*def) { /* only a map, or an address the program requires, may be empty */
                assert_true(r->kind == SD_KIND_PORTMAP || r->kind == SD_KIND_ADDRMAP ||
                            r->kind == SD_KIND_HOSTPORT);
                continue;
            }
            if (sd_settings_set(&s, (enum sd_program)p, (enum sd_setting_id)id, def, why,
                                sizeof(why)) != 0)
                fail_msg("%s: default '%s' rejected: %s", r->env, def, why);
        }
    }
}

/* The documented defaults, field by field. */
/* The probe prints its own failures; the relay's connection lines are notices. */
static enum sd_log_level default_log_level(enum sd_program p)
{
    return p == SD_PROG_PROBE ? SD_LOG_ERROR : p == SD_PROG_RELAY ? SD_LOG_NOTICE : SD_LOG_WARN;
}

static void test_defaults(void **state)
{
    struct sd_settings s;

    (void)state;
    for (int p = 0; p < SD_PROG_COUNT; p++) {
        sd_settings_defaults(&s, (enum sd_program)p);
        assert_int_equal(s.transport, SD_TRANSPORT_AUTO);
        assert_int_equal(s.ports.n, 1);
        assert_int_equal(s.ports.port[0], 445);
        assert_int_equal(s.portmap.n, 0);
        assert_int_equal(s.addrmap.n, 0);
        assert_int_equal(s.fallback, SD_FALLBACK_TCP);
        assert_int_equal(s.log_level, default_log_level((enum sd_program)p));
        assert_int_equal(s.connect_timeout_ms, 10000);
        assert_int_equal(s.credits, 255);
        assert_int_equal(s.max_send_size, 8136); /* MS-SMBD Appendix B note <5> */
        assert_int_equal(s.max_receive_size, 8192);
        assert_int_equal(s.max_fragmented_size, 8u * 1024 * 1024 + 64 * 1024);
        assert_int_equal(s.max_read_write_size, 8u * 1024 * 1024);
        assert_int_equal(s.keepalive_s, 120);
        assert_int_equal(s.ird, 16);
        assert_int_equal(s.ord, 16);
        assert_int_equal(s.sockbuf, 4u * 1024 * 1024);
        assert_int_equal(s.soft_crc, 0);
        assert_int_equal(s.soft_handshake_ms, 5000);
        /* The relay shares its machine with smbd, whose create or write of a file runs
         * longer than this: a longer poll takes that CPU from smbd (mput of 1000 small
         * files on 2 CPUs, median 1.99 s at 500 against 1.68 s at 100: BENCHMARKS.md).
         * The shim sleeps: polling 1000 us cost its client 1.6-1.9x the CPU per small
         * request of sleeping for no p50 gain beyond the noise (BENCHMARKS.md). */
        assert_int_equal(s.busy_poll_us, p == SD_PROG_SHIM    ? 0
                                         : p == SD_PROG_RELAY ? 100
                                                              : 0);
    }
}

static void assert_link_usable(const struct smbd_link_opts *o, const char *what)
{
    const char *bad = smbd_config_check(&o->cfg);

    if (bad)
        fail_msg("%s: the engine refuses %s", what, bad);
    assert_true(o->ird > 0 && o->ord > 0 && o->timeout_ms > 0);
    assert_true(o->cfg.negotiate_timeout_ms <= (uint32_t)o->timeout_ms);
}

static void test_defaults_pass_engine_check(void **state)
{
    struct sd_settings s;
    struct smbd_link_opts o;

    (void)state;
    for (int p = 0; p < SD_PROG_COUNT; p++) {
        sd_settings_defaults(&s, (enum sd_program)p);
        sd_settings_link_opts(&s, SMBD_ROLE_ACTIVE, &o);
        assert_link_usable(&o, "defaults, active");
        assert_int_equal(o.cfg.max_send_size, s.max_send_size);
        assert_int_equal(o.cfg.keepalive_interval_ms, 120000);
        sd_settings_link_opts(&s, SMBD_ROLE_PASSIVE, &o);
        assert_link_usable(&o, "defaults, passive");
        assert_int_equal(o.cfg.negotiate_timeout_ms, 5000); /* MS-SMBD 3.1.7.2 */
    }
}

/* Every combination of the numeric rows at their bounds makes a link the engine
 * takes: the per-row bounds leave no value for smbd_config_check to refuse. */
static void test_bounds_pass_engine_check(void **state)
{
    static const enum sd_setting_id ids[] = {
        SD_SET_CONNECT_TIMEOUT, SD_SET_CREDITS, SD_SET_MAX_SEND_SIZE, SD_SET_MAX_RECEIVE_SIZE,
        SD_SET_MAX_FRAGMENTED_SIZE, SD_SET_MAX_READ_WRITE_SIZE, SD_SET_KEEPALIVE, SD_SET_IRD,
        SD_SET_ORD,
    };
    const size_t n = sizeof(ids) / sizeof(ids[0]);
    struct sd_settings s;
    struct smbd_link_opts o;
    char text[32], why[256];

    (void)state;
    for (unsigned mask = 0; mask < (1u << n); mask++) {
        sd_settings_defaults(&s, SD_PROG_SHIM);
        for (size_t i = 0; i < n; i++) {
            const struct sd_setting *r = ROW(ids[i]);

            snprintf(text, sizeof(text), "%llu",
                     (unsigned long long)(mask & (1u << i) ? r->max : r->min));
            assert_int_equal(sd_settings_set(&s, SD_PROG_SHIM, ids[i], text, why, sizeof(why)),
                             0);
        }
        sd_settings_link_opts(&s, mask & 1 ? SMBD_ROLE_PASSIVE : SMBD_ROLE_ACTIVE, &o);
        assert_link_usable(&o, "bounds");
    }
}

static void test_words(void **state)
{
    char buf[128];

    (void)state;
    assert_string_equal(sd_settings_words(ROW(SD_SET_TRANSPORT), "", "", ", ", " or ", buf,
                                          sizeof(buf)),
                        "auto, rdma, soft or tcp");
    assert_string_equal(sd_settings_words(ROW(SD_SET_LOG), "<", ">", "|", "|", buf,
                                          sizeof(buf)),
                        "<debug>|<info>|<notice>|<warn>|<error>");
}

/* ---- the environment and the command line agree ---- */

/* Fields that a setting can change, compared one by one. */
static void assert_same_settings(const struct sd_settings *a, const struct sd_settings *b,
                                 const char *what)
{
    struct smbd_link_opts la, lb;

    if (a->transport != b->transport || a->credits != b->credits ||
        a->max_send_size != b->max_send_size || a->max_receive_size != b->max_receive_size ||
        a->max_fragmented_size != b->max_fragmented_size ||
        a->max_read_write_size != b->max_read_write_size || a->keepalive_s != b->keepalive_s ||
        a->connect_timeout_ms != b->connect_timeout_ms || a->ird != b->ird || a->ord != b->ord ||
        a->soft_crc != b->soft_crc || a->soft_handshake_ms != b->soft_handshake_ms)
        fail_msg("%s: the front ends set different values", what);
    for (int role = SMBD_ROLE_ACTIVE; role <= SMBD_ROLE_PASSIVE; role++) {
        sd_settings_link_opts(a, (enum smbd_role)role, &la);
        sd_settings_link_opts(b, (enum smbd_role)role, &lb);
        if (memcmp(&la.cfg, &lb.cfg, sizeof(la.cfg)) != 0 || la.ird != lb.ird ||
            la.ord != lb.ord || la.timeout_ms != lb.timeout_ms || la.want_crc != lb.want_crc)
            fail_msg("%s: the front ends make different links", what);
    }
}

/* Feeds value to row id through the environment (the shim) and through --flag VALUE
 * and --flag=VALUE (the relay and the probe); both accept or both reject. */
static void check_both_ways(enum sd_setting_id id, const char *value)
{
    const struct sd_setting *r = ROW(id);
    struct sd_settings env_s, arg_s;
    struct own_seen seen = { 0 };
    char env_err[512] = "", arg_err[512] = "", flag[64], joined[128], what[160], want[160];
    int env_rc, arg_rc;

    snprintf(what, sizeof(what), "%s / --%s '%s'", r->env, r->flag, value);
    clear_env();
    setenv(r->env, value, 1);
    env_rc = load_env(&env_s, (enum sd_program)__builtin_ctz(r->env_progs), env_err,
                      sizeof(env_err));
    clear_env();
    snprintf(flag, sizeof(flag), "--%s", r->flag);
    snprintf(joined, sizeof(joined), "--%s=%s", r->flag, value);
    for (int p = SD_PROG_RELAY; p <= SD_PROG_PROBE; p++) {
        if (!(r->flag_progs & SD_PROG_BIT(p)))
            continue; /* a flag only some tools take (the relay's channel memory) */
        for (int form = 0; form < 2; form++) {
            arg_err[0] = '\0';
            arg_rc = form ? PARSE(&arg_s, (enum sd_program)p, &seen, arg_err, joined)
                          : PARSE(&arg_s, (enum sd_program)p, &seen, arg_err, flag, value);
            if (id == SD_SET_TRANSPORT && strcmp(value, "tcp") == 0) {
                /* The one intended difference: the tools refuse tcp after parsing. */
                assert_int_equal(env_rc, 0);
                assert_int_equal(arg_rc, -1);
                assert_non_null(strstr(arg_err, "'tcp'"));
                continue;
            }
            if ((env_rc == 0) != (arg_rc > 0))
                fail_msg("%s: environment %s ('%s'), command line %s ('%s')", what,
                         env_rc ? "rejects" : "accepts", env_err, arg_rc > 0 ? "accepts"
                                                                            : "rejects",
                         arg_err);
            if (env_rc == 0) {
                assert_int_equal(arg_rc, form ? 2 : 3); /* no operands */
                assert_same_settings(&env_s, &arg_s, what);
                continue;
            }
            /* Both errors name their source and repeat the value. */
            snprintf(want, sizeof(want), "%s='%s' is invalid: ", r->env, value);
            if (!strstr(env_err, want))
                fail_msg("environment error '%s' lacks '%s'", env_err, want);
            snprintf(want, sizeof(want), "--%s: '%s' is invalid: ", r->flag, value);
            if (!strstr(arg_err, want))
                fail_msg("command-line error '%s' lacks '%s'", arg_err, want);
            /* ... and say the same about what is accepted. */
            assert_string_equal(strstr(env_err, "is invalid: "), strstr(arg_err, "is invalid: "));
        }
    }
}

static void test_environment_and_flags_agree(void **state)
{
    static const char *const common[] = {
        "", "0", "1", "2", "-1", "+1", " 1", "1 ", " ", "\t", "1x", "0x10", "1e3", "abc", "1,2",
        "4294967296", "18446744073709551616", "99999999999999999999999", "00016",
    };
    char v[64];
    int rows = 0;

    (void)state;
    for (int id = 0; id < SD_SET_COUNT; id++) {
        const struct sd_setting *r = ROW(id);

        if (!r->env || !r->flag)
            continue;
        rows++;
        for (size_t i = 0; i < sizeof(common) / sizeof(common[0]); i++)
            check_both_ways((enum sd_setting_id)id, common[i]);
        check_both_ways((enum sd_setting_id)id, r->def[SD_PROG_SHIM]);
        if (r->kind == SD_KIND_NUMBER) {
            const uint64_t edges[] = { r->min, r->min + 1, r->max - 1, r->max, r->max + 1,
                                       r->min ? r->min - 1 : r->max * 2 };

            for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); i++) {
                snprintf(v, sizeof(v), "%llu", (unsigned long long)edges[i]);
                check_both_ways((enum sd_setting_id)id, v);
            }
        } else if (!r->choices) {
            static const char *const texts[] = {
                "127.0.0.1:5445", "[::1]:445", "127.0.0.1", "127.0.0.1:0", "[::1]",
                "10.0.0.0/8,::1", "10.0.0.1/8", "/run/smbdirect/x.sock", "run/x.sock", "none",
            };

            assert_true(r->kind == SD_KIND_HOSTPORT || r->kind == SD_KIND_PREFIXES ||
                        r->kind == SD_KIND_PATH);
            for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
                check_both_ways((enum sd_setting_id)id, texts[i]);
        } else {
            for (size_t i = 0; r->choices[i]; i++) {
                check_both_ways((enum sd_setting_id)id, r->choices[i]);
                snprintf(v, sizeof(v), "%s ", r->choices[i]);
                check_both_ways((enum sd_setting_id)id, v);
                snprintf(v, sizeof(v), "%sx", r->choices[i]);
                check_both_ways((enum sd_setting_id)id, v);
                for (size_t j = 0; j < strlen(v); j++)
                    v[j] = (char)toupper((unsigned char)v[j]);
                v[strlen(v) - 1] = '\0';
                if (strcmp(v, r->choices[i]) != 0) /* "AUTO", not "0" */
                    check_both_ways((enum sd_setting_id)id, v);
            }
        }
    }
    assert_int_equal(rows, 22); /* transport, timeout, credits, 4 sizes, keepalive, ird, ord,
                                   channel memory per connection and in all; the relay's
                                   listen, backend, allow, serve addresses, 2 limits, drain
                                   time, status socket, loops; busy poll */
}

/* ---- the environment front end ---- */

static void test_env_reads_each_row(void **state)
{
    struct sd_settings s;
    char err[512];

    (void)state;
    setenv("SMBDIRECT_TRANSPORT", "soft", 1);
    setenv("SMBDIRECT_PORTS", "445, 8445", 1);
    setenv("SMBDIRECT_PORTMAP", "445:5445,8445:9445", 1);
    setenv("SMBDIRECT_FALLBACK", "none", 1);
    setenv("SMBDIRECT_LOG", "debug", 1);
    setenv("SMBDIRECT_SOCKBUF", "65536", 1);
    setenv("SMBDIRECT_SOFT_CRC", "1", 1);
    setenv("SMBDIRECT_SOFT_HANDSHAKE_MS", "150", 1);
    setenv("SMBDIRECT_KEEPALIVE", "0", 1);
    assert_int_equal(load_env(&s, SD_PROG_SHIM, err, sizeof(err)), 0);
    assert_int_equal(s.transport, SD_TRANSPORT_SOFT);
    assert_int_equal(s.ports.n, 2);
    assert_int_equal(s.ports.port[1], 8445);
    assert_int_equal(pm_rdma_port(&s.portmap, 8445, 1), 9445);
    assert_int_equal(s.fallback, SD_FALLBACK_NONE);
    assert_int_equal(s.log_level, SD_LOG_DEBUG);
    assert_int_equal(s.sockbuf, 65536);
    assert_int_equal(s.soft_crc, 1);
    assert_int_equal(s.soft_handshake_ms, 150);
    assert_int_equal(s.keepalive_s, 0);
    {
        struct smbd_link_opts o;

        struct sd_listen_params lp;

        sd_settings_link_opts(&s, SMBD_ROLE_ACTIVE, &o);
        assert_int_equal(o.cfg.keepalive_interval_ms, 0); /* 0: no keepalive */
        assert_int_equal(o.want_crc, 1);
        assert_null(smbd_config_check(&o.cfg));
        sd_settings_listen_params(&s, 7, &lp);
        assert_int_equal(lp.backlog, 7);
        assert_int_equal(lp.handshake_ms, 150);
    }
}

/* Every variable is read; the first bad one (table order) is reported and keeps its
 * default, later bad ones too, and the good ones apply. */
static void test_env_reports_the_first_error(void **state)
{
    struct sd_settings s;
    char err[512];

    (void)state;
    setenv("SMBDIRECT_TRANSPORT", "soft", 1);
    setenv("SMBDIRECT_CREDITS", "2", 1);
    setenv("SMBDIRECT_KEEPALIVE", "never", 1);
    setenv("SMBDIRECT_ORD", "8", 1);
    assert_int_equal(load_env(&s, SD_PROG_SHIM, err, sizeof(err)), -1);
    assert_string_equal(err, "SMBDIRECT_CREDITS='2' is invalid: use a whole number from 3 to 255");
    assert_int_equal(s.transport, SD_TRANSPORT_SOFT);
    assert_int_equal(s.credits, 255);
    assert_int_equal(s.keepalive_s, 120);
    assert_int_equal(s.ord, 8);
}

static void expect_env_error(enum sd_program prog, const char *var, const char *value,
                             const char *want)
{
    struct sd_settings s;
    char err[512], head[256];

    clear_env();
    setenv(var, value, 1);
    assert_int_equal(load_env(&s, prog, err, sizeof(err)), -1);
    snprintf(head, sizeof(head), "%s='%s' is invalid: ", var, value);
    if (strncmp(err, head, strlen(head)) != 0 || !strstr(err, want))
        fail_msg("error '%s' lacks '%s' or '%s'", err, head, want);
}

static void test_env_errors(void **state)
{
    (void)state;
    expect_env_error(SD_PROG_SHIM, "SMBDIRECT_PORTS", "445,smb", "'smb' is not a port number");
    expect_env_error(SD_PROG_SHIM, "SMBDIRECT_PORTS", "445,445", "445 is listed twice");
    expect_env_error(SD_PROG_SHIM, "SMBDIRECT_PORTMAP", "445", "'445' is not tcpport:rdmaport");
    /* The address map: the shim and the probe dial, and both check it. */
    for (size_t i = 0; i < 2; i++) {
        enum sd_program p = i == 0 ? SD_PROG_SHIM : SD_PROG_PROBE;

        expect_env_error(p, "SMBDIRECT_ADDRMAP", "10.0.0.5=storage1",
                         "'storage1' is not a numeric IPv4 or IPv6 address");
        expect_env_error(p, "SMBDIRECT_ADDRMAP",
                         "10.0.0.5=192.168.100.5,10.0.0.5=192.168.100.6",
                         "10.0.0.5 is mapped twice");
    }
    expect_env_error(SD_PROG_SHIM, "SMBDIRECT_FALLBACK", "sometimes", "use tcp or none");
    expect_env_error(SD_PROG_SHIM, "SMBDIRECT_LOG", "loud",
                     "use debug, info, notice, warn or error");
    expect_env_error(SD_PROG_SHIM, "SMBDIRECT_SOCKBUF", "4M",
                     "use a whole number of bytes from 65536 to 268435456");
    /* The soft-iWARP variables: every program checks them when it starts. */
    for (int p = 0; p < SD_PROG_COUNT; p++) {
        expect_env_error((enum sd_program)p, "SMBDIRECT_SOFT_CRC", "yes", "use 0 or 1");
        expect_env_error((enum sd_program)p, "SMBDIRECT_SOFT_HANDSHAKE_MS", "soon",
                         "use a whole number of milliseconds from 1 to 600000");
        expect_env_error((enum sd_program)p, "SMBDIRECT_SOFT_HANDSHAKE_MS", "0", "from 1");
        expect_env_error((enum sd_program)p, "SMBDIRECT_LOG", "WARN", "use debug");
    }
}

/* ---- the command-line front end ---- */

/* Every program reads the variable of every setting it takes, flag or not, and no
 * other: a flag overrides the variable, which overrides the default. */
static void test_tools_read_their_variables(void **state)
{
    struct sd_settings s;
    struct own_seen seen = { 0 };
    char err[512];

    (void)state;
    for (int p = SD_PROG_RELAY; p <= SD_PROG_PROBE; p++) {
        clear_env();
        assert_int_equal(PARSE(&s, (enum sd_program)p, &seen, err, "host"), 1);
        assert_int_equal(s.log_level, default_log_level((enum sd_program)p));
        setenv("SMBDIRECT_LOG", "debug", 1);
        setenv("SMBDIRECT_SOFT_CRC", "1", 1);
        setenv("SMBDIRECT_SOFT_HANDSHAKE_MS", "150", 1);
        setenv("SMBDIRECT_CREDITS", "10", 1);     /* under --credits */
        setenv("SMBDIRECT_KEEPALIVE", "30", 1);   /* no --keepalive given: it counts */
        setenv("SMBDIRECT_TRANSPORT", "soft", 1);
        setenv("SMBDIRECT_PORTS", "nonsense", 1); /* the tools have no port list */
        setenv("SMBDIRECT_SOCKBUF", "nonsense", 1); /* nor a socketpair */
        setenv("SMBDIRECT_ADDRMAP", "10.0.0.5=192.168.100.5", 1);
        assert_int_equal(PARSE(&s, (enum sd_program)p, &seen, err, "--credits", "20"), 3);
        assert_int_equal(s.addrmap.n, p == SD_PROG_PROBE ? 1 : 0);
        if (p == SD_PROG_RELAY) { /* the relay dials no server by its address */
            setenv("SMBDIRECT_ADDRMAP", "nonsense", 1);
            assert_int_equal(PARSE(&s, (enum sd_program)p, &seen, err, "--credits", "20"), 3);
        }
        assert_int_equal(s.log_level, SD_LOG_DEBUG);
        assert_int_equal(s.soft_crc, 1);
        assert_int_equal(s.soft_handshake_ms, 150);
        assert_int_equal(s.credits, 20);
        assert_int_equal(s.keepalive_s, 30);
        assert_int_equal(s.transport, SD_TRANSPORT_SOFT);
        assert_int_equal(PARSE(&s, (enum sd_program)p, &seen, err, "--transport", "rdma"), 3);
        assert_int_equal(s.transport, SD_TRANSPORT_RDMA);
        /* tcp is the shim's: from the environment too, the tools refuse it. */
        setenv("SMBDIRECT_TRANSPORT", "tcp", 1);
        assert_int_equal(PARSE(&s, (enum sd_program)p, &seen, err, "host"), -1);
        assert_string_equal(err, "SMBDIRECT_TRANSPORT='tcp' is invalid: the relay and the probe "
                                 "speak SMB Direct only (tcp is for the shim)");
        unsetenv("SMBDIRECT_TRANSPORT");
        /* A bad variable is reported after the flags were read. */
        setenv("SMBDIRECT_SOFT_CRC", "2", 1);
        assert_int_equal(PARSE(&s, (enum sd_program)p, &seen, err, "--credits", "20"), -1);
        assert_string_equal(err, "SMBDIRECT_SOFT_CRC='2' is invalid: use 0 or 1");
    }
}

static void test_own_options_and_operands(void **state)
{
    struct sd_settings s;
    struct own_seen seen = { 0 };
    char err[512];
    char *argv[] = { "tool", "--credits", "10", "HOST", "--target", "a:1", "--log-stats",
                     "--credits=20", "--ird", "4", "--log-stats", NULL };
    struct sd_settings_flags flags;
    struct sd_settings_report r;
    int first;

    (void)state;
    first = sd_settings_parse_argv(SD_PROG_RELAY, 11, argv, own_options, 2, own_cb, &seen, &flags,
                                   err, sizeof(err));
    assert_int_equal(sd_settings_load(&s, SD_PROG_RELAY, NULL, &flags, &r), 0);
    assert_int_equal(first, 10); /* operands are moved behind the options */
    assert_string_equal(argv[first], "HOST");
    assert_string_equal(seen.target, "a:1");
    assert_int_equal(seen.stats, 2);
    assert_int_equal(s.credits, 20); /* the last of a repeated flag wins */
    assert_int_equal(s.ird, 4);
    assert_int_equal(s.ord, 16);
    /* Abbreviations getopt_long resolves uniquely are accepted. */
    assert_int_equal(PARSE(&s, SD_PROG_PROBE, &seen, err, "--keep", "30"), 3);
    assert_int_equal(s.keepalive_s, 30);
}

static void test_argv_errors(void **state)
{
    struct sd_settings s;
    struct own_seen seen = { 0 };
    char err[512];

    (void)state;
    assert_int_equal(PARSE(&s, SD_PROG_RELAY, &seen, err, "--nope"), -1);
    assert_string_equal(err, "unknown option '--nope'");
    assert_int_equal(PARSE(&s, SD_PROG_RELAY, &seen, err, "--credits"), -1);
    assert_string_equal(err, "option '--credits' needs a value");
    assert_int_equal(PARSE(&s, SD_PROG_RELAY, &seen, err, "--target", "refuse"), -1);
    assert_string_equal(err, "--target refused");
    assert_int_equal(PARSE(&s, SD_PROG_PROBE, &seen, err, "--credits", "999"), -1);
    assert_string_equal(err, "--credits: '999' is invalid: use a whole number from 3 to 255");
    assert_int_equal(PARSE(&s, SD_PROG_PROBE, &seen, err, "--transport", "verbs"), -1);
    assert_string_equal(err, "--transport: 'verbs' is invalid: use auto, rdma, soft or tcp");
    assert_int_equal(PARSE(&s, SD_PROG_RELAY, &seen, err, "--transport", "tcp"), -1);
    assert_non_null(strstr(err, "--transport: 'tcp' is invalid: "));
    /* The shim's own settings are no flags of the tools. */
    assert_int_equal(PARSE(&s, SD_PROG_RELAY, &seen, err, "--sockbuf", "65536"), -1);
    assert_string_equal(err, "unknown option '--sockbuf'");
    assert_int_equal(PARSE(&s, SD_PROG_RELAY, &seen, err, "--transport", "soft"), 3);
    assert_int_equal(s.transport, SD_TRANSPORT_SOFT);
}

/* An own option whose val is a letter is also -LETTER, alone or in a cluster; an unknown
 * short option is named alone, wherever it stands. */
static void test_argv_short_options(void **state)
{
    struct sd_settings s;
    struct own_seen seen = { 0 };
    char err[512];

    (void)state;
    assert_int_equal(PARSE(&s, SD_PROG_RELAY, &seen, err, "-s", "-t", "a:1", "HOST"), 4);
    assert_string_equal(seen.target, "a:1");
    assert_int_equal(seen.stats, 1);
    assert_int_equal(PARSE(&s, SD_PROG_RELAY, &seen, err, "-stb:2", "--log-stats"), 3);
    assert_string_equal(seen.target, "b:2");
    assert_int_equal(seen.stats, 3);
    assert_int_equal(PARSE(&s, SD_PROG_RELAY, &seen, err, "-x"), -1);
    assert_string_equal(err, "unknown option '-x'");
    assert_int_equal(PARSE(&s, SD_PROG_RELAY, &seen, err, "--log-stats", "-sx"), -1);
    assert_string_equal(err, "unknown option '-x'");
    assert_int_equal(PARSE(&s, SD_PROG_RELAY, &seen, err, "-xs"), -1);
    assert_string_equal(err, "unknown option '-x'");
    assert_int_equal(PARSE(&s, SD_PROG_RELAY, &seen, err, "--log-stats=1"), -1);
    assert_string_equal(err, "unknown option '--log-stats=1'");
    assert_int_equal(PARSE(&s, SD_PROG_RELAY, &seen, err, "-t"), -1);
    assert_string_equal(err, "option '-t' needs a value");
    /* the settings' flags have no short form */
    assert_int_equal(PARSE(&s, SD_PROG_RELAY, &seen, err, "-c", "20"), -1);
    assert_string_equal(err, "unknown option '-c'");
}

/* ---- transports ---- */

static void test_provider_choice(void **state)
{
    struct sockaddr_in lo = { .sin_family = AF_INET, .sin_port = htons(5445) };
    const struct sd_provider_ops *p = NULL;
    int iwarp = -1, device = sd_verbs_device_present();

    (void)state;
    lo.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_ptr_equal(sd_settings_provider(SD_TRANSPORT_RDMA), &sd_verbs_provider);
    assert_ptr_equal(sd_settings_provider(SD_TRANSPORT_SOFT), &sd_soft_provider);
    assert_null(sd_settings_provider(SD_TRANSPORT_TCP));
    assert_ptr_equal(sd_settings_provider(SD_TRANSPORT_AUTO),
                     device ? &sd_verbs_provider : &sd_soft_provider);
    assert_int_equal(sd_settings_reach(SD_TRANSPORT_SOFT, &sd_soft_provider,
                                       (struct sockaddr *)&lo, sizeof(lo), &p, &iwarp), 0);
    assert_ptr_equal(p, &sd_soft_provider);
    assert_int_equal(iwarp, 1);
    if (device)
        return; /* the rest needs a verbs provider that reaches nothing */
    /* auto falls back to soft-iWARP where verbs reaches nothing; rdma does not. */
    p = NULL;
    assert_int_equal(sd_settings_reach(SD_TRANSPORT_AUTO, &sd_verbs_provider,
                                       (struct sockaddr *)&lo, sizeof(lo), &p, &iwarp), 0);
    assert_ptr_equal(p, &sd_soft_provider);
    p = NULL;
    assert_true(sd_settings_reach(SD_TRANSPORT_RDMA, &sd_verbs_provider, (struct sockaddr *)&lo,
                                  sizeof(lo), &p, &iwarp) < 0);
    assert_null(p);
}

/* ---- rendering ---- */

static size_t count(const char *text, const char *what)
{
    size_t n = 0;

    for (const char *p = text; (p = strstr(p, what)); p++)
        n++;
    return n;
}

static void test_rendered_blocks_cover_the_rows(void **state)
{
    char *text = NULL, want[128];
    size_t len = 0, shim_vars = 0;
    FILE *f;

    (void)state;
    for (int id = 0; id < SD_SET_COUNT; id++)
        shim_vars += !!(ROW(id)->env_progs & SD_PROG_BIT(SD_PROG_SHIM));
    /* The relay's --help: each of its flags and variables once, not the shim's own; the
     * variable of a flag by name, beside the flag; each help text once. */
    assert_non_null(f = open_memstream(&text, &len));
    sd_settings_usage(f, SD_PROG_RELAY);
    fclose(f);
    for (int id = 0; id < SD_SET_COUNT; id++) {
        const struct sd_setting *r = ROW(id);
        int relay_flag = !!(r->flag_progs & SD_PROG_BIT(SD_PROG_RELAY));
        int shown = !!((r->env_progs | r->flag_progs) & SD_PROG_BIT(SD_PROG_RELAY));

        snprintf(want, sizeof(want), "  --%s ", r->flag ? r->flag : "");
        assert_int_equal(count(text, want), r->flag ? 1 : 0);
        snprintf(want, sizeof(want), "\n  %s=", r->env);
        assert_int_equal(count(text, want),
                         (r->env_progs & SD_PROG_BIT(SD_PROG_RELAY)) && !relay_flag ? 1 : 0);
        snprintf(want, sizeof(want), "\n  %s ", r->env);
        assert_int_equal(count(text, want), relay_flag);
        snprintf(want, sizeof(want), " as --%s\n", r->flag ? r->flag : "");
        assert_int_equal(count(text, want), relay_flag);
        snprintf(want, sizeof(want), "\n      %c%.40s", toupper((unsigned char)r->help[0]),
                 r->help + 1);
        assert_int_equal(count(text, want), shown);
    }
    for (const char *line = text; *line; line = strchr(line, '\n') + 1)
        assert_true(strcspn(line, "\n") < 80);
    assert_non_null(strstr(text, "3-255, default 255."));
    free(text);
    /* Man pages: one entry per variable of the shim. */
    assert_non_null(f = open_memstream(&text, &len));
    sd_settings_man(f);
    fclose(f);
    assert_int_equal(count(text, ".TP\n.B SMBDIRECT_"), shim_vars);
    assert_non_null(strstr(text, "3\\(en255; default 255."));
    free(text);
}

/* The row of id in README's table, which starts with its variable and its programs,
 * then its flag: the row without its first "| ", in row. */
static void markdown_row(const char *text, int id, char *row, size_t len)
{
    const struct sd_setting *r = ROW(id);
    char want[256] = "";
    const char *sep = "";
    const char *at;

    snprintf(want, sizeof(want), "\n| `%s` | ", r->env);
    for (int p = 0; p < SD_PROG_COUNT; p++) {
        if (r->env_progs & SD_PROG_BIT(p)) {
            snprintf(want + strlen(want), sizeof(want) - strlen(want), "%s%s", sep,
                     sd_settings_prog_names[p]);
            sep = ", ";
        }
    }
    snprintf(want + strlen(want), sizeof(want) - strlen(want), " | %s%s%s | ",
             r->flag ? "`--" : "", r->flag ? r->flag : "", r->flag ? "`" : "");
    assert_int_equal(count(text, want), 1);
    at = strstr(text, want) + 3;
    snprintf(row, len, "%.*s", (int)strcspn(at, "\n"), at);
}

/* A default as README's table spells it. */
static void markdown_default(const struct sd_setting *r, const char *def, char *out, size_t len)
{
    int quoted = r->kind == SD_KIND_CHOICE || r->kind == SD_KIND_LOG;

    snprintf(out, len, "%s%s%s", quoted ? "`" : "", *def ? def : "none", quoted ? "`" : "");
}

/* README's table: one row per setting with its variable, programs, flag, each program's
 * default and the gist of its help; no line longer than 200 characters. */
static void test_markdown_table(void **state)
{
    char *text = NULL, row[512], def[64], want[256];
    size_t len = 0, chars = 0;
    FILE *f;

    (void)state;
    assert_non_null(f = open_memstream(&text, &len));
    sd_settings_markdown(f);
    fclose(f);
    assert_int_equal(count(text, "\n| "), 1 + SD_SET_COUNT); /* "| --- |" and the rows */
    for (int id = 0; id < SD_SET_COUNT; id++) {
        const struct sd_setting *r = ROW(id);
        const char *cell = row;
        int first = -1;

        markdown_row(text, id, row, sizeof(row));
        snprintf(want, sizeof(want), " | %s |", r->brief ? r->brief : r->help);
        assert_true(strlen(row) > strlen(want));
        assert_string_equal(row + strlen(row) - strlen(want), want);
        for (int i = 0; i < 4; i++) /* variable, programs, flag, values */
            cell = strstr(cell, " | ") + 3;
        for (int p = 0; p < SD_PROG_COUNT; p++) {
            if (!(r->env_progs & SD_PROG_BIT(p)))
                continue;
            markdown_default(r, r->def[p], def, sizeof(def));
            if (first < 0) { /* the first program's opens the cell */
                first = p;
                assert_true(strncmp(cell, def, strlen(def)) == 0);
                assert_true(cell[strlen(def)] == ' ');
            } else if (strcmp(r->def[p], r->def[first]) != 0) {
                snprintf(want, sizeof(want), "%s: %s", sd_settings_prog_names[p], def);
                assert_non_null(strstr(cell, want));
            }
        }
    }
    assert_non_null(strstr(text, "| `warn` (relay: `notice`, probe: `error`) |"));
    assert_non_null(strstr(text, "| 128 KiB–16 MiB − 1 | 8454144 (8 MiB + 64 KiB) |"));
    assert_non_null(strstr(text, "| 1–600000 ms | 10000 |"));
    assert_non_null(strstr(text, "| `--busy-poll` | 0–10000 µs | 0 (relay: 100) |"));
    for (const char *c = text, *line = text; *c; c++) {
        if (*c == '\n') {
            chars = 0;
            line = c + 1;
        } else if ((*c & 0xC0) != 0x80 && ++chars > 200) { /* a UTF-8 character starts */
            fail_msg("a line of more than 200 characters: %.60s...", line);
        }
    }
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_rows_are_consistent, setup),
        cmocka_unit_test_setup(test_defaults, setup),
        cmocka_unit_test_setup(test_defaults_pass_engine_check, setup),
        cmocka_unit_test_setup(test_bounds_pass_engine_check, setup),
        cmocka_unit_test_setup(test_words, setup),
        cmocka_unit_test_setup(test_environment_and_flags_agree, setup),
        cmocka_unit_test_setup(test_env_reads_each_row, setup),
        cmocka_unit_test_setup(test_env_reports_the_first_error, setup),
        cmocka_unit_test_setup(test_env_errors, setup),
        cmocka_unit_test_setup(test_tools_read_their_variables, setup),
        cmocka_unit_test_setup(test_own_options_and_operands, setup),
        cmocka_unit_test_setup(test_argv_errors, setup),
        cmocka_unit_test_setup(test_argv_short_options, setup),
        cmocka_unit_test_setup(test_provider_choice, setup),
        cmocka_unit_test_setup(test_rendered_blocks_cover_the_rows, setup),
        cmocka_unit_test_setup(test_markdown_table, setup),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
