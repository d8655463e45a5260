/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/test_bridge_lifecycle.c — the bridge's lifecycle (enum bridge_state,
 * transport/bridge/bridge_int.h), one transition at a time, on two bridges over a real
 * soft-iWARP link (th_bridge.h; a is the relay-like side, b the shim-like one): the
 * program's half-close still gets its answer, then EOF; the program's exit
 * (smbd_bridge_finish) sends what it wrote and ends in order without awaiting answers,
 * also from a half-close, but while the peer may still RDMA-read its channel buffers;
 * the peer's orderly close flushes what it delivered to a slow reader, then EOF; the
 * channel's messages wait for the end of a message part-way into the stream; a link lost
 * mid-message fails the bridge and resets a TCP stream; a change the table does not
 * allow is refused, logged, and fails the bridge. Where a state must hold, a test reads it
 * on the loop thread once the event that entered it has been handled, with what the bridge
 * waits for (th_bridge_state.h). Every allowed change, each through the bridge's own path:
 * test_bridge_states.c. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "bridge_int.h"
#include "th_bridge.h"
#include "th_bridge_state.h"
#include "th_smb2.h"
#include "th_stderr.h"

/* The shim's side: the client role (requests tracked for the half-close), every I/O
 * inline (threshold 0). */
static const struct smbd_bridge_opts lc_shim = { .channel = BRIDGE_CHAN_CLIENT };

/* Whether the TCP socket fd was reset by its peer (an error pending, POLLERR) within ms:
 * a reset that follows the stream's FIN shows here, not in recv(), which reports the EOF
 * first. */
static int lc_reset_seen(int fd, int ms)
{
    struct pollfd pfd = { .fd = fd, .events = 0 };
    int soerr = 0;
    socklen_t sl = sizeof(soerr);

    if (poll(&pfd, 1, ms) < 0 || !(pfd.revents & POLLERR))
        return 0;
    return getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) == 0 &&
           (soerr == ECONNRESET || soerr == EPIPE);
}

/* s's bridge ended with a reason that contains want; a failure prints the reason it had. */
static void lc_assert_reason(const struct th_bridge_side *s, const char *want)
{
    if (!strstr(s->reason, want))
        fail_msg("the bridge ended with \"%s\", not \"...%s...\"", s->reason, want);
}

static void lc_fill(uint8_t *b, size_t len, unsigned seed)
{
    for (size_t i = 0; i < len; i++)
        b[i] = (uint8_t)(seed * 31u + i * 7u + (i >> 9));
}

/* The program sends one SMB2 READ request (MessageId id); the backend gets it. */
static void lc_request(struct th_bridge_pair *p, uint64_t id)
{
    uint8_t msg[256];

    th_bridge_send_frame(p->b.app_fd, msg, th_smb2_plain_read(msg, id, 4096));
    assert_int_equal(th_bridge_recv_frame(p->a.app_fd, msg, sizeof(msg), 5000), 113);
}

/* ---- HALF_CLOSED: the program's SHUT_WR ---- */

/* OPEN -> HALF_CLOSED -> DISCONNECTING -> CLOSED: after its SHUT_WR the program still
 * reads the answer to what it asked, then EOF; the link waits for that answer. */
static void test_half_close_waits_for_the_answer_then_eof(void **state)
{
    struct th_bridge_pair p;
    struct th_hdr h = { .command = 8, .message_id = 1 };
    struct th_bridge_peek k;
    uint8_t msg[256];
    int reset = -1;

    (void)state;
    th_bridge_setup(&p, 0, NULL, &lc_shim);
    lc_request(&p, 1);
    assert_int_equal(shutdown(p.b.app_fd, SHUT_WR), 0);
    assert_true(th_bridge_wait_state(&p, &p.b, BRIDGE_HALF_CLOSED, 5000));
    k = th_bridge_peek(&p, &p.b); /* the EOF's turn is over: the answer is what it waits for */
    assert_int_equal(k.state, BRIDGE_HALF_CLOSED);
    assert_true(k.answers_known);
    assert_int_equal(k.answers_due, 1);

    th_bridge_send_frame(p.a.app_fd, msg, th_smb2_read_resp(msg, &h, 80, 0, 0));
    assert_int_equal(th_bridge_recv_frame(p.b.app_fd, msg, sizeof(msg), 5000), 80);
    assert_true(th_bridge_wait_closed(p.b.app_fd, TH_BRIDGE_END_MS, &reset) >= 0);
    assert_int_equal(reset, 0); /* EOF */
    assert_true(th_bridge_wait_ended(&p.b, TH_BRIDGE_END_MS));
    assert_int_equal(p.b.end_err, 0);
    lc_assert_reason(&p.b, "SMB Direct disconnected");
    th_bridge_teardown(&p);
}

