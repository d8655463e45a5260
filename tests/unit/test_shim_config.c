/* tests/unit/test_shim_config.c — every SMBDIRECT_* variable of the shim: defaults,
 * valid values landing in the right field, and invalid values rejected with an error
 * that names the variable and repeats the value. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "log.h"
#include "shim_config.h"

static const char *const all_vars[] = {
    "SMBDIRECT_TRANSPORT", "SMBDIRECT_PORTS", "SMBDIRECT_PORTMAP", "SMBDIRECT_FALLBACK",
    "SMBDIRECT_LOG", "SMBDIRECT_CREDITS", "SMBDIRECT_MAX_SEND_SIZE",
    "SMBDIRECT_MAX_RECEIVE_SIZE", "SMBDIRECT_MAX_FRAGMENTED_SIZE",
    "SMBDIRECT_MAX_READ_WRITE_SIZE", "SMBDIRECT_KEEPALIVE", "SMBDIRECT_CONNECT_TIMEOUT",
    "SMBDIRECT_SOCKBUF",
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
        fail_msg("%s='%s' rejected: %s", var, value, cfg->error);
    assert_true(cfg->valid);
}

/* Loads with var=value; the load must fail with an error naming var and value. */
static void load_bad(const char *var, const char *value)
{
    struct shim_config cfg;

    clean_env(NULL);
    setenv(var, value, 1);
    if (shim_config_load(&cfg) != -1)
        fail_msg("%s='%s' accepted", var, value);
    assert_false(cfg.valid);
    if (!strstr(cfg.error, var) || !strstr(cfg.error, value))
        fail_msg("%s='%s': error '%s' does not name the variable and value", var, value,
                 cfg.error);
}

static void test_defaults(void **state)
{
    struct shim_config cfg;
    struct smbd_config def;

    (void)state;
    assert_int_equal(shim_config_load(&cfg), 0);
    assert_true(cfg.valid);
    assert_int_equal(cfg.transport, SHIM_TRANSPORT_AUTO);
    assert_int_equal(cfg.ports.n, 1);
    assert_int_equal(cfg.ports.port[0], 445);
    assert_int_equal(cfg.portmap.n, 0);
    assert_int_equal(cfg.fallback, SHIM_FALLBACK_TCP);
    assert_int_equal(cfg.connect_timeout_ms, SHIM_DEFAULT_CONNECT_TIMEOUT_MS);
    assert_int_equal(cfg.sockbuf_bytes, SHIM_DEFAULT_SOCKBUF);
    smbd_config_default(&def, SMBD_ROLE_ACTIVE);
    assert_int_equal(cfg.smbd.receive_credit_max, def.receive_credit_max);
    /* the tuned preferred send size (sd_tuning.h, MS-SMBD Appendix B note <5>) */
    assert_int_equal(cfg.smbd.max_send_size, 8136);
    assert_int_equal(cfg.smbd.max_receive_size, def.max_receive_size);
    assert_int_equal(cfg.smbd.max_fragmented_recv_size, def.max_fragmented_recv_size);
    assert_int_equal(cfg.smbd.keepalive_interval_ms, def.keepalive_interval_ms);
    assert_true(cfg.smbd.negotiate_timeout_ms <= SHIM_DEFAULT_CONNECT_TIMEOUT_MS);
}

static void test_empty_means_default(void **state)
{
    struct shim_config cfg;

    (void)state;
    load_ok(&cfg, "SMBDIRECT_FALLBACK", "");
    assert_int_equal(cfg.fallback, SHIM_FALLBACK_TCP);
    load_ok(&cfg, "SMBDIRECT_CONNECT_TIMEOUT", "");
    assert_int_equal(cfg.connect_timeout_ms, SHIM_DEFAULT_CONNECT_TIMEOUT_MS);
}

static void test_transport(void **state)
{
    struct shim_config cfg;

    (void)state;
    load_ok(&cfg, "SMBDIRECT_TRANSPORT", "auto");
    assert_int_equal(cfg.transport, SHIM_TRANSPORT_AUTO);
    load_ok(&cfg, "SMBDIRECT_TRANSPORT", "rdma");
    assert_int_equal(cfg.transport, SHIM_TRANSPORT_RDMA);
    load_ok(&cfg, "SMBDIRECT_TRANSPORT", "soft");
    assert_int_equal(cfg.transport, SHIM_TRANSPORT_SOFT);
    load_ok(&cfg, "SMBDIRECT_TRANSPORT", "tcp");
    assert_int_equal(cfg.transport, SHIM_TRANSPORT_TCP);
    load_bad("SMBDIRECT_TRANSPORT", "verbs");
    load_bad("SMBDIRECT_TRANSPORT", "TCP");
    load_bad("SMBDIRECT_TRANSPORT", "soft ");
}

static void test_ports(void **state)
{
    struct shim_config cfg;

    (void)state;
    load_ok(&cfg, "SMBDIRECT_PORTS", "445,8445");
    assert_int_equal(cfg.ports.n, 2);
    assert_true(pm_ports_contains(&cfg.ports, 8445));
    assert_false(pm_ports_contains(&cfg.ports, 139));
    load_bad("SMBDIRECT_PORTS", "0");
    load_bad("SMBDIRECT_PORTS", "445,smb");
}

