/* SPDX-License-Identifier: BSD-3-Clause */
/* common/sd_loop.h — a small epoll event loop with millisecond timers and a
 * thread-safe "run this on the loop thread" queue. The relay runs one in main();
 * the preload shim runs one in its engine thread (all signals blocked). */
#ifndef SMBDIRECT_SD_LOOP_H
#define SMBDIRECT_SD_LOOP_H

#include <stdint.h>

#include "sd_clock.h" /* timers are in sd_now_ms() time */

struct sd_loop;

enum sd_loop_ev { SD_EV_IN = 1, SD_EV_OUT = 4, SD_EV_ERR = 8, SD_EV_HUP = 16 };

typedef void (*sd_fd_cb)(void *ctx, int revents);
typedef void (*sd_timer_cb)(void *ctx, uint64_t now_ms);
typedef void (*sd_task_cb)(void *ctx);


struct sd_loop *sd_loop_new(void);
void sd_loop_free(struct sd_loop *l);

/* fd watches: one watch per fd; events is a mask of SD_EV_IN/SD_EV_OUT. */
int sd_loop_add_fd(struct sd_loop *l, int fd, int events, sd_fd_cb cb, void *ctx);
/* sd_loop_add_fd for a watch that owns ctx and outlives whoever made it: if the watch is
 * still there when the loop is freed, sd_loop_free calls release(ctx) (which closes fd
 * and frees ctx); sd_loop_del_fd never calls it. */
int sd_loop_add_fd_owned(struct sd_loop *l, int fd, int events, sd_fd_cb cb, void *ctx,
                         void (*release)(void *ctx));
int sd_loop_mod_fd(struct sd_loop *l, int fd, int events);
int sd_loop_del_fd(struct sd_loop *l, int fd);

/* One-shot timer at absolute time at_ms. Returns an id (> 0) or -errno;
 * sd_loop_cancel_timer ignores unknown ids. sd_loop_rearm_timer moves an armed timer to
 * at_ms without allocating (a timer made far ahead can be brought forward when memory is
 * short): 0, or -ENOENT when id is not armed. */
int64_t sd_loop_add_timer(struct sd_loop *l, uint64_t at_ms, sd_timer_cb cb, void *ctx);
void sd_loop_cancel_timer(struct sd_loop *l, int64_t id);
int sd_loop_rearm_timer(struct sd_loop *l, int64_t id, uint64_t at_ms);

/* Prepare hooks: cb(ctx) runs on the loop thread before each wait for events, so work
 * that this round's callbacks queued (e.g. requests posted to an RDMA provider) is
 * flushed before the loop sleeps. A hook returns non-zero when it did work that may
 * give another hook work: then every hook runs again (a bounded number of rounds).
 * Hooks may add and delete hooks. Returns an id (> 0) or -errno. */
typedef int (*sd_prepare_cb)(void *ctx);
int64_t sd_loop_add_prepare(struct sd_loop *l, sd_prepare_cb cb, void *ctx);
void sd_loop_del_prepare(struct sd_loop *l, int64_t id);

/* Thread-safe: queue cb(ctx) to run on the loop thread and wake it. */
int sd_loop_post(struct sd_loop *l, sd_task_cb cb, void *ctx);

/* Another thread's turn on the loop: between sd_loop_enter and sd_loop_leave it may make
 * any call the loop thread may (a callback's work done in place, e.g. the shim's
 * program thread sending its own request), while the loop thread is kept out: it holds
 * the same lock whenever it is not waiting for events. sd_loop_leave runs the prepare
 * hooks, as the loop would before its next wait, and wakes the loop when a timer armed
 * meanwhile is due before it would wake by itself. Not from the loop thread, nor
 * nested. */
void sd_loop_enter(struct sd_loop *l);
void sd_loop_leave(struct sd_loop *l);

/* Busy polling: before a wait that would sleep, the loop looks for events without
 * sleeping (yielding the CPU to any other runnable thread between looks) for up to a
 * budget of microseconds, so an answer that comes soon after a
 * request is taken without the thread going to sleep and being woken (on a virtual
 * machine, where an idle CPU halts, that costs far more than the poll). The budget
 * adapts to how long events take to come: it rises to twice a wait that ended within
 * max_us, shrinks by an eighth on each shorter one and halves when a poll runs out or a
 * wait takes longer than max_us, so a loop whose events come slower than max_us soon
 * sleeps at once again. max_us 0 (the default) never polls. Loop thread. */
void sd_loop_set_busy_poll(struct sd_loop *l, unsigned max_us);

/* Holds busy polling off while any hold is taken (delta 1 takes one, -1 gives it back):
 * for a user whose next events are bulk data that comes far apart compared with a
 * wake-up, where polling would only take CPU from the threads producing it. The budget
 * is kept for when the last hold goes. Loop thread, or between sd_loop_enter and
 * sd_loop_leave. */
void sd_loop_poll_hold(struct sd_loop *l, int delta);

struct sd_loop_poll_stats {
    uint64_t hits;      /* polls that found an event */
    uint64_t misses;    /* polls that ran out of budget, then slept */
    uint64_t sleeps;    /* waits that slept (after a miss, or with no budget) */
    uint64_t held;      /* waits that slept at once under sd_loop_poll_hold */
    unsigned budget_us; /* the budget now */
};
/* Loop thread (or once the loop has stopped). */
void sd_loop_poll_stats(const struct sd_loop *l, struct sd_loop_poll_stats *st);

/* Runs the prepare hooks, then callbacks for at most timeout_ms (-1: until an event). Returns the number of
 * callbacks run or -errno. sd_loop_run loops until sd_loop_stop, which is thread-safe
 * and async-signal-safe (a stop requested before sd_loop_run makes it return at once). */
int sd_loop_run_once(struct sd_loop *l, int timeout_ms);
int sd_loop_run(struct sd_loop *l);
void sd_loop_stop(struct sd_loop *l);

#endif
