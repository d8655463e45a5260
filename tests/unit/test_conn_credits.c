/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/test_conn_credits.c — the Data Transfer send side and credits:
 * fragmentation with DataOffset 24 and RemainingDataLength (MS-SMBD 3.1.5.4, the
 * 4.2 and 4.3 examples), SendQueue FIFO and waiting for credits (3.1.5.1), the
 * last-credit rule, credit grants and refills (3.1.5.8, 3.1.5.9), receive pauses,
 * send_ready, reassembly that reposts every receive at once, empty messages. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "th_conn.h"

#define MIB (1024u * 1024u)

/* An ACTIVE engine (send target 10) negotiated with the test as its peer. The peer
 * granted `granted` credits, asked for `peer_target` and receives up to peer_recv
 * bytes per message; our first message then grants it its target. */
static void established(struct th_end *e, uint16_t granted, uint16_t peer_target,
                        uint32_t peer_recv)
{
    struct smbd_config cfg;
    uint8_t m[32];

    smbd_config_default(&cfg, SMBD_ROLE_ACTIVE);
    cfg.send_credit_target = 10;
    th_end_init(e, SMBD_ROLE_ACTIVE, &cfg, fake_qp_new(granted));
    th_active_establish(e, m, th_negotiate_resp(m, 0x100, peer_target, granted, 0, MIB, 1024,
                                                peer_recv, MIB));
}

/* The peer sends a message: it uses one of its credits and grants us `grant`. */
static void peer_sends(struct th_end *e, uint16_t credits_req, uint16_t grant, const char *text)
{
    uint8_t m[64];
    size_t n = text ? strlen(text) : 0;

    assert_int_equal(fake_inject(e->qp, m, th_data_msg(m, credits_req, grant, 0, 0, n ? 24 : 0,
                                                       (uint32_t)n, text, n), 0), 0);
    th_poll(e, 1, 1000);
}

static int send_text(struct th_end *e, const char *text)
{
    struct iovec iov = { (void *)(uintptr_t)text, strlen(text) };

    return smbd_conn_send(e->conn, &iov, 1, 1);
}

static struct smbd_params params(const struct th_end *e)
{
    struct smbd_params p;

    assert_int_equal(smbd_conn_query(e->conn, &p), 0);
    return p;
}

/* MS-SMBD 4.2: 500 bytes in one message; it grants the credit the peer used. */
static void test_spec_4_2_five_hundred_bytes(void **state)
{
    struct th_end e;
    uint8_t data[500];
    struct iovec iov = { data, sizeof(data) };
    const struct fake_sent *m;

    (void)state;
    established(&e, 10, 10, 1024);
    peer_sends(&e, 10, 0, "SMB2 NEGOTIATE");
    for (size_t i = 0; i < sizeof(data); i++)
        data[i] = (uint8_t)(i * 7);
    fake_sent_clear(e.qp);
    assert_int_equal(smbd_conn_send(e.conn, &iov, 1, 1), 0);
    assert_int_equal(fake_sent_count(e.qp), 1);
    m = fake_sent_get(e.qp, 0);
    assert_int_equal(m->len, 524);
    assert_int_equal(sd_le16(m->data + 0), 10);    /* CreditsRequested */
    assert_int_equal(sd_le16(m->data + 2), 1);     /* CreditsGranted */
    assert_int_equal(sd_le16(m->data + 4), 0);     /* Flags */
    assert_int_equal(sd_le16(m->data + 6), 0);     /* Reserved */
    assert_int_equal(sd_le32(m->data + 8), 0);     /* RemainingDataLength */
    assert_int_equal(sd_le32(m->data + 12), 24);   /* DataOffset */
    assert_int_equal(sd_le32(m->data + 16), 500);  /* DataLength */
    assert_int_equal(sd_le32(m->data + 20), 0);    /* Padding */
    assert_memory_equal(m->data + 24, data, 500);
    th_end_free(&e);
}

/* MS-SMBD 4.3: 64 KiB with a 1 KiB MaxReceiveSize: 65 fragments of 1000 bytes and
 * a last one of 536, pausing for credits along the way. */