/* ---- FINISHING, FINISHED: the program exits ---- */

#define LC_WRITES 3
#define LC_WRITE  (1u << 20)

/* OPEN -> FINISHING -> FINISHED -> DISCONNECTING -> CLOSED: a program that wrote its
 * WRITEs and exits with its socket open has them all reach the backend, and the tunnel
 * ends in order at once: the answers are not awaited (half_close_ms is 10 s). */
static void test_finish_at_program_exit_sends_what_was_written(void **state)
{
    uint8_t *msg = malloc(TH_RW_FIXED + LC_WRITE), *got = malloc(TH_RW_FIXED + LC_WRITE);
    struct th_bridge_pair p;
    uint64_t start;
    int reset = -1;

    (void)state;
    assert_non_null(msg);
    assert_non_null(got);
    th_bridge_setup(&p, 0, NULL, &lc_shim);
    for (uint64_t id = 1; id <= LC_WRITES; id++) /* the backend reads none yet */
        th_bridge_send_frame(p.b.app_fd, msg, th_smb2_plain_write(msg, id, LC_WRITE));
    start = sd_now_ms();
    th_bridge_finish(&p, &p.b);
    assert_true(th_bridge_wait_ended(&p.b, 3000));
    print_message("# the exiting program's tunnel ended %llu ms after finish: %s\n",
                  (unsigned long long)(sd_now_ms() - start), p.b.reason);
    assert_int_equal(p.b.end_err, 0);
    lc_assert_reason(&p.b, "SMB Direct disconnected");

    for (uint64_t id = 1; id <= LC_WRITES; id++) {
        size_t len = th_smb2_plain_write(msg, id, LC_WRITE);

        assert_int_equal(th_bridge_recv_frame(p.a.app_fd, got, TH_RW_FIXED + LC_WRITE, 5000),
                         len);
        assert_memory_equal(got, msg, len);
    }
    assert_true(th_bridge_wait_closed(p.a.app_fd, TH_BRIDGE_END_MS, &reset) >= 0);
    assert_int_equal(reset, 0); /* then EOF: the backend sees an orderly end */
    free(msg);
    free(got);
    th_bridge_teardown(&p);
}

/* HALF_CLOSED -> FINISHED: a program exiting after its SHUT_WR reads no answer, so none
 * is awaited any more. */
static void test_finish_while_half_closed_stops_waiting_for_answers(void **state)
{
    struct th_bridge_pair p;

    (void)state;
    th_bridge_setup(&p, 0, NULL, &lc_shim);
    lc_request(&p, 1);
    assert_int_equal(shutdown(p.b.app_fd, SHUT_WR), 0);
    assert_true(th_bridge_wait_state(&p, &p.b, BRIDGE_HALF_CLOSED, 5000));
    th_bridge_finish(&p, &p.b);
    assert_true(th_bridge_wait_ended(&p.b, 3000)); /* unanswered, well within half_close_ms */
    assert_int_equal(p.b.end_err, 0);
    th_bridge_teardown(&p);
}

/* FINISHED waits while the peer may still access the program's channel buffers: a
 * channel WRITE the relay RDMA-read and the backend has not answered keeps the shim's
 * buffer registered, so the exiting program's tunnel ends only after the answer. */
