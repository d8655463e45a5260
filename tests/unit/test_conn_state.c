/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/test_conn_state.c — the engine connection's lifecycle (enum smbd_state,
 * transport/smbd/smbd_conn_int.h): smbd_enter_state, which does no I/O, makes every
 * change the table allows and refuses every other one (and a state past the last) with
 * an error line, the state kept; then the engine's own changes on the fake provider,
 * each test reading the states one connection passes through, one completion at a time:
 * an orderly disconnect with a Send in flight drains it first, one without disconnects
 * at once (also unstarted), the peer's orderly close, a failure, a post finding the
 * provider's connection gone, and a refused Negotiate Request disconnected once the
 * refusal went out. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include <cmocka.h>

#include "smbd_conn_int.h"
#include "th_conn.h"
#include "th_fsm.h"

#define MIB (1u << 20)

static int enter(void *c, int to)
{
    return smbd_enter_state(c, (enum smbd_state)to);
}

/* The table of smbd_conn_int.h, written out again. */
static const struct th_fsm_change smbd_allowed[] = {
    { SMBD_ST_NEW, SMBD_ST_RUNNING },
    { SMBD_ST_NEW, SMBD_ST_DISCONNECTING },
    { SMBD_ST_RUNNING, SMBD_ST_PROVIDER_GONE },
    { SMBD_ST_RUNNING, SMBD_ST_REFUSING },
    { SMBD_ST_RUNNING, SMBD_ST_DRAINING },
    { SMBD_ST_RUNNING, SMBD_ST_DISCONNECTING },
    { SMBD_ST_RUNNING, SMBD_ST_PEER_CLOSED },
    { SMBD_ST_RUNNING, SMBD_ST_TERMINATED },
    { SMBD_ST_PROVIDER_GONE, SMBD_ST_DRAINING },
    { SMBD_ST_PROVIDER_GONE, SMBD_ST_DISCONNECTING },
    { SMBD_ST_PROVIDER_GONE, SMBD_ST_PEER_CLOSED },
    { SMBD_ST_PROVIDER_GONE, SMBD_ST_TERMINATED },
    { SMBD_ST_DRAINING, SMBD_ST_DISCONNECTING },
    { SMBD_ST_DRAINING, SMBD_ST_TERMINATED },
    { SMBD_ST_DISCONNECTING, SMBD_ST_TERMINATED },
    { SMBD_ST_REFUSING, SMBD_ST_TERMINATED },
};

static void test_every_change_allowed_or_refused(void **state)
{
    const struct th_fsm f = { .fsm = &smbd_state_fsm, .size = sizeof(struct smbd_conn),
                              .state_offset = offsetof(struct smbd_conn, state), .enter = enter,
                              .allowed = smbd_allowed,
                              .nallowed = sizeof(smbd_allowed) / sizeof(smbd_allowed[0]) };

    (void)state;
    th_fsm_check(&f);
}

/* ---- the engine's own changes ---- */

/* The states a connection passed through, by name, each once as it was entered. */
struct cs_trail {
    char names[256];
    int last;
};

static void cs_begin(struct cs_trail *t, const struct smbd_conn *c)
{
    t->last = (int)c->state;
    snprintf(t->names, sizeof(t->names), "%s", sd_fsm_name(&smbd_state_fsm, c->state));
}

static void cs_note(struct cs_trail *t, const struct smbd_conn *c)
{
    size_t n = strlen(t->names);

    if ((int)c->state == t->last)
        return;
    t->last = (int)c->state;
    snprintf(t->names + n, sizeof(t->names) - n, " %s", sd_fsm_name(&smbd_state_fsm, c->state));
}

/* Runs a and b (b may have no peer: a NULL) one completion of b at a time until nothing
 * moves, noting b's states. */
static void cs_settle(struct th_end *a, struct th_end *b, struct cs_trail *t)
{
    for (int moved = 1; moved;) {
        moved = fake_deliver(b->qp, INT32_MAX);
        if (a)
            moved += fake_deliver(a->qp, INT32_MAX) + th_poll(a, 0, INT32_MAX);
        while (th_poll(b, 0, 1) == 1) {
            cs_note(t, b->conn);
            moved++;
        }
    }
    cs_note(t, b->conn);
}

static void cs_send(struct th_end *e, size_t len)
{
    static uint8_t msg[4096];
    struct iovec iov = { msg, len };

    smbd_conn_send(e->conn, &iov, 1, 0);
}

/* One change of an established connection b (its peer a) and the states it passes. */
struct cs_case {
    const char *what;
    void (*act)(struct th_end *b, struct cs_trail *t);
    const char *trail;
    int term_err;
    int peer_closed;
};