/* With an unusable SMBDIRECT_PORTS, 445 still decides which connects must fail. */
static void test_bad_ports_keep_default_list(void **state)
{
    struct shim_config cfg;

    (void)state;
    setenv("SMBDIRECT_PORTS", "70000", 1);
    assert_int_equal(shim_config_load(&cfg), -1);
    assert_int_equal(cfg.ports.n, 1);
    assert_int_equal(cfg.ports.port[0], 445);
}

static void test_portmap(void **state)
{
    struct shim_config cfg;

    (void)state;
    load_ok(&cfg, "SMBDIRECT_PORTMAP", "445:5445,8445:9445");
    assert_int_equal(cfg.portmap.n, 2);
    assert_int_equal(pm_rdma_port(&cfg.portmap, 8445, 0), 9445);
    load_bad("SMBDIRECT_PORTMAP", "445");
    load_bad("SMBDIRECT_PORTMAP", "445:0");
}

static void test_fallback(void **state)
{
    struct shim_config cfg;

    (void)state;
    load_ok(&cfg, "SMBDIRECT_FALLBACK", "none");
    assert_int_equal(cfg.fallback, SHIM_FALLBACK_NONE);
    load_ok(&cfg, "SMBDIRECT_FALLBACK", "tcp");
    assert_int_equal(cfg.fallback, SHIM_FALLBACK_TCP);
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
    sd_log_set_level(SD_LOG_OFF);
}

/* A numeric variable: one valid value (checked through get) and the values around
 * and beyond its range, plus malformed ones, all rejected. */
struct number_case {
    const char *var, *valid;
    unsigned long want;
    unsigned long (*get)(const struct shim_config *cfg);
    const char *invalid[3];
};

static unsigned long get_credits(const struct shim_config *c)
{
    assert_int_equal(c->smbd.send_credit_target, c->smbd.receive_credit_max);
    return c->smbd.receive_credit_max;
}
static unsigned long get_send(const struct shim_config *c) { return c->smbd.max_send_size; }
static unsigned long get_recv(const struct shim_config *c) { return c->smbd.max_receive_size; }
static unsigned long get_frag(const struct shim_config *c)
{
    return c->smbd.max_fragmented_recv_size;
}
static unsigned long get_rw(const struct shim_config *c) { return c->smbd.max_read_write_size; }
static unsigned long get_keepalive(const struct shim_config *c)
{
    return c->smbd.keepalive_interval_ms;
}
static unsigned long get_timeout(const struct shim_config *c)
{
    assert_true(c->smbd.negotiate_timeout_ms <= (uint32_t)c->connect_timeout_ms);
    return (unsigned long)c->connect_timeout_ms;
}
static unsigned long get_sockbuf(const struct shim_config *c)
{
    return (unsigned long)c->sockbuf_bytes;
}

static const struct number_case number_cases[] = {
    { "SMBDIRECT_CREDITS", "64", 64, get_credits, { "2", "256", "12x" } },
    { "SMBDIRECT_MAX_SEND_SIZE", "1364", 1364, get_send, { "127", "1048577", "-1" } },
    { "SMBDIRECT_MAX_RECEIVE_SIZE", "4096", 4096, get_recv, { "100", "2000000", "8k" } },
    { "SMBDIRECT_MAX_FRAGMENTED_SIZE", "1048576", 1048576, get_frag,
      { "131071", "67108865", "1e6" } },
    { "SMBDIRECT_MAX_READ_WRITE_SIZE", "1048576", 1048576, get_rw,
      { "4095", "99999999999999999999999", "+4096" } },
    { "SMBDIRECT_KEEPALIVE", "30", 30000, get_keepalive, { "-1", "3601", "30s" } },
    { "SMBDIRECT_CONNECT_TIMEOUT", "2500", 2500, get_timeout, { "0", "600001", " 100" } },
    { "SMBDIRECT_SOCKBUF", "1048576", 1048576, get_sockbuf, { "1000", "268435457", "4M" } },
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
        for (int j = 0; j < 3; j++)
            load_bad(c->var, c->invalid[j]);
    }
}

/* One bad variable among good ones: the error names it, not the good ones. */
static void test_error_names_the_bad_variable(void **state)
{
    struct shim_config cfg;

    (void)state;
    setenv("SMBDIRECT_TRANSPORT", "soft", 1);
    setenv("SMBDIRECT_PORTS", "445,8445", 1);
    setenv("SMBDIRECT_KEEPALIVE", "never", 1);
    assert_int_equal(shim_config_load(&cfg), -1);
    assert_non_null(strstr(cfg.error, "SMBDIRECT_KEEPALIVE='never'"));
    assert_null(strstr(cfg.error, "SMBDIRECT_PORTS"));
    assert_int_equal(cfg.transport, SHIM_TRANSPORT_SOFT);
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
        cmocka_unit_test_setup(test_fallback, clean_env),
        cmocka_unit_test_setup(test_log, clean_env),
        cmocka_unit_test_setup(test_numbers, clean_env),
        cmocka_unit_test_setup(test_error_names_the_bad_variable, clean_env),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
