/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/test_bridge_states.c — every change of state the bridge's lifecycle table
 * allows (enum bridge_state, transport/bridge/bridge_int.h), each made by the bridge's own
 * paths on two bridges over a real soft-iWARP link (th_bridge.h; a relay-like, b shim-like),
 * one test per row of st_cases: the stream's half-close, answered or not within the
 * shortened half_close_ms; the program's exit, while the peer reads its channel buffer or
 * while the channel budget holds its stream back; the peer's orderly close in every state
 * that awaits something; a disconnect the provider never confirms, ended by the shortened
 * close_ms; smbd_bridge_stop in every state but the final ones. Each checks the states the
 * bridges logged, in order, against st_paths. Before them, the table (bridge_state.c):
 * bridge_enter makes every change the test's copy of it lists and refuses every other,
 * failing the bridge (th_fsm_check), and the paths' changes are exactly the listed ones.
 * What each end delivers is test_bridge_lifecycle.c's. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "bridge_int.h"
#include "soft/soft_cm.h"
#include "th_bridge.h"
#include "th_bridge_state.h"
#include "th_fsm.h"
#include "th_smb2.h"

/* The ways through the lifecycle the tests below take, each a row of states from OPEN. */
enum st_path {
    ST_DISCONNECTED,          /* the stream's EOF, nothing awaited or all answered */
    ST_PEER_CLOSED,           /* the peer closes in order */
    ST_UNANSWERED,            /* half-closed, the answer never comes: half_close_ms */
    ST_EXIT_HALF_CLOSED,      /* the program exits after its SHUT_WR */
    ST_EXIT,                  /* the program exits */
    ST_EXIT_RDMA_BOUND,       /* ... while the peer reads its buffers, past half_close_ms */
    ST_EXIT_RDMA_PEER_CLOSED, /* ... while the peer reads its buffers, the peer closes */
    ST_EXIT_RDMA_STOPPED,     /* ... while the peer reads its buffers, stopped */
    ST_HALF_CLOSED_PEER_CLOSED,
    ST_HALF_CLOSED_STOPPED,
    ST_EXIT_HELD_PEER_CLOSED, /* the program exits while its stream waits for memory */
    ST_EXIT_HELD_STOPPED,
    ST_CLOSING_PEER_CLOSED,   /* the wait is over, the sends are not out */
    ST_CLOSING_STOPPED,
    ST_DISCONNECTING_STOPPED, /* the disconnect is not confirmed yet */
    ST_FLUSHING_EXIT,         /* the program exits before reading what the peer sent */
    ST_STOPPED,
    ST_PATHS
};

static const char *const st_paths[ST_PATHS] = {
    [ST_DISCONNECTED] = "OPEN HALF_CLOSED DISCONNECTING CLOSED",
    [ST_PEER_CLOSED] = "OPEN FLUSHING CLOSED",
    [ST_UNANSWERED] = "OPEN HALF_CLOSED CLOSING DISCONNECTING CLOSED",
    [ST_EXIT_HALF_CLOSED] = "OPEN HALF_CLOSED FINISHED DISCONNECTING CLOSED",
    [ST_EXIT] = "OPEN FINISHING FINISHED DISCONNECTING CLOSED",
    [ST_EXIT_RDMA_BOUND] = "OPEN FINISHING FINISHED CLOSING DISCONNECTING CLOSED",
    [ST_EXIT_RDMA_PEER_CLOSED] = "OPEN FINISHING FINISHED FLUSHING CLOSED",
    [ST_EXIT_RDMA_STOPPED] = "OPEN FINISHING FINISHED FAILED",
    [ST_HALF_CLOSED_PEER_CLOSED] = "OPEN HALF_CLOSED FLUSHING CLOSED",
    [ST_HALF_CLOSED_STOPPED] = "OPEN HALF_CLOSED FAILED",
    [ST_EXIT_HELD_PEER_CLOSED] = "OPEN FINISHING FLUSHING CLOSED",
    [ST_EXIT_HELD_STOPPED] = "OPEN FINISHING FAILED",
    [ST_CLOSING_PEER_CLOSED] = "OPEN HALF_CLOSED CLOSING FLUSHING CLOSED",
    [ST_CLOSING_STOPPED] = "OPEN HALF_CLOSED CLOSING FAILED",
    [ST_DISCONNECTING_STOPPED] = "OPEN HALF_CLOSED DISCONNECTING FAILED",
    [ST_FLUSHING_EXIT] = "OPEN FLUSHING FAILED",
    [ST_STOPPED] = "OPEN FAILED",
};