static void test_spec_4_3_sixty_four_kib(void **state)
{
    struct th_end e;
    static uint8_t data[65536];
    struct iovec iov = { data, sizeof(data) };
    uint32_t sent = 0;
    int frags = 0, rounds = 0;

    (void)state;
    for (size_t i = 0; i < sizeof(data); i++)
        data[i] = (uint8_t)(i ^ (i >> 8));
    established(&e, 10, 10, 1024);
    fake_sent_clear(e.qp);
    assert_int_equal(smbd_conn_send(e.conn, &iov, 1, 1), 0);
    assert_true(smbd_conn_send_queued(e.conn) > 0);
    for (size_t i = 0;; i++) {
        const struct fake_sent *m = fake_sent_get(e.qp, i);

        if (!m) {
            if (sent == sizeof(data) || ++rounds > 100)
                break;
            peer_sends(&e, 10, 10, NULL); /* the peer replenishes our credits */
            i--;
            continue;
        }
        if (sd_le32(m->data + 16) == 0)
            continue; /* a credit-only message */
        assert_int_equal(sd_le16(m->data + 0), 10);
        assert_int_equal(sd_le32(m->data + 12), 24);
        assert_int_equal(sd_le32(m->data + 16), frags < 65 ? 1000 : 536);
        assert_int_equal(m->len, 24 + sd_le32(m->data + 16));
        sent += sd_le32(m->data + 16);
        assert_int_equal(sd_le32(m->data + 8), sizeof(data) - sent);
        assert_memory_equal(m->data + 24, data + sent - sd_le32(m->data + 16),
                            sd_le32(m->data + 16));
        frags++;
    }
    assert_int_equal(frags, 66);
    assert_int_equal(sent, sizeof(data));
    assert_int_equal(smbd_conn_send_queued(e.conn), 0);
    assert_true(rounds > 1); /* it did have to wait for credits */
    th_end_free(&e);
}

/* Messages wait in FIFO order for credits (3.1.5.1). */
static void test_send_queue_fifo(void **state)
{
    struct th_end e;
    const char *texts[] = { "first", "second", "third", "fourth", "fifth" };
    size_t n;

    (void)state;
    established(&e, 3, 10, 1024);
    assert_int_equal(params(&e).send_credits, 2);
    fake_sent_clear(e.qp);
    for (int i = 0; i < 5; i++)
        assert_int_equal(send_text(&e, texts[i]), 0);
    n = fake_sent_count(e.qp);
    assert_int_equal(n, 2);
    assert_int_equal(params(&e).send_credits, 0);
    assert_int_equal(smbd_conn_send_queued(e.conn), strlen("third") + strlen("fourth") + strlen("fifth"));
    peer_sends(&e, 10, 5, NULL);
    assert_int_equal(fake_sent_count(e.qp), 5);
    for (int i = 0; i < 5; i++) {
        const struct fake_sent *m = fake_sent_get(e.qp, (size_t)i);

        assert_int_equal(sd_le32(m->data + 16), strlen(texts[i]));
        assert_memory_equal(m->data + 24, texts[i], strlen(texts[i]));
    }
    assert_int_equal(smbd_conn_send_queued(e.conn), 0);
    th_end_free(&e);
}

/* 3.1.5.1: with one send credit left and nothing to grant, nothing is sent; once a
 * grant is possible the message goes out carrying it. */
static void test_last_credit_needs_a_grant(void **state)
{
    struct th_end e;
    const struct fake_sent *m;

    (void)state;
    established(&e, 3, 10, 1024);
    smbd_conn_pause_receive(e.conn, 1, 1); /* no credit can be granted */
    fake_sent_clear(e.qp);
    assert_int_equal(send_text(&e, "uses credit 2 of 2"), 0);
    assert_int_equal(send_text(&e, "would use the last credit"), 0);
    assert_int_equal(fake_sent_count(e.qp), 1);
    assert_int_equal(sd_le16(fake_sent_get(e.qp, 0)->data + 2), 0);
    assert_int_equal(params(&e).send_credits, 1);
    assert_int_equal(smbd_conn_send_queued(e.conn), strlen("would use the last credit"));
    smbd_conn_pause_receive(e.conn, 0, 2);
    assert_int_equal(fake_sent_count(e.qp), 2);
    m = fake_sent_get(e.qp, 1);
    assert_true(sd_le16(m->data + 2) >= 1);
    assert_int_equal(params(&e).send_credits, 0);
    th_end_free(&e);
}

