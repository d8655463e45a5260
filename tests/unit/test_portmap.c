/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/test_portmap.c — port list / port map parsing (every error path names the
 * bad token; test_settings checks that the variable is named around it) and the SMB
 * Direct port lookup. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "portmap.h"

/* Fails the test unless err (from parsing spec) names want. */
static void assert_error_names(const char *spec, const char *err, const char *want)
{
    if (!strstr(err, want))
        fail_msg("spec '%s': error '%s' lacks '%s'", spec, err, want);
}

/* Asserts spec fails to parse as a port list with an error containing want. */
static void expect_ports_error(const char *spec, const char *want)
{
    struct pm_ports p;
    char err[256] = "";

    assert_int_equal(pm_parse_ports(spec, &p, err, sizeof(err)), -1);
    assert_error_names(spec, err, want);
}

static void expect_map_error(const char *spec, const char *want)
{
    struct pm_map m;
    char err[256] = "";

    assert_int_equal(pm_parse_map(spec, &m, err, sizeof(err)), -1);
    assert_error_names(spec, err, want);
}

/* Writes PM_MAX_ENTRIES comma-separated entries to spec: port 1000 + i, or the pair
 * 1000 + i:5000 + i when as_map. Returns the length written. */
static size_t full_list(char *spec, size_t size, int as_map)
{
    size_t n = 0;

    for (int i = 0; i < PM_MAX_ENTRIES; i++) {
        n += (size_t)snprintf(spec + n, size - n, "%s%d", i ? "," : "", 1000 + i);
        if (as_map)
            n += (size_t)snprintf(spec + n, size - n, ":%d", 5000 + i);
    }
    return n;
}

static void test_ports_valid(void **state)
{
    struct pm_ports p;
    char err[128] = "";

    (void)state;
    assert_int_equal(pm_parse_ports("445", &p, err, sizeof(err)), 0);
    assert_int_equal(p.n, 1);
    assert_int_equal(p.port[0], 445);

    assert_int_equal(pm_parse_ports("445, 8445 ,1,65535", &p, err, sizeof(err)), 0);
    assert_int_equal(p.n, 4);
    assert_int_equal(p.port[0], 445);
    assert_int_equal(p.port[1], 8445);
    assert_int_equal(p.port[2], 1);
    assert_int_equal(p.port[3], 65535);
    assert_true(pm_ports_contains(&p, 8445));
    assert_true(pm_ports_contains(&p, 65535));
    assert_false(pm_ports_contains(&p, 139));
    assert_false(pm_ports_contains(&p, 0));
}

static void test_ports_errors(void **state)
{
    (void)state;
    expect_ports_error("", "empty");
    expect_ports_error("abc", "'abc'");
    expect_ports_error("445x", "'445x'");
    expect_ports_error("0", "'0'");
    expect_ports_error("65536", "'65536'");
    expect_ports_error("99999999999999999999", "'99999999999999999999'");
    expect_ports_error("-445", "'-445'");
    expect_ports_error("+445", "'+445'");
    expect_ports_error("445,", "''");
    expect_ports_error(",445", "''");
    expect_ports_error("445,,139", "''");
    expect_ports_error("445:5445", "'445:5445'");
    expect_ports_error("445,139,445", "445 is listed twice");
}

static void test_ports_too_many(void **state)
{
    char spec[PM_MAX_ENTRIES * 8 + 16] = "";
    struct pm_ports p;
    char err[128];
    size_t n;

    (void)state;
    n = full_list(spec, sizeof(spec), 0);
    assert_int_equal(pm_parse_ports(spec, &p, err, sizeof(err)), 0);
    assert_int_equal(p.n, PM_MAX_ENTRIES);
    snprintf(spec + n, sizeof(spec) - n, ",2000");
    expect_ports_error(spec, "more than 32");
}