static void test_finish_awaits_the_peers_rdma_on_channel_buffers(void **state)
{
    const struct smbd_bridge_opts relay = { .channel = BRIDGE_CHAN_SERVER };
    const struct smbd_bridge_opts shim = { .channel = BRIDGE_CHAN_CLIENT,
                                           .channel_threshold = 4096 };
    const struct th_hdr h = { .command = 9, .message_id = 1 };
    uint8_t *msg = malloc(TH_RW_FIXED + LC_WRITE), small[256];
    struct th_bridge_pair p;
    struct th_bridge_peek k;
    uint64_t answered_at;

    (void)state;
    assert_non_null(msg);
    th_bridge_setup(&p, 0, &relay, &shim);
    /* dialect 3.1.1: the shim's side may use the channel */
    th_bridge_send_frame(p.a.app_fd, small, th_smb2_negotiate_resp(small, 0x0311));
    assert_int_equal(th_bridge_recv_frame(p.b.app_fd, small, sizeof(small), 5000), 129);
    th_bridge_send_frame(p.b.app_fd, msg, th_smb2_plain_write(msg, 1, LC_WRITE));
    assert_int_equal(th_bridge_recv_frame(p.a.app_fd, msg, TH_RW_FIXED + LC_WRITE, 5000),
                     TH_RW_FIXED + LC_WRITE); /* RDMA-read by the relay, inline to it */

    th_bridge_finish(&p, &p.b);
    assert_true(th_bridge_wait_state(&p, &p.b, BRIDGE_FINISHED, 5000));
    k = th_bridge_peek(&p, &p.b); /* the exit's turn is over: the buffer is what it waits for */
    assert_int_equal(k.state, BRIDGE_FINISHED);
    assert_true(k.chan_busy); /* the WRITE's buffer is still registered */

    answered_at = sd_now_ms();
    th_bridge_send_frame(p.a.app_fd, small, th_smb2_write_resp(small, &h, LC_WRITE));
    assert_true(th_bridge_wait_ended(&p.b, 3000));
    assert_true(p.b.ended_at >= answered_at); /* the answer let it end */
    assert_int_equal(p.b.end_err, 0);
    assert_int_equal(p.b.rdma_ios, 1);
    free(msg);
    th_bridge_teardown(&p);
}

/* ---- FLUSHING: the peer closes in order ---- */

#define LC_FLUSH_MSGS 2
#define LC_FLUSH_SIZE (1u << 20)

/* OPEN -> FLUSHING -> CLOSED: the backend (b, TCP) writes 2 MiB and closes at once while
 * the program (a) reads nothing: a's bridge, its link closed in order by b's, holds what
 * the program has not read and stays FLUSHING until it has, then the program reads EOF. */
static void test_flushing_delivers_all_to_a_slow_reader_then_eof(void **state)
{
    uint8_t *msg = malloc(LC_FLUSH_SIZE), *got = malloc(LC_FLUSH_SIZE);
    struct th_bridge_pair p;
    struct th_bridge_peek k;
    int reset = -1;

    (void)state;
    assert_non_null(msg);
    assert_non_null(got);
    th_bridge_setup(&p, 1, NULL, NULL);
    for (unsigned i = 0; i < LC_FLUSH_MSGS; i++) {
        lc_fill(msg, LC_FLUSH_SIZE, i);
        th_bridge_send_frame(p.b.app_fd, msg, LC_FLUSH_SIZE);
    }
    assert_int_equal(shutdown(p.b.app_fd, SHUT_WR), 0);
    assert_true(th_bridge_wait_ended(&p.b, TH_BRIDGE_END_MS)); /* b: HALF_CLOSED, sent, closed */
    assert_int_equal(p.b.end_err, 0);
    assert_true(th_bridge_wait_closed(p.b.app_fd, TH_BRIDGE_END_MS, &reset) >= 0);
    assert_int_equal(reset, 0);
    assert_false(lc_reset_seen(p.b.app_fd, 100)); /* an orderly end: FIN, no RST */
    assert_true(th_bridge_wait_state(&p, &p.a, BRIDGE_FLUSHING, 5000));
    k = th_bridge_peek(&p, &p.a); /* the close's turn is over: the reader is what it waits for */
    print_message("# a is flushing with %zu bytes the program has not taken\n", k.queued);
    assert_int_equal(k.state, BRIDGE_FLUSHING);
    assert_true(k.queued > 0);

    for (unsigned i = 0; i < LC_FLUSH_MSGS; i++) {
        lc_fill(msg, LC_FLUSH_SIZE, i);
        assert_int_equal(th_bridge_recv_frame(p.a.app_fd, got, LC_FLUSH_SIZE, 5000),
                         LC_FLUSH_SIZE);
        assert_memory_equal(got, msg, LC_FLUSH_SIZE);
    }
    assert_true(th_bridge_wait_closed(p.a.app_fd, TH_BRIDGE_END_MS, &reset) >= 0);
    assert_int_equal(reset, 0); /* EOF after the last byte */
    assert_true(th_bridge_wait_ended(&p.a, TH_BRIDGE_END_MS));
    assert_int_equal(p.a.end_err, -ECONNRESET);
    lc_assert_reason(&p.a, "every byte it sent was delivered");
    free(msg);
    free(got);
    th_bridge_teardown(&p);
}