/* The peer's credits are refilled with one credit-only message once it is down to
 * (target - 1) / 2, not after every message. */
static void test_refill_is_batched(void **state)
{
    struct th_end e;
    const struct fake_sent *m;

    (void)state;
    established(&e, 10, 10, 1024);
    assert_int_equal(params(&e).receive_credits, 10);
    fake_sent_clear(e.qp);
    for (int i = 0; i < 5; i++)
        peer_sends(&e, 10, 0, "x");
    assert_int_equal(fake_sent_count(e.qp), 0);
    assert_int_equal(params(&e).receive_credits, 5);
    peer_sends(&e, 10, 0, "x");
    assert_int_equal(fake_sent_count(e.qp), 1);
    m = fake_sent_get(e.qp, 0);
    assert_int_equal(m->len, 20);
    assert_int_equal(sd_le16(m->data + 2), 6);
    assert_int_equal(params(&e).receive_credits, 10);
    assert_int_equal(e.delivered, 6);
    th_end_free(&e);
}

/* 3.1.5.8: the received CreditsRequested becomes the target of our grants. */
static void test_credits_requested_sets_grant_target(void **state)
{
    struct th_end e;

    (void)state;
    established(&e, 10, 10, 1024);
    fake_sent_clear(e.qp);
    peer_sends(&e, 40, 0, "more please");
    assert_int_equal(fake_sent_count(e.qp), 1);
    assert_int_equal(sd_le16(fake_sent_get(e.qp, 0)->data + 2), 31);
    assert_int_equal(params(&e).receive_credits, 40);
    /* Asking for fewer does not take credits back; it just stops new grants. */
    peer_sends(&e, 1, 0, "fewer");
    assert_int_equal(fake_sent_count(e.qp), 1);
    th_end_free(&e);
}

/* Received grants add to our send credits (3.1.5.8); an empty message delivers
 * nothing. */
static void test_grants_and_empty_messages(void **state)
{
    struct th_end e;

    (void)state;
    established(&e, 10, 10, 1024);
    assert_int_equal(params(&e).send_credits, 9);
    peer_sends(&e, 10, 7, NULL);
    assert_int_equal(params(&e).send_credits, 16);
    assert_int_equal(e.delivered, 0);
    fake_sent_clear(e.qp);
    assert_int_equal(smbd_conn_send(e.conn, NULL, 0, 1), 0);
    assert_int_equal(fake_sent_count(e.qp), 1);
    assert_int_equal(fake_sent_get(e.qp, 0)->len, 20);
    assert_int_equal(sd_le32(fake_sent_get(e.qp, 0)->data + 12), 0);
    assert_int_equal(sd_le32(fake_sent_get(e.qp, 0)->data + 16), 0);
    th_end_free(&e);
}

/* Fragments are copied out and every receive reposted at once: a message far
 * larger than all receive buffers together is reassembled while the peer keeps
 * getting credits. */
static void test_reassembly_reposts_receives(void **state)
{
    struct th_end e;
    static uint8_t msg[4096], expect[1000 * 40];
    uint32_t total = sizeof(expect), off = 0;

    (void)state;
    for (size_t i = 0; i < sizeof(expect); i++)
        expect[i] = (uint8_t)(i * 13 + 1);
    established(&e, 10, 10, 1024);
    while (off < total) {
        uint32_t n = 1000; /* with its header, the peer's PreferredSendSize (1024) */
        int posted = fake_posted_recvs(e.qp);

        assert_int_equal(fake_inject(e.qp, msg, th_data_msg(msg, 10, 0, 0, total - off - n, 24, n,
                                                            expect + off, n), 0), 0);
        th_poll(&e, 1, 1000);
        off += n;
        assert_int_equal(fake_posted_recvs(e.qp), posted);
        assert_true(params(&e).receive_credits >= 4); /* refilled as it goes */
        assert_int_equal(e.delivered, off == total ? 1 : 0);
    }
    assert_int_equal(e.last_len, total);
    assert_memory_equal(e.last, expect, total);
    assert_int_equal(e.terminated_calls, 0);
    th_end_free(&e);
}

