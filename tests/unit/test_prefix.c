/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/test_prefix.c — address prefix lists (common/sd_prefix.c), as the relay's
 * access list uses them: parsing, its errors, matching IPv4, IPv6 and IPv4-mapped
 * peers, prefix lengths that are not byte multiples. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "sd_addr.h"
#include "sd_prefix.h"

static struct sd_prefix_list parse_ok(const char *text)
{
    struct sd_prefix_list l;
    char err[256] = "";

    if (sd_prefix_parse_list(text, &l, err, sizeof(err)) != 0)
        fail_msg("'%s' rejected: %s", text, err);
    return l;
}

static void expect_error(const char *text, const char *msg)
{
    struct sd_prefix_list l = { .n = 7 };
    char err[256] = "";

    assert_int_equal(sd_prefix_parse_list(text, &l, err, sizeof(err)), -1);
    if (!strstr(err, msg))
        fail_msg("'%s': error '%s' lacks '%s'", text, err, msg);
    assert_int_equal(l.n, 7); /* untouched */
}

static int matches(const struct sd_prefix_list *l, const char *hostport)
{
    struct sockaddr_storage ss;
    socklen_t len;
    const char *why = NULL;

    assert_int_equal(sd_addr_parse(hostport, 445, &ss, &len, &why), 0);
    return sd_prefix_list_match(l, (struct sockaddr *)&ss);
}

static void test_ipv4_prefixes_and_hosts(void **state)
{
    struct sd_prefix_list l = parse_ok("10.0.0.0/8, 192.0.2.7 ,172.16.0.0/12");

    (void)state;
    assert_int_equal(l.n, 3);
    assert_true(matches(&l, "10.255.1.2"));
    assert_true(matches(&l, "192.0.2.7:5445"));
    assert_false(matches(&l, "192.0.2.8"));
    assert_true(matches(&l, "172.31.255.255"));  /* /12: 172.16-172.31 */
    assert_false(matches(&l, "172.32.0.1"));
    assert_false(matches(&l, "11.0.0.1"));
    assert_false(matches(&l, "[::1]"));
}

static void test_ipv6_and_mapped_ipv4(void **state)
{
    struct sd_prefix_list l = parse_ok("fd00::/8,2001:db8::/33,127.0.0.21");

    (void)state;
    assert_true(matches(&l, "[fd12:3456::1]"));
    assert_false(matches(&l, "[fe80::1]"));
    assert_true(matches(&l, "[2001:db8:7fff::1]"));  /* bit 33 clear */
    assert_false(matches(&l, "[2001:db8:8000::1]")); /* bit 33 set */
    /* a dual-stack listener sees an IPv4 client as ::ffff:a.b.c.d */
    assert_true(matches(&l, "[::ffff:127.0.0.21]"));
    assert_false(matches(&l, "[::ffff:127.0.0.22]"));
}

static void test_everything_and_nothing_but_one(void **state)
{
    struct sd_prefix_list any = parse_ok("0.0.0.0/0,::/0"), one = parse_ok("::1");

    (void)state;
    assert_true(matches(&any, "203.0.113.9"));
    assert_true(matches(&any, "[2001:db8::9]"));
    assert_true(matches(&one, "[::1]"));
    assert_false(matches(&one, "[::2]"));
    assert_false(matches(&one, "127.0.0.1"));
}

static void test_errors_name_the_entry(void **state)
{
    char many[2048] = "";

    (void)state;
    expect_error("", "empty");
    expect_error("10.0.0.0/8,", "empty");
    expect_error("10.0.0.0/33", "'10.0.0.0/33': the prefix length must be 0 to 32");
    expect_error("::/129", "0 to 128");
    expect_error("10.0.0.0/x", "prefix length");
    expect_error("10.1.2.3/8", "'10.1.2.3/8' has bits set past its /8 prefix");
    expect_error("fd00::1/8", "bits set");
    expect_error("server.example", "'server.example' is not an IPv4 or IPv6 address prefix");
    for (int i = 0; i <= SD_PREFIX_MAX; i++)
        snprintf(many + strlen(many), sizeof(many) - strlen(many), "%s10.0.0.%d", i ? "," : "", i);
    expect_error(many, "more than 64");
}

static void test_format_round_trips(void **state)
{
    struct sd_prefix_list l = parse_ok("10.0.0.0/8,::1,192.0.2.7"), again;
    char buf[256];

    (void)state;
    assert_string_equal(sd_prefix_list_format(&l, buf, sizeof(buf)),
                        "10.0.0.0/8, ::1/128, 192.0.2.7/32");
    again = parse_ok(buf);
    assert_int_equal(again.n, 3);
    assert_memory_equal(&again, &l, sizeof(l));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ipv4_prefixes_and_hosts),
        cmocka_unit_test(test_ipv6_and_mapped_ipv4),
        cmocka_unit_test(test_everything_and_nothing_but_one),
        cmocka_unit_test(test_errors_name_the_entry),
        cmocka_unit_test(test_format_round_trips),
    };
    return cmocka_run_group_tests_name("address prefixes", tests, NULL, NULL);
}