#define ST_BOUND_MS 50     /* the shortened half_close_ms and close_ms */
#define ST_WRITE (1u << 20) /* a large WRITE's data */

/* What a test does once its bridge is where its row goes on from. */
enum st_then {
    ST_WAIT,        /* nothing: a bound runs out */
    ST_ANSWER,      /* the backend answers the program's request */
    ST_PEER_CLOSES, /* the backend's SHUT_WR: a (no role) disconnects in order */
    ST_STOP,        /* smbd_bridge_stop */
    ST_PROGRAM_EXITS, /* smbd_bridge_finish */
};

struct st_run;

/* One test: a pair set up and brought where the row goes on from (reach), what then
 * happens, and how the side looked at (b, or a) ends: its err, no sooner than the bound
 * after r->since (0: no bound), its reason, the states it went through, and the other
 * side's (ST_PATHS: not looked at). */
struct st_case {
    const char *name;
    void (*reach)(struct th_bridge_pair *p, const struct st_case *c, struct st_run *r);
    uint32_t half_close_ms, close_ms; /* the shim's (b's) options */
    enum st_then then;
    int side_a;
    int err;
    uint32_t bound_ms;
    const char *reason;
    enum st_path path, other;
};

struct st_run {
    uint64_t since;           /* when the bound began */
    struct st_writer *writer; /* a program writing still, joined at the end */
};

/* The program writing count WRITEs of len bytes back to back, until its stream ends. */
struct st_writer {
    int fd;
    unsigned count;
    uint32_t len;
    pthread_t thread;
};

static void *st_write_main(void *arg)
{
    struct st_writer *w = arg;
    uint8_t *msg = malloc(TH_RW_FIXED + w->len);

    for (uint64_t id = 1; msg && id <= w->count; id++) {
        size_t len = th_smb2_plain_write(msg, id, w->len);
        uint8_t prefix[4] = { 0, (uint8_t)(len >> 16), (uint8_t)(len >> 8), (uint8_t)len };
        size_t off = 0;

        if (send(w->fd, prefix, 4, MSG_NOSIGNAL) != 4)
            break;
        while (off < len) {
            ssize_t n = send(w->fd, msg + off, len - off, MSG_NOSIGNAL);

            if (n <= 0)
                break;
            off += (size_t)n;
        }
        if (off < len)
            break;
    }
    free(msg);
    return NULL;
}

/* Checks that s's bridge went through path (after th_bridge_teardown). */
static void st_expect(const struct th_bridge_side *s, enum st_path path)
{
    char got[512];

    th_bridge_trace(s, got, sizeof(got));
    if (strcmp(got, st_paths[path]) != 0)
        fail_msg("the bridge went \"%s\", not \"%s\"", got, st_paths[path]);
}

/* s's bridge ends within TH_BRIDGE_END_MS with err. */
static void st_ended(struct th_bridge_side *s, int err)
{
    assert_true(th_bridge_wait_ended(s, TH_BRIDGE_END_MS));
    if (s->end_err != err)
        fail_msg("the bridge ended with %d (%s), not %d", s->end_err, s->reason, err);
}

/* ---- where the rows go on from ---- */

/* b (the shim's client role, every I/O inline) and a are OPEN. */
static void st_open(struct th_bridge_pair *p, const struct st_case *c, struct st_run *r)
{
    const struct smbd_bridge_opts shim = { .channel = BRIDGE_CHAN_CLIENT,
                                           .half_close_ms = c->half_close_ms };

    (void)r;
    th_bridge_setup(p, 0, NULL, &shim);
}

/* The program sent a request (the backend got it) and its SHUT_WR: b is HALF_CLOSED,
 * awaiting the answer; since: the SHUT_WR. */
