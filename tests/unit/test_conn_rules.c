/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/test_conn_rules.c — one test per MUST-verify / MUST-terminate rule of
 * MS-SMBD 3.1.5.6 (Negotiate Request), 3.1.5.7 (Negotiate Response) and 3.1.5.8
 * (Data Transfer), plus the engine's own consistency rules: a hostile message goes
 * in, the connection is terminated exactly once with the expected error and a
 * reason naming the rule, the provider is told to disconnect, nothing is delivered. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "th_conn.h"

#define MIB (1024u * 1024u)

/* th_expect_terminated(), plus the engine's own view of it; then frees e. */
static void expect_terminated(struct th_end *e, int err, const char *rule)
{
    th_expect_terminated(e, err, rule);
    assert_true(smbd_conn_is_terminated(e->conn));
    assert_int_equal(e->established, 0 + (smbd_conn_role(e->conn) == SMBD_ROLE_ESTABLISHED));
    th_end_free(e);
}

/* ---- 3.1.5.6: Negotiate Request, received by the PASSIVE side ---- */

static void passive_gets(struct th_end *e, const uint8_t *msg, size_t len)
{
    th_end_init(e, SMBD_ROLE_PASSIVE, NULL, fake_qp_new(len));
    assert_int_equal(smbd_conn_start(e->conn, 0), 0);
    assert_int_equal(fake_inject(e->qp, msg, len, 0), 0);
    th_poll(e, 0, 100);
}

static void test_req_shorter_than_20(void **state)
{
    struct th_end e;
    uint8_t m[32];

    (void)state;
    th_negotiate_req(m, 0x100, 0x100, 255, 1364, 8192, MIB);
    passive_gets(&e, m, 19);
    assert_int_equal(fake_sent_count(e.qp), 0);
    expect_terminated(&e, -EPROTO, "3.1.5.6");
}

static void test_req_credits_requested_zero(void **state)
{
    struct th_end e;
    uint8_t m[32];

    (void)state;
    passive_gets(&e, m, th_negotiate_req(m, 0x100, 0x100, 0, 1364, 8192, MIB));
    assert_int_equal(fake_sent_count(e.qp), 0);
    expect_terminated(&e, -EPROTO, "CreditsRequested 0 (MS-SMBD 3.1.5.6)");
}

static void test_req_max_receive_size_below_128(void **state)
{
    struct th_end e;
    uint8_t m[32];

    (void)state;
    passive_gets(&e, m, th_negotiate_req(m, 0x100, 0x100, 255, 1364, 127, MIB));
    expect_terminated(&e, -EPROTO, "MaxReceiveSize 127 < 128 (MS-SMBD 3.1.5.6)");
}

static void test_req_max_fragmented_size_below_131072(void **state)
{
    struct th_end e;
    uint8_t m[32];

    (void)state;
    passive_gets(&e, m, th_negotiate_req(m, 0x100, 0x100, 255, 1364, 8192, 131071));
    expect_terminated(&e, -EPROTO, "MaxFragmentedSize 131071 < 131072 (MS-SMBD 3.1.5.6)");
}

/* The version rule answers STATUS_NOT_SUPPORTED instead (also in test_conn_negotiate). */
static void test_req_version_range_without_0100(void **state)
{
    struct th_end e;
    uint8_t m[32];

    (void)state;
    passive_gets(&e, m, th_negotiate_req(m, 0x0000, 0x00ff, 255, 1364, 8192, MIB));
    assert_int_equal(fake_sent_count(e.qp), 1);
    assert_int_equal(sd_le32(fake_sent_get(e.qp, 0)->data + 12), 0xC00000BB);
    expect_terminated(&e, -ECONNREFUSED, "3.1.5.6");
}

/* Edge values that are allowed must not terminate. */
static void test_req_minimum_values_accepted(void **state)
{
    struct th_end e;
    uint8_t m[32];
    struct smbd_params p;

    (void)state;
    passive_gets(&e, m, th_negotiate_req(m, 0x100, 0x100, 1, 100, 128, 131072));
    assert_int_equal(e.terminated_calls, 0);
    assert_int_equal(e.established, 1);
    assert_int_equal(smbd_conn_query(e.conn, &p), 0);
    assert_int_equal(p.neg.max_receive_size, 128); /* PreferredSendSize 100 rounds up to 128 */
    assert_int_equal(p.neg.max_send_size, 128);
    th_end_free(&e);
}

/* ---- 3.1.5.7: Negotiate Response, received by the ACTIVE side ---- */

