/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/test_conn_negotiate.c — MS-SMBD negotiation in both roles (3.1.4.1,
 * 3.1.5.2, 3.1.5.3, 3.1.5.6, 3.1.5.7, 3.1.7.2), configuration defaults and checks,
 * and the parameters a finished negotiation leaves (3.1.4.7). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "th_conn.h"

#define MIB (1024u * 1024u)

static void test_config_defaults(void **state)
{
    struct smbd_config a, p;

    (void)state;
    smbd_config_default(&a, SMBD_ROLE_ACTIVE);
    smbd_config_default(&p, SMBD_ROLE_PASSIVE);
    assert_int_equal(a.receive_credit_max, 255);
    assert_int_equal(a.send_credit_target, 255);
    assert_int_equal(a.max_send_size, 1364);
    assert_int_equal(a.max_receive_size, 8192);
    assert_true(a.max_fragmented_recv_size >= 8 * MIB + 4096);
    assert_int_equal(a.max_read_write_size, 8 * MIB);
    assert_int_equal(a.keepalive_interval_ms, 120000);
    assert_int_equal(a.negotiate_timeout_ms, 120000);
    assert_int_equal(p.negotiate_timeout_ms, 5000);
    assert_null(smbd_config_check(&a));
    assert_null(smbd_config_check(&p));
}

static void test_config_check_rejects(void **state)
{
    struct smbd_config c;
    struct sd_qp *qp = fake_qp_new(1);

    (void)state;
    smbd_config_default(&c, SMBD_ROLE_ACTIVE);
    c.receive_credit_max = 2;
    assert_non_null(strstr(smbd_config_check(&c), "receive_credit_max"));
    assert_null(smbd_conn_new(SMBD_ROLE_ACTIVE, &c, &fake_provider, qp,
                              &(struct smbd_upper){ .deliver = NULL }, NULL));
    smbd_config_default(&c, SMBD_ROLE_ACTIVE);
    c.max_receive_size = 127;
    assert_non_null(strstr(smbd_config_check(&c), "max_receive_size"));
    smbd_config_default(&c, SMBD_ROLE_ACTIVE);
    c.max_send_size = 100;
    assert_non_null(strstr(smbd_config_check(&c), "max_send_size"));
    smbd_config_default(&c, SMBD_ROLE_ACTIVE);
    c.max_fragmented_recv_size = 131071;
    assert_non_null(strstr(smbd_config_check(&c), "max_fragmented_recv_size"));
    smbd_config_default(&c, SMBD_ROLE_ACTIVE);
    c.send_credit_target = 0;
    assert_non_null(strstr(smbd_config_check(&c), "send_credit_target"));
    smbd_config_default(&c, SMBD_ROLE_ACTIVE);
    c.negotiate_timeout_ms = 0;
    assert_non_null(strstr(smbd_config_check(&c), "negotiate_timeout_ms"));
    fake_provider.destroy(qp);
}

/* 3.1.4.1 + 3.1.5.2: receives posted, the Negotiate Request sent with our values. */
static void test_active_sends_negotiate_request(void **state)
{
    struct th_end e;
    const struct fake_sent *m;
    struct smbd_params p;

    (void)state;
    th_end_init(&e, SMBD_ROLE_ACTIVE, NULL, fake_qp_new(1));
    assert_int_equal(smbd_conn_role(e.conn), SMBD_ROLE_ACTIVE);
    assert_int_equal(smbd_conn_start(e.conn, 1000), 0);
    assert_int_equal(smbd_conn_start(e.conn, 1000), -EALREADY);
    assert_true(fake_posted_recvs(e.qp) >= 1);
    assert_int_equal(fake_sent_count(e.qp), 1);
    m = fake_sent_get(e.qp, 0);
    assert_int_equal(m->len, 20);
    assert_int_equal(sd_le16(m->data + 0), 0x0100);
    assert_int_equal(sd_le16(m->data + 2), 0x0100);
    assert_int_equal(sd_le16(m->data + 4), 0);
    assert_int_equal(sd_le16(m->data + 6), 255);
    assert_int_equal(sd_le32(m->data + 8), 1364);
    assert_int_equal(sd_le32(m->data + 12), 8192);
    assert_int_equal(sd_le32(m->data + 16), 8 * MIB + 64 * 1024);
    assert_int_equal(smbd_conn_next_timer(e.conn), 1000 + 120000);
    assert_false(smbd_conn_is_established(e.conn));
    assert_int_equal(smbd_conn_query(e.conn, &p), -ENOTCONN);
    assert_int_equal(smbd_conn_send(e.conn, NULL, 0, 1000), -ENOTCONN);
    th_end_free(&e);
}