static void st_half_closed(struct th_bridge_pair *p, const struct st_case *c, struct st_run *r)
{
    struct th_bridge_peek k;
    uint8_t msg[256];

    st_open(p, c, r);
    th_bridge_send_frame(p->b.app_fd, msg, th_smb2_plain_read(msg, 1, 4096));
    assert_int_equal(th_bridge_recv_frame(p->a.app_fd, msg, sizeof(msg), 5000), 113);
    r->since = sd_now_ms();
    assert_int_equal(shutdown(p->b.app_fd, SHUT_WR), 0);
    assert_true(th_bridge_wait_state(p, &p->b, BRIDGE_HALF_CLOSED, 5000));
    k = th_bridge_peek(p, &p->b);
    assert_true(k.answers_known);
    assert_int_equal(k.answers_due, 1);
}

/* a the relay's channel server, b its client; the program's 1 MiB WRITE went over the
 * channel (RDMA-read by the relay) and is not answered; the program exits: b is FINISHED
 * while the peer may still access the WRITE's buffer; since: the exit. */
static void st_finished_rdma(struct th_bridge_pair *p, const struct st_case *c,
                             struct st_run *r)
{
    const struct smbd_bridge_opts relay = { .channel = BRIDGE_CHAN_SERVER };
    const struct smbd_bridge_opts shim = { .channel = BRIDGE_CHAN_CLIENT,
                                           .channel_threshold = 4096,
                                           .half_close_ms = c->half_close_ms };
    uint8_t *msg = malloc(TH_RW_FIXED + ST_WRITE);

    assert_non_null(msg);
    th_bridge_setup(p, 0, &relay, &shim);
    /* dialect 3.1.1: the shim's side may use the channel */
    th_bridge_send_frame(p->a.app_fd, msg, th_smb2_negotiate_resp(msg, 0x0311));
    assert_int_equal(th_bridge_recv_frame(p->b.app_fd, msg, 256, 5000), 129);
    th_bridge_send_frame(p->b.app_fd, msg, th_smb2_plain_write(msg, 1, ST_WRITE));
    assert_int_equal(th_bridge_recv_frame(p->a.app_fd, msg, TH_RW_FIXED + ST_WRITE, 5000),
                     TH_RW_FIXED + ST_WRITE);
    free(msg);
    r->since = sd_now_ms();
    th_bridge_finish(p, &p->b);
    assert_true(th_bridge_wait_state(p, &p->b, BRIDGE_FINISHED, 5000));
    assert_true(th_bridge_peek(p, &p->b).chan_busy);
}

/* The channel budget (1 MiB) holds the program's second 2 MiB WRITE back while the first's
 * buffer is registered; the program exits: b stays FINISHING, its stream held. */
static void st_finishing_held(struct th_bridge_pair *p, const struct st_case *c,
                              struct st_run *r)
{
    const struct smbd_bridge_opts relay = { .channel = BRIDGE_CHAN_SERVER };
    const struct smbd_bridge_opts shim = { .channel = BRIDGE_CHAN_CLIENT,
                                           .channel_threshold = 4096,
                                           .channel_memory = 1u << 20 };
    static struct st_writer w;
    uint8_t *msg = malloc(TH_RW_FIXED + 2 * ST_WRITE);
    uint64_t end = sd_now_ms() + 5000;

    (void)c;
    assert_non_null(msg);
    th_bridge_setup(p, 0, &relay, &shim);
    th_bridge_send_frame(p->a.app_fd, msg, th_smb2_negotiate_resp(msg, 0x0311));
    assert_int_equal(th_bridge_recv_frame(p->b.app_fd, msg, 256, 5000), 129);
    w = (struct st_writer){ .fd = p->b.app_fd, .count = 2, .len = 2 * ST_WRITE };
    assert_int_equal(pthread_create(&w.thread, NULL, st_write_main, &w), 0);
    r->writer = &w;
    assert_int_equal(th_bridge_recv_frame(p->a.app_fd, msg, TH_RW_FIXED + 2 * ST_WRITE, 5000),
                     TH_RW_FIXED + 2 * ST_WRITE); /* the first, RDMA-read by the relay */
    free(msg);
    while (!th_bridge_peek(p, &p->b).stream_held) {
        if (sd_now_ms() > end)
            fail_msg("the budget never held the second WRITE back");
        usleep(2000);
    }
    th_bridge_finish(p, &p->b);
    assert_true(th_bridge_wait_state(p, &p->b, BRIDGE_FINISHING, 5000));
    assert_true(th_bridge_peek(p, &p->b).stream_held);
}