/* send_ready fires once when the queued bytes fall below the low-water mark. */
static void test_send_ready_low_water(void **state)
{
    struct th_end e;
    static uint8_t big[20000];
    struct iovec iov = { big, sizeof(big) };

    (void)state;
    established(&e, 3, 10, 1024);
    smbd_conn_set_send_low_water(e.conn, 4000);
    assert_int_equal(smbd_conn_send(e.conn, &iov, 1, 1), 0);
    assert_true(smbd_conn_send_queued(e.conn) >= 4000);
    assert_int_equal(e.send_ready_calls, 0);
    peer_sends(&e, 10, 5, NULL);
    assert_int_equal(e.send_ready_calls, 0);
    peer_sends(&e, 10, 20, NULL);
    assert_true(smbd_conn_send_queued(e.conn) < 4000);
    assert_int_equal(e.send_ready_calls, 1);
    peer_sends(&e, 10, 20, NULL);
    assert_int_equal(e.send_ready_calls, 1);
    th_end_free(&e);
}

/* 3.1.4.2: longer than MaxFragmentedSendSize is a local error; the connection
 * stays up. Exactly the limit is fine. */
static void test_message_over_max_fragmented_size(void **state)
{
    struct th_end e;
    static uint8_t big[MIB + 1];
    struct iovec iov[2] = { { big, MIB }, { big, 1 } };

    (void)state;
    established(&e, 10, 10, 1024);
    assert_int_equal(smbd_conn_send(e.conn, iov, 2, 1), -EMSGSIZE);
    assert_true(smbd_conn_is_established(e.conn));
    assert_int_equal(smbd_conn_send_queued(e.conn), 0);
    assert_int_equal(smbd_conn_send(e.conn, iov, 1, 1), 0);
    assert_int_equal(e.terminated_calls, 0);
    th_end_free(&e);
}

/* The sends of a burst are signaled in batches, and its last one always (an orderly
 * disconnect waits for it); every buffer still comes back to the pool. */
static void test_signaled_batches(void **state)
{
    static uint8_t msg[64 * 1340];
    struct iovec iov = { msg, sizeof(msg) };
    struct th_end e;
    size_t n;
    int signaled = 0;

    (void)state;
    established(&e, 255, 255, 8192);
    fake_sent_clear(e.qp);
    assert_int_equal(smbd_conn_send(e.conn, &iov, 1, 1), 0);
    n = fake_sent_count(e.qp);
    assert_int_equal(n, 64);
    for (size_t i = 0; i < n; i++)
        signaled += fake_sent_get(e.qp, i)->signaled;
    assert_true(signaled >= 64 / 16);
    assert_true(signaled < 64 / 2);
    assert_true(fake_sent_get(e.qp, n - 1)->signaled);
    assert_int_equal(send_text(&e, "alone"), 0); /* a burst of one */
    assert_true(fake_sent_get(e.qp, n)->signaled);
    th_end_free(&e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spec_4_2_five_hundred_bytes),
        cmocka_unit_test(test_spec_4_3_sixty_four_kib),
        cmocka_unit_test(test_send_queue_fifo),
        cmocka_unit_test(test_last_credit_needs_a_grant),
        cmocka_unit_test(test_refill_is_batched),
        cmocka_unit_test(test_credits_requested_sets_grant_target),
        cmocka_unit_test(test_grants_and_empty_messages),
        cmocka_unit_test(test_reassembly_reposts_receives),
        cmocka_unit_test(test_send_ready_low_water),
        cmocka_unit_test(test_message_over_max_fragmented_size),
        cmocka_unit_test(test_signaled_batches),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
