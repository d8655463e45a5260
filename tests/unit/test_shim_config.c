/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/test_shim_config.c — every SMBDIRECT_* variable of the shim: defaults,
 * valid values landing in the right field of the settings and of the link options,
 * and invalid values rejected with an error line that names the variable and repeats
 * the value. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "log.h"
#include "shim_config.h"
#include "th_stderr.h"

static const char *const all_vars[] = {
    "SMBDIRECT_TRANSPORT", "SMBDIRECT_PORTS", "SMBDIRECT_PORTMAP", "SMBDIRECT_ADDRMAP",
    "SMBDIRECT_FALLBACK",
    "SMBDIRECT_LOG", "SMBDIRECT_CREDITS", "SMBDIRECT_MAX_SEND_SIZE",
    "SMBDIRECT_MAX_RECEIVE_SIZE", "SMBDIRECT_MAX_FRAGMENTED_SIZE",
    "SMBDIRECT_MAX_READ_WRITE_SIZE", "SMBDIRECT_KEEPALIVE", "SMBDIRECT_CONNECT_TIMEOUT",
    "SMBDIRECT_SOCKBUF", "SMBDIRECT_IRD", "SMBDIRECT_ORD", "SMBDIRECT_SOFT_CRC",
    "SMBDIRECT_SOFT_HANDSHAKE_MS",
};

static int clean_env(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(all_vars) / sizeof(all_vars[0]); i++)
        unsetenv(all_vars[i]);
    sd_log_set_level(SD_LOG_OFF); /* the expected error lines stay out of the TAP */
    return 0;
}

/* Loads with var=value, the rest unset; the load must succeed. */
static void load_ok(struct shim_config *cfg, const char *var, const char *value)
{
    clean_env(NULL);
    setenv(var, value, 1);
    if (shim_config_load(cfg) != 0)
        fail_msg("%s='%s' rejected: %s", var, value, cfg->report.error);
    assert_true(cfg->valid);
}

/* shim_config_load with stderr captured into log (the load sets the log level, so
 * its error line would otherwise land in the test output). */
static int load_capturing(struct shim_config *cfg, char *log, size_t loglen)
{
    struct th_stderr c;
    int rc;

    th_stderr_begin(&c);
    rc = shim_config_load(cfg);
    th_stderr_end(&c, log, loglen);
    return rc;
}

/* Loads with var=value; the load must fail with an error naming var and value, and
 * log it in one line at error level. */
static void load_bad(const char *var, const char *value)
{
    struct shim_config cfg;
    char log[1024], want[256];

    clean_env(NULL);
    setenv(var, value, 1);
    if (load_capturing(&cfg, log, sizeof(log)) != -1)
        fail_msg("%s='%s' accepted", var, value);
    assert_false(cfg.valid);
    snprintf(want, sizeof(want), "%s='%s' is invalid: ", var, value);
    if (!strstr(cfg.report.error, want))
        fail_msg("%s='%s': error '%s' does not name the variable and value", var, value,
                 cfg.report.error);
    if (!strstr(log, " error: ") || !strstr(log, want) || !strstr(log, "EINVAL") ||
        strchr(log, '\n') != log + strlen(log) - 1)
        fail_msg("%s='%s': logged '%s', not one error line naming it", var, value, log);
}

static void test_defaults(void **state)
{
    struct shim_config cfg;
    struct smbd_config def;

    (void)state;
    assert_int_equal(shim_config_load(&cfg), 0);
    assert_true(cfg.valid);
    assert_int_equal(cfg.set.transport, SD_TRANSPORT_AUTO);
    assert_int_equal(cfg.set.ports.n, 1);
    assert_int_equal(cfg.set.ports.port[0], 445);
    assert_int_equal(cfg.set.portmap.n, 0);
    assert_int_equal(cfg.set.addrmap.n, 0);
    assert_int_equal(cfg.set.fallback, SD_FALLBACK_TCP);
    assert_int_equal(cfg.set.connect_timeout_ms, 10000);
    assert_int_equal(cfg.link.timeout_ms, 10000);
    assert_int_equal(cfg.set.sockbuf, 4 * 1024 * 1024);
    assert_int_equal(cfg.set.soft_crc, 0);
    assert_int_equal(cfg.set.soft_handshake_ms, 5000);
    assert_int_equal(cfg.link.ird, 16);
    assert_int_equal(cfg.link.ord, 16);
    assert_null(cfg.link.provider); /* chosen per connection */
    smbd_config_default(&def, SMBD_ROLE_ACTIVE);
    assert_int_equal(cfg.link.cfg.receive_credit_max, def.receive_credit_max);
    assert_int_equal(cfg.link.cfg.send_credit_target, def.send_credit_target);
    /* the largest preferred send size Windows accepts (MS-SMBD Appendix B note <5>) */
    assert_int_equal(cfg.link.cfg.max_send_size, 8136);
    assert_int_equal(cfg.link.cfg.max_receive_size, def.max_receive_size);
    assert_int_equal(cfg.link.cfg.max_fragmented_recv_size, def.max_fragmented_recv_size);
    assert_int_equal(cfg.link.cfg.max_read_write_size, def.max_read_write_size);
    assert_int_equal(cfg.link.cfg.keepalive_interval_ms, def.keepalive_interval_ms);
    assert_int_equal(cfg.link.cfg.keepalive_timeout_ms, def.keepalive_timeout_ms);
    assert_true(cfg.link.cfg.negotiate_timeout_ms <= 10000);
    assert_null(smbd_config_check(&cfg.link.cfg));
}

