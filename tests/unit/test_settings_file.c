/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/test_settings_file.c — the configuration file front end: its keys and
 * sections, the precedence default < file < environment < flag, and errors that name
 * the file and line, the key and what it accepts. */
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

/* The relay's settings from argv words (NULL-terminated, after the program name). */
static int relay_argv(struct sd_settings *s, char **words, char *err, size_t errlen)
{
    char *argv[8] = { "smbdirect-relay" };
    int argc = 1;

    while (*words)
        argv[argc++] = *words++;
    return sd_settings_from_argv(s, SD_PROG_RELAY, argc, argv, NULL, 0, own_cb, NULL, err, errlen);
}

static void test_keys_are_the_variables_in_lower_case(void **state)
{
    char key[64];

    (void)state;
    assert_string_equal(sd_settings_key(SD_SET_CREDITS, key, sizeof(key)), "credits");
    assert_string_equal(sd_settings_key(SD_SET_MAX_SEND_SIZE, key, sizeof(key)), "max_send_size");
    assert_string_equal(sd_settings_key(SD_SET_TRANSPORT, key, sizeof(key)), "transport");
}

/* default < file < environment, and an empty variable keeps the file's value. */
static void test_file_then_environment(void **state)
{
    struct sd_settings s;
    char err[512];

    (void)state;
    write_conf("# comment\n\ncredits = 100   # inline comment\n  keepalive=30\nports = 445, 8445\n"
               "transport = soft\n");
    setenv("SMBDIRECT_KEEPALIVE", "60", 1);
    setenv("SMBDIRECT_TRANSPORT", "", 1);
    assert_int_equal(sd_settings_from_env(&s, SD_PROG_SHIM, err, sizeof(err)), 0);
    assert_int_equal(s.credits, 100);            /* the file over the default */
    assert_int_equal(s.keepalive_s, 60);         /* the environment over the file */
    assert_int_equal(s.transport, SD_TRANSPORT_SOFT); /* empty: the file's value stands */
    assert_int_equal(s.ports.n, 2);
    assert_int_equal(s.max_send_size, 8136);     /* untouched: the default */
    unsetenv("SMBDIRECT_KEEPALIVE");
    unsetenv("SMBDIRECT_TRANSPORT");
}

/* default < file < flag for the tools. */
static void test_file_then_flags(void **state)
{
    struct sd_settings s;
    char err[512];
    char *flag[] = { "--credits", "50", NULL }, *none[] = { NULL };

    (void)state;
    write_conf("credits = 100\nconnect_timeout = 2000\n");
    assert_int_equal(relay_argv(&s, flag, err, sizeof(err)), 3);
    assert_int_equal(s.credits, 50);               /* the flag over the file */
    assert_int_equal(s.connect_timeout_ms, 2000);  /* the file over the default */
    assert_int_equal(relay_argv(&s, none, err, sizeof(err)), 1);
    assert_int_equal(s.credits, 100);
    assert_int_equal(s.connect_timeout_ms, 2000);
}

/* A section is for one program; [global] is for every program again. */
static void test_sections(void **state)
{
    struct sd_settings shim, relay;
    char err[512];
    char *none[] = { NULL };

    (void)state;
    write_conf("credits = 64\n[relay]\ncredits = 128\n[shim]\nfallback = none\n"
               "[global]\nkeepalive = 7\n");
    assert_int_equal(sd_settings_from_env(&shim, SD_PROG_SHIM, err, sizeof(err)), 0);
    assert_int_equal(relay_argv(&relay, none, err, sizeof(err)), 1);
    assert_int_equal(shim.credits, 64);
    assert_int_equal(relay.credits, 128);
    assert_int_equal(shim.fallback, SD_FALLBACK_NONE);
    assert_int_equal(shim.keepalive_s, 7);
    assert_int_equal(relay.keepalive_s, 7);
}