/* ---- held: the channel's messages wait for a delivered message's end ---- */

struct lc_held {
    struct th_bridge_side *side;
    size_t held_mid;               /* bytes held while the message was part-way */
    enum bridge_deliver deliver_mid;
};

/* Plays the engine and the channel on a's bridge: the first 100 bytes of a 150-byte
 * message, then a whole message of the channel's (30 bytes), then the message's last
 * 50 bytes. */
static void lc_held_task(void *ctx)
{
    struct lc_held *t = ctx;
    struct smbd_bridge *b = t->side->bridge;
    uint8_t peer[150], chan[30];
    struct iovec iov = { chan, sizeof(chan) };

    lc_fill(peer, sizeof(peer), 1);
    lc_fill(chan, sizeof(chan), 2);
    bridge_deliver_fragment(b, peer, 100, 50, 1);
    assert_int_equal(bridge_host_to_stream(b, &iov, 1, NULL, 0), 0);
    t->held_mid = bridge_buf_len(&b->out.held);
    t->deliver_mid = b->out.deliver;
    bridge_deliver_fragment(b, peer + 100, 50, 0, 0);
}

static void test_held_messages_wait_for_the_delivered_messages_end(void **state)
{
    struct th_bridge_pair p;
    struct lc_held t;
    uint8_t want[150], got[256];

    (void)state;
    th_bridge_setup(&p, 0, NULL, NULL);
    t = (struct lc_held){ .side = &p.a };
    th_bridge_on_loop(&p, lc_held_task, &t);
    assert_int_equal(t.deliver_mid, BRIDGE_DELIVER_STREAM);
    assert_int_equal(t.held_mid, 4 + 30); /* prefix and message, kept */

    lc_fill(want, 150, 1); /* the delivered message first, whole */
    assert_int_equal(th_bridge_recv_frame(p.a.app_fd, got, sizeof(got), 5000), 150);
    assert_memory_equal(got, want, 150);
    lc_fill(want, 30, 2); /* then the channel's */
    assert_int_equal(th_bridge_recv_frame(p.a.app_fd, got, sizeof(got), 5000), 30);
    assert_memory_equal(got, want, 30);
    assert_int_equal(th_bridge_peek(&p, &p.a).deliver, BRIDGE_DELIVER_IDLE);
    assert_int_equal(th_bridge_peek(&p, &p.a).state, BRIDGE_OPEN);
    th_bridge_teardown(&p);
}

/* ---- FAILED: the link is lost mid-message ---- */

#define LC_BIG (8u << 20)

struct lc_writer {
    int fd;
    uint8_t *msg;
};

static void *lc_write_big(void *arg)
{
    struct lc_writer *w = arg;
    uint8_t prefix[4] = { 0, (uint8_t)(LC_BIG >> 16), (uint8_t)(LC_BIG >> 8), (uint8_t)LC_BIG };

    if (send(w->fd, prefix, 4, MSG_NOSIGNAL) == 4)
        for (size_t off = 0; off < LC_BIG;) {
            ssize_t n = send(w->fd, w->msg + off, LC_BIG - off, MSG_NOSIGNAL);

            if (n <= 0)
                break; /* the stream was reset: that is the point */
            off += (size_t)n;
        }
    return NULL;
}

/* OPEN -> FAILED: the program (a) sends an 8 MiB message the backend (b, TCP) does not
 * read; with b's bridge part-way through delivering it, the link dies. b fails, and its
 * TCP stream is reset, unlike the orderly ends above; the program reads EOF. */