static void test_empty_means_default(void **state)
{
    struct shim_config cfg;

    (void)state;
    load_ok(&cfg, "SMBDIRECT_FALLBACK", "");
    assert_int_equal(cfg.set.fallback, SD_FALLBACK_TCP);
    load_ok(&cfg, "SMBDIRECT_CONNECT_TIMEOUT", "");
    assert_int_equal(cfg.link.timeout_ms, 10000);
    load_ok(&cfg, "SMBDIRECT_PORTS", "");
    assert_int_equal(cfg.set.ports.n, 1);
    load_ok(&cfg, "SMBDIRECT_SOFT_CRC", "");
    assert_int_equal(cfg.set.soft_crc, 0);
}

static void test_transport(void **state)
{
    struct shim_config cfg;

    (void)state;
    load_ok(&cfg, "SMBDIRECT_TRANSPORT", "auto");
    assert_int_equal(cfg.set.transport, SD_TRANSPORT_AUTO);
    load_ok(&cfg, "SMBDIRECT_TRANSPORT", "rdma");
    assert_int_equal(cfg.set.transport, SD_TRANSPORT_RDMA);
    load_ok(&cfg, "SMBDIRECT_TRANSPORT", "soft");
    assert_int_equal(cfg.set.transport, SD_TRANSPORT_SOFT);
    load_ok(&cfg, "SMBDIRECT_TRANSPORT", "tcp");
    assert_int_equal(cfg.set.transport, SD_TRANSPORT_TCP);
    load_bad("SMBDIRECT_TRANSPORT", "verbs");
    load_bad("SMBDIRECT_TRANSPORT", "TCP");
    load_bad("SMBDIRECT_TRANSPORT", "soft ");
}

static void test_ports(void **state)
{
    struct shim_config cfg;

    (void)state;
    load_ok(&cfg, "SMBDIRECT_PORTS", "445,8445");
    assert_int_equal(cfg.set.ports.n, 2);
    assert_true(pm_ports_contains(&cfg.set.ports, 8445));
    assert_false(pm_ports_contains(&cfg.set.ports, 139));
    load_bad("SMBDIRECT_PORTS", "0");
    load_bad("SMBDIRECT_PORTS", "445,smb");
}

/* With an unusable SMBDIRECT_PORTS, 445 still decides which connects must fail. */
static void test_bad_ports_keep_default_list(void **state)
{
    struct shim_config cfg;
    char log[1024];

    (void)state;
    setenv("SMBDIRECT_PORTS", "70000", 1);
    assert_int_equal(load_capturing(&cfg, log, sizeof(log)), -1);
    assert_int_equal(cfg.set.ports.n, 1);
    assert_int_equal(cfg.set.ports.port[0], 445);
    /* A list that fails part-way keeps none of its ports either. */
    setenv("SMBDIRECT_PORTS", "8445,smb", 1);
    assert_int_equal(load_capturing(&cfg, log, sizeof(log)), -1);
    assert_int_equal(cfg.set.ports.n, 1);
    assert_int_equal(cfg.set.ports.port[0], 445);
}

static void test_portmap(void **state)
{
    struct shim_config cfg;

    (void)state;
    load_ok(&cfg, "SMBDIRECT_PORTMAP", "445:5445,8445:9445");
    assert_int_equal(cfg.set.portmap.n, 2);
    assert_int_equal(pm_rdma_port(&cfg.set.portmap, 8445, 0), 9445);
    load_bad("SMBDIRECT_PORTMAP", "445");
    load_bad("SMBDIRECT_PORTMAP", "445:0");
}

static void test_addrmap(void **state)
{
    struct shim_config cfg;

    (void)state;
    load_ok(&cfg, "SMBDIRECT_ADDRMAP", "10.0.0.5=192.168.100.5,[2001:db8::5]=[fd00::5]:445");
    assert_int_equal(cfg.set.addrmap.n, 2);
    assert_int_equal(cfg.set.addrmap.e[1].port, 445);
    load_bad("SMBDIRECT_ADDRMAP", "10.0.0.5");
    load_bad("SMBDIRECT_ADDRMAP", "server1=192.168.100.5");
    load_bad("SMBDIRECT_ADDRMAP", "10.0.0.5=192.168.100.5,10.0.0.5=192.168.100.6");
}

