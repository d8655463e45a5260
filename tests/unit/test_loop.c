/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/test_loop.c — sd_loop: fd readiness, watches changed from inside
 * callbacks, owned watches released when the loop is freed, timer order and cancel,
 * posting from another thread, stop, another thread's turn on the loop
 * (sd_loop_enter/leave), and the adaptive busy poll. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "sd_loop.h"

struct fd_probe {
    struct sd_loop *loop;
    int fd;
    int calls;
    int last_revents;
    int other_fd; /* deleted by this callback when >= 0 */
};

static void fd_probe_cb(void *ctx, int revents)
{
    struct fd_probe *p = ctx;

    p->calls++;
    p->last_revents = revents;
    if (p->other_fd >= 0)
        assert_int_equal(sd_loop_del_fd(p->loop, p->other_fd), 0);
}

static void test_fd_readable_and_writable(void **state)
{
    struct sd_loop *l = sd_loop_new();
    int sv[2];
    struct fd_probe p = { .loop = l, .other_fd = -1 };

    (void)state;
    assert_non_null(l);
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
    p.fd = sv[0];
    assert_int_equal(sd_loop_add_fd(l, sv[0], SD_EV_IN, fd_probe_cb, &p), 0);
    assert_int_equal(sd_loop_add_fd(l, sv[0], SD_EV_IN, fd_probe_cb, &p), -EEXIST);

    assert_int_equal(sd_loop_run_once(l, 20), 0); /* nothing to read: times out */
    assert_int_equal(p.calls, 0);

    assert_int_equal(write(sv[1], "x", 1), 1);
    assert_int_equal(sd_loop_run_once(l, 1000), 1);
    assert_int_equal(p.calls, 1);
    assert_true(p.last_revents & SD_EV_IN);
    assert_false(p.last_revents & SD_EV_OUT);

    assert_int_equal(sd_loop_mod_fd(l, sv[0], SD_EV_OUT), 0);
    assert_int_equal(sd_loop_run_once(l, 1000), 1);
    assert_true(p.last_revents & SD_EV_OUT);
    assert_false(p.last_revents & SD_EV_IN);

    close(sv[1]);
    assert_int_equal(sd_loop_mod_fd(l, sv[0], 0), 0);
    assert_int_equal(sd_loop_run_once(l, 1000), 1);
    assert_true(p.last_revents & SD_EV_HUP);

    assert_int_equal(sd_loop_del_fd(l, sv[0]), 0);
    assert_int_equal(sd_loop_del_fd(l, sv[0]), -ENOENT);
    assert_int_equal(sd_loop_mod_fd(l, sv[0], SD_EV_IN), -ENOENT);
    p.calls = 0;
    assert_int_equal(sd_loop_run_once(l, 20), 0);
    assert_int_equal(p.calls, 0);
    close(sv[0]);
    sd_loop_free(l);
}

/* An owned watch still there when the loop is freed is released (once); one deleted
 * before is not, and a plain watch never is. */
struct owned_probe {
    int fd;
    int released;
};

static void owned_release(void *ctx)
{
    struct owned_probe *o = ctx;

    o->released++;
    close(o->fd);
}

static void test_owned_watch_released_at_free(void **state)
{
    struct sd_loop *l = sd_loop_new();
    struct owned_probe kept = { .fd = -1 }, deleted = { .fd = -1 };
    struct fd_probe plain = { .other_fd = -1 };
    int a[2], b[2];

    (void)state;
    assert_non_null(l);
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, a), 0);
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, b), 0);
    kept.fd = a[0];
    deleted.fd = b[0];
    assert_int_equal(sd_loop_add_fd_owned(l, a[0], SD_EV_IN, fd_probe_cb, &kept, owned_release), 0);
    assert_int_equal(sd_loop_add_fd_owned(l, b[0], SD_EV_IN, fd_probe_cb, &deleted, owned_release),
                     0);
    assert_int_equal(sd_loop_add_fd(l, a[1], SD_EV_IN, fd_probe_cb, &plain), 0);
    assert_int_equal(sd_loop_del_fd(l, b[0]), 0);
    sd_loop_free(l);
    assert_int_equal(kept.released, 1);
    assert_int_equal(deleted.released, 0);
    /* the release closed a[0]: its peer reads EOF */
    assert_int_equal(read(a[1], &(char){ 0 }, 1), 0);
    close(a[1]);
    close(b[0]);
    close(b[1]);
}

