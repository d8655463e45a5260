/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/test_conn_stream.c — streaming delivery (smbd_upper.deliver_fragment):
 * fragments go up in order as they arrive, with message boundaries (first,
 * RemainingDataLength), without waiting for the whole message; every 3.1.5.8 rule
 * still terminates the connection before the offending fragment is delivered; a
 * receive pause stops credit grants but not delivery; a real fragmented message from
 * a peer engine arrives intact, also when the sender disconnects right after it. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "th_conn.h"

#define MIB (1024u * 1024u)

static const uint8_t payload[64] = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde";

/* A streaming ACTIVE engine negotiated with the test as its peer. */
static void established(struct th_end *e)
{
    uint8_t m[32];

    th_end_init_streaming(e, SMBD_ROLE_ACTIVE, NULL, fake_qp_new(91));
    th_active_establish(e, m, th_negotiate_resp(m, 0x100, 10, 10, 0, MIB, 1364, 8192, MIB));
}

/* The peer sends one Data Transfer fragment of len payload bytes starting at payload[off]. */
static void peer_fragment(struct th_end *e, uint32_t remaining, size_t off, uint32_t len)
{
    uint8_t m[128];

    assert_int_equal(fake_inject(e->qp, m, th_data_msg(m, 10, 0, 0, remaining, 24, len,
                                                       payload + off, len), 0), 0);
    th_poll(e, 1, 100);
}

static void expect_frag(const struct th_end *e, int i, size_t len, uint32_t remaining, int first)
{
    assert_true(i < e->nfrags);
    assert_int_equal(e->frags[i].len, len);
    assert_int_equal(e->frags[i].remaining, remaining);
    assert_int_equal(e->frags[i].first, first);
}

/* Each fragment goes up as soon as it arrives, in order, with its boundaries. */
static void test_fragments_in_order_with_boundaries(void **state)
{
    struct th_end e;
    struct smbd_stats st;

    (void)state;
    established(&e);
    peer_fragment(&e, 20, 0, 10);
    assert_int_equal(e.nfrags, 1); /* not held back until the message is complete */
    assert_int_equal(e.delivered, 0);
    peer_fragment(&e, 10, 10, 10);
    peer_fragment(&e, 0, 20, 10);
    peer_fragment(&e, 0, 30, 5); /* an unfragmented message */
    assert_int_equal(e.terminated_calls, 0);
    assert_int_equal(e.nfrags, 4);
    expect_frag(&e, 0, 10, 20, 1);
    expect_frag(&e, 1, 10, 10, 0);
    expect_frag(&e, 2, 10, 0, 0);
    expect_frag(&e, 3, 5, 0, 1);
    assert_int_equal(e.delivered, 2);
    assert_int_equal(e.stream_len, 35);
    assert_memory_equal(e.stream, payload, 35);
    smbd_conn_get_stats(e.conn, &st);
    assert_int_equal(st.msgs_delivered, 2);
    assert_int_equal(st.bytes_delivered, 35);
    th_end_free(&e);
}

/* An empty message (credits only) between fragments delivers nothing. */
static void test_empty_message_delivers_nothing(void **state)
{
    struct th_end e;
    uint8_t m[64];

    (void)state;
    established(&e);
    peer_fragment(&e, 4, 0, 8);
    assert_int_equal(fake_inject(e.qp, m, th_data_msg(m, 10, 1, 0, 0, 0, 0, NULL, 0), 0), 0);
    th_poll(&e, 1, 100);
    peer_fragment(&e, 0, 8, 4);
    assert_int_equal(e.terminated_calls, 0);
    assert_int_equal(e.nfrags, 2);
    expect_frag(&e, 1, 4, 0, 0);
    assert_memory_equal(e.stream, payload, 12);
    th_end_free(&e);
}

struct violation {
    uint32_t rem1, len1, rem2, len2; /* first fragment, then the offending one */
    const char *rule;
};

static void run_violation(const struct violation *v, int delivered_before)
{
    struct th_end e;

    established(&e);
    peer_fragment(&e, v->rem1, 0, v->len1);
    if (v->len2)
        peer_fragment(&e, v->rem2, v->len1, v->len2);
    th_expect_terminated(&e, -EPROTO, v->rule);
    assert_int_equal(e.nfrags, delivered_before); /* the offending fragment never goes up */
    th_end_free(&e);
}

static void test_continuation_longer_than_announced(void **state)
{
    static const struct violation v = { 10, 10, 0, 20, "exceeds the 10 bytes announced" };

    (void)state;
    run_violation(&v, 1);
}

static void test_sequence_ends_early(void **state)
{
    static const struct violation v = { 20, 10, 0, 10, "10 bytes still missing (MS-SMBD 3.1.5.8)" };

    (void)state;
    run_violation(&v, 1);
}

static void test_remaining_contradicts(void **state)
{
    static const struct violation v = { 20, 10, 5, 10, "RemainingDataLength 5 contradicts" };

    (void)state;
    run_violation(&v, 1);
}

static void test_first_fragment_exceeds_max_fragmented_size(void **state)
{
    static const struct violation v = { 8 * MIB + 64 * 1024 - 9, 10, 0, 0,
                                        "exceed MaxFragmentedRecvSize (MS-SMBD 3.1.5.8)" };

    (void)state;
    run_violation(&v, 0);
}