static void act_disconnect_after_send(struct th_end *b, struct cs_trail *t)
{
    cs_send(b, 100); /* its one fragment ends a burst: signaled */
    smbd_conn_disconnect(b->conn);
    cs_note(t, b->conn);
    assert_int_equal(fake_disconnects(b->qp), 0); /* not while the Send is in flight */
}

static void act_disconnect(struct th_end *b, struct cs_trail *t)
{
    (void)t;
    smbd_conn_disconnect(b->conn);
}

static void act_peer_close(struct th_end *b, struct cs_trail *t)
{
    (void)t;
    fake_break(b->qp, SD_WC_FLUSHED);
}

static void act_failure(struct th_end *b, struct cs_trail *t)
{
    (void)t;
    cs_send(b, 100);
    fake_break(b->qp, SD_WC_FATAL);
}

/* A post that finds the provider's connection gone stops the sends, the connection still
 * runs; the provider's CONN_LOST ends it. */
static void act_provider_gone(struct th_end *b, struct cs_trail *t)
{
    fake_fail_post_send(b->qp, -ENOTCONN);
    cs_send(b, 100);
    cs_note(t, b->conn);
    assert_int_equal(b->terminated_calls, 0);
    assert_true(smbd_conn_is_established(b->conn));
    fake_break(b->qp, SD_WC_FLUSHED);
}

static const struct cs_case cs_cases[] = {
    { "disconnect with a Send in flight", act_disconnect_after_send,
      "RUNNING DRAINING DISCONNECTING TERMINATED", 0, 0 },
    { "disconnect with nothing in flight", act_disconnect, "RUNNING DISCONNECTING TERMINATED",
      0, 0 },
    { "the peer's orderly close", act_peer_close, "RUNNING PEER_CLOSED", -ECONNRESET, 1 },
    { "a failure", act_failure, "RUNNING TERMINATED", -ECONNRESET, 0 },
    { "the provider gone", act_provider_gone, "RUNNING PROVIDER_GONE PEER_CLOSED", -ECONNRESET,
      1 },
};

static void test_established_ends(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(cs_cases) / sizeof(cs_cases[0]); i++) {
        const struct cs_case *k = &cs_cases[i];
        struct th_end a, b;
        struct cs_trail t;

        th_pair_establish(&a, &b, NULL, NULL, i + 1);
        cs_begin(&t, b.conn);
        k->act(&b, &t);
        cs_settle(&a, &b, &t);
        if (strcmp(t.names, k->trail) != 0)
            fail_msg("%s: states %s, not %s", k->what, t.names, k->trail);
        assert_int_equal(b.terminated_calls, 1);
        assert_int_equal(b.term_err, k->term_err);
        assert_int_equal(smbd_conn_peer_closed(b.conn), k->peer_closed);
        assert_int_equal(fake_disconnects(b.qp), 1);
        assert_int_equal(a.terminated_calls, 1);
        th_end_free(&a);
        th_end_free(&b);
    }
}

static void test_disconnect_unstarted(void **state)
{
    struct th_end e;

    (void)state;
    th_end_init(&e, SMBD_ROLE_ACTIVE, NULL, fake_qp_new(3));
    assert_int_equal(e.conn->state, SMBD_ST_NEW);
    smbd_conn_disconnect(e.conn);
    assert_int_equal(e.conn->state, SMBD_ST_DISCONNECTING);
    assert_int_equal(fake_disconnects(e.qp), 1);
    assert_int_equal(smbd_conn_start(e.conn, 0), -EALREADY);
    th_end_free(&e);
}

/* 3.1.5.6: the refusal goes out before the provider disconnects. */
static void test_refusal_disconnects_once_sent(void **state)
{
    struct th_end e;
    struct cs_trail t;
    uint8_t msg[64];

    (void)state;
    th_end_init(&e, SMBD_ROLE_PASSIVE, NULL, fake_qp_new(7));
    cs_begin(&t, e.conn);
    smbd_conn_start(e.conn, 0);
    cs_note(&t, e.conn);
    fake_inject(e.qp, msg, th_negotiate_req(msg, 0x0200, 0x0300, 255, 1364, 8192, MIB), 0);
    assert_int_equal(th_poll(&e, 0, 1), 1); /* the request */
    cs_note(&t, e.conn);
    assert_int_equal(e.terminated_calls, 1);
    assert_int_equal(fake_disconnects(e.qp), 0);
    cs_settle(NULL, &e, &t);
    assert_string_equal(t.names, "NEW RUNNING REFUSING TERMINATED");
    assert_int_equal(fake_disconnects(e.qp), 1);
    assert_int_equal(e.terminated_calls, 1);
    assert_int_equal(e.term_err, -ECONNREFUSED);
    th_end_free(&e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_change_allowed_or_refused),
        cmocka_unit_test(test_established_ends),
        cmocka_unit_test(test_disconnect_unstarted),
        cmocka_unit_test(test_refusal_disconnects_once_sent),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