/* 3.1.5.7 with the values of the 4.1 example; then our first message grants. */
static void test_active_accepts_response(void **state)
{
    struct th_end e;
    uint8_t msg[64];
    struct smbd_params p;
    const struct fake_sent *m;

    (void)state;
    th_end_init(&e, SMBD_ROLE_ACTIVE, NULL, fake_qp_new(2));
    assert_int_equal(smbd_conn_start(e.conn, 0), 0);
    th_poll(&e, 0, 100);
    assert_int_equal(fake_inject(e.qp, msg, th_negotiate_resp(msg, 0x0100, 10, 10, 0, MIB,
                                                              1024, 1024, 128 * 1024), 0), 0);
    th_poll(&e, 5, 100);
    assert_int_equal(e.established, 1);
    assert_true(smbd_conn_is_established(e.conn));
    assert_int_equal(smbd_conn_role(e.conn), SMBD_ROLE_ESTABLISHED);
    assert_int_equal(smbd_conn_query(e.conn, &p), 0);
    assert_int_equal(p.neg.protocol, 0x0100);
    assert_int_equal(p.neg.max_send_size, 1024);           /* min(1364, peer MaxReceiveSize) */
    assert_int_equal(p.neg.max_receive_size, 1024);        /* min(8192, peer PreferredSendSize) */
    assert_int_equal(p.neg.max_read_write_size, MIB);      /* min(8 MiB, peer's) */
    assert_int_equal(p.neg.max_fragmented_send_size, 128 * 1024);
    /* The peer holds no credit yet: an empty message grants what it asked for. */
    assert_int_equal(fake_sent_count(e.qp), 2);
    m = fake_sent_get(e.qp, 1);
    assert_int_equal(m->len, 20);
    assert_int_equal(sd_le16(m->data + 0), 255);     /* CreditsRequested */
    assert_int_equal(sd_le16(m->data + 2), 10);      /* CreditsGranted = its request */
    assert_int_equal(sd_le16(m->data + 4), 0);       /* Flags */
    assert_int_equal(sd_le32(m->data + 8), 0);
    assert_int_equal(sd_le32(m->data + 12), 0);      /* DataOffset 0 when empty */
    assert_int_equal(sd_le32(m->data + 16), 0);
    assert_int_equal(smbd_conn_query(e.conn, &p), 0);
    assert_int_equal(p.send_credits, 9);
    assert_int_equal(p.receive_credits, 10);
    /* The negotiation timer is gone, the idle timer runs. */
    assert_int_equal(smbd_conn_next_timer(e.conn), 5 + 120000);
    assert_int_equal(e.terminated_calls, 0);
    th_end_free(&e);
}

/* 3.1.5.6 + 3.1.5.3 with the 4.1 example request. */
static void test_passive_answers_request(void **state)
{
    struct th_end e;
    uint8_t msg[64];
    const struct fake_sent *m;
    struct smbd_params p;

    (void)state;
    th_end_init(&e, SMBD_ROLE_PASSIVE, NULL, fake_qp_new(3));
    assert_int_equal(smbd_conn_start(e.conn, 0), 0);
    assert_int_equal(fake_sent_count(e.qp), 0);
    assert_int_equal(smbd_conn_next_timer(e.conn), 5000);
    fake_inject(e.qp, msg, th_negotiate_req(msg, 0x0100, 0x0100, 10, 1024, 1024, 128 * 1024), 0);
    th_poll(&e, 7, 100);
    assert_int_equal(e.established, 1);
    assert_int_equal(fake_sent_count(e.qp), 1);
    m = fake_sent_get(e.qp, 0);
    assert_int_equal(m->len, 32);
    assert_int_equal(sd_le16(m->data + 0), 0x0100);
    assert_int_equal(sd_le16(m->data + 2), 0x0100);
    assert_int_equal(sd_le16(m->data + 4), 0x0100);
    assert_int_equal(sd_le16(m->data + 8), 255);           /* CreditsRequested */
    assert_int_equal(sd_le16(m->data + 10), 10);           /* CreditsGranted */
    assert_int_equal(sd_le32(m->data + 12), 0);            /* Status */
    assert_int_equal(sd_le32(m->data + 16), 8 * MIB);      /* MaxReadWriteSize */
    assert_int_equal(sd_le32(m->data + 20), 1024);         /* PreferredSendSize */
    assert_int_equal(sd_le32(m->data + 24), 1024);         /* MaxReceiveSize */
    assert_int_equal(sd_le32(m->data + 28), 8 * MIB + 64 * 1024);
    assert_int_equal(smbd_conn_query(e.conn, &p), 0);
    assert_int_equal(p.send_credits, 0);                    /* until the peer grants */
    assert_int_equal(p.receive_credits, 10);
    assert_int_equal(smbd_conn_next_timer(e.conn), 7 + 120000);
    th_end_free(&e);
}