/* Two ready fds; whichever callback runs first deletes the other's watch, which then
 * must not run although epoll already reported it in the same batch. */
static void test_del_from_callback_skips_pending_event(void **state)
{
    struct sd_loop *l = sd_loop_new();
    int a[2], b[2];
    struct fd_probe pa = { .loop = l }, pb = { .loop = l };

    (void)state;
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, a), 0);
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, b), 0);
    pa.fd = a[0], pa.other_fd = b[0];
    pb.fd = b[0], pb.other_fd = a[0];
    assert_int_equal(sd_loop_add_fd(l, a[0], SD_EV_OUT, fd_probe_cb, &pa), 0);
    assert_int_equal(sd_loop_add_fd(l, b[0], SD_EV_OUT, fd_probe_cb, &pb), 0);
    assert_int_equal(sd_loop_run_once(l, 1000), 1);
    assert_int_equal(pa.calls + pb.calls, 1);
    for (int i = 0; i < 2; i++) {
        close(a[i]);
        close(b[i]);
    }
    sd_loop_free(l);
}

struct timer_log {
    struct sd_loop *loop;
    int order[8];
    int n;
    int64_t cancel_id; /* cancelled by the first callback when > 0 */
};

struct timer_arg {
    struct timer_log *log;
    int tag;
};

static void timer_log_cb(void *ctx, uint64_t now)
{
    struct timer_arg *a = ctx;

    assert_true(now > 0);
    a->log->order[a->log->n++] = a->tag;
    if (a->log->cancel_id > 0) {
        sd_loop_cancel_timer(a->log->loop, a->log->cancel_id);
        a->log->cancel_id = 0;
    }
}

static void run_until(struct sd_loop *l, int *done, int want, int limit_ms)
{
    uint64_t end = sd_now_ms() + (uint64_t)limit_ms;

    while (*done < want && sd_now_ms() < end)
        assert_true(sd_loop_run_once(l, 50) >= 0);
}

static void test_timers_fire_in_time_order(void **state)
{
    struct sd_loop *l = sd_loop_new();
    struct timer_log log = { .loop = l };
    struct timer_arg args[5];
    uint64_t now = sd_now_ms(), start;
    static const int delay[5] = { 60, 20, 40, 20, 0 };

    (void)state;
    for (int i = 0; i < 5; i++) {
        args[i] = (struct timer_arg){ &log, i };
        assert_true(sd_loop_add_timer(l, now + (uint64_t)delay[i], timer_log_cb, &args[i]) > 0);
    }
    start = sd_now_ms();
    run_until(l, &log.n, 5, 2000);
    assert_int_equal(log.n, 5);
    /* Equal times keep insertion order. */
    assert_int_equal(log.order[0], 4);
    assert_int_equal(log.order[1], 1);
    assert_int_equal(log.order[2], 3);
    assert_int_equal(log.order[3], 2);
    assert_int_equal(log.order[4], 0);
    assert_true(sd_now_ms() - start >= 55);
    sd_loop_free(l);
}

