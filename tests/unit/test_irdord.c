/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/test_irdord.c — MS-SMBD Appendix A IRD/ORD header: big-endian on
 * the wire, legacy little-endian accepted, zero and garbage refused, 6.2 min rules. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "sd_irdord.h"

static void test_encode_is_big_endian(void **state)
{
    uint8_t b[SD_IRDORD_HDR_LEN];
    const uint8_t want[SD_IRDORD_HDR_LEN] = { 0, 0, 0, 16, 0, 0, 1, 2 };

    (void)state;
    sd_irdord_encode(b, 16, 258);
    assert_memory_equal(b, want, sizeof(want));
}

static void test_decode_round_trip(void **state)
{
    uint8_t b[SD_IRDORD_HDR_LEN + 4] = { 0 };
    uint32_t ird = 0, ord = 0;
    int legacy = -1;

    (void)state;
    sd_irdord_encode(b, 1, 65535);
    assert_int_equal(sd_irdord_decode(b, sizeof(b), &ird, &ord, &legacy), 0);
    assert_int_equal(ird, 1);
    assert_int_equal(ord, 65535);
    assert_int_equal(legacy, 0);
}

static void test_decode_legacy_little_endian(void **state)
{
    const uint8_t le[SD_IRDORD_HDR_LEN] = { 16, 0, 0, 0, 8, 0, 0, 0 };
    uint32_t ird = 0, ord = 0;
    int legacy = -1;

    (void)state;
    assert_int_equal(sd_irdord_decode(le, sizeof(le), &ird, &ord, &legacy), 0);
    assert_int_equal(ird, 16);
    assert_int_equal(ord, 8);
    assert_int_equal(legacy, 1);
}

static void test_decode_rejects(void **state)
{
    const uint8_t zero_ird[SD_IRDORD_HDR_LEN] = { 0, 0, 0, 0, 0, 0, 0, 8 };
    const uint8_t zero_ord[SD_IRDORD_HDR_LEN] = { 0, 0, 0, 8, 0, 0, 0, 0 };
    const uint8_t garbage[SD_IRDORD_HDR_LEN] = { 1, 2, 3, 4, 5, 6, 7, 8 };
    const uint8_t mixed[SD_IRDORD_HDR_LEN] = { 0, 0, 0, 8, 8, 0, 0, 0 }; /* BE IRD, LE ORD */
    uint32_t ird, ord;
    int legacy;

    (void)state;
    assert_int_equal(sd_irdord_decode(zero_ird, sizeof(zero_ird), &ird, &ord, &legacy), -1);
    assert_int_equal(sd_irdord_decode(zero_ord, sizeof(zero_ord), &ird, &ord, &legacy), -1);
    assert_int_equal(sd_irdord_decode(garbage, sizeof(garbage), &ird, &ord, &legacy), -1);
    assert_int_equal(sd_irdord_decode(mixed, sizeof(mixed), &ird, &ord, &legacy), -1);
    assert_int_equal(sd_irdord_decode(zero_ird, 7, &ird, &ord, &legacy), -1);
    assert_int_equal(sd_irdord_decode(NULL, 0, &ird, &ord, &legacy), -1);
}

static void test_accept_min_rules(void **state)
{
    uint32_t rird, rord, lird, lord;

    (void)state;
    /* We (acceptor) offer IRD 16, ORD 4; the connector sent IRD 8, ORD 32. */
    assert_int_equal(sd_irdord_accept(16, 4, 8, 32, &rird, &rord, &lird, &lord), 0);
    assert_int_equal(rird, 4);  /* min(our ORD 4, peer IRD 8) */
    assert_int_equal(rord, 16); /* min(our IRD 16, peer ORD 32) */
    assert_int_equal(lird, 16); /* we serve what the connector issues */
    assert_int_equal(lord, 4);  /* we issue what the connector serves */
}

static void test_accept_rejects_zero(void **state)
{
    uint32_t rird, rord, lird, lord;

    (void)state;
    assert_int_equal(sd_irdord_accept(16, 4, 0, 32, &rird, &rord, &lird, &lord), -1);
    assert_int_equal(sd_irdord_accept(16, 4, 8, 0, &rird, &rord, &lird, &lord), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_encode_is_big_endian),
        cmocka_unit_test(test_decode_round_trip),
        cmocka_unit_test(test_decode_legacy_little_endian),
        cmocka_unit_test(test_decode_rejects),
        cmocka_unit_test(test_accept_min_rules),
        cmocka_unit_test(test_accept_rejects_zero),
    };
    return cmocka_run_group_tests_name("irdord", tests, NULL, NULL);
}
