/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/test_addr.c — "HOST:PORT" parsing and formatting, address equality and the
 * wildcard test (common/sd_addr.c), as the programs' command lines and logs use them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "sd_addr.h"

#include <errno.h>
#include <netinet/in.h>

static struct sockaddr *parse_ok(const char *text, int default_port, struct sockaddr_storage *ss)
{
    socklen_t len = 0;
    const char *why = NULL;

    assert_int_equal(sd_addr_parse(text, default_port, ss, &len, &why), 0);
    return (struct sockaddr *)ss;
}

static void test_parse_and_format_round_trip(void **state)
{
    struct sockaddr_storage ss;
    char buf[SD_ADDR_STRLEN];

    (void)state;
    assert_string_equal(sd_addr_format(parse_ok("192.0.2.1:5445", 0, &ss), buf, sizeof(buf)),
                        "192.0.2.1:5445");
    assert_string_equal(sd_addr_format(parse_ok("192.0.2.1", 445, &ss), buf, sizeof(buf)),
                        "192.0.2.1:445");
    assert_string_equal(sd_addr_format(parse_ok("[2001:db8::1]:5445", 0, &ss), buf, sizeof(buf)),
                        "[2001:db8::1]:5445");
}

static void test_parse_rejects_bad_ports(void **state)
{
    struct sockaddr_storage ss;
    socklen_t len;
    const char *why = NULL;

    (void)state;
    assert_int_equal(sd_addr_parse("192.0.2.1:0", 0, &ss, &len, &why), -EINVAL);
    assert_non_null(why);
    assert_int_equal(sd_addr_parse("192.0.2.1:65536", 0, &ss, &len, &why), -EINVAL);
    assert_int_equal(sd_addr_parse("192.0.2.1:44x", 0, &ss, &len, &why), -EINVAL);
}

static void test_equal_compares_address_and_port(void **state)
{
    struct sockaddr_storage a, b;

    (void)state;
    assert_true(sd_addr_equal(parse_ok("192.0.2.1:445", 0, &a), parse_ok("192.0.2.1:445", 0, &b)));
    assert_false(sd_addr_equal(parse_ok("192.0.2.1:445", 0, &a), parse_ok("192.0.2.1:446", 0, &b)));
    assert_false(sd_addr_equal(parse_ok("192.0.2.1:445", 0, &a), parse_ok("192.0.2.2:445", 0, &b)));
    assert_true(sd_addr_equal(parse_ok("[::1]:445", 0, &a), parse_ok("[::1]:445", 0, &b)));
}

static void test_is_any_only_for_the_wildcards(void **state)
{
    struct sockaddr_storage ss;

    (void)state;
    assert_true(sd_addr_is_any(parse_ok("0.0.0.0:5445", 0, &ss)));
    assert_true(sd_addr_is_any(parse_ok("[::]:5445", 0, &ss)));
    assert_false(sd_addr_is_any(parse_ok("127.0.0.1:5445", 0, &ss)));
    assert_false(sd_addr_is_any(parse_ok("[::1]:5445", 0, &ss)));
    assert_false(sd_addr_is_any(parse_ok("[::ffff:0.0.0.1]:5445", 0, &ss)));
    ss.ss_family = AF_UNIX;
    assert_false(sd_addr_is_any((struct sockaddr *)&ss));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_and_format_round_trip),
        cmocka_unit_test(test_parse_rejects_bad_ports),
        cmocka_unit_test(test_equal_compares_address_and_port),
        cmocka_unit_test(test_is_any_only_for_the_wildcards),
    };
    return cmocka_run_group_tests_name("addresses", tests, NULL, NULL);
}