/* The program sends 1 MiB WRITEs the backend does not read until a pauses its receive
 * credits and b's send queue holds one, then its SHUT_WR: b is HALF_CLOSED, and after
 * half_close_ms CLOSING, its sends waiting for credits. */
static void st_closing(struct th_bridge_pair *p, const struct st_case *c, struct st_run *r)
{
    uint8_t *msg = malloc(TH_RW_FIXED + ST_WRITE);
    uint64_t written = 0;
    struct th_bridge_peek k;

    assert_non_null(msg);
    st_open(p, c, r);
    for (uint64_t id = 1;; id++) {
        uint64_t end = sd_now_ms() + 5000;
        size_t len = th_smb2_plain_write(msg, id, ST_WRITE);

        assert_true(id <= 32); /* 32 MiB: far more than a's queue and credits take */
        th_bridge_send_frame(p->b.app_fd, msg, len);
        written += 4 + len;
        while ((k = th_bridge_peek(p, &p->b)).stream_in < written) { /* b read it all */
            if (sd_now_ms() > end)
                fail_msg("b stopped reading its stream at %llu bytes",
                         (unsigned long long)k.stream_in);
            usleep(2000);
        }
        if (k.send_queued > 0 && th_bridge_peek(p, &p->a).recv_paused)
            break;
    }
    free(msg);
    assert_int_equal(shutdown(p->b.app_fd, SHUT_WR), 0);
    assert_true(th_bridge_wait_state(p, &p->b, BRIDGE_CLOSING, 5000));
    assert_true(th_bridge_peek(p, &p->b).send_queued > 0);
}

/* Soft-iWARP whose disconnect is lost (as a fabric that never delivers the event): the
 * connection ends only when the bridge frees its link. */
static void st_deaf_disconnect(struct sd_qp *qp)
{
    (void)qp;
}

/* b (no role) dialled over st_deaf and its stream's EOF: b is DISCONNECTING, its
 * disconnect never confirmed; since: the EOF. */
static void st_disconnecting(struct th_bridge_pair *p, const struct st_case *c,
                             struct st_run *r)
{
    static struct sd_provider_ops deaf;
    const struct smbd_bridge_opts shim = { .close_ms = c->close_ms };

    deaf = sd_soft_provider;
    deaf.disconnect = st_deaf_disconnect;
    th_bridge_provider_active = &deaf; /* for the dial only */
    th_bridge_setup(p, 0, NULL, &shim);
    th_bridge_provider_active = &sd_soft_provider;
    r->since = sd_now_ms();
    assert_int_equal(shutdown(p->b.app_fd, SHUT_WR), 0);
    assert_true(th_bridge_wait_state(p, &p->b, BRIDGE_DISCONNECTING, 5000));
}

/* The backend (b, TCP) sent 2 MiB and closed, the program (a) read none of it: a is
 * FLUSHING with bytes to deliver. */
static void st_flushing(struct th_bridge_pair *p, const struct st_case *c, struct st_run *r)
{
    uint8_t *msg = calloc(1, ST_WRITE);

    (void)c;
    (void)r;
    assert_non_null(msg);
    th_bridge_setup(p, 1, NULL, NULL);
    th_bridge_send_frame(p->b.app_fd, msg, ST_WRITE);
    th_bridge_send_frame(p->b.app_fd, msg, ST_WRITE);
    free(msg);
    assert_int_equal(shutdown(p->b.app_fd, SHUT_WR), 0);
    assert_true(th_bridge_wait_state(p, &p->a, BRIDGE_FLUSHING, 5000));
    assert_true(th_bridge_peek(p, &p->a).queued > 0);
}

/* ---- the rows, one test each ---- */