static void test_timer_cancel(void **state)
{
    struct sd_loop *l = sd_loop_new();
    struct timer_log log = { .loop = l };
    struct timer_arg a = { &log, 1 }, b = { &log, 2 }, c = { &log, 3 };
    uint64_t now = sd_now_ms();
    int64_t ida, idb, idc;

    (void)state;
    ida = sd_loop_add_timer(l, now + 10, timer_log_cb, &a);
    idb = sd_loop_add_timer(l, now + 30, timer_log_cb, &b);
    idc = sd_loop_add_timer(l, now + 40, timer_log_cb, &c);
    assert_true(ida > 0 && idb > ida && idc > idb);
    sd_loop_cancel_timer(l, ida);
    sd_loop_cancel_timer(l, ida);    /* unknown now: ignored */
    sd_loop_cancel_timer(l, 999999); /* never existed: ignored */
    log.cancel_id = idc;             /* b's callback cancels c */
    run_until(l, &log.n, 1, 2000);
    assert_int_equal(log.n, 1);
    assert_int_equal(log.order[0], 2);
    assert_int_equal(sd_loop_run_once(l, 100), 0); /* c never fires */
    assert_int_equal(log.n, 1);
    sd_loop_free(l); /* frees nothing pending: no leak under ASan */
}

/* A timer made far ahead and brought forward fires then, in its new place among the
 * others; one moved out of the way fires last; an id not armed is refused. */
static void test_timer_brought_forward(void **state)
{
    struct sd_loop *l = sd_loop_new();
    struct timer_log log = { .loop = l };
    struct timer_arg args[3];
    uint64_t now = sd_now_ms();
    const uint64_t at[3] = { UINT64_MAX, now + 20, now };
    int64_t id[3];

    (void)state;
    for (int i = 0; i < 3; i++) {
        args[i] = (struct timer_arg){ &log, i + 1 };
        id[i] = sd_loop_add_timer(l, at[i], timer_log_cb, &args[i]);
        assert_true(id[i] > 0);
    }
    assert_int_equal(sd_loop_rearm_timer(l, id[0], now + 10), 0);
    assert_int_equal(sd_loop_rearm_timer(l, id[2], now + 40), 0);
    assert_int_equal(sd_loop_rearm_timer(l, 999999, now), -ENOENT);
    run_until(l, &log.n, 3, 2000);
    assert_int_equal(log.n, 3);
    assert_int_equal(log.order[0], 1);
    assert_int_equal(log.order[1], 2);
    assert_int_equal(log.order[2], 3);
    assert_int_equal(sd_loop_rearm_timer(l, id[0], now), -ENOENT); /* fired: gone */
    sd_loop_free(l);
}

/* A timer re-armed for "now" from its own callback runs in the next round, not in a
 * loop inside this one. */
struct rearm {
    struct sd_loop *loop;
    int fired;
};

static void rearm_cb(void *ctx, uint64_t now)
{
    struct rearm *r = ctx;

    r->fired++;
    assert_true(sd_loop_add_timer(r->loop, now, rearm_cb, r) > 0);
}

static void test_timer_rearm_now_does_not_spin(void **state)
{
    struct rearm r = { .loop = sd_loop_new() };

    (void)state;
    assert_true(sd_loop_add_timer(r.loop, sd_now_ms(), rearm_cb, &r) > 0);
    assert_int_equal(sd_loop_run_once(r.loop, 0), 1);
    assert_int_equal(r.fired, 1);
    assert_int_equal(sd_loop_run_once(r.loop, 0), 1);
    assert_int_equal(r.fired, 2);
    sd_loop_free(r.loop); /* frees the still-armed timer */
}

struct post_state {
    struct sd_loop *loop;
    pthread_t loop_thread;
    int count;
    int wrong_thread;
};

static void post_cb(void *ctx)
{
    struct post_state *s = ctx;

    if (!pthread_equal(pthread_self(), s->loop_thread))
        s->wrong_thread++;
    s->count++;
}

static void *poster(void *arg)
{
    struct post_state *s = arg;

    usleep(20000); /* let the loop block in epoll_wait first */
    for (int i = 0; i < 1000; i++)
        assert_int_equal(sd_loop_post(s->loop, post_cb, s), 0);
    return NULL;
}

static void test_post_from_other_thread(void **state)
{
    struct post_state s = { .loop = sd_loop_new(), .loop_thread = pthread_self() };
    pthread_t t;
    uint64_t end = sd_now_ms() + 5000;

    (void)state;
    assert_int_equal(pthread_create(&t, NULL, poster, &s), 0);
    while (s.count < 1000 && sd_now_ms() < end)
        assert_true(sd_loop_run_once(s.loop, -1) >= 0); /* -1: only a post wakes it */
    pthread_join(t, NULL);
    assert_int_equal(s.count, 1000);
    assert_int_equal(s.wrong_thread, 0);
    sd_loop_free(s.loop);
}