static void active_gets(struct th_end *e, const uint8_t *msg, size_t len)
{
    th_end_init(e, SMBD_ROLE_ACTIVE, NULL, fake_qp_new(len + 100));
    assert_int_equal(smbd_conn_start(e->conn, 0), 0);
    assert_int_equal(fake_inject(e->qp, msg, len, 0), 0);
    th_poll(e, 0, 100);
}

static void test_resp_shorter_than_32(void **state)
{
    struct th_end e;
    uint8_t m[32];

    (void)state;
    th_negotiate_resp(m, 0x100, 255, 255, 0, MIB, 1364, 8192, MIB);
    active_gets(&e, m, 31);
    expect_terminated(&e, -EPROTO, "shorter than 32 bytes (MS-SMBD 3.1.5.7)");
}

static void test_resp_negotiated_version_not_0100(void **state)
{
    struct th_end e;
    uint8_t m[32];

    (void)state;
    active_gets(&e, m, th_negotiate_resp(m, 0x200, 255, 255, 0, MIB, 1364, 8192, MIB));
    expect_terminated(&e, -EPROTO, "NegotiatedVersion is not 0x0100 (MS-SMBD 3.1.5.7)");
}

static void test_resp_max_receive_size_below_128(void **state)
{
    struct th_end e;
    uint8_t m[32];

    (void)state;
    active_gets(&e, m, th_negotiate_resp(m, 0x100, 255, 255, 0, MIB, 1364, 127, MIB));
    expect_terminated(&e, -EPROTO, "MaxReceiveSize is below 128 (MS-SMBD 3.1.5.7)");
}

static void test_resp_max_fragmented_size_below_131072(void **state)
{
    struct th_end e;
    uint8_t m[32];

    (void)state;
    active_gets(&e, m, th_negotiate_resp(m, 0x100, 255, 255, 0, MIB, 1364, 8192, 131071));
    expect_terminated(&e, -EPROTO, "MaxFragmentedSize is below 131072 (MS-SMBD 3.1.5.7)");
}

static void test_resp_credits_granted_zero(void **state)
{
    struct th_end e;
    uint8_t m[32];

    (void)state;
    active_gets(&e, m, th_negotiate_resp(m, 0x100, 255, 0, 0, MIB, 1364, 8192, MIB));
    expect_terminated(&e, -EPROTO, "CreditsGranted is 0 (MS-SMBD 3.1.5.7)");
}

static void test_resp_credits_requested_zero(void **state)
{
    struct th_end e;
    uint8_t m[32];

    (void)state;
    active_gets(&e, m, th_negotiate_resp(m, 0x100, 0, 255, 0, MIB, 1364, 8192, MIB));
    expect_terminated(&e, -EPROTO, "CreditsRequested is 0 (MS-SMBD 3.1.5.7)");
}

static void test_resp_preferred_send_size_above_our_max_receive(void **state)
{
    struct th_end e;
    uint8_t m[32];

    (void)state;
    active_gets(&e, m, th_negotiate_resp(m, 0x100, 255, 255, 0, MIB, 8193, 8192, MIB));
    expect_terminated(&e, -EPROTO, "PreferredSendSize exceeds our MaxReceiveSize (MS-SMBD 3.1.5.7)");
}

static void test_resp_status_not_success(void **state)
{
    struct th_end e;
    uint8_t m[32];

    (void)state;
    active_gets(&e, m, th_negotiate_resp(m, 0x100, 255, 255, 0xC000009A, MIB, 1364, 8192, MIB));
    expect_terminated(&e, -ECONNREFUSED, "status 0xc000009a (MS-SMBD 3.1.5.7)");
}

/* ---- 3.1.5.8: Data Transfer, received once ESTABLISHED ---- */

/* An ACTIVE engine negotiated with the test as its peer; the peer holds 10 credits. */
static void established(struct th_end *e)
{
    uint8_t m[32];

    th_end_init(e, SMBD_ROLE_ACTIVE, NULL, fake_qp_new(77));
    th_active_establish(e, m, th_negotiate_resp(m, 0x100, 10, 10, 0, MIB, 1364, 8192, MIB));
}

static void data_gets(struct th_end *e, const uint8_t *msg, size_t len)
{
    assert_int_equal(fake_inject(e->qp, msg, len, 0), 0);
    th_poll(e, 1, 100);
}

static const uint8_t payload[64] = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde";

static void test_data_shorter_than_20(void **state)
{
    struct th_end e;
    uint8_t m[64];

    (void)state;
    established(&e);
    th_data_msg(m, 10, 0, 0, 0, 0, 0, NULL, 0);
    data_gets(&e, m, 19);
    expect_terminated(&e, -EPROTO, "shorter than 20 bytes (MS-SMBD 3.1.5.8)");
}