static uint16_t granted_since(const struct th_end *e, size_t from)
{
    uint16_t sum = 0;

    for (size_t i = from; i < fake_sent_count(e->qp); i++)
        sum += sd_le16(fake_sent_get(e->qp, i)->data + 2);
    return sum;
}

/* While receives are paused, fragments already granted still go up in order and no
 * credit is granted, even when the peer runs down to its last credit; resuming grants
 * again. */
static void test_pause_keeps_delivering_without_grants(void **state)
{
    struct th_end e;
    struct smbd_params p;
    uint32_t nf;
    size_t sent;

    (void)state;
    established(&e);
    smbd_conn_query(e.conn, &p);
    nf = p.receive_credits - 1u; /* all but the peer's last credit */
    assert_true(nf >= 3 && nf * 4 <= sizeof(payload));
    smbd_conn_pause_receive(e.conn, 1, 1);
    sent = fake_sent_count(e.qp);
    for (uint32_t i = 0; i < nf; i++)
        peer_fragment(&e, (nf - 1 - i) * 4, i * 4, 4);
    assert_int_equal(e.terminated_calls, 0);
    assert_int_equal(e.nfrags, nf);
    assert_int_equal(e.delivered, 1);
    assert_memory_equal(e.stream, payload, nf * 4);
    assert_int_equal(granted_since(&e, sent), 0);
    smbd_conn_query(e.conn, &p);
    assert_int_equal(p.receive_credits, 1); /* consumed, none granted back */
    smbd_conn_pause_receive(e.conn, 0, 2);
    assert_true(granted_since(&e, sent) >= 1);
    th_end_free(&e);
}

/* a (streaming, ACTIVE) and b (PASSIVE) over a fake pair, negotiated; b sends msg. */
static void pair_sends(struct th_end *a, struct th_end *b, uint64_t seed, const uint8_t *msg,
                       size_t len)
{
    struct sd_qp *qa, *qb;
    struct iovec iov = { (void *)(uintptr_t)msg, len };

    fake_pair_new(&qa, &qb, seed);
    th_end_init_streaming(a, SMBD_ROLE_ACTIVE, NULL, qa);
    th_end_init(b, SMBD_ROLE_PASSIVE, NULL, qb);
    assert_int_equal(smbd_conn_start(b->conn, 0), 0);
    assert_int_equal(smbd_conn_start(a->conn, 0), 0);
    th_settle(a, b, 0);
    assert_int_equal(smbd_conn_send(b->conn, &iov, 1, 1), 0);
}

/* A 100000-byte message from a real engine arrives as MaxSendSize fragments whose
 * concatenation is the message. */
static void test_pair_large_message(void **state)
{
    static uint8_t msg[100000];
    struct th_end a, b;
    uint32_t left = sizeof(msg);

    (void)state;
    for (size_t i = 0; i < sizeof(msg); i++)
        msg[i] = (uint8_t)(i * 31 + 7);
    pair_sends(&a, &b, 5, msg, sizeof(msg));
    th_settle(&a, &b, 1);
    assert_int_equal(a.terminated_calls + b.terminated_calls, 0);
    assert_int_equal(a.delivered, 1);
    assert_int_equal(a.stream_len, sizeof(msg));
    assert_memory_equal(a.stream, msg, sizeof(msg));
    assert_int_equal(a.nfrags, (sizeof(msg) + 1339) / 1340); /* 1364 - 24-byte header */
    for (int i = 0; i < a.nfrags && i < 64; i++) {
        left -= (uint32_t)a.frags[i].len;
        assert_int_equal(a.frags[i].remaining, left);
        assert_int_equal(a.frags[i].first, i == 0);
    }
    th_end_free(&a);
    th_end_free(&b);
}

/* An orderly disconnect right after a send: the fragments already posted reach the
 * peer before the provider is told to disconnect (which would drop those not yet on
 * the wire), so the peer gets the whole message and then the close. */
static void test_disconnect_waits_for_posted_sends(void **state)
{
    static uint8_t msg[10000];
    struct th_end a, b;

    (void)state;
    memset(msg, 0x5a, sizeof(msg));
    pair_sends(&a, &b, 6, msg, sizeof(msg));
    assert_int_equal(smbd_conn_send_queued(b.conn), 0);
    assert_true(fake_wire_pending(b.qp) > 1);
    smbd_conn_disconnect(b.conn);
    assert_int_equal(fake_disconnects(b.qp), 0);
    th_settle(&a, &b, 2);
    assert_int_equal(fake_disconnects(b.qp), 1);
    assert_int_equal(a.delivered, 1);
    assert_int_equal(a.stream_len, sizeof(msg));
    assert_memory_equal(a.stream, msg, sizeof(msg));
    assert_int_equal(b.terminated_calls, 1);
    assert_int_equal(b.term_err, 0);
    assert_int_equal(a.terminated_calls, 1);
    th_end_free(&a);
    th_end_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fragments_in_order_with_boundaries),
        cmocka_unit_test(test_empty_message_delivers_nothing),
        cmocka_unit_test(test_continuation_longer_than_announced),
        cmocka_unit_test(test_sequence_ends_early),
        cmocka_unit_test(test_remaining_contradicts),
        cmocka_unit_test(test_first_fragment_exceeds_max_fragmented_size),
        cmocka_unit_test(test_pause_keeps_delivering_without_grants),
        cmocka_unit_test(test_pair_large_message),
        cmocka_unit_test(test_disconnect_waits_for_posted_sends),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