static void *stopper(void *arg)
{
    usleep(30000);
    sd_loop_stop(arg);
    return NULL;
}

static void test_stop_from_other_thread(void **state)
{
    struct sd_loop *l = sd_loop_new();
    pthread_t t;
    uint64_t start = sd_now_ms();

    (void)state;
    assert_int_equal(pthread_create(&t, NULL, stopper, l), 0);
    assert_int_equal(sd_loop_run(l), 0);
    pthread_join(t, NULL);
    assert_true(sd_now_ms() - start < 2000);
    sd_loop_free(l);
}

/* Another thread's turn: while it is in, the loop dispatches nothing (an fd made
 * readable meanwhile is only seen once it leaves); its leave runs the prepare hooks on
 * that thread and wakes the sleeping loop for a timer armed inside, due before the loop
 * would wake by itself (here after 3 s, since nothing else happens). Where the loop
 * thread is (asleep in epoll_wait, or stopped at the turn's lock) is read from /proc. */
struct turn_state {
    struct sd_loop *loop;
    int pipe[2];
    pthread_t taker;
    long loop_tid;
    int fd_calls, fd_calls_while_in, timer_fired, prepares_on_taker, stop;
    uint64_t armed_at, fired_at;
    int in;                     /* the other thread is between enter and leave */
};

static void turn_fd_cb(void *ctx, int revents)
{
    struct turn_state *s = ctx;
    char c;

    (void)revents;
    if (__atomic_load_n(&s->in, __ATOMIC_SEQ_CST))
        s->fd_calls_while_in++;
    __atomic_add_fetch(&s->fd_calls, 1, __ATOMIC_SEQ_CST);
    assert_int_equal(read(s->pipe[0], &c, 1), 1);
}

static void turn_timer_cb(void *ctx, uint64_t now)
{
    struct turn_state *s = ctx;

    s->fired_at = now;
    s->timer_fired++;
    __atomic_store_n(&s->stop, 1, __ATOMIC_SEQ_CST);
}

static int turn_prepare_cb(void *ctx)
{
    struct turn_state *s = ctx;

    if (pthread_equal(pthread_self(), s->taker))
        s->prepares_on_taker++;
    return 0;
}

/* Whether thread tid of this process is in system call a or b within 5 s. */
static int turn_in_syscall(long tid, long a, long b)
{
    char path[64], line[128] = "";
    uint64_t end = sd_now_ms() + 5000;

    snprintf(path, sizeof(path), "/proc/self/task/%ld/syscall", tid);
    do {
        FILE *f = fopen(path, "r");
        char *rest;
        long nr;

        assert_non_null(f);
        if (!fgets(line, sizeof(line), f))
            line[0] = '\0';
        fclose(f);
        nr = strtol(line, &rest, 10);
        if (rest != line && (nr == a || nr == b))
            return 1;
        usleep(1000);
    } while (sd_now_ms() < end);
    print_message("# thread %ld: %s", tid, line);
    return 0;
}

#ifdef SYS_epoll_wait
#define TURN_EPOLL_WAIT SYS_epoll_wait
#else
#define TURN_EPOLL_WAIT SYS_epoll_pwait
#endif