static const struct st_case st_cases[] = {
    { "half-closed, answered: HALF_CLOSED -> DISCONNECTING", st_half_closed, .then = ST_ANSWER,
      .path = ST_DISCONNECTED, .other = ST_PEER_CLOSED },
    { "half-closed, unanswered past half_close_ms: HALF_CLOSED -> CLOSING", st_half_closed,
      .half_close_ms = ST_BOUND_MS, .then = ST_WAIT, .bound_ms = ST_BOUND_MS,
      .path = ST_UNANSWERED, .other = ST_PATHS },
    { "half-closed, the program exits: HALF_CLOSED -> FINISHED", st_half_closed,
      .then = ST_PROGRAM_EXITS, .path = ST_EXIT_HALF_CLOSED, .other = ST_PATHS },
    { "half-closed, the peer closes: HALF_CLOSED -> FLUSHING", st_half_closed,
      .then = ST_PEER_CLOSES, .err = -ECONNRESET, .path = ST_HALF_CLOSED_PEER_CLOSED,
      .other = ST_DISCONNECTED },
    { "half-closed, stopped: HALF_CLOSED -> FAILED", st_half_closed, .then = ST_STOP,
      .err = -ECANCELED, .path = ST_HALF_CLOSED_STOPPED, .other = ST_PATHS },
    { "open, stopped: OPEN -> FAILED", st_open, .then = ST_STOP, .err = -ECANCELED,
      .path = ST_STOPPED, .other = ST_PEER_CLOSED },
    { "open, the program exits: OPEN -> FINISHING -> FINISHED", st_open,
      .then = ST_PROGRAM_EXITS, .path = ST_EXIT, .other = ST_PATHS },
    { "exited while the peer reads its buffer, past half_close_ms: FINISHED -> CLOSING",
      st_finished_rdma, .half_close_ms = ST_BOUND_MS, .then = ST_WAIT, .bound_ms = ST_BOUND_MS,
      .path = ST_EXIT_RDMA_BOUND, .other = ST_PATHS },
    { "exited while the peer reads its buffer, the peer closes: FINISHED -> FLUSHING",
      st_finished_rdma, .then = ST_PEER_CLOSES, .err = -ECONNRESET,
      .path = ST_EXIT_RDMA_PEER_CLOSED, .other = ST_DISCONNECTED },
    { "exited while the peer reads its buffer, stopped: FINISHED -> FAILED", st_finished_rdma,
      .then = ST_STOP, .err = -ECANCELED, .path = ST_EXIT_RDMA_STOPPED, .other = ST_PATHS },
    { "exiting, the budget holds the stream, the peer closes: FINISHING -> FLUSHING",
      st_finishing_held, .then = ST_PEER_CLOSES, .err = -ECONNRESET,
      .path = ST_EXIT_HELD_PEER_CLOSED, .other = ST_PATHS },
    { "exiting, the budget holds the stream, stopped: FINISHING -> FAILED", st_finishing_held,
      .then = ST_STOP, .err = -ECANCELED, .path = ST_EXIT_HELD_STOPPED, .other = ST_PATHS },
    { "closing, the sends wait for credits, the peer closes: CLOSING -> FLUSHING", st_closing,
      .half_close_ms = ST_BOUND_MS, .then = ST_PEER_CLOSES, .err = -ECONNRESET,
      .path = ST_CLOSING_PEER_CLOSED, .other = ST_PATHS },
    { "closing, the sends wait for credits, stopped: CLOSING -> FAILED", st_closing,
      .half_close_ms = ST_BOUND_MS, .then = ST_STOP, .err = -ECANCELED,
      .path = ST_CLOSING_STOPPED, .other = ST_PATHS },
    { "disconnect never confirmed, past close_ms: DISCONNECTING -> CLOSED", st_disconnecting,
      .close_ms = ST_BOUND_MS, .then = ST_WAIT, .bound_ms = ST_BOUND_MS,
      .reason = "disconnect not confirmed in 50 ms", .path = ST_DISCONNECTED,
      .other = ST_PEER_CLOSED },
    { "disconnecting, stopped: DISCONNECTING -> FAILED", st_disconnecting, .close_ms = 60000,
      .then = ST_STOP, .err = -ECANCELED, .path = ST_DISCONNECTING_STOPPED, .other = ST_PATHS },
    { "flushing, the program exits: FLUSHING -> FAILED", st_flushing, .then = ST_PROGRAM_EXITS,
      .side_a = 1, .err = -ECONNRESET, .path = ST_FLUSHING_EXIT, .other = ST_DISCONNECTED },
};