static void test_data_credits_requested_zero(void **state)
{
    struct th_end e;
    uint8_t m[64];

    (void)state;
    established(&e);
    data_gets(&e, m, th_data_msg(m, 0, 0, 0, 0, 24, 10, payload, 10));
    expect_terminated(&e, -EPROTO, "CreditsRequested 0 (MS-SMBD 3.1.5.8)");
}

static void test_data_offset_not_8_byte_aligned(void **state)
{
    struct th_end e;
    uint8_t m[64];

    (void)state;
    established(&e);
    data_gets(&e, m, th_data_msg(m, 10, 0, 0, 0, 28, 10, payload, 10));
    expect_terminated(&e, -EPROTO, "not 8-byte aligned (MS-SMBD 3.1.5.8)");
}

static void test_data_beyond_message(void **state)
{
    struct th_end e;
    uint8_t m[64];

    (void)state;
    established(&e);
    th_data_msg(m, 10, 0, 0, 0, 24, 11, payload, 10); /* claims 11, carries 10 */
    data_gets(&e, m, 34);
    expect_terminated(&e, -EPROTO, "beyond the message (MS-SMBD 3.1.5.8)");
}

static void test_data_exceeds_max_fragmented_size(void **state)
{
    struct th_end e;
    uint8_t m[64];

    (void)state;
    established(&e);
    /* 10 + (8 MiB + 64 KiB - 9) is one byte over our MaxFragmentedRecvSize. */
    data_gets(&e, m, th_data_msg(m, 10, 0, 0, 8 * MIB + 64 * 1024 - 9, 24, 10, payload, 10));
    expect_terminated(&e, -EPROTO, "exceed MaxFragmentedRecvSize (MS-SMBD 3.1.5.8)");
}

static void test_data_exactly_max_fragmented_size_accepted(void **state)
{
    struct th_end e;
    uint8_t m[64];

    (void)state;
    established(&e);
    data_gets(&e, m, th_data_msg(m, 10, 0, 0, 8 * MIB + 64 * 1024 - 10, 24, 10, payload, 10));
    assert_int_equal(e.terminated_calls, 0);
    th_end_free(&e);
}

static void test_data_sequence_ends_early(void **state)
{
    struct th_end e;
    uint8_t m[64];

    (void)state;
    established(&e);
    data_gets(&e, m, th_data_msg(m, 10, 0, 0, 20, 24, 10, payload, 10));
    assert_int_equal(e.terminated_calls, 0);
    /* 10 of the 20 remaining bytes, then RemainingDataLength 0: 10 bytes missing. */
    data_gets(&e, m, th_data_msg(m, 10, 0, 0, 0, 24, 10, payload, 10));
    expect_terminated(&e, -EPROTO, "10 bytes still missing (MS-SMBD 3.1.5.8)");
}

/* ---- the engine's own consistency rules on received Data Transfers ---- */

static void test_data_fragment_longer_than_announced(void **state)
{
    struct th_end e;
    uint8_t m[64];

    (void)state;
    established(&e);
    data_gets(&e, m, th_data_msg(m, 10, 0, 0, 5, 24, 10, payload, 10));
    data_gets(&e, m, th_data_msg(m, 10, 0, 0, 0, 24, 6, payload, 6));
    expect_terminated(&e, -EPROTO, "exceeds the 5 bytes announced");
}

static void test_data_remaining_contradicts_sequence(void **state)
{
    struct th_end e;
    uint8_t m[64];

    (void)state;
    established(&e);
    data_gets(&e, m, th_data_msg(m, 10, 0, 0, 30, 24, 10, payload, 10));
    data_gets(&e, m, th_data_msg(m, 10, 0, 0, 15, 24, 10, payload, 10)); /* 20 expected */
    expect_terminated(&e, -EPROTO, "RemainingDataLength 15 contradicts the 20 bytes");
}

static void test_data_without_credit(void **state)
{
    struct th_end e;
    uint8_t m[64];

    (void)state;
    established(&e);
    smbd_conn_pause_receive(e.conn, 1, 1); /* no refills: the peer keeps its 10 */
    for (int i = 0; i < 10; i++)
        data_gets(&e, m, th_data_msg(m, 10, 0, 0, 0, 24, 1, payload, 1));
    assert_int_equal(e.terminated_calls, 0);
    assert_int_equal(e.delivered, 10); /* paused still delivers what arrives */
    e.delivered = 0;
    data_gets(&e, m, th_data_msg(m, 10, 0, 0, 0, 24, 1, payload, 1));
    expect_terminated(&e, -EPROTO, "held no send credit (MS-SMBD 3.1.5.1)");
}