static void *turn_taker(void *arg)
{
    struct turn_state *s = arg;

    s->taker = pthread_self();
    assert_true(turn_in_syscall(s->loop_tid, TURN_EPOLL_WAIT, SYS_epoll_pwait)); /* asleep */
    sd_loop_enter(s->loop);
    __atomic_store_n(&s->in, 1, __ATOMIC_SEQ_CST);
    assert_int_equal(write(s->pipe[1], "x", 1), 1);
    /* The loop woke for the readable fd and stops at the lock this thread holds: it must
     * not run the fd's callback before the leave. */
    assert_true(turn_in_syscall(s->loop_tid, SYS_futex, SYS_futex));
    __atomic_store_n(&s->in, 0, __ATOMIC_SEQ_CST);
    sd_loop_leave(s->loop);
    while (__atomic_load_n(&s->fd_calls, __ATOMIC_SEQ_CST) == 0)
        usleep(1000);
    /* asleep again, with no timer */
    assert_true(turn_in_syscall(s->loop_tid, TURN_EPOLL_WAIT, SYS_epoll_pwait));
    sd_loop_enter(s->loop);
    s->armed_at = sd_now_ms();
    assert_true(sd_loop_add_timer(s->loop, s->armed_at, turn_timer_cb, s) > 0);
    sd_loop_leave(s->loop);
    return NULL;
}

static void test_another_threads_turn(void **state)
{
    struct turn_state s = { .loop = sd_loop_new(), .loop_tid = syscall(SYS_gettid) };
    pthread_t t;
    uint64_t end = sd_now_ms() + 5000;

    (void)state;
    assert_int_equal(pipe(s.pipe), 0);
    assert_int_equal(sd_loop_add_fd(s.loop, s.pipe[0], SD_EV_IN, turn_fd_cb, &s), 0);
    assert_true(sd_loop_add_prepare(s.loop, turn_prepare_cb, &s) > 0);
    assert_int_equal(pthread_create(&t, NULL, turn_taker, &s), 0);
    while (!__atomic_load_n(&s.stop, __ATOMIC_SEQ_CST) && sd_now_ms() < end)
        assert_true(sd_loop_run_once(s.loop, 3000) >= 0); /* 3 s: unless an event or a wake */
    pthread_join(t, NULL);
    assert_int_equal(s.fd_calls, 1);
    assert_int_equal(s.fd_calls_while_in, 0);
    assert_int_equal(s.timer_fired, 1);
    assert_true(s.fired_at - s.armed_at < 1000); /* woken for it, not at the 3 s wait's end */
    assert_int_equal(s.prepares_on_taker, 2);
    sd_loop_free(s.loop);
    close(s.pipe[0]);
    close(s.pipe[1]);
}

/* Prepare hooks: run before each wait, again while one reports work (bounded), and a
 * hook that deletes itself or another one from inside the pass is not run again. */
struct prep {
    struct sd_loop *loop;
    int64_t id, other;
    int calls, work_left, delete_self, delete_other;
};

static int prep_cb(void *ctx)
{
    struct prep *p = ctx;

    p->calls++;
    if (p->delete_self)
        sd_loop_del_prepare(p->loop, p->id);
    if (p->delete_other)
        sd_loop_del_prepare(p->loop, p->other);
    if (p->work_left > 0) {
        p->work_left--;
        return 1;
    }
    return 0;
}

static void test_prepare_hooks(void **state)
{
    struct sd_loop *l = sd_loop_new();
    struct prep a = { .loop = l, .work_left = 2 }, b = { .loop = l };
    struct prep forever = { .loop = l, .work_left = 1000 };

    (void)state;
    a.id = sd_loop_add_prepare(l, prep_cb, &a);
    b.id = sd_loop_add_prepare(l, prep_cb, &b);
    assert_true(a.id > 0 && b.id > a.id);
    assert_int_equal(sd_loop_run_once(l, 0), 0);
    assert_int_equal(a.calls, 3); /* work, work, idle */
    assert_int_equal(b.calls, 3); /* every hook reruns while any did work */
    assert_int_equal(sd_loop_run_once(l, 0), 0);
    assert_int_equal(a.calls, 4);

    b.delete_self = 1;
    assert_int_equal(sd_loop_run_once(l, 0), 0);
    assert_int_equal(sd_loop_run_once(l, 0), 0);
    assert_int_equal(b.calls, 5); /* deleted itself during its call: never again */
    assert_int_equal(a.calls, 6);

    forever.id = sd_loop_add_prepare(l, prep_cb, &forever);
    assert_int_equal(sd_loop_run_once(l, 0), 0); /* bounded even if a hook always works */
    assert_true(forever.calls >= 2 && forever.calls <= 16);
    a.other = forever.id;
    a.delete_other = 1; /* a runs first and deletes forever within the pass */
    forever.calls = 0;
    assert_int_equal(sd_loop_run_once(l, 0), 0);
    assert_int_equal(forever.calls, 0);
    sd_loop_del_prepare(l, a.id);
    a.calls = 0;
    assert_int_equal(sd_loop_run_once(l, 0), 0);
    assert_int_equal(a.calls, 0);
    sd_loop_free(l);
}