static void expect_file_error(const char *text, const char *want)
{
    struct sd_settings s;
    char err[512], head[96];

    write_conf(text);
    assert_int_equal(sd_settings_from_env(&s, SD_PROG_SHIM, err, sizeof(err)), -1);
    snprintf(head, sizeof(head), "%s:", path);
    if (strncmp(err, head, strlen(head)) != 0 || !strstr(err, want))
        fail_msg("error '%s' lacks '%s' or '%s'", err, head, want);
}

static void test_errors_name_file_line_key_and_values(void **state)
{
    (void)state;
    expect_file_error("credits = 64\ncredits = 2\n", ":2: credits = '2' is invalid: use a whole number from 3 to 255");
    expect_file_error("\n\ncredit = 64\n", ":3: unknown key 'credit'");
    expect_file_error("timeout = 64\n", ":1: unknown key 'timeout'"); /* keys are variables' */
    expect_file_error("transport\n", ":1: 'transport' is no setting: use key = value");
    expect_file_error("[server]\n", ":1: unknown section [server]");
    expect_file_error("[relay\n", ":1: '[relay' is no section header");
    expect_file_error("[relay]\nports = 445\n", ":2: 'ports' is not a setting of the relay");
    /* a line for the relay only is checked by the shim too */
    expect_file_error("[relay]\ncredits = 1000\n", ":2: credits = '1000' is invalid");
    expect_file_error("log = loud\n", "use debug, info, notice, warn or error");
}

/* The address map in the file: a full one (32 IPv6 entries with ports, the longest
 * value a setting takes) fits a line; the shim and the probe apply it, the relay only
 * checks it, and a [relay] section cannot hold it. */
static void test_addrmap(void **state)
{
    char conf[4096] = "addrmap = ", err[512];
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
    assert_int_equal(sd_settings_from_env(&s, SD_PROG_SHIM, err, sizeof(err)), 0);
    assert_int_equal(s.addrmap.n, AM_MAX_ENTRIES);
    assert_int_equal(s.addrmap.e[31].port, 65535);
    assert_int_equal(sd_settings_from_env(&s, SD_PROG_PROBE, err, sizeof(err)), 0);
    assert_int_equal(s.addrmap.n, AM_MAX_ENTRIES);
    assert_int_equal(relay_argv(&s, none, err, sizeof(err)), 1);
    assert_int_equal(s.addrmap.n, 0);
    expect_file_error("[probe]\naddrmap = 10.0.0.5=192.168.100.5:0\n",
                      ":2: addrmap = '10.0.0.5=192.168.100.5:0' is invalid: "
                      "'192.168.100.5:0': the port is not a number 1..65535");
    expect_file_error("[relay]\naddrmap = 10.0.0.5=192.168.100.5\n",
                      ":2: 'addrmap' is not a setting of the relay");
}

static void test_which_file(void **state)
{
    struct sd_settings s;
    char err[512];

    (void)state;
    write_conf("credits = 2\n");
    setenv("SMBDIRECT_CONFIG", "", 1);            /* empty: no file at all */
    assert_int_equal(sd_settings_from_env(&s, SD_PROG_SHIM, err, sizeof(err)), 0);
    assert_int_equal(s.credits, 255);
    setenv("SMBDIRECT_CONFIG", "/nonexistent/smbdirect.conf", 1);
    assert_int_equal(sd_settings_from_env(&s, SD_PROG_SHIM, err, sizeof(err)), -1);
    assert_string_equal(err, "SMBDIRECT_CONFIG=/nonexistent/smbdirect.conf: cannot read it: "
                             "No such file or directory");
    setenv("SMBDIRECT_CONFIG", path, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_keys_are_the_variables_in_lower_case),
        cmocka_unit_test_setup_teardown(test_file_then_environment, setup, teardown),
        cmocka_unit_test_setup_teardown(test_file_then_flags, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sections, setup, teardown),
        cmocka_unit_test_setup_teardown(test_errors_name_file_line_key_and_values, setup, teardown),
        cmocka_unit_test_setup_teardown(test_addrmap, setup, teardown),
        cmocka_unit_test_setup_teardown(test_which_file, setup, teardown),
    };
    return cmocka_run_group_tests_name("settings: configuration file", tests, NULL, NULL);
}