static void test_failure_mid_message_resets_the_tcp_stream(void **state)
{
    struct lc_writer w = { .msg = calloc(1, LC_BIG) };
    struct th_bridge_pair p;
    pthread_t t;
    uint64_t end;
    int reset = -1, qp_fd;

    (void)state;
    assert_non_null(w.msg);
    th_bridge_setup(&p, 1, NULL, NULL);
    w.fd = p.a.app_fd;
    assert_int_equal(pthread_create(&t, NULL, lc_write_big, &w), 0);
    end = sd_now_ms() + 5000;
    while (th_bridge_peek(&p, &p.b).deliver != BRIDGE_DELIVER_STREAM && sd_now_ms() < end)
        usleep(2000);
    assert_int_equal(th_bridge_peek(&p, &p.b).deliver, BRIDGE_DELIVER_STREAM);
    assert_int_equal(th_bridge_peek(&p, &p.b).state, BRIDGE_OPEN);

    qp_fd = th_bridge_accepted_socket(&p);
    assert_true(qp_fd >= 0);
    assert_int_equal(shutdown(qp_fd, SHUT_RDWR), 0); /* the wire dies under a */
    assert_true(th_bridge_wait_closed(p.b.app_fd, TH_BRIDGE_END_MS, &reset) >= 0);
    assert_true(reset == 1 || lc_reset_seen(p.b.app_fd, 1000)); /* RST (after a FIN) */
    assert_true(th_bridge_wait_ended(&p.b, TH_BRIDGE_END_MS));
    print_message("# b: %s\n", p.b.reason);
    assert_true(p.b.end_err < 0);
    assert_null(strstr(p.b.reason, "in order"));
    assert_true(th_bridge_wait_closed(p.a.app_fd, TH_BRIDGE_END_MS, NULL) >= 0);
    shutdown(p.a.app_fd, SHUT_RDWR); /* unblock the writer if it is still in send() */
    pthread_join(t, NULL);
    free(w.msg);
    th_bridge_teardown(&p);
    assert_true(p.a.end_err < 0);
}

/* ---- a change the table does not allow ---- */

struct lc_illegal {
    struct th_bridge_side *side;
    int rc_open, rc_final;         /* bridge_enter's answers */
    enum bridge_state after_open;  /* the state after each */
    enum bridge_state after_final;
    int err_open, err_final;       /* end_err after each */
};

static void lc_illegal_task(void *ctx)
{
    struct lc_illegal *t = ctx;
    struct smbd_bridge *b = t->side->bridge;

    t->rc_open = bridge_enter(b, BRIDGE_DISCONNECTING); /* OPEN -> DISCONNECTING */
    t->after_open = b->state;
    t->err_open = b->end_err;
    t->rc_final = bridge_enter(b, BRIDGE_OPEN);         /* FAILED -> OPEN */
    t->after_final = b->state;
    t->err_final = b->end_err;
}

/* OPEN -> DISCONNECTING is no transition: refused with an error line, and the bridge
 * fails (not the process); from a final state nothing moves. */
static void test_an_illegal_transition_is_refused_and_fails_the_bridge(void **state)
{
    struct th_bridge_pair p;
    struct lc_illegal t;
    struct th_stderr cap;
    char log[4096];

    (void)state;
    th_bridge_setup(&p, 0, NULL, NULL);
    t = (struct lc_illegal){ .side = &p.a };
    th_stderr_begin(&cap);
    th_bridge_on_loop(&p, lc_illegal_task, &t);
    th_stderr_end(&cap, log, sizeof(log));
    assert_int_equal(t.rc_open, -1);
    assert_int_equal(t.after_open, BRIDGE_FAILED);
    assert_int_equal(t.err_open, -EINVAL);
    assert_int_equal(t.rc_final, -1);
    assert_int_equal(t.after_final, BRIDGE_FAILED);
    assert_int_equal(t.err_final, -EINVAL); /* the first reason stands */
    assert_non_null(strstr(log, "error"));
    assert_non_null(strstr(log, "OPEN -> DISCONNECTING"));
    assert_non_null(strstr(log, "FAILED -> OPEN"));

    assert_true(th_bridge_wait_ended(&p.a, TH_BRIDGE_END_MS));
    assert_int_equal(p.a.end_err, -EINVAL);
    lc_assert_reason(&p.a, "OPEN -> DISCONNECTING refused");
    assert_true(th_bridge_wait_closed(p.a.app_fd, TH_BRIDGE_END_MS, NULL) >= 0);
    th_bridge_teardown(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_half_close_waits_for_the_answer_then_eof),
        cmocka_unit_test(test_finish_at_program_exit_sends_what_was_written),
        cmocka_unit_test(test_finish_while_half_closed_stops_waiting_for_answers),
        cmocka_unit_test(test_finish_awaits_the_peers_rdma_on_channel_buffers),
        cmocka_unit_test(test_flushing_delivers_all_to_a_slow_reader_then_eof),
        cmocka_unit_test(test_held_messages_wait_for_the_delivered_messages_end),
        cmocka_unit_test(test_failure_mid_message_resets_the_tcp_stream),
        cmocka_unit_test(test_an_illegal_transition_is_refused_and_fails_the_bridge),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