/* A range that merely includes 0x0100 is accepted (3.1.5.6). */
static void test_passive_accepts_wider_range(void **state)
{
    struct th_end e;
    uint8_t msg[64];

    (void)state;
    th_end_init(&e, SMBD_ROLE_PASSIVE, NULL, fake_qp_new(4));
    smbd_conn_start(e.conn, 0);
    fake_inject(e.qp, msg, th_negotiate_req(msg, 0x0001, 0x0300, 255, 1364, 8192, 1 * MIB), 0);
    th_poll(&e, 0, 100);
    assert_int_equal(e.established, 1);
    assert_int_equal(sd_le16(fake_sent_get(e.qp, 0)->data + 4), 0x0100);
    th_end_free(&e);
}

static void check_failure_response(struct th_end *e, uint32_t status)
{
    const struct fake_sent *m = fake_sent_get(e->qp, 0);

    assert_non_null(m);
    assert_int_equal(m->len, 32);
    assert_int_equal(sd_le16(m->data + 0), 0x0100);
    assert_int_equal(sd_le16(m->data + 2), 0x0100);
    assert_int_equal(sd_le32(m->data + 12), status);
    for (int off = 4; off < 32; off += 2)
        if (off != 12 && off != 14)
            assert_int_equal(sd_le16(m->data + off), 0);
    assert_int_equal(e->terminated_calls, 1);
    assert_int_equal(e->term_err, -ECONNREFUSED);
    assert_int_equal(e->established, 0);
}

/* 3.1.5.6: a range without 0x0100 gets STATUS_NOT_SUPPORTED, then a graceful
 * disconnect once that response went out. */
static void test_passive_refuses_version(void **state)
{
    struct th_end e;
    uint8_t msg[64];

    (void)state;
    th_end_init(&e, SMBD_ROLE_PASSIVE, NULL, fake_qp_new(5));
    smbd_conn_start(e.conn, 0);
    fake_inject(e.qp, msg, th_negotiate_req(msg, 0x0200, 0x0300, 255, 1364, 8192, MIB), 0);
    assert_int_equal(th_poll(&e, 0, 1), 1); /* only the receive: the send is not out yet */
    check_failure_response(&e, 0xC00000BB);
    assert_non_null(strstr(e.term_reason, "3.1.5.6"));
    assert_int_equal(fake_disconnects(e.qp), 0);
    th_poll(&e, 0, 100);
    assert_int_equal(fake_disconnects(e.qp), 1);
    assert_int_equal(e.terminated_calls, 1);
    assert_true(smbd_conn_is_terminated(e.conn));
    th_end_free(&e);
}

/* 3.1.5.6: no receive credits can be offered -> a failure response with an error
 * status (here: receives paused before negotiation). */
static void test_passive_refuses_without_credits(void **state)
{
    struct th_end e;
    uint8_t msg[64];

    (void)state;
    th_end_init(&e, SMBD_ROLE_PASSIVE, NULL, fake_qp_new(6));
    smbd_conn_start(e.conn, 0);
    smbd_conn_pause_receive(e.conn, 1, 0);
    fake_inject(e.qp, msg, th_negotiate_req(msg, 0x0100, 0x0100, 255, 1364, 8192, MIB), 0);
    th_poll(&e, 0, 100);
    check_failure_response(&e, 0xC000009A);
    th_end_free(&e);
}

/* 3.1.5.7: a failure status from the peer fails the connect with ECONNREFUSED. */
static void test_active_sees_refusal(void **state)
{
    struct th_end e;
    uint8_t msg[64];

    (void)state;
    th_end_init(&e, SMBD_ROLE_ACTIVE, NULL, fake_qp_new(7));
    smbd_conn_start(e.conn, 0);
    fake_inject(e.qp, msg, th_negotiate_resp(msg, 0, 0, 0, 0xC00000BB, 0, 0, 0, 0), 0);
    th_poll(&e, 0, 100);
    assert_int_equal(e.terminated_calls, 1);
    assert_int_equal(e.term_err, -ECONNREFUSED);
    assert_non_null(strstr(e.term_reason, "0xc00000bb"));
    assert_int_equal(fake_disconnects(e.qp), 1);
    th_end_free(&e);
}