static void test_fallback(void **state)
{
    struct shim_config cfg;

    (void)state;
    load_ok(&cfg, "SMBDIRECT_FALLBACK", "none");
    assert_int_equal(cfg.set.fallback, SD_FALLBACK_NONE);
    load_ok(&cfg, "SMBDIRECT_FALLBACK", "tcp");
    assert_int_equal(cfg.set.fallback, SD_FALLBACK_TCP);
    load_bad("SMBDIRECT_FALLBACK", "rdma");
    load_bad("SMBDIRECT_FALLBACK", "no");
}

static void test_log(void **state)
{
    struct shim_config cfg;

    (void)state;
    load_ok(&cfg, "SMBDIRECT_LOG", "debug");
    assert_int_equal(sd_log_get_level(), SD_LOG_DEBUG);
    load_ok(&cfg, "SMBDIRECT_LOG", "error");
    assert_int_equal(sd_log_get_level(), SD_LOG_ERROR);
    load_bad("SMBDIRECT_LOG", "loud");
    assert_int_equal(sd_log_get_level(), SD_LOG_WARN); /* the default stays */
    sd_log_set_level(SD_LOG_OFF);
}

static void test_soft_iwarp(void **state)
{
    struct shim_config cfg;

    (void)state;
    load_ok(&cfg, "SMBDIRECT_SOFT_CRC", "1");
    assert_int_equal(cfg.set.soft_crc, 1);
    load_ok(&cfg, "SMBDIRECT_SOFT_CRC", "0");
    assert_int_equal(cfg.set.soft_crc, 0);
    load_bad("SMBDIRECT_SOFT_CRC", "yes");
    load_bad("SMBDIRECT_SOFT_CRC", "2");
    load_ok(&cfg, "SMBDIRECT_SOFT_HANDSHAKE_MS", "150");
    assert_int_equal(cfg.set.soft_handshake_ms, 150);
    load_bad("SMBDIRECT_SOFT_HANDSHAKE_MS", "soon");
    load_bad("SMBDIRECT_SOFT_HANDSHAKE_MS", "0");
    load_bad("SMBDIRECT_SOFT_HANDSHAKE_MS", "600001");
}

/* A numeric variable: one valid value (checked through get) and the values around
 * and beyond its range, plus malformed ones, all rejected. */
struct number_case {
    const char *var, *valid;
    unsigned long want;
    unsigned long (*get)(const struct shim_config *cfg);
    const char *invalid[4];
};

static unsigned long get_credits(const struct shim_config *c)
{
    assert_int_equal(c->link.cfg.send_credit_target, c->link.cfg.receive_credit_max);
    return c->link.cfg.receive_credit_max;
}
static unsigned long get_send(const struct shim_config *c) { return c->link.cfg.max_send_size; }
static unsigned long get_recv(const struct shim_config *c)
{
    return c->link.cfg.max_receive_size;
}
static unsigned long get_frag(const struct shim_config *c)
{
    return c->link.cfg.max_fragmented_recv_size;
}
static unsigned long get_rw(const struct shim_config *c)
{
    return c->link.cfg.max_read_write_size;
}
static unsigned long get_keepalive(const struct shim_config *c)
{
    return c->link.cfg.keepalive_interval_ms;
}
static unsigned long get_timeout(const struct shim_config *c)
{
    assert_true(c->link.cfg.negotiate_timeout_ms <= (uint32_t)c->link.timeout_ms);
    return (unsigned long)c->link.timeout_ms;
}
static unsigned long get_ird(const struct shim_config *c) { return c->link.ird; }
static unsigned long get_ord(const struct shim_config *c) { return c->link.ord; }
static unsigned long get_sockbuf(const struct shim_config *c) { return c->set.sockbuf; }

static const struct number_case number_cases[] = {
    { "SMBDIRECT_CREDITS", "64", 64, get_credits, { "2", "256", "12x", "65535" } },
    { "SMBDIRECT_MAX_SEND_SIZE", "1364", 1364, get_send, { "127", "1048577", "-1", "" } },
    { "SMBDIRECT_MAX_RECEIVE_SIZE", "4096", 4096, get_recv, { "100", "2000000", "8k", "" } },
    /* At most 16 MiB - 1: the 24-bit length of the Direct-TCP prefix (MS-SMB2 2.1). */
    { "SMBDIRECT_MAX_FRAGMENTED_SIZE", "16777215", 16777215, get_frag,
      { "131071", "16777216", "67108865", "1e6" } },
    { "SMBDIRECT_MAX_READ_WRITE_SIZE", "1048576", 1048576, get_rw,
      { "4095", "16777217", "99999999999999999999999", "+4096" } },
    { "SMBDIRECT_KEEPALIVE", "30", 30000, get_keepalive, { "-1", "3601", "30s", "" } },
    { "SMBDIRECT_CONNECT_TIMEOUT", "2500", 2500, get_timeout, { "0", "600001", " 100", "" } },
    { "SMBDIRECT_IRD", "4", 4, get_ird, { "0", "256", "4 ", "" } },
    { "SMBDIRECT_ORD", "255", 255, get_ord, { "0", "256", "0x10", "" } },
    { "SMBDIRECT_SOCKBUF", "1048576", 1048576, get_sockbuf, { "1000", "268435457", "4M", "" } },
};

