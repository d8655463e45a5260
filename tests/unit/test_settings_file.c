/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/test_settings_file.c — the configuration file front end: its keys and
 * sections, the precedence default < file < environment < flag with where each value
 * came from, errors that name the file and line, the key and what it accepts, for the
 * programs a line concerns and warnings for the others, and --check-config's output. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "sd_settings.h"

static char path[64];

static int setup(void **state)
{
    (void)state;
    for (int id = 0; id < SD_SET_COUNT; id++)
        unsetenv(sd_settings_table[id].env);
    strcpy(path, "/tmp/smbdirect-conf-XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    setenv("SMBDIRECT_CONFIG", path, 1);
    sd_log_set_level(SD_LOG_OFF);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    unlink(path);
    unsetenv("SMBDIRECT_CONFIG");
    return 0;
}

static void write_conf(const char *text)
{
    FILE *f = fopen(path, "w");

    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static int own_cb(void *ctx, int val, const char *arg, char *err, size_t errlen)
{
    (void)ctx, (void)val, (void)arg, (void)err, (void)errlen;
    return -1;
}

/* prog's settings with argv words (NULL-terminated, after the program name): the load's
 * result (0 or -1); the command line must parse. */
static int load_argv(struct sd_settings *s, enum sd_program prog, char **words,
                     struct sd_settings_report *r)
{
    char *argv[8] = { "smbdirect-relay" }, err[512];
    struct sd_settings_flags flags;
    int argc = 1;

    while (*words)
        argv[argc++] = *words++;
    assert_int_equal(sd_settings_parse_argv(prog, argc, argv, NULL, 0, own_cb, NULL, &flags, err,
                                            sizeof(err)),
                     argc);
    return sd_settings_load(s, prog, NULL, &flags, r);
}

static int load(struct sd_settings *s, enum sd_program prog, struct sd_settings_report *r)
{
    return sd_settings_load(s, prog, NULL, NULL, r);
}

/* "PATH:LINE: rest" for the test's file. */
static const char *at(unsigned line, const char *rest)
{
    static char buf[600];

    snprintf(buf, sizeof(buf), "%s:%u: %s", path, line, rest);
    return buf;
}

static const char *source(const struct sd_settings_report *r, enum sd_setting_id id)
{
    static char buf[SD_REPORT_PATH + 64];

    return sd_settings_report_source(r, id, buf, sizeof(buf));
}

static void test_keys_are_the_variables_in_lower_case(void **state)
{
    char key[64];

    (void)state;
    assert_string_equal(sd_settings_key(SD_SET_CREDITS, key, sizeof(key)), "credits");
    assert_string_equal(sd_settings_key(SD_SET_MAX_SEND_SIZE, key, sizeof(key)), "max_send_size");
    assert_string_equal(sd_settings_key(SD_SET_TRANSPORT, key, sizeof(key)), "transport");
}

/* default < file < environment, an empty variable keeps the file's value, and the
 * report says where each value came from. */
static void test_file_then_environment(void **state)
{
    struct sd_settings_report r;
    struct sd_settings s;
    char want[128];

    (void)state;
    write_conf("# comment\n\ncredits = 100   # inline comment\n  keepalive=30\nports = 445, 8445\n"
               "transport = soft\n");
    setenv("SMBDIRECT_KEEPALIVE", "60", 1);
    setenv("SMBDIRECT_TRANSPORT", "", 1);
    assert_int_equal(load(&s, SD_PROG_SHIM, &r), 0);
    assert_int_equal(s.credits, 100);            /* the file over the default */
    assert_int_equal(s.keepalive_s, 60);         /* the environment over the file */
    assert_int_equal(s.transport, SD_TRANSPORT_SOFT); /* empty: the file's value stands */
    assert_int_equal(s.ports.n, 2);
    assert_int_equal(s.max_send_size, 8136);     /* untouched: the default */
    assert_string_equal(r.file, path);
    snprintf(want, sizeof(want), "%s:3", path);
    assert_string_equal(source(&r, SD_SET_CREDITS), want);
    assert_string_equal(source(&r, SD_SET_KEEPALIVE), "environment SMBDIRECT_KEEPALIVE");
    assert_string_equal(source(&r, SD_SET_MAX_SEND_SIZE), "default");
    unsetenv("SMBDIRECT_KEEPALIVE");
    unsetenv("SMBDIRECT_TRANSPORT");
}

/* default < file < environment < flag for the tools, each source recorded. */
static void test_file_then_environment_then_flags(void **state)
{
    struct sd_settings_report r;
    struct sd_settings s;
    char *flag[] = { "--credits", "50", NULL }, *none[] = { NULL };
    char want[128];

    (void)state;
    write_conf("credits = 100\nconnect_timeout = 2000\n");
    setenv("SMBDIRECT_CREDITS", "70", 1);
    setenv("SMBDIRECT_KEEPALIVE", "30", 1);
    for (int p = SD_PROG_RELAY; p <= SD_PROG_PROBE; p++) {
        assert_int_equal(load_argv(&s, (enum sd_program)p, flag, &r), 0);
        assert_int_equal(s.credits, 50);               /* the flag over the variable */
        assert_string_equal(source(&r, SD_SET_CREDITS), "flag --credits");
        assert_int_equal(s.keepalive_s, 30);           /* the variable over the default */
        assert_string_equal(source(&r, SD_SET_KEEPALIVE), "environment SMBDIRECT_KEEPALIVE");
        assert_int_equal(s.connect_timeout_ms, 2000);  /* the file over the default */
        snprintf(want, sizeof(want), "%s:2", path);
        assert_string_equal(source(&r, SD_SET_CONNECT_TIMEOUT), want);
        assert_string_equal(source(&r, SD_SET_IRD), "default");
        assert_int_equal(load_argv(&s, (enum sd_program)p, none, &r), 0);
        assert_int_equal(s.credits, 70);               /* the variable over the file */
        assert_string_equal(source(&r, SD_SET_CREDITS), "environment SMBDIRECT_CREDITS");
    }
    unsetenv("SMBDIRECT_CREDITS");
    unsetenv("SMBDIRECT_KEEPALIVE");
}

/* A section is for one program; [global] is for every program again. */
static void test_sections(void **state)
{
    struct sd_settings_report r;
    struct sd_settings shim, relay;
    char *none[] = { NULL };

    (void)state;
    write_conf("credits = 64\n[relay]\ncredits = 128\n[shim]\nfallback = none\n"
               "[global]\nkeepalive = 7\n");
    assert_int_equal(load(&shim, SD_PROG_SHIM, &r), 0);
    assert_int_equal(load_argv(&relay, SD_PROG_RELAY, none, &r), 0);
    assert_int_equal(shim.credits, 64);
    assert_int_equal(relay.credits, 128);
    assert_int_equal(shim.fallback, SD_FALLBACK_NONE);
    assert_int_equal(shim.keepalive_s, 7);
    assert_int_equal(relay.keepalive_s, 7);
}

/* prog's load of text fails with want (after "PATH:") as its first error. */
static void expect_error(enum sd_program prog, const char *text, const char *want)
{
    struct sd_settings_report r;
    struct sd_settings s;
    char head[96];

    write_conf(text);
    assert_int_equal(load(&s, prog, &r), -1);
    snprintf(head, sizeof(head), "%s:", path);
    if (strncmp(r.error, head, strlen(head)) != 0 || !strstr(r.error, want))
        fail_msg("error '%s' lacks '%s' or '%s'", r.error, head, want);
}

/* prog's load of text succeeds with want (after "PATH:") as its only warning. */
static void expect_warning(enum sd_program prog, const char *text, const char *want)
{
    struct sd_settings_report r;
    struct sd_settings s;
    char head[96];

    write_conf(text);
    if (load(&s, prog, &r) != 0)
        fail_msg("'%s' failed the %s: %s", text, sd_settings_prog_names[prog], r.error);
    snprintf(head, sizeof(head), "%s:", path);
    assert_int_equal(r.warnings, 1);
    assert_int_equal(r.kept, 1);
    assert_false(r.problem[0].is_error);
    if (strncmp(r.problem[0].text, head, strlen(head)) != 0 || !strstr(r.problem[0].text, want))
        fail_msg("warning '%s' lacks '%s' or '%s'", r.problem[0].text, head, want);
}

static void test_errors_name_file_line_key_and_values(void **state)
{
    (void)state;
    expect_error(SD_PROG_SHIM, "credits = 64\ncredits = 2\n",
                 ":2: credits = '2' is invalid: use a whole number from 3 to 255");
    expect_error(SD_PROG_SHIM, "\n\ncredit = 64\n", ":3: unknown key 'credit'");
    expect_error(SD_PROG_SHIM, "timeout = 64\n", ":1: unknown key 'timeout'"); /* variables' */
    expect_error(SD_PROG_SHIM, "transport\n", ":1: 'transport' is no setting: use key = value");
    expect_error(SD_PROG_SHIM, "log = loud\n", "use debug, info, notice, warn or error");
    expect_error(SD_PROG_RELAY, "[relay]\nports = 445\n",
                 ":2: 'ports' is not a setting of the relay");
    expect_error(SD_PROG_RELAY, "[relay]\ncredits = 1000\n", ":2: credits = '1000' is invalid");
    expect_error(SD_PROG_RELAY, "transport = tcp\n",
                 ":1: transport = 'tcp' is invalid: the relay and the probe speak SMB Direct only");
}

/* A line only other programs take is their error and this program's warning: another
 * program's section, or a top-level key this one does not take. */
static void test_other_programs_lines_warn(void **state)
{
    (void)state;
    expect_warning(SD_PROG_SHIM, "[relay]\nmax_connections = 70000\n",
                   ":2: max_connections = '70000' is invalid: use a whole number from 0 to 65536; "
                   "this concerns the relay, not the shim");
    expect_warning(SD_PROG_SHIM, "max_connections = 70000\n", /* only the relay takes it */
                   ":1: max_connections = '70000' is invalid: use a whole number from 0 to 65536; "
                   "this concerns the relay, not the shim");
    expect_warning(SD_PROG_SHIM, "[relay]\nports = 445\n",
                   ":2: 'ports' is not a setting of the relay; this concerns the relay, not the "
                   "shim");
    expect_warning(SD_PROG_SHIM, "[relay]\nmax_conections = 10\n",
                   ":2: unknown key 'max_conections'");
    expect_warning(SD_PROG_RELAY, "[shim]\nfallback = never\n",
                   ":2: fallback = 'never' is invalid: use tcp or none; this concerns the shim, "
                   "not the relay");
    expect_warning(SD_PROG_PROBE, "[shim]\nno setting here\n[probe]\ncredits = 30\n",
                   ":2: 'no setting here' is no setting: use key = value; this concerns the "
                   "shim, not the probe");
    /* A value right for this program and wrong for others: applied here, their error. */
    expect_warning(SD_PROG_SHIM, "transport = tcp\n",
                   ":1: transport = 'tcp' is invalid: the relay and the probe speak SMB Direct "
                   "only (tcp is for the shim); this concerns the relay and the probe, not the "
                   "shim");
}

/* A line whose owner is unknown (a bad section header, an unknown key or a line with
 * no '=' before any header) concerns every program; the lines after a bad header are
 * nobody's, those after the next good one count again. Right lines apply beside a
 * wrong one. */
static void test_lines_of_no_known_program(void **state)
{
    struct sd_settings_report r;
    struct sd_settings s;

    (void)state;
    for (int p = 0; p < SD_PROG_COUNT; p++) {
        expect_error((enum sd_program)p, "[server]\ncredits = 2\n",
                     ":1: unknown section [server]: use [shim], [relay], [probe] or [global]");
        expect_error((enum sd_program)p, "[relay\n", ":1: '[relay' is no section header");
        expect_error((enum sd_program)p, "credit = 64\n", ":1: unknown key 'credit'");
        expect_error((enum sd_program)p, "[global]\nkeepalive\n", ":2: 'keepalive' is no setting");
    }
    write_conf("[server]\ncredits = 2\n[shim]\ncredits = 3\nkeepalive = 2x\nird = 4\n");
    assert_int_equal(load(&s, SD_PROG_SHIM, &r), -1);
    assert_int_equal(r.errors, 2); /* the header and keepalive; not the line after [server] */
    assert_int_equal(s.credits, 3);
    assert_int_equal(s.keepalive_s, 120); /* the wrong line leaves the default */
    assert_int_equal(s.ird, 4);
}

/* The address map in the file: a full one (32 IPv6 entries with ports, the longest
 * value a setting takes) fits a line; the shim and the probe apply it, the relay only
 * checks it, and a [relay] section cannot hold it. */
static void test_addrmap(void **state)
{
    char conf[4096] = "addrmap = ";
    struct sd_settings_report r;
    struct sd_settings s;
    char *none[] = { NULL };
    size_t n = strlen(conf);

    (void)state;
    for (int i = 0; i < AM_MAX_ENTRIES; i++)
        n += (size_t)snprintf(conf + n, sizeof(conf) - n,
                              "%s2001:db8:1234:5678:9abc:def0:1234:%04x=[fd00:1234:5678:9abc:"
                              "def0:1234:5678:%04x]:65535", i ? "," : "", i, i);
    snprintf(conf + n, sizeof(conf) - n, "\n");
    assert_true(n > 2048 && n < sizeof(conf) - 1);
    write_conf(conf);
    assert_int_equal(load(&s, SD_PROG_SHIM, &r), 0);
    assert_int_equal(s.addrmap.n, AM_MAX_ENTRIES);
    assert_int_equal(s.addrmap.e[31].port, 65535);
    assert_int_equal(load(&s, SD_PROG_PROBE, &r), 0);
    assert_int_equal(s.addrmap.n, AM_MAX_ENTRIES);
    assert_int_equal(load_argv(&s, SD_PROG_RELAY, none, &r), 0);
    assert_int_equal(s.addrmap.n, 0);
    expect_error(SD_PROG_PROBE, "[probe]\naddrmap = 10.0.0.5=192.168.100.5:0\n",
                 ":2: addrmap = '10.0.0.5=192.168.100.5:0' is invalid: "
                 "'192.168.100.5:0': the port is not a number 1..65535");
    expect_error(SD_PROG_RELAY, "[relay]\naddrmap = 10.0.0.5=192.168.100.5\n",
                 ":2: 'addrmap' is not a setting of the relay");
}

/* SMBDIRECT_CONFIG: empty reads no file, a missing one is every program's error; a file
 * given (--check-config FILE) is read instead; a file that cannot be read is every
 * program's error. */
static void test_which_file(void **state)
{
    struct sd_settings_report r;
    struct sd_settings s;

    (void)state;
    write_conf("credits = 2\n");
    setenv("SMBDIRECT_CONFIG", "", 1);            /* empty: no file at all */
    assert_int_equal(load(&s, SD_PROG_SHIM, &r), 0);
    assert_int_equal(s.credits, 255);
    assert_string_equal(r.file, "");
    setenv("SMBDIRECT_CONFIG", "/nonexistent/smbdirect.conf", 1);
    for (int p = 0; p < SD_PROG_COUNT; p++) {
        assert_int_equal(load(&s, (enum sd_program)p, &r), -1);
        assert_string_equal(r.error, "SMBDIRECT_CONFIG=/nonexistent/smbdirect.conf: cannot read "
                                     "it: No such file or directory");
    }
    assert_int_equal(sd_settings_load(&s, SD_PROG_SHIM, path, NULL, &r), -1); /* credits 2 */
    assert_string_equal(r.file, path);
    assert_int_equal(sd_settings_load(&s, SD_PROG_RELAY, "/nonexistent/x.conf", NULL, &r), -1);
    assert_string_equal(r.error, "/nonexistent/x.conf: cannot read it: No such file or directory");
    assert_int_equal(sd_settings_load(&s, SD_PROG_PROBE, "/tmp", NULL, &r), -1);
    assert_string_equal(r.error, "/tmp: cannot read it: Is a directory");
    setenv("SMBDIRECT_CONFIG", path, 1);
}

/* Past SD_REPORT_KEPT problems the rest are counted; the first error is kept. */
static void test_many_problems(void **state)
{
    char conf[2048] = "";
    struct sd_settings_report r;
    struct sd_settings s;

    (void)state;
    for (int i = 0; i < SD_REPORT_KEPT + 4; i++)
        strcat(conf, "[relay]\ncredits = 1\n");
    strcat(conf, "[shim]\ncredits = 1\n");
    write_conf(conf);
    assert_int_equal(load(&s, SD_PROG_SHIM, &r), -1);
    assert_int_equal(r.warnings, SD_REPORT_KEPT + 4);
    assert_int_equal(r.errors, 1);
    assert_int_equal(r.kept, SD_REPORT_KEPT);
    assert_string_equal(r.error, at(2 * SD_REPORT_KEPT + 10, "credits = '1' is invalid: use a "
                                                             "whole number from 3 to 255"));
}

/* Each row's value written back as text takes to the same value. */
static void check_round_trip(enum sd_program prog, enum sd_setting_id id, const char *text,
                             const char *want)
{
    struct sd_settings a, b;
    char why[256], shown[4096];

    sd_settings_defaults(&a, prog);
    sd_settings_defaults(&b, prog);
    if (sd_settings_set(&a, prog, id, text, why, sizeof(why)) != 0)
        fail_msg("'%s' refused: %s", text, why);
    sd_settings_format(&a, id, shown, sizeof(shown));
    if (want && strcmp(shown, want) != 0)
        fail_msg("'%s' shown as '%s', not '%s'", text, shown, want);
    if (sd_settings_set(&b, prog, id, shown, why, sizeof(why)) != 0)
        fail_msg("'%s' (shown for '%s') refused: %s", shown, text, why);
    assert_memory_equal(&a, &b, sizeof(a));
}

static void test_values_shown_take_back(void **state)
{
    (void)state;
    for (int p = 0; p < SD_PROG_COUNT; p++)
        for (int id = 0; id < SD_SET_COUNT; id++)
            if (sd_settings_table[id].env_progs & SD_PROG_BIT(p))
                check_round_trip((enum sd_program)p, (enum sd_setting_id)id,
                                 sd_settings_table[id].def[p], NULL);
    check_round_trip(SD_PROG_SHIM, SD_SET_PORTS, " 445 , 8445", "445,8445");
    check_round_trip(SD_PROG_SHIM, SD_SET_PORTMAP, "445:5445,8445:9445", "445:5445,8445:9445");
    check_round_trip(SD_PROG_SHIM, SD_SET_ADDRMAP, "10.0.0.5=192.168.100.5,[2001:db8::5]=[fd00::5]:445,"
                     "10.0.0.6=192.168.100.6:5445",
                     "10.0.0.5=192.168.100.5,2001:db8::5=[fd00::5]:445,10.0.0.6=192.168.100.6:5445");
    check_round_trip(SD_PROG_SHIM, SD_SET_TRANSPORT, "tcp", "tcp");
    check_round_trip(SD_PROG_SHIM, SD_SET_LOG, "debug", "debug");
    check_round_trip(SD_PROG_SHIM, SD_SET_SPLICE, "off", "off");
    check_round_trip(SD_PROG_RELAY, SD_SET_LISTEN, "[::1]:5445", "[::1]:5445");
    check_round_trip(SD_PROG_RELAY, SD_SET_BACKEND, "127.0.0.1:445", "127.0.0.1:445");
    check_round_trip(SD_PROG_RELAY, SD_SET_ALLOW, "10.0.0.0/8,fd00::/8,192.0.2.7", NULL);
    check_round_trip(SD_PROG_RELAY, SD_SET_STATUS_SOCKET, "none", "none");
    check_round_trip(SD_PROG_RELAY, SD_SET_CHANNEL_MEMORY, "1048576", "1048576");
}

/* --check-config's output of prog's settings with argv words (NULL-terminated): its
 * return value; out and diag hold what it printed. */
static int check_config(enum sd_program prog, char **words, char **out, char **diag)
{
    struct sd_settings_report r;
    struct sd_settings s;
    size_t olen, dlen;
    FILE *o = open_memstream(out, &olen), *d = open_memstream(diag, &dlen);
    int rc;

    assert_non_null(o);
    assert_non_null(d);
    load_argv(&s, prog, words, &r);
    rc = sd_settings_check_config(o, d, &s, &r);
    fclose(o);
    fclose(d);
    return rc;
}

static void expect_line(const char *text, const char *line)
{
    const char *p = strstr(text, line);

    if (!p || (p != text && p[-1] != '\n') || (p[strlen(line)] != '\n'))
        fail_msg("no line '%s' in:\n%s", line, text);
}

static void test_check_config(void **state)
{
    char *out, *diag, want[256], *flag[] = { "--ird", "8", NULL }, *none[] = { NULL };

    (void)state;
    write_conf("[relay]\ncredits = 100\n[shim]\nfallback = never\n");
    setenv("SMBDIRECT_KEEPALIVE", "30", 1);
    assert_int_equal(check_config(SD_PROG_RELAY, flag, &out, &diag), 0);
    expect_line(out, "[relay]");
    snprintf(want, sizeof(want), "credits = 100                           # %s:2", path);
    expect_line(out, want);
    expect_line(out, "keepalive = 30                          # environment SMBDIRECT_KEEPALIVE");
    expect_line(out, "ird = 8                                 # flag --ird");
    expect_line(out, "ord = 16                                # default");
    expect_line(out, "status_socket = /run/smbdirect/relay.sock  # default");
    assert_null(strstr(out, "fallback")); /* the shim's */
    snprintf(want, sizeof(want), "warning: %s:4: fallback = 'never' is invalid: use tcp or none; "
             "this concerns the shim, not the relay", path);
    expect_line(diag, want);
    free(out);
    free(diag);
    /* The shim: its error, no settings. */
    assert_int_equal(check_config(SD_PROG_SHIM, none, &out, &diag), 1);
    assert_string_equal(out, "");
    snprintf(want, sizeof(want), "%s:4: fallback = 'never' is invalid: use tcp or none", path);
    expect_line(diag, want);
    free(out);
    free(diag);
    unsetenv("SMBDIRECT_KEEPALIVE");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_keys_are_the_variables_in_lower_case),
        cmocka_unit_test_setup_teardown(test_file_then_environment, setup, teardown),
        cmocka_unit_test_setup_teardown(test_file_then_environment_then_flags, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sections, setup, teardown),
        cmocka_unit_test_setup_teardown(test_errors_name_file_line_key_and_values, setup, teardown),
        cmocka_unit_test_setup_teardown(test_other_programs_lines_warn, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lines_of_no_known_program, setup, teardown),
        cmocka_unit_test_setup_teardown(test_addrmap, setup, teardown),
        cmocka_unit_test_setup_teardown(test_which_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_many_problems, setup, teardown),
        cmocka_unit_test_setup_teardown(test_values_shown_take_back, setup, teardown),
        cmocka_unit_test_setup_teardown(test_check_config, setup, teardown),
    };
    return cmocka_run_group_tests_name("settings: configuration file", tests, NULL, NULL);
}