/* 3.1.4.1 / 3.1.7.2: failing to post receives fails the start and terminates. */
static void test_start_fails_without_receives(void **state)
{
    struct th_end e;

    (void)state;
    th_end_init(&e, SMBD_ROLE_PASSIVE, NULL, fake_qp_new(8));
    fake_fail_post_recv(e.qp, -ENOMEM);
    assert_int_equal(smbd_conn_start(e.conn, 0), -ENOMEM);
    assert_int_equal(e.terminated_calls, 1);
    assert_int_equal(e.term_err, -ENOMEM);
    th_end_free(&e);
    th_end_init(&e, SMBD_ROLE_ACTIVE, NULL, fake_qp_new(9));
    fake_fail_reg_mr(e.qp, -EFAULT);
    assert_int_equal(smbd_conn_start(e.conn, 0), -EFAULT);
    assert_int_equal(e.terminated_calls, 1);
    th_end_free(&e);
}

/* Two engines negotiate with each other; the smaller sizes win on both sides. */
static void test_pair_negotiates(void **state)
{
    struct th_end a, b;
    struct smbd_config ca, cb;
    struct smbd_params pa, pb;

    (void)state;
    smbd_config_default(&ca, SMBD_ROLE_ACTIVE);
    smbd_config_default(&cb, SMBD_ROLE_PASSIVE);
    ca.max_receive_size = 4096;
    cb.max_send_size = 2048;
    cb.max_read_write_size = 4 * MIB;
    cb.receive_credit_max = 100;
    ca.send_credit_target = 50;
    th_pair_establish(&a, &b, &ca, &cb, 10);
    assert_int_equal(a.established, 1);
    assert_int_equal(b.established, 1);
    assert_int_equal(smbd_conn_query(a.conn, &pa), 0);
    assert_int_equal(smbd_conn_query(b.conn, &pb), 0);
    assert_int_equal(pa.neg.max_send_size, 1364);
    assert_int_equal(pb.neg.max_send_size, 2048);
    assert_int_equal(pa.neg.max_receive_size, 2048);  /* min(4096, B's PreferredSendSize) */
    assert_int_equal(pb.neg.max_receive_size, 1364);  /* min(8192, A's PreferredSendSize) */
    assert_int_equal(pa.neg.max_read_write_size, 4 * MIB);
    assert_int_equal(pb.neg.max_read_write_size, 4 * MIB);
    assert_int_equal(pa.neg.max_fragmented_send_size, pb.neg.max_fragmented_recv_size);
    assert_int_equal(pa.send_credits, pb.receive_credits);
    assert_int_equal(pb.send_credits, pa.receive_credits);
    assert_true(pa.send_credits >= 1 && pa.send_credits <= 50);
    th_end_free(&a);
    th_end_free(&b);
}

/* Freeing returns every registration to the provider. */
static void test_free_deregisters_everything(void **state)
{
    struct th_end a, b;
    struct sd_qp *qa, *qb;

    (void)state;
    th_pair_establish(&a, &b, NULL, NULL, 11);
    qa = a.qp;
    qb = b.qp;
    assert_true(fake_mr_count(qa) >= 2);
    smbd_conn_free(a.conn);
    smbd_conn_free(b.conn);
    assert_int_equal(fake_mr_count(qa), 0);
    assert_int_equal(fake_mr_count(qb), 0);
    a.conn = b.conn = NULL;
    th_end_free(&a);
    th_end_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_config_defaults),
        cmocka_unit_test(test_config_check_rejects),
        cmocka_unit_test(test_active_sends_negotiate_request),
        cmocka_unit_test(test_active_accepts_response),
        cmocka_unit_test(test_passive_answers_request),
        cmocka_unit_test(test_passive_accepts_wider_range),
        cmocka_unit_test(test_passive_refuses_version),
        cmocka_unit_test(test_passive_refuses_without_credits),
        cmocka_unit_test(test_active_sees_refusal),
        cmocka_unit_test(test_start_fails_without_receives),
        cmocka_unit_test(test_pair_negotiates),
        cmocka_unit_test(test_free_deregisters_everything),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