static void test_numbers(void **state)
{
    struct shim_config cfg;

    (void)state;
    for (size_t i = 0; i < sizeof(number_cases) / sizeof(number_cases[0]); i++) {
        const struct number_case *c = &number_cases[i];

        load_ok(&cfg, c->var, c->valid);
        if (c->get(&cfg) != c->want)
            fail_msg("%s=%s gave %lu, want %lu", c->var, c->valid, c->get(&cfg), c->want);
        for (int j = 0; j < 4 && *c->invalid[j]; j++)
            load_bad(c->var, c->invalid[j]);
    }
}

/* One bad variable among good ones: the error names it, not the good ones. */
static void test_error_names_the_bad_variable(void **state)
{
    struct shim_config cfg;
    char log[1024];

    (void)state;
    setenv("SMBDIRECT_TRANSPORT", "soft", 1);
    setenv("SMBDIRECT_PORTS", "445,8445", 1);
    setenv("SMBDIRECT_KEEPALIVE", "never", 1);
    assert_int_equal(load_capturing(&cfg, log, sizeof(log)), -1);
    assert_non_null(strstr(cfg.report.error, "SMBDIRECT_KEEPALIVE='never'"));
    assert_null(strstr(cfg.report.error, "SMBDIRECT_PORTS"));
    assert_int_equal(cfg.set.transport, SD_TRANSPORT_SOFT);
    assert_int_equal(cfg.set.ports.n, 2);
}

/* The configuration file: another program's bad line is one warning line in the log
 * and the shim goes on with its own lines; a bad line of its own fails it closed. */
static void test_file_lines_of_others_warn(void **state)
{
    char conf[] = "/tmp/smbdirect-shim-conf-XXXXXX", log[1024];
    struct shim_config cfg;
    int fd = mkstemp(conf);
    FILE *f;

    (void)state;
    assert_true(fd >= 0);
    assert_non_null(f = fdopen(fd, "w"));
    fputs("[relay]\nmax_connections = 70000\n[shim]\nfallback = none\n", f);
    fclose(f);
    setenv("SMBDIRECT_CONFIG", conf, 1);
    assert_int_equal(load_capturing(&cfg, log, sizeof(log)), 0);
    assert_true(cfg.valid);
    assert_int_equal(cfg.set.fallback, SD_FALLBACK_NONE);
    if (!strstr(log, " warn: ") || !strstr(log, ":2: max_connections = '70000' is invalid: ") ||
        !strstr(log, "this concerns the relay, not the shim") ||
        strchr(log, '\n') != log + strlen(log) - 1)
        fail_msg("logged '%s', not one warning line naming the relay's line", log);
    assert_non_null(f = fopen(conf, "a"));
    fputs("credits = 2\n", f); /* in [shim] */
    fclose(f);
    assert_int_equal(load_capturing(&cfg, log, sizeof(log)), -1);
    assert_false(cfg.valid);
    assert_non_null(strstr(cfg.report.error, ":5: credits = '2' is invalid"));
    assert_non_null(strstr(log, "EINVAL"));
    unlink(conf);
    unsetenv("SMBDIRECT_CONFIG");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_defaults, clean_env),
        cmocka_unit_test_setup(test_empty_means_default, clean_env),
        cmocka_unit_test_setup(test_transport, clean_env),
        cmocka_unit_test_setup(test_ports, clean_env),
        cmocka_unit_test_setup(test_bad_ports_keep_default_list, clean_env),
        cmocka_unit_test_setup(test_portmap, clean_env),
        cmocka_unit_test_setup(test_addrmap, clean_env),
        cmocka_unit_test_setup(test_fallback, clean_env),
        cmocka_unit_test_setup(test_log, clean_env),
        cmocka_unit_test_setup(test_soft_iwarp, clean_env),
        cmocka_unit_test_setup(test_numbers, clean_env),
        cmocka_unit_test_setup(test_error_names_the_bad_variable, clean_env),
        cmocka_unit_test_setup(test_file_lines_of_others_warn, clean_env),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
