/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/test_conn_timers.c — the Negotiation and Idle Connection timers and
 * keepalives (MS-SMBD 3.1.2, 3.1.5.1, 3.1.5.5, 3.1.5.8, 3.1.6), driven by explicit
 * time: nothing here sleeps. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "th_conn.h"

#define MIB (1024u * 1024u)

static void test_negotiation_timer_active(void **state)
{
    struct th_end e;

    (void)state;
    th_end_init(&e, SMBD_ROLE_ACTIVE, NULL, fake_qp_new(1));
    assert_int_equal(smbd_conn_next_timer(e.conn), UINT64_MAX);
    smbd_conn_start(e.conn, 500);
    assert_int_equal(smbd_conn_next_timer(e.conn), 500 + 120000);
    smbd_conn_on_timer(e.conn, 500 + 119999);
    assert_int_equal(e.terminated_calls, 0);
    smbd_conn_on_timer(e.conn, 500 + 120000);
    assert_int_equal(e.terminated_calls, 1);
    assert_int_equal(e.term_err, -ETIMEDOUT);
    assert_non_null(strstr(e.term_reason, "3.1.6.1"));
    assert_int_equal(fake_disconnects(e.qp), 1);
    assert_int_equal(smbd_conn_next_timer(e.conn), UINT64_MAX);
    th_end_free(&e);
}

static void test_negotiation_timer_passive_and_configurable(void **state)
{
    struct th_end e;
    struct smbd_config cfg;

    (void)state;
    th_end_init(&e, SMBD_ROLE_PASSIVE, NULL, fake_qp_new(2));
    smbd_conn_start(e.conn, 0);
    assert_int_equal(smbd_conn_next_timer(e.conn), 5000);
    smbd_conn_on_timer(e.conn, 5000);
    assert_int_equal(e.term_err, -ETIMEDOUT);
    th_end_free(&e);

    smbd_config_default(&cfg, SMBD_ROLE_PASSIVE);
    cfg.negotiate_timeout_ms = 42;
    th_end_init(&e, SMBD_ROLE_PASSIVE, &cfg, fake_qp_new(3));
    smbd_conn_start(e.conn, 1);
    assert_int_equal(smbd_conn_next_timer(e.conn), 43);
    th_end_free(&e);
}

/* An ACTIVE engine established at time 0 with the test as its peer. */
static void established(struct th_end *e, const struct smbd_config *cfg, uint16_t granted)
{
    uint8_t m[32];

    th_end_init(e, SMBD_ROLE_ACTIVE, cfg, fake_qp_new(9));
    th_active_establish(e, m, th_negotiate_resp(m, 0x100, 10, granted, 0, MIB, 1364, 8192, MIB));
    fake_sent_clear(e->qp);
}

/* established() with keepalives every interval ms, each answered within timeout ms. */
static void established_keepalive(struct th_end *e, uint32_t interval, uint32_t timeout,
                                  uint16_t granted)
{
    struct smbd_config cfg;

    smbd_config_default(&cfg, SMBD_ROLE_ACTIVE);
    cfg.keepalive_interval_ms = interval;
    cfg.keepalive_timeout_ms = timeout;
    established(e, &cfg, granted);
}

static void peer_sends(struct th_end *e, uint16_t flags, uint16_t grant, uint64_t now)
{
    uint8_t m[32];

    assert_int_equal(fake_inject(e->qp, m, th_data_msg(m, 10, grant, flags, 0, 0, 0, NULL, 0), 0), 0);
    th_poll(e, now, 1000);
}

/* 3.1.6.2: the idle timer sends a keepalive with RESPONSE_REQUESTED; any message
 * from the peer answers it and restarts the timer (3.1.5.5). */
static void test_idle_keepalive_answered(void **state)
{
    struct th_end e;
    const struct fake_sent *m;
    struct smbd_stats st;

    (void)state;
    established(&e, NULL, 10);
    assert_int_equal(smbd_conn_next_timer(e.conn), 120000);
    smbd_conn_on_timer(e.conn, 119999);
    assert_int_equal(fake_sent_count(e.qp), 0);
    smbd_conn_on_timer(e.conn, 120000);
    assert_int_equal(fake_sent_count(e.qp), 1);
    m = fake_sent_get(e.qp, 0);
    assert_int_equal(m->len, 20);
    assert_int_equal(sd_le16(m->data + 4), 1); /* SMB_DIRECT_RESPONSE_REQUESTED */
    assert_int_equal(smbd_conn_next_timer(e.conn), 120000 + 5000);
    peer_sends(&e, 0, 1, 121000);
    assert_int_equal(smbd_conn_next_timer(e.conn), 121000 + 120000);
    smbd_conn_on_timer(e.conn, 125000);
    assert_int_equal(e.terminated_calls, 0);
    smbd_conn_get_stats(e.conn, &st);
    assert_int_equal(st.keepalives_sent, 1);
    th_end_free(&e);
}

