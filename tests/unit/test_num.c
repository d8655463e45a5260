/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/test_num.c — the one number parser (common/sd_num.c) and the one clock
 * (common/sd_clock.c): strict digits, exact range ends, no overflow, no partial
 * parse; deadlines turned into poll timeouts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "sd_clock.h"
#include "sd_num.h"

static void test_accepts_range_ends(void **state)
{
    uint64_t v = 0;

    (void)state;
    assert_int_equal(sd_num_parse_str("3", 3, 255, &v), 0);
    assert_int_equal(v, 3);
    assert_int_equal(sd_num_parse_str("255", 3, 255, &v), 0);
    assert_int_equal(v, 255);
    assert_int_equal(sd_num_parse_str("0", 0, 0, &v), 0);
    assert_int_equal(v, 0);
    assert_int_equal(sd_num_parse_str("0065535", 1, 65535, &v), 0);
    assert_int_equal(v, 65535);
    assert_int_equal(sd_num_parse_str("18446744073709551615", 0, UINT64_MAX, &v), 0);
    assert_true(v == UINT64_MAX);
}

static void test_rejects(void **state)
{
    static const char *const bad[] = { "", "2", "256", "-5", "+5", " 5", "5 ", "5x", "0x10",
                                       "1e3", "99999999999999999999999", "2.5" };
    uint64_t v = 77;

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(sd_num_parse_str(bad[i], 3, 255, &v), -1);
        assert_int_equal(v, 77); /* untouched on failure */
    }
    assert_int_equal(sd_num_parse_str(NULL, 0, 10, &v), -1);
    assert_int_equal(sd_num_parse_str("18446744073709551616", 0, UINT64_MAX, &v), -1);
    assert_int_equal(sd_num_parse_str("7", 0, 5, &v), -1); /* one digit above a small max */
}

static void test_length_bounded(void **state)
{
    uint64_t v = 0;

    (void)state;
    assert_int_equal(sd_num_parse("445:5445", 3, 1, 65535, &v), 0);
    assert_int_equal(v, 445);
    assert_int_equal(sd_num_parse("445", 0, 0, 65535, &v), -1);
}

static void test_clock_deadlines(void **state)
{
    uint64_t now = sd_now_ms();

    (void)state;
    assert_true(now > 0);
    assert_int_equal(sd_ms_until(UINT64_MAX), -1);
    assert_int_equal(sd_ms_until(0), 0);
    assert_int_equal(sd_ms_until(now), 0);
    assert_in_range(sd_ms_until(now + 5000), 4000, 5000);
    assert_int_equal(sd_ms_until(UINT64_MAX - 1), INT32_MAX);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_accepts_range_ends),
        cmocka_unit_test(test_rejects),
        cmocka_unit_test(test_length_bounded),
        cmocka_unit_test(test_clock_deadlines),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
