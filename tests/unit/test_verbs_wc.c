/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/test_verbs_wc.c — rdma-core to provider.h translation: ibv_wc -> sd_wc
 * (error completions keep the posted opcode, IBV_WC_WITH_INV -> invalidated_rkey)
 * and enum sd_access -> minimal IBV_ACCESS_* flags. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "verbs/verbs_priv.h"

static void test_recv_with_invalidate(void **state)
{
    struct ibv_wc in = { .status = IBV_WC_SUCCESS, .opcode = IBV_WC_RECV, .byte_len = 1364,
                         .wc_flags = IBV_WC_WITH_INV };
    struct sd_verbs_wr wr = { .wr_id = 77, .opcode = SD_WC_RECV, .signaled = 1 };
    struct sd_wc out;

    (void)state;
    in.invalidated_rkey = 0xabcd1234;
    sd_verbs_wc_fill(&in, &wr, 1, &out);
    assert_int_equal(out.wr_id, 77);
    assert_int_equal(out.opcode, SD_WC_RECV);
    assert_int_equal(out.status, SD_WC_SUCCESS);
    assert_int_equal(out.byte_len, 1364);
    assert_int_equal(out.with_invalidate, 1);
    assert_int_equal(out.invalidated_rkey, 0xabcd1234);

    in.wc_flags = 0;
    sd_verbs_wc_fill(&in, &wr, 1, &out);
    assert_int_equal(out.with_invalidate, 0);
    assert_int_equal(out.invalidated_rkey, 0);
}

static void test_flushed_send_keeps_posted_opcode(void **state)
{
    /* The opcode of an error completion is undefined: poison it. */
    struct ibv_wc in = { .status = IBV_WC_WR_FLUSH_ERR, .opcode = IBV_WC_RECV,
                         .byte_len = 999, .wc_flags = IBV_WC_WITH_INV };
    struct sd_verbs_wr wr = { .wr_id = 5, .opcode = SD_WC_RDMA_READ, .signaled = 1 };
    struct sd_wc out;

    (void)state;
    sd_verbs_wc_fill(&in, &wr, 0, &out);
    assert_int_equal(out.wr_id, 5);
    assert_int_equal(out.opcode, SD_WC_RDMA_READ);
    assert_int_equal(out.status, SD_WC_FLUSHED);
    assert_int_equal(out.byte_len, 0);
    assert_int_equal(out.with_invalidate, 0);
}

static void test_status_mapping(void **state)
{
    (void)state;
    assert_int_equal(sd_verbs_wc_status(IBV_WC_SUCCESS), SD_WC_SUCCESS);
    assert_int_equal(sd_verbs_wc_status(IBV_WC_WR_FLUSH_ERR), SD_WC_FLUSHED);
    assert_int_equal(sd_verbs_wc_status(IBV_WC_LOC_LEN_ERR), SD_WC_LOCAL_LENGTH);
    assert_int_equal(sd_verbs_wc_status(IBV_WC_LOC_PROT_ERR), SD_WC_LOCAL_PROT);
    assert_int_equal(sd_verbs_wc_status(IBV_WC_REM_ACCESS_ERR), SD_WC_REMOTE_ACCESS);
    assert_int_equal(sd_verbs_wc_status(IBV_WC_REM_OP_ERR), SD_WC_REMOTE_OP);
    assert_int_equal(sd_verbs_wc_status(IBV_WC_RNR_RETRY_EXC_ERR), SD_WC_REMOTE_OP);
    assert_int_equal(sd_verbs_wc_status(IBV_WC_RETRY_EXC_ERR), SD_WC_FATAL);
    assert_int_equal(sd_verbs_wc_status(IBV_WC_GENERAL_ERR), SD_WC_FATAL);
}

static void test_access_flags_minimal(void **state)
{
    (void)state;
    assert_int_equal(sd_verbs_access_flags(0), 0);
    assert_int_equal(sd_verbs_access_flags(SD_ACCESS_LOCAL_WRITE), IBV_ACCESS_LOCAL_WRITE);
    assert_int_equal(sd_verbs_access_flags(SD_ACCESS_REMOTE_READ), IBV_ACCESS_REMOTE_READ);
    /* Verbs refuses remote write without local write. */
    assert_int_equal(sd_verbs_access_flags(SD_ACCESS_REMOTE_WRITE),
                     IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE);
    assert_int_equal(sd_verbs_access_flags(SD_ACCESS_LOCAL_WRITE | SD_ACCESS_REMOTE_READ),
                     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_recv_with_invalidate),
        cmocka_unit_test(test_flushed_send_keeps_posted_opcode),
        cmocka_unit_test(test_status_mapping),
        cmocka_unit_test(test_access_flags_minimal),
    };
    return cmocka_run_group_tests_name("verbs_wc", tests, NULL, NULL);
}