static void test_map_valid(void **state)
{
    struct pm_map m;
    char err[128] = "";

    (void)state;
    assert_int_equal(pm_parse_map("", &m, err, sizeof(err)), 0);
    assert_int_equal(m.n, 0);
    assert_int_equal(pm_parse_map("445:5445, 8445:9445", &m, err, sizeof(err)), 0);
    assert_int_equal(m.n, 2);
    assert_int_equal(m.e[0].tcp, 445);
    assert_int_equal(m.e[0].rdma, 5445);
    assert_int_equal(m.e[1].tcp, 8445);
    assert_int_equal(m.e[1].rdma, 9445);
    /* Two TCP ports may share one SMB Direct port. */
    assert_int_equal(pm_parse_map("445:5445,446:5445", &m, err, sizeof(err)), 0);
    assert_int_equal(m.n, 2);
}

static void test_map_errors(void **state)
{
    (void)state;
    expect_map_error("445", "'445'");
    expect_map_error("445:", "'445:'");
    expect_map_error(":5445", "':5445'");
    expect_map_error("445:5445:1", "'445:5445:1'");
    expect_map_error("445:0", "'445:0'");
    expect_map_error("0:5445", "'0:5445'");
    expect_map_error("445:70000", "'445:70000'");
    expect_map_error("x:5445", "'x:5445'");
    expect_map_error("445:5445,", "''");
    expect_map_error("445:5445,,139:5445", "''");
    expect_map_error("445:5445,445:6445", "445 is mapped twice");
}

static void test_map_too_many(void **state)
{
    char spec[PM_MAX_ENTRIES * 16 + 32] = "";
    struct pm_map m;
    char err[128];
    size_t n;

    (void)state;
    n = full_list(spec, sizeof(spec), 1);
    assert_int_equal(pm_parse_map(spec, &m, err, sizeof(err)), 0);
    assert_int_equal(m.n, PM_MAX_ENTRIES);
    snprintf(spec + n, sizeof(spec) - n, ",2000:5445");
    expect_map_error(spec, "more than 32");
}

static void test_error_buffer_small_or_absent(void **state)
{
    struct pm_ports p;
    struct pm_map m;
    char err[8];

    (void)state;
    assert_int_equal(pm_parse_ports("nope", &p, NULL, 0), -1);
    assert_int_equal(pm_parse_map("nope", &m, NULL, 0), -1);
    assert_int_equal(pm_parse_ports("nope", &p, err, sizeof(err)), -1);
    assert_int_equal(strlen(err), sizeof(err) - 1); /* truncated, still terminated */
}

static void test_rdma_port_defaults(void **state)
{
    struct pm_map empty = { .n = 0 };

    (void)state;
    assert_int_equal(pm_rdma_port(&empty, 445, 1), 5445);  /* iWARP and soft-iWARP */
    assert_int_equal(pm_rdma_port(&empty, 445, 0), 445);   /* InfiniBand / RoCE */
    assert_int_equal(pm_rdma_port(&empty, 8445, 0), 8445);
    assert_int_equal(pm_rdma_port(&empty, 8445, 1), 5445);
    assert_int_equal(pm_rdma_port(NULL, 445, 1), 5445);
}

static void test_rdma_port_overrides(void **state)
{
    struct pm_map m;
    char err[128];

    (void)state;
    assert_int_equal(pm_parse_map("445:15445,8445:445", &m, err, sizeof(err)), 0);
    /* An explicit entry wins on both transport kinds. */
    assert_int_equal(pm_rdma_port(&m, 445, 1), 15445);
    assert_int_equal(pm_rdma_port(&m, 445, 0), 15445);
    assert_int_equal(pm_rdma_port(&m, 8445, 1), 445);
    /* Unmapped ports keep the defaults. */
    assert_int_equal(pm_rdma_port(&m, 139, 1), 5445);
    assert_int_equal(pm_rdma_port(&m, 139, 0), 139);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ports_valid),
        cmocka_unit_test(test_ports_errors),
        cmocka_unit_test(test_ports_too_many),
        cmocka_unit_test(test_map_valid),
        cmocka_unit_test(test_map_errors),
        cmocka_unit_test(test_map_too_many),
        cmocka_unit_test(test_error_buffer_small_or_absent),
        cmocka_unit_test(test_rdma_port_defaults),
        cmocka_unit_test(test_rdma_port_overrides),
    };
    return cmocka_run_group_tests_name("portmap", tests, NULL, NULL);
}