/* 3.1.6.2: no message within the keepalive timeout terminates with ETIMEDOUT. */
static void test_idle_keepalive_unanswered(void **state)
{
    struct th_end e;

    (void)state;
    established_keepalive(&e, 1000, 300, 10);
    smbd_conn_on_timer(e.conn, 1000);
    assert_int_equal(fake_sent_count(e.qp), 1);
    smbd_conn_on_timer(e.conn, 1299);
    assert_int_equal(e.terminated_calls, 0);
    smbd_conn_on_timer(e.conn, 1300);
    assert_int_equal(e.terminated_calls, 1);
    assert_int_equal(e.term_err, -ETIMEDOUT);
    assert_non_null(strstr(e.term_reason, "3.1.6.2"));
    th_end_free(&e);
}

/* A keepalive that cannot go out for lack of credits waits for one: the peer holds
 * back credits because its reader is paused (flow control, not silence). Any message
 * of the peer (its own keepalive granting a credit) answers it; a keepalive that did go
 * out and got no answer still ends the connection (3.1.6.2). */
static void test_keepalive_without_credits_waits_for_a_credit(void **state)
{
    struct th_end e;

    (void)state;
    established_keepalive(&e, 1000, 300, 1); /* the grant message spent the only credit */
    smbd_conn_on_timer(e.conn, 1000);
    assert_int_equal(fake_sent_count(e.qp), 0);
    for (uint64_t t = 1300; t <= 2200; t += 300)
        smbd_conn_on_timer(e.conn, t);
    assert_int_equal(e.terminated_calls, 0);
    peer_sends(&e, 0, 2, 2250); /* the peer grants credits again */
    assert_int_equal(e.terminated_calls, 0);
    assert_int_equal(smbd_conn_next_timer(e.conn), 2250 + 1000); /* idle timer restarted */
    smbd_conn_on_timer(e.conn, 3250); /* idle again: this time the keepalive goes out */
    assert_int_equal(fake_sent_count(e.qp), 1);
    smbd_conn_on_timer(e.conn, 3549);
    assert_int_equal(e.terminated_calls, 0);
    smbd_conn_on_timer(e.conn, 3550);
    assert_int_equal(e.term_err, -ETIMEDOUT);
    th_end_free(&e);
}

/* A peer that sends nothing at all and never grants a credit (gone, or starving us on
 * purpose) ends the connection one interval plus the timeout after our keepalive fell
 * due, though that keepalive could never be sent. */
static void test_a_silent_peer_holding_our_credits_ends_the_connection(void **state)
{
    struct th_end e;

    (void)state;
    established_keepalive(&e, 1000, 300, 1);
    for (uint64_t t = 1000; t < 2300; t += 100)
        smbd_conn_on_timer(e.conn, t);
    assert_int_equal(e.terminated_calls, 0);
    assert_int_equal(smbd_conn_next_timer(e.conn), 2300); /* due at 1000 + 1000 + 300 */
    smbd_conn_on_timer(e.conn, 2300);
    assert_int_equal(e.term_err, -ETIMEDOUT);
    assert_non_null(strstr(e.term_reason, "left no credit to send a keepalive"));
    th_end_free(&e);
}

/* Credits the peer holds from us (granted, not yet spent). */
static unsigned peer_credits(const struct th_end *e)
{
    struct smbd_params p;

    assert_int_equal(smbd_conn_query(e->conn, &p), 0);
    return p.receive_credits;
}

/* While our receive is paused (the program does not read) the peer may run out of
 * credits; our keepalive then grants it exactly one, so it can answer (3.1.6.2). */
static void test_paused_keepalive_grants_the_peer_one_credit(void **state)
{
    struct th_end e;
    const struct fake_sent *m;

    (void)state;
    established_keepalive(&e, 1000, 300, 10);
    smbd_conn_pause_receive(e.conn, 1, 10);
    for (int i = 0; i < 300 && peer_credits(&e) > 0; i++)
        peer_sends(&e, 0, 0, 20); /* the peer spends every credit it holds */
    assert_int_equal(peer_credits(&e), 0);
    fake_sent_clear(e.qp);
    smbd_conn_on_timer(e.conn, 2000);
    assert_int_equal(fake_sent_count(e.qp), 1);
    m = fake_sent_get(e.qp, 0);
    assert_int_equal(sd_le16(m->data + 4), 1); /* SMB_DIRECT_RESPONSE_REQUESTED */
    assert_int_equal(sd_le16(m->data + 2), 1); /* CreditsGranted: one, paused or not */
    peer_sends(&e, 0, 0, 2100);                /* its answer spends that credit */
    smbd_conn_on_timer(e.conn, 2400);
    assert_int_equal(e.terminated_calls, 0);
    assert_int_equal(peer_credits(&e), 0); /* still paused: no more */
    th_end_free(&e);
}