/* 3.1.5.8: an empty fragment with RemainingDataLength is part of a message (its zero
 * bytes are appended, FragmentReassemblyRemaining stays): first, in the middle, and the
 * message reassembles exactly, in both delivery modes; streaming hands the upper layer
 * its first fragment with bytes as the first. */
static void empty_fragments_of(struct th_end *e)
{
    uint8_t m[96];

    data_gets(e, m, th_data_msg(m, 10, 0, 0, 40, 0, 0, NULL, 0));        /* empty, first */
    data_gets(e, m, th_data_msg(m, 10, 0, 0, 30, 24, 10, payload, 10));  /* 10 bytes */
    data_gets(e, m, th_data_msg(m, 10, 0, 0, 30, 0, 0, NULL, 0));        /* empty, middle */
    data_gets(e, m, th_data_msg(m, 10, 0, 0, 0, 24, 30, payload + 10, 30));
    assert_int_equal(e->terminated_calls, 0);
}

static void test_data_empty_fragments_reassemble(void **state)
{
    struct th_end e;
    uint8_t m[32];

    (void)state;
    established(&e);
    empty_fragments_of(&e);
    assert_int_equal(e.delivered, 1);
    assert_int_equal(e.last_len, 40);
    assert_memory_equal(e.last, payload, 40);
    th_end_free(&e);

    th_end_init_streaming(&e, SMBD_ROLE_ACTIVE, NULL, fake_qp_new(78));
    th_active_establish(&e, m, th_negotiate_resp(m, 0x100, 10, 10, 0, MIB, 1364, 8192, MIB));
    empty_fragments_of(&e);
    assert_int_equal(e.nfrags, 2);
    assert_true(e.frags[0].first && e.frags[0].len == 10 && e.frags[0].remaining == 30);
    assert_true(!e.frags[1].first && e.frags[1].len == 30 && e.frags[1].remaining == 0);
    assert_int_equal(e.stream_len, 40);
    assert_memory_equal(e.stream, payload, 40);
    th_end_free(&e);
}

/* An empty fragment must keep the RemainingDataLength the message is at. */
static void test_data_empty_fragment_contradicting_remaining(void **state)
{
    struct th_end e;
    uint8_t m[64];

    (void)state;
    established(&e);
    data_gets(&e, m, th_data_msg(m, 10, 0, 0, 30, 24, 10, payload, 10));
    data_gets(&e, m, th_data_msg(m, 10, 0, 0, 29, 0, 0, NULL, 0));
    expect_terminated(&e, -EPROTO, "contradicts the 30 bytes still expected");
}

static void test_data_unknown_flags(void **state)
{
    struct th_end e;
    uint8_t m[64];

    (void)state;
    established(&e);
    data_gets(&e, m, th_data_msg(m, 10, 0, 2, 0, 24, 1, payload, 1));
    expect_terminated(&e, -EPROTO, "unknown Flags (MS-SMBD 2.2.3)");
}

static void test_data_credit_overflow(void **state)
{
    struct th_end e;
    uint8_t m[64];

    (void)state;
    established(&e);
    data_gets(&e, m, th_data_msg(m, 10, 65535, 0, 0, 0, 0, NULL, 0));
    expect_terminated(&e, -EPROTO, "more than 65535 send credits");
}

/* ---- provider-reported failures (3.1.7.1) ---- */

/* More Sends than posted receives: the provider breaks the connection on both
 * sides (as RDMA does); the engine terminates once. */
static void test_send_without_posted_receive_breaks_both(void **state)
{
    struct th_end e;
    uint8_t m[64];
    int n = 0, posted;

    (void)state;
    established(&e);
    smbd_conn_pause_receive(e.conn, 1, 1);
    posted = fake_posted_recvs(e.qp);
    th_data_msg(m, 10, 0, 0, 0, 24, 1, payload, 1);
    while (fake_inject(e.qp, m, 25, 0) == 0)
        n++;
    assert_int_equal(n, posted);
    assert_false(fake_is_connected(e.qp));
    th_poll(&e, 0, 100000);
    assert_int_equal(e.terminated_calls, 1);
    /* Messages within the granted credits are delivered; the next one was sent beyond them
     * the paused receiver granted, which is terminated as a protocol violation
     * before the provider's connection loss is reached. */
    assert_int_equal(e.term_err, -EPROTO);
    assert_true(e.delivered >= 1 && e.delivered < (size_t)posted);
    th_end_free(&e);
}