static void st_case_run(void **state)
{
    const struct st_case *c = *state;
    struct th_bridge_pair p;
    struct st_run r = { 0 };
    struct th_bridge_side *s, *other;
    uint8_t msg[256];

    c->reach(&p, c, &r);
    s = c->side_a ? &p.a : &p.b;
    other = c->side_a ? &p.b : &p.a;
    switch (c->then) {
    case ST_WAIT:
        break;
    case ST_ANSWER:
        th_bridge_send_frame(p.a.app_fd, msg,
                             th_smb2_read_resp(msg, &(struct th_hdr){ .command = 8,
                                                                      .message_id = 1 },
                                               80, 0, 0));
        assert_int_equal(th_bridge_recv_frame(p.b.app_fd, msg, sizeof(msg), 5000), 80);
        break;
    case ST_PEER_CLOSES:
        assert_int_equal(shutdown(p.a.app_fd, SHUT_WR), 0);
        break;
    case ST_STOP:
        th_bridge_stop(&p, s);
        break;
    case ST_PROGRAM_EXITS:
        th_bridge_finish(&p, s);
        break;
    }
    st_ended(s, c->err);
    assert_true(s->ended_at - r.since >= c->bound_ms);
    if (c->reason && !strstr(s->reason, c->reason))
        fail_msg("the bridge ended with \"%s\", not \"...%s...\"", s->reason, c->reason);
    /* the program (or backend) sees its stream end */
    assert_true(th_bridge_wait_closed(s->app_fd, TH_BRIDGE_END_MS, NULL) >= 0);
    th_bridge_teardown(&p);
    th_bridge_trace_collect();
    if (r.writer)
        pthread_join(r.writer->thread, NULL);
    st_expect(s, c->path);
    if (c->other != ST_PATHS)
        st_expect(other, c->other);
}

/* ---- the table itself ---- */

/* The table of bridge_state.c, written out again. */
static const struct th_fsm_change st_allowed[] = {
    { BRIDGE_OPEN, BRIDGE_HALF_CLOSED },
    { BRIDGE_OPEN, BRIDGE_FINISHING },
    { BRIDGE_OPEN, BRIDGE_FLUSHING },
    { BRIDGE_OPEN, BRIDGE_FAILED },
    { BRIDGE_FINISHING, BRIDGE_FINISHED },
    { BRIDGE_FINISHING, BRIDGE_FLUSHING },
    { BRIDGE_FINISHING, BRIDGE_FAILED },
    { BRIDGE_HALF_CLOSED, BRIDGE_DISCONNECTING },
    { BRIDGE_HALF_CLOSED, BRIDGE_CLOSING },
    { BRIDGE_HALF_CLOSED, BRIDGE_FINISHED },
    { BRIDGE_HALF_CLOSED, BRIDGE_FLUSHING },
    { BRIDGE_HALF_CLOSED, BRIDGE_FAILED },
    { BRIDGE_FINISHED, BRIDGE_DISCONNECTING },
    { BRIDGE_FINISHED, BRIDGE_CLOSING },
    { BRIDGE_FINISHED, BRIDGE_FLUSHING },
    { BRIDGE_FINISHED, BRIDGE_FAILED },
    { BRIDGE_CLOSING, BRIDGE_DISCONNECTING },
    { BRIDGE_CLOSING, BRIDGE_FLUSHING },
    { BRIDGE_CLOSING, BRIDGE_FAILED },
    { BRIDGE_DISCONNECTING, BRIDGE_CLOSED },
    { BRIDGE_DISCONNECTING, BRIDGE_FAILED },
    { BRIDGE_FLUSHING, BRIDGE_CLOSED },
    { BRIDGE_FLUSHING, BRIDGE_FAILED },
};

#define ST_ALLOWED (sizeof(st_allowed) / sizeof(st_allowed[0]))

/* The loop of the bridges th_fsm_check makes, which never runs. */
static struct sd_loop *st_loop;