/* 3.1.5.1: a keepalive due while data waits for credit rides on that data. */
static void test_keepalive_rides_on_data(void **state)
{
    struct th_end e;
    uint8_t data[100] = { 1 };
    struct iovec iov = { data, sizeof(data) };
    const struct fake_sent *m;

    (void)state;
    established_keepalive(&e, 1000, 5000, 2); /* one credit left after the grant message */
    smbd_conn_pause_receive(e.conn, 1, 0); /* nothing to grant: the last credit waits */
    assert_int_equal(smbd_conn_send(e.conn, &iov, 1, 10), 0);
    assert_int_equal(fake_sent_count(e.qp), 0);
    smbd_conn_on_timer(e.conn, 1000);
    assert_int_equal(fake_sent_count(e.qp), 0);
    smbd_conn_pause_receive(e.conn, 0, 1001);
    assert_int_equal(fake_sent_count(e.qp), 1);
    m = fake_sent_get(e.qp, 0);
    assert_int_equal(sd_le32(m->data + 16), 100);
    assert_int_equal(sd_le16(m->data + 4), 1); /* RESPONSE_REQUESTED on the data */
    assert_true(sd_le16(m->data + 2) > 0);
    assert_int_equal(smbd_conn_next_timer(e.conn), 1001 + 5000);
    th_end_free(&e);
}

/* 3.1.5.8: RESPONSE_REQUESTED from the peer is answered at once, even with no
 * data, and the answer does not itself ask for a response. */
static void test_response_requested_is_answered(void **state)
{
    struct th_end e;
    const struct fake_sent *m;
    struct smbd_stats st;

    (void)state;
    established(&e, NULL, 10);
    peer_sends(&e, 1, 0, 50);
    assert_int_equal(fake_sent_count(e.qp), 1);
    m = fake_sent_get(e.qp, 0);
    assert_int_equal(m->len, 20);
    assert_int_equal(sd_le16(m->data + 4), 0);
    smbd_conn_get_stats(e.conn, &st);
    assert_int_equal(st.keepalives_received, 1);
    assert_int_equal(st.keepalives_sent, 0);
    th_end_free(&e);
}

/* The answer obeys the credit rules: with one credit and nothing to grant it waits. */
static void test_response_requested_respects_last_credit(void **state)
{
    struct th_end e;

    (void)state;
    established(&e, NULL, 2); /* one credit left after the grant message */
    smbd_conn_pause_receive(e.conn, 1, 0);
    peer_sends(&e, 1, 0, 50);
    assert_int_equal(fake_sent_count(e.qp), 0);
    smbd_conn_pause_receive(e.conn, 0, 60);
    assert_int_equal(fake_sent_count(e.qp), 1);
    assert_true(sd_le16(fake_sent_get(e.qp, 0)->data + 2) > 0);
    th_end_free(&e);
}

static void test_keepalive_disabled(void **state)
{
    struct th_end e;

    (void)state;
    established_keepalive(&e, 0, 5000, 10);
    assert_int_equal(smbd_conn_next_timer(e.conn), UINT64_MAX);
    smbd_conn_on_timer(e.conn, UINT64_MAX - 1);
    assert_int_equal(fake_sent_count(e.qp), 0);
    assert_int_equal(e.terminated_calls, 0);
    th_end_free(&e);
}

/* Extra send buffers added under load are freed once unused for a while. */
static void test_send_pool_shrinks(void **state)
{
    struct th_end a, b;
    static uint8_t big[4 * MIB];
    struct iovec iov = { big, sizeof(big) };
    int mrs;

    (void)state;
    th_pair_establish(&a, &b, NULL, NULL, 4);
    mrs = fake_mr_count(a.qp);
    assert_int_equal(smbd_conn_send(a.conn, &iov, 1, 10), 0);
    assert_true(fake_mr_count(a.qp) > mrs);
    th_settle(&a, &b, 10);
    assert_int_equal(b.delivered, 1);
    assert_true(smbd_conn_next_timer(a.conn) <= 10 + 1000);
    smbd_conn_on_timer(a.conn, 10 + 999);
    assert_true(fake_mr_count(a.qp) > mrs);
    smbd_conn_on_timer(a.conn, 10 + 1000);
    assert_int_equal(fake_mr_count(a.qp), mrs);
    assert_int_equal(smbd_conn_next_timer(a.conn), 10 + 120000);
    th_end_free(&a);
    th_end_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_negotiation_timer_active),
        cmocka_unit_test(test_negotiation_timer_passive_and_configurable),
        cmocka_unit_test(test_idle_keepalive_answered),
        cmocka_unit_test(test_idle_keepalive_unanswered),
        cmocka_unit_test(test_keepalive_without_credits_waits_for_a_credit),
        cmocka_unit_test(test_a_silent_peer_holding_our_credits_ends_the_connection),
        cmocka_unit_test(test_paused_keepalive_grants_the_peer_one_credit),
        cmocka_unit_test(test_keepalive_rides_on_data),
        cmocka_unit_test(test_response_requested_is_answered),
        cmocka_unit_test(test_response_requested_respects_last_credit),
        cmocka_unit_test(test_keepalive_disabled),
        cmocka_unit_test(test_send_pool_shrinks),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