static void test_receive_error_completion_terminates(void **state)
{
    struct th_end e;

    (void)state;
    established(&e);
    fake_break(e.qp, SD_WC_FATAL);
    th_poll(&e, 0, 100000);
    assert_int_equal(e.terminated_calls, 1);
    assert_int_equal(e.term_err, -ECONNRESET);
    assert_non_null(strstr(e.term_reason, "a receive failed: transport failure"));
    th_end_free(&e);
}

static void test_oversized_send_breaks_connection(void **state)
{
    struct th_end e;
    static uint8_t big[9000];

    (void)state;
    established(&e);
    assert_int_equal(fake_inject(e.qp, big, sizeof(big), 0), -EMSGSIZE);
    th_poll(&e, 0, 100000);
    assert_int_equal(e.terminated_calls, 1);
    assert_int_equal(e.term_err, -EPROTO);
    assert_non_null(strstr(e.term_reason, "MaxReceiveSize exceeded (MS-SMBD 3.1.5.4)"));
    th_end_free(&e);
}

/* A fragment with remaining bytes announced, then the peer's orderly close. */
static void close_after_fragment(struct th_end *e, uint32_t remaining)
{
    uint8_t m[64];

    established(e);
    data_gets(e, m, th_data_msg(m, 10, 0, 0, remaining, 24, 10, payload, 10));
    fake_break(e->qp, SD_WC_FLUSHED);
    th_poll(e, 0, 100000);
    assert_int_equal(e->terminated_calls, 1);
}

/* Closed with a fragmented message begun: not an ordinary end (the message can never
 * complete), so the reason says how much is missing. */
static void test_close_mid_message(void **state)
{
    struct th_end e;

    (void)state;
    close_after_fragment(&e, 20);
    assert_int_equal(e.term_err, -ECONNRESET);
    assert_non_null(strstr(e.term_reason, "20 bytes of a fragmented message still to come"));
    assert_false(smbd_conn_peer_closed(e.conn));
    assert_int_equal(e.delivered, 0);
    th_end_free(&e);
}

/* Between messages the same close is the ordinary end of the session. */
static void test_close_between_messages(void **state)
{
    struct th_end e;

    (void)state;
    close_after_fragment(&e, 0);
    assert_non_null(strstr(e.term_reason, "the peer closed the RDMA connection (MS-SMBD"));
    assert_true(smbd_conn_peer_closed(e.conn));
    th_end_free(&e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_req_shorter_than_20),
        cmocka_unit_test(test_req_credits_requested_zero),
        cmocka_unit_test(test_req_max_receive_size_below_128),
        cmocka_unit_test(test_req_max_fragmented_size_below_131072),
        cmocka_unit_test(test_req_version_range_without_0100),
        cmocka_unit_test(test_req_minimum_values_accepted),
        cmocka_unit_test(test_resp_shorter_than_32),
        cmocka_unit_test(test_resp_negotiated_version_not_0100),
        cmocka_unit_test(test_resp_max_receive_size_below_128),
        cmocka_unit_test(test_resp_max_fragmented_size_below_131072),
        cmocka_unit_test(test_resp_credits_granted_zero),
        cmocka_unit_test(test_resp_credits_requested_zero),
        cmocka_unit_test(test_resp_preferred_send_size_above_our_max_receive),
        cmocka_unit_test(test_resp_status_not_success),
        cmocka_unit_test(test_data_shorter_than_20),
        cmocka_unit_test(test_data_credits_requested_zero),
        cmocka_unit_test(test_data_offset_not_8_byte_aligned),
        cmocka_unit_test(test_data_beyond_message),
        cmocka_unit_test(test_data_exceeds_max_fragmented_size),
        cmocka_unit_test(test_data_exactly_max_fragmented_size_accepted),
        cmocka_unit_test(test_data_sequence_ends_early),
        cmocka_unit_test(test_data_fragment_longer_than_announced),
        cmocka_unit_test(test_data_remaining_contradicts_sequence),
        cmocka_unit_test(test_data_without_credit),
        cmocka_unit_test(test_data_empty_fragments_reassemble),
        cmocka_unit_test(test_data_empty_fragment_contradicting_remaining),
        cmocka_unit_test(test_data_unknown_flags),
        cmocka_unit_test(test_data_credit_overflow),
        cmocka_unit_test(test_send_without_posted_receive_breaks_both),
        cmocka_unit_test(test_receive_error_completion_terminates),
        cmocka_unit_test(test_oversized_send_breaks_connection),
        cmocka_unit_test(test_close_mid_message),
        cmocka_unit_test(test_close_between_messages),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