/* A writer on another thread: one byte to fd after delay_us. */
struct late_write {
    int fd;
    long delay_us;
};

static void *late_write_main(void *arg)
{
    struct late_write *w = arg;
    struct timespec ts = { .tv_sec = w->delay_us / 1000000,
                           .tv_nsec = w->delay_us % 1000000 * 1000 };

    nanosleep(&ts, NULL);
    assert_int_equal(write(w->fd, "x", 1), 1);
    return NULL;
}

/* A loop watching one end of a socketpair, for the busy-poll tests. */
struct poll_rig {
    struct sd_loop *l;
    struct fd_probe p;
    int sv[2];
    struct sd_loop_poll_stats st;
};

static void poll_rig_open(struct poll_rig *r)
{
    r->l = sd_loop_new();
    r->p = (struct fd_probe){ .loop = r->l, .other_fd = -1 };
    assert_non_null(r->l);
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, r->sv), 0);
    assert_int_equal(sd_loop_add_fd(r->l, r->sv[0], SD_EV_IN, fd_probe_cb, &r->p), 0);
}

static void poll_rig_close(struct poll_rig *r)
{
    sd_loop_free(r->l);
    close(r->sv[0]);
    close(r->sv[1]);
}

/* run_once with an event that comes delay_us after the loop starts waiting; then the
 * poll's figures in r->st. */
static void run_once_with_late_event(struct poll_rig *r, long delay_us)
{
    struct late_write w = { .fd = r->sv[1], .delay_us = delay_us };
    pthread_t t;
    char c;

    assert_int_equal(pthread_create(&t, NULL, late_write_main, &w), 0);
    assert_int_equal(sd_loop_run_once(r->l, -1), 1);
    pthread_join(t, NULL);
    assert_int_equal(read(r->sv[0], &c, 1), 1);
    sd_loop_poll_stats(r->l, &r->st);
}

/* A wait that ends with nothing; then the poll's figures in r->st. */
static void run_once_idle(struct poll_rig *r, int timeout_ms)
{
    assert_int_equal(sd_loop_run_once(r->l, timeout_ms), 0);
    sd_loop_poll_stats(r->l, &r->st);
}

static void test_busy_poll_off_always_sleeps(void **state)
{
    struct poll_rig r;

    (void)state;
    poll_rig_open(&r);
    run_once_with_late_event(&r, 1000);
    assert_true(r.st.hits == 0 && r.st.misses == 0 && r.st.budget_us == 0);
    poll_rig_close(&r);
}

/* An event that comes within the budget is taken by the poll, with no sleep; the budget
 * then follows how long it took (twice that). */
static void test_busy_poll_takes_an_event_without_sleeping(void **state)
{
    struct poll_rig r;

    (void)state;
    poll_rig_open(&r);
    sd_loop_set_busy_poll(r.l, 2000000); /* 2 s: the writer's 2 ms always fall within */
    run_once_with_late_event(&r, 2000);
    assert_int_equal(r.p.calls, 1);
    assert_int_equal(r.st.hits, 1);
    assert_int_equal(r.st.misses, 0);
    assert_int_equal(r.st.sleeps, 0);
    /* from 2 s, an eighth off, but never below twice the ~2 ms the event took */
    assert_true(r.st.budget_us >= 4000 && r.st.budget_us <= 1750000);
    poll_rig_close(&r);
}

/* Waits that end with nothing halve the budget down to none; then the loop sleeps at
 * once, until an event within max_us brings the poll back. */