/* bridge_enter on a bridge th_fsm_check made (zeroed, in the state asked for) with what a
 * refusal's failure needs: its stream not watched, its end reserved on st_loop, where the
 * failure schedules it and it never runs. */
static int st_enter(void *obj, int to)
{
    struct smbd_bridge *b = obj;
    int rc;

    b->loop = st_loop;
    b->fd = 7;
    b->watched = -1;
    assert_int_equal(bridge_end_reserve(b), 0);
    rc = bridge_enter(b, (enum bridge_state)to);
    sd_loop_cancel_timer(st_loop, b->end_timer);
    return rc;
}

/* A refused change fails the bridge, unless it has ended already. */
static int st_refused_to(int from)
{
    return from == BRIDGE_CLOSED || from == BRIDGE_FAILED ? from : BRIDGE_FAILED;
}

/* Every change the table allows is made; every other one (and a state past the last) is
 * refused with an error line and fails the bridge (test_bridge_lifecycle.c: on a live
 * one, which then ends with the refusal as its reason). */
static void test_every_change_allowed_or_refused(void **state)
{
    const struct th_fsm f = { .fsm = &bridge_state_fsm, .size = sizeof(struct smbd_bridge),
                              .state_offset = offsetof(struct smbd_bridge, state),
                              .enter = st_enter, .allowed = st_allowed,
                              .nallowed = ST_ALLOWED, .refused_to = st_refused_to };

    (void)state;
    assert_non_null(st_loop = sd_loop_new());
    th_fsm_check(&f);
    sd_loop_free(st_loop);
}

static int st_state_named(const char *name, size_t len)
{
    for (unsigned s = 0; s < BRIDGE_STATES; s++) {
        const char *n = sd_fsm_name(&bridge_state_fsm, s);

        if (strlen(n) == len && strncmp(n, name, len) == 0)
            return (int)s;
    }
    fail_msg("no state \"%.*s\"", (int)len, name);
    return -1;
}

/* Whether the rows of st_paths make from -> to. */
static int st_rows_make(int from, int to)
{
    for (int r = 0; r < ST_PATHS; r++) {
        int prev = -1;

        for (const char *at = st_paths[r]; *at;) {
            size_t n = strcspn(at, " ");
            int s = st_state_named(at, n);

            if (prev == from && s == to)
                return 1;
            prev = s;
            at += n + (at[n] == ' ');
        }
    }
    return 0;
}

/* The rows make exactly the changes the table allows: each allowed change has a test
 * above, made by the bridge's own paths (a change added to the table without one fails
 * this). */
static void test_the_rows_make_exactly_the_allowed_changes(void **state)
{
    unsigned made = 0;

    (void)state;
    for (int from = 0; from < BRIDGE_STATES; from++)
        for (int to = 0; to < BRIDGE_STATES; to++) {
            int allowed = 0;

            for (size_t i = 0; i < ST_ALLOWED; i++)
                allowed |= st_allowed[i].from == from && st_allowed[i].to == to;
            if (st_rows_make(from, to) != allowed)
                fail_msg("%s -> %s: the table %s it, the rows %s",
                         sd_fsm_name(&bridge_state_fsm, (unsigned)from),
                         sd_fsm_name(&bridge_state_fsm, (unsigned)to),
                         allowed ? "allows" : "refuses", allowed ? "never make it" : "make it");
            made += (unsigned)allowed;
        }
    assert_int_equal(made, ST_ALLOWED);
}

#define ST_CASES (sizeof(st_cases) / sizeof(st_cases[0]))

int main(void)
{
    struct CMUnitTest tests[ST_CASES + 2];

    tests[0] = (struct CMUnitTest)cmocka_unit_test(test_every_change_allowed_or_refused);
    tests[1] = (struct CMUnitTest)cmocka_unit_test(test_the_rows_make_exactly_the_allowed_changes);
    for (size_t i = 0; i < ST_CASES; i++)
        tests[i + 2] = (struct CMUnitTest){ st_cases[i].name, st_case_run, th_bridge_trace_setup,
                                            th_bridge_trace_teardown, (void *)&st_cases[i] };
    return _cmocka_run_group_tests("test_bridge_states", tests, ST_CASES + 2, NULL, NULL);
}
