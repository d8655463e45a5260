/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/test_soft_qp_state.c — the soft-iWARP connection's lifecycle (enum
 * sd_soft_qp_state, transport/soft/soft_qp.h): sd_soft_qp_enter, which does no I/O,
 * makes every change the table allows and refuses every other one (and a state past the
 * last) with an error line, the state kept; then each allowed change made by the
 * provider itself on a connection over a socketpair: a local disconnect (RTS -> CLOSING)
 * ends at the peer's EOF (-> CLOSED) with its CONN_LOST only then, a failure
 * (RTS -> ERROR) queues CONN_LOST at once and reads the input until the peer's EOF
 * (-> CLOSED), the peer's EOF while up is a failure and the end at once. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "soft/soft_qp.h"
#include "th_fsm.h"

static int enter(void *qp, int to)
{
    return sd_soft_qp_enter(qp, (enum sd_soft_qp_state)to);
}

/* The table of soft_qp.h, written out again. */
static const struct th_fsm_change soft_allowed[] = {
    { SD_SOFT_QP_RTS, SD_SOFT_QP_CLOSING },
    { SD_SOFT_QP_RTS, SD_SOFT_QP_ERROR },
    { SD_SOFT_QP_CLOSING, SD_SOFT_QP_CLOSED },
    { SD_SOFT_QP_ERROR, SD_SOFT_QP_CLOSED },
};

static void test_every_change_allowed_or_refused(void **state)
{
    const struct th_fsm f = { .fsm = &sd_soft_qp_fsm, .size = sizeof(struct sd_qp),
                              .state_offset = offsetof(struct sd_qp, state), .enter = enter,
                              .allowed = soft_allowed,
                              .nallowed = sizeof(soft_allowed) / sizeof(soft_allowed[0]) };

    (void)state;
    th_fsm_check(&f);
}

/* ---- the provider's own changes, on one end of a socketpair ---- */

struct qs_pair {
    struct sd_qp *qp; /* on fd[0] */
    int peer;         /* fd[1]: the peer, a plain socket */
};

static void qs_open(struct qs_pair *p)
{
    int fd[2];

    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fd), 0);
    p->qp = sd_soft_qp_create(fd[0], 0, 0, 1, 1);
    assert_non_null(p->qp);
    p->peer = fd[1];
    assert_int_equal(p->qp->state, SD_SOFT_QP_RTS);
}

static void qs_close(struct qs_pair *p)
{
    close(p->peer);
    sd_soft_provider.destroy(p->qp);
}

/* The peer's side ends: its FIN reaches the connection's next progress. */
static void qs_peer_eof(struct qs_pair *p)
{
    assert_int_equal(shutdown(p->peer, SHUT_WR), 0);
    assert_int_equal(sd_soft_provider.progress(p->qp), 0);
}

/* Polls the completions: how many CONN_LOST, the last one's status in *status. */
static int qs_conn_lost(struct qs_pair *p, enum sd_wc_status *status)
{
    struct sd_wc wc[8];
    int n, lost = 0;

    while ((n = sd_soft_provider.poll_cq(p->qp, wc, 8)) > 0)
        for (int i = 0; i < n; i++)
            if (wc[i].opcode == SD_WC_CONN_LOST) {
                lost++;
                *status = wc[i].status;
            }
    return lost;
}

static void test_disconnect_closes_at_the_peers_eof(void **state)
{
    struct qs_pair p;
    enum sd_wc_status st = SD_WC_FATAL;
    char c;

    (void)state;
    qs_open(&p);
    sd_soft_provider.disconnect(p.qp);
    assert_int_equal(p.qp->state, SD_SOFT_QP_CLOSING);
    assert_int_equal(qs_conn_lost(&p, &st), 0); /* held back until the peer closes too */
    assert_int_equal(recv(p.peer, &c, 1, 0), 0); /* our FIN went out */
    assert_int_equal(sd_soft_provider.poll_events(p.qp), SD_POLL_IN);
    qs_peer_eof(&p);
    assert_int_equal(p.qp->state, SD_SOFT_QP_CLOSED);
    assert_int_equal(qs_conn_lost(&p, &st), 1);
    assert_int_equal(st, SD_WC_SUCCESS);
    assert_int_equal(sd_soft_provider.poll_events(p.qp), 0);
    qs_close(&p);
}

static void test_failure_reports_at_once_then_reads_to_eof(void **state)
{
    struct qs_pair p;
    enum sd_wc_status st = SD_WC_SUCCESS;
    struct sd_mr mr;
    uint8_t buf[64];
    struct sd_sge sge = { .addr = buf, .length = sizeof(buf), .mr = &mr };

    (void)state;
    qs_open(&p);
    assert_int_equal(sd_soft_provider.reg_mr(p.qp, buf, sizeof(buf), SD_ACCESS_LOCAL_WRITE, &mr),
                     0);
    sd_soft_qp_fail(p.qp, SD_WC_FATAL, SD_SOFT_BLAME_NONE);
    assert_int_equal(p.qp->state, SD_SOFT_QP_ERROR);
    assert_int_equal(qs_conn_lost(&p, &st), 1);
    assert_int_equal(st, SD_WC_FATAL);
    assert_int_equal(sd_soft_provider.post_recv(p.qp, 1, &sge), -ENOTCONN);
    sd_soft_provider.disconnect(p.qp); /* no change: it failed already */
    assert_int_equal(p.qp->state, SD_SOFT_QP_ERROR);
    assert_int_equal(sd_soft_provider.poll_events(p.qp), SD_POLL_IN);
    qs_peer_eof(&p);
    assert_int_equal(p.qp->state, SD_SOFT_QP_CLOSED);
    assert_int_equal(qs_conn_lost(&p, &st), 0); /* reported once */
    assert_int_equal(sd_soft_provider.dereg_mr(p.qp, &mr), 0);
    qs_close(&p);
}

static void test_peer_eof_while_up_fails_and_closes(void **state)
{
    struct qs_pair p;
    enum sd_wc_status st = SD_WC_FATAL;

    (void)state;
    qs_open(&p);
    qs_peer_eof(&p);
    assert_int_equal(p.qp->state, SD_SOFT_QP_CLOSED);
    assert_int_equal(qs_conn_lost(&p, &st), 1);
    assert_int_equal(st, SD_WC_FLUSHED); /* a clean end between FPDUs */
    qs_close(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_change_allowed_or_refused),
        cmocka_unit_test(test_disconnect_closes_at_the_peers_eof),
        cmocka_unit_test(test_failure_reports_at_once_then_reads_to_eof),
        cmocka_unit_test(test_peer_eof_while_up_fails_and_closes),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