static void test_busy_poll_backs_off_and_comes_back(void **state)
{
    struct poll_rig r;
    int misses = 0;

    (void)state;
    poll_rig_open(&r);
    sd_loop_set_busy_poll(r.l, 1000);
    run_once_idle(&r, 1); /* a 1 ms wait: the 1 ms poll is all of it */
    assert_true(r.st.misses == 1 && r.st.sleeps == 0 && r.st.budget_us == 500);
    sd_loop_set_busy_poll(r.l, 1000);
    do {
        run_once_idle(&r, 2); /* nothing comes: a timed-out wait */
        misses++;
    } while (r.st.budget_us && misses < 20);
    assert_int_equal(misses, 7); /* 1000 500 250 125 62 31 15 (7 < 8: none) */
    assert_int_equal(r.st.misses, 8);
    assert_int_equal(r.st.sleeps, 7);
    run_once_idle(&r, 2); /* no budget: sleeps without polling */
    assert_true(r.st.misses == 8 && r.st.sleeps == 8);
    /* an event 200 us into a sleeping wait (within max: again while the thread that
     * sends it is late, as it is on a loaded machine: a late one is a plain sleep) */
    for (int i = 0; i < 100 && !r.st.budget_us; i++) {
        run_once_with_late_event(&r, 200);
        assert_true(r.st.hits == 0 && r.st.sleeps == 9u + (unsigned)i);
    }
    assert_true(r.st.budget_us >= 400 && r.st.budget_us <= 1000);
    poll_rig_close(&r);
}

/* While a hold is taken the loop sleeps at once, keeping its budget, and polls again once
 * every hold is given back; an unmatched give-back does not go below none. */
static void test_busy_poll_held_sleeps_and_keeps_its_budget(void **state)
{
    struct poll_rig r;

    (void)state;
    poll_rig_open(&r);
    sd_loop_set_busy_poll(r.l, 2000000);
    sd_loop_poll_hold(r.l, 1);
    sd_loop_poll_hold(r.l, 1);
    run_once_with_late_event(&r, 2000);
    assert_int_equal(r.p.calls, 1);
    assert_true(r.st.hits == 0 && r.st.misses == 0 && r.st.sleeps == 0 && r.st.held == 1);
    assert_int_equal(r.st.budget_us, 2000000);
    sd_loop_poll_hold(r.l, -1); /* one hold is still taken */
    run_once_with_late_event(&r, 2000);
    assert_true(r.st.hits == 0 && r.st.held == 2);
    sd_loop_poll_hold(r.l, -1);
    sd_loop_poll_hold(r.l, -1); /* unmatched: ignored */
    run_once_with_late_event(&r, 2000);
    assert_true(r.st.hits == 1 && r.st.held == 2 && r.st.sleeps == 0);
    sd_loop_poll_hold(r.l, 1); /* one hold again takes effect at once */
    run_once_with_late_event(&r, 2000);
    assert_true(r.st.hits == 1 && r.st.held == 3);
    poll_rig_close(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fd_readable_and_writable),
        cmocka_unit_test(test_del_from_callback_skips_pending_event),
        cmocka_unit_test(test_owned_watch_released_at_free),
        cmocka_unit_test(test_timers_fire_in_time_order),
        cmocka_unit_test(test_timer_cancel),
        cmocka_unit_test(test_timer_brought_forward),
        cmocka_unit_test(test_timer_rearm_now_does_not_spin),
        cmocka_unit_test(test_post_from_other_thread),
        cmocka_unit_test(test_stop_from_other_thread),
        cmocka_unit_test(test_another_threads_turn),
        cmocka_unit_test(test_prepare_hooks),
        cmocka_unit_test(test_busy_poll_off_always_sleeps),
        cmocka_unit_test(test_busy_poll_takes_an_event_without_sleeping),
        cmocka_unit_test(test_busy_poll_backs_off_and_comes_back),
        cmocka_unit_test(test_busy_poll_held_sleeps_and_keeps_its_budget),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
