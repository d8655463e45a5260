/* SPDX-License-Identifier: BSD-3-Clause */
/* common/sd_loop_int.h — the event loop's private header: struct sd_loop and the
 * functions its files call across (sd_loop.c: making, freeing and running the loop,
 * the cross-thread enter/leave lock; sd_loop_fd.c: fd watches; sd_loop_timer.c: the
 * timer heap; sd_loop_task.c: the cross-thread task queue and wake-up; sd_loop_prepare.c:
 * prepare hooks; sd_loop_poll.c: the adaptive busy poll before a wait). Any call except
 * sd_loop_post/sd_loop_stop belongs to the loop thread (including from inside callbacks),
 * or to a thread between sd_loop_enter and sd_loop_leave: run_lock keeps the two apart.
 * Internal to common/sd_loop*.c. */
#ifndef SMBDIRECT_SD_LOOP_INT_H
#define SMBDIRECT_SD_LOOP_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <uthash.h>

#include "sd_loop.h"

#define LOOP_MAX_EVENTS 64
#define LOOP_PREPARE_ROUNDS 8 /* prepare passes before a wait, while hooks report work */
#define LOOP_POLL_MIN_US    8 /* a busy-poll budget below this is none */
#define LOOP_WAKE_TAG UINT64_MAX /* epoll data of the wake-up eventfd */

struct loop_watch {
    sd_fd_cb cb;
    void *ctx;
    void (*release)(void *ctx); /* sd_loop_add_fd_owned: called by sd_loop_free */
    uint32_t gen; /* 0: slot unused */
};

struct loop_timer {
    int64_t id;
    uint64_t at_ms;
    sd_timer_cb cb;
    void *ctx;
    size_t heap_index;
    UT_hash_handle hh;
};

struct loop_prepare {
    int64_t id;
    sd_prepare_cb cb; /* NULL: deleted while the hooks were running */
    void *ctx;
};

struct loop_task {
    sd_task_cb cb;
    void *ctx;
    struct loop_task *next;
};

struct sd_loop {
    int epfd, wakefd;
    struct loop_watch *watches; /* indexed by fd */
    size_t nwatches;
    uint32_t next_gen;

    struct loop_timer **heap;
    size_t heap_len, heap_cap;
    struct loop_timer *timers_by_id;
    int64_t next_timer_id;

    struct loop_prepare *prepares;
    size_t nprepares, prepares_cap;
    int64_t next_prepare_id;
    int preparing;             /* inside sd_loop_prepares_run: deletions only mark */

    pthread_mutex_t task_lock;
    struct loop_task *task_head, *task_tail;

    pthread_mutex_t run_lock;  /* held by the loop thread except while it waits, and by
                                  another thread between sd_loop_enter and sd_loop_leave */
    uint64_t wait_until;       /* while the loop waits: when it wakes on its own (ms,
                                  UINT64_MAX: never) */

    unsigned poll_max_us;      /* sd_loop_set_busy_poll; 0: never poll */
    unsigned poll_budget_us;
    unsigned poll_holds;       /* sd_loop_poll_hold: polling is off while > 0 */
    struct sd_loop_poll_stats poll;

    atomic_int stopped;
};

/* ---- sd_loop_fd.c: fd watches ---- */

/* Runs the callbacks of the n events epoll reported, skipping a watch deleted or
 * replaced by an earlier callback; *woken is set when the wake-up eventfd is among them.
 * Returns the number of callbacks run. */
int sd_loop_fds_run(struct sd_loop *l, const struct epoll_event *evs, int n, int *woken);
/* sd_loop_free: releases the owned watches still there, frees the table. */
void sd_loop_fds_free(struct sd_loop *l);

/* ---- sd_loop_timer.c: one-shot timers in a min-heap on (at_ms, id) ---- */

/* Fires the timers due at now that existed before this call (a timer a callback arms
 * for "now" waits for the next round, so re-arming cannot spin). Returns how many. */
int sd_loop_timers_run(struct sd_loop *l, uint64_t now);
/* How long a wait of at most timeout_ms (-1: unbounded) may last before the next timer. */
int sd_loop_timers_wait_ms(const struct sd_loop *l, int timeout_ms, uint64_t now);
/* Whether a timer is due before t (ms). */
int sd_loop_timers_due_before(const struct sd_loop *l, uint64_t t);
void sd_loop_timers_free(struct sd_loop *l);

/* ---- sd_loop_task.c: the task queue, woken through the eventfd ---- */

/* Wakes the loop. Async-signal-safe. 0, or -errno. */
int sd_loop_wake(struct sd_loop *l);
/* Runs the tasks queued before this call; later ones wait for the next round. */
int sd_loop_tasks_run(struct sd_loop *l);
void sd_loop_tasks_free(struct sd_loop *l);

/* ---- sd_loop_prepare.c: prepare hooks ---- */

/* Runs every hook, again while one reports work (LOOP_PREPARE_ROUNDS at most). */
void sd_loop_prepares_run(struct sd_loop *l);

/* ---- sd_loop_poll.c: the busy poll ---- */

/* epoll_wait for up to wait ms, polling first within the busy-poll budget unless held
 * (read under run_lock by the caller). Called without run_lock. */
int sd_loop_wait(struct sd_loop *l, struct epoll_event *evs, int wait, int held);

#endif
