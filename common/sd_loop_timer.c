/* SPDX-License-Identifier: BSD-3-Clause */
/* common/sd_loop.c — the epoll event loop behind sd_loop.h: fd watches kept in a
 * table indexed by fd (epoll carries fd + generation, so a watch deleted or replaced by
 * an earlier callback of the same batch is recognised and skipped), one-shot timers in
 * a binary heap ordered by (time, id) with an id index for cancel, and a mutex-guarded
 * task queue woken through an eventfd, and prepare hooks in an array run before each
 * epoll_wait (deleted entries are compacted once no hook is running), and the adaptive
 * busy poll before a wait that would sleep. Any call except sd_loop_post/sd_loop_stop
 * belongs to the loop thread (including from inside callbacks), or to a thread between
 * sd_loop_enter and sd_loop_leave: run_lock keeps the two apart. */
#include "sd_loop.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <uthash.h>

#define LOOP_MAX_EVENTS 64
#define LOOP_PREPARE_ROUNDS 8 /* prepare passes before a wait, while hooks report work */
#define LOOP_POLL_MIN_US    8 /* a busy-poll budget below this is none */

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
    int preparing;             /* inside run_prepares: deletions only mark */

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

struct sd_loop *sd_loop_new(void)
{
    struct sd_loop *l = calloc(1, sizeof(*l));
    struct epoll_event ev = { .events = EPOLLIN, .data.u64 = UINT64_MAX };

    if (!l)
        return NULL;
    l->epfd = epoll_create1(EPOLL_CLOEXEC);
    l->wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (l->epfd < 0 || l->wakefd < 0 || epoll_ctl(l->epfd, EPOLL_CTL_ADD, l->wakefd, &ev) < 0) {
        if (l->epfd >= 0)
            close(l->epfd);
        if (l->wakefd >= 0)
            close(l->wakefd);
        free(l);
        return NULL;
    }
    pthread_mutex_init(&l->task_lock, NULL);
    pthread_mutex_init(&l->run_lock, NULL);
    l->next_timer_id = 1;
    l->next_prepare_id = 1;
    l->next_gen = 1;
    return l;
}

void sd_loop_free(struct sd_loop *l)
{
    struct loop_timer *t, *tmp;
    struct loop_task *task;

    if (!l)
        return;
    for (size_t fd = 0; fd < l->nwatches; fd++)
        if (l->watches[fd].gen != 0 && l->watches[fd].release)
            l->watches[fd].release(l->watches[fd].ctx);
    HASH_ITER(hh, l->timers_by_id, t, tmp) {
        HASH_DEL(l->timers_by_id, t);
        free(t);
    }
    while ((task = l->task_head)) {
        l->task_head = task->next;
        free(task);
    }
    pthread_mutex_destroy(&l->task_lock);
    pthread_mutex_destroy(&l->run_lock);
    close(l->epfd);
    close(l->wakefd);
    free(l->heap);
    free(l->watches);
    free(l->prepares);
    free(l);
}

/* ---- fd watches ---- */

static struct loop_watch *watch_of(struct sd_loop *l, int fd)
{
    if (fd < 0 || (size_t)fd >= l->nwatches || l->watches[fd].gen == 0)
        return NULL;
    return &l->watches[fd];
}

static int watch_table_fit(struct sd_loop *l, int fd)
{
    size_t n = l->nwatches ? l->nwatches : 64;
    struct loop_watch *w;

    if ((size_t)fd < l->nwatches)
        return 0;
    while (n <= (size_t)fd)
        n *= 2;
    w = realloc(l->watches, n * sizeof(*w));
    if (!w)
        return -ENOMEM;
    memset(w + l->nwatches, 0, (n - l->nwatches) * sizeof(*w));
    l->watches = w;
    l->nwatches = n;
    return 0;
}

static uint32_t epoll_mask(int events)
{
    return (uint32_t)(events & (SD_EV_IN | SD_EV_OUT)); /* same bits as EPOLLIN/EPOLLOUT */
}

int sd_loop_add_fd_owned(struct sd_loop *l, int fd, int events, sd_fd_cb cb, void *ctx,
                         void (*release)(void *ctx))
{
    struct epoll_event ev = { .events = epoll_mask(events) };
    int rc;

    if (fd < 0 || !cb)
        return -EINVAL;
    if (watch_of(l, fd))
        return -EEXIST;
    if ((rc = watch_table_fit(l, fd)) < 0)
        return rc;
    if (++l->next_gen == 0)
        l->next_gen = 1;
    ev.data.u64 = ((uint64_t)l->next_gen << 32) | (uint32_t)fd;
    if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
        return -errno;
    l->watches[fd] = (struct loop_watch){ .cb = cb, .ctx = ctx, .release = release,
                                          .gen = l->next_gen };
    return 0;
}

int sd_loop_add_fd(struct sd_loop *l, int fd, int events, sd_fd_cb cb, void *ctx)
{
    return sd_loop_add_fd_owned(l, fd, events, cb, ctx, NULL);
}

int sd_loop_mod_fd(struct sd_loop *l, int fd, int events)
{
    struct loop_watch *w = watch_of(l, fd);
    struct epoll_event ev = { .events = epoll_mask(events) };

    if (!w)
        return -ENOENT;
    ev.data.u64 = ((uint64_t)w->gen << 32) | (uint32_t)fd;
    return epoll_ctl(l->epfd, EPOLL_CTL_MOD, fd, &ev) < 0 ? -errno : 0;
}

int sd_loop_del_fd(struct sd_loop *l, int fd)
{
    struct loop_watch *w = watch_of(l, fd);

    if (!w)
        return -ENOENT;
    w->gen = 0;
    /* The fd may already be closed (then epoll dropped it itself). */
    if (epoll_ctl(l->epfd, EPOLL_CTL_DEL, fd, NULL) < 0 && errno != EBADF && errno != ENOENT)
        return -errno;
    return 0;
}

/* ---- timers: min-heap on (at_ms, id) ---- */

static int timer_before(const struct loop_timer *a, const struct loop_timer *b)
{
    return a->at_ms < b->at_ms || (a->at_ms == b->at_ms && a->id < b->id);
}

static void heap_set(struct sd_loop *l, size_t i, struct loop_timer *t)
{
    l->heap[i] = t;
    t->heap_index = i;
}

static void heap_up(struct sd_loop *l, size_t i)
{
    struct loop_timer *t = l->heap[i];

    while (i > 0 && timer_before(t, l->heap[(i - 1) / 2])) {
        heap_set(l, i, l->heap[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
    heap_set(l, i, t);
}

static void heap_down(struct sd_loop *l, size_t i)
{
    struct loop_timer *t = l->heap[i];

    for (;;) {
        size_t c = 2 * i + 1;

        if (c >= l->heap_len)
            break;
        if (c + 1 < l->heap_len && timer_before(l->heap[c + 1], l->heap[c]))
            c++;
        if (!timer_before(l->heap[c], t))
            break;
        heap_set(l, i, l->heap[c]);
        i = c;
    }
    heap_set(l, i, t);
}

static void heap_remove(struct sd_loop *l, struct loop_timer *t)
{
    size_t i = t->heap_index;
    struct loop_timer *last = l->heap[--l->heap_len];

    if (last == t)
        return;
    heap_set(l, i, last);
    heap_up(l, i);
    heap_down(l, last->heap_index);
}

int64_t sd_loop_add_timer(struct sd_loop *l, uint64_t at_ms, sd_timer_cb cb, void *ctx)
{
    struct loop_timer *t;

    if (!cb)
        return -EINVAL;
    if (l->heap_len == l->heap_cap) {
        size_t cap = l->heap_cap ? 2 * l->heap_cap : 16;
        struct loop_timer **h = realloc(l->heap, cap * sizeof(*h));

        if (!h)
            return -ENOMEM;
        l->heap = h;
        l->heap_cap = cap;
    }
    t = calloc(1, sizeof(*t));
    if (!t)
        return -ENOMEM;
    *t = (struct loop_timer){ .id = l->next_timer_id++, .at_ms = at_ms, .cb = cb, .ctx = ctx };
    HASH_ADD(hh, l->timers_by_id, id, sizeof(t->id), t);
    heap_set(l, l->heap_len++, t);
    heap_up(l, t->heap_index);
    return t->id;
}

void sd_loop_cancel_timer(struct sd_loop *l, int64_t id)
{
    struct loop_timer *t;

    HASH_FIND(hh, l->timers_by_id, &id, sizeof(id), t);
    if (!t)
        return;
    HASH_DEL(l->timers_by_id, t);
    heap_remove(l, t);
    free(t);
}

int sd_loop_rearm_timer(struct sd_loop *l, int64_t id, uint64_t at_ms)
{
    struct loop_timer *t;

    HASH_FIND(hh, l->timers_by_id, &id, sizeof(id), t);
    if (!t)
        return -ENOENT;
    t->at_ms = at_ms;
    heap_up(l, t->heap_index);
    heap_down(l, t->heap_index);
    return 0;
}

/* Fires the timers due at now that existed before this call (a timer a callback arms
 * for "now" waits for the next round, so re-arming cannot spin). */
static int run_timers(struct sd_loop *l, uint64_t now)
{
    int64_t last_id = l->next_timer_id - 1;
    int ran = 0;

    while (l->heap_len > 0 && l->heap[0]->at_ms <= now && l->heap[0]->id <= last_id) {
        struct loop_timer *t = l->heap[0];
        sd_timer_cb cb = t->cb;
        void *ctx = t->ctx;

        HASH_DEL(l->timers_by_id, t);
        heap_remove(l, t);
        free(t);
        cb(ctx, now);
        ran++;
    }
    return ran;
}

/* ---- tasks ---- */

/* Async-signal-safe (eventfd_write is one write(2), made inside libc, so the shim's
 * write interposer never sees it). 0, or -errno; EAGAIN means the counter is already
 * non-zero: the loop wakes anyway. */
static int loop_wake(struct sd_loop *l)
{
    if (eventfd_write(l->wakefd, 1) < 0 && errno != EAGAIN)
        return -errno;
    return 0;
}

int sd_loop_post(struct sd_loop *l, sd_task_cb cb, void *ctx)
{
    struct loop_task *task = malloc(sizeof(*task));

    if (!task)
        return -ENOMEM;
    *task = (struct loop_task){ .cb = cb, .ctx = ctx };
    pthread_mutex_lock(&l->task_lock);
    if (l->task_tail)
        l->task_tail->next = task;
    else
        l->task_head = task;
    l->task_tail = task;
    pthread_mutex_unlock(&l->task_lock);
    return loop_wake(l);
}

/* Runs the tasks queued before this call; later ones wait for the next round. */
static int run_tasks(struct sd_loop *l)
{
    struct loop_task *task;
    eventfd_t count;
    int ran = 0;

    if (eventfd_read(l->wakefd, &count) < 0 && errno != EAGAIN)
        return 0;
    pthread_mutex_lock(&l->task_lock);
    task = l->task_head;
    l->task_head = l->task_tail = NULL;
    pthread_mutex_unlock(&l->task_lock);
    while (task) {
        struct loop_task *next = task->next;

        task->cb(task->ctx);
        free(task);
        task = next;
        ran++;
    }
    return ran;
}

/* ---- prepare hooks ---- */

int64_t sd_loop_add_prepare(struct sd_loop *l, sd_prepare_cb cb, void *ctx)
{
    if (l->nprepares == l->prepares_cap) {
        size_t cap = l->prepares_cap ? l->prepares_cap * 2 : 8;
        struct loop_prepare *np = realloc(l->prepares, cap * sizeof(*np));

        if (!np)
            return -ENOMEM;
        l->prepares = np;
        l->prepares_cap = cap;
    }
    l->prepares[l->nprepares] = (struct loop_prepare){ l->next_prepare_id, cb, ctx };
    l->nprepares++;
    return l->next_prepare_id++;
}

/* Drops the entries deleted while hooks ran. */
static void compact_prepares(struct sd_loop *l)
{
    size_t kept = 0;

    for (size_t i = 0; i < l->nprepares; i++)
        if (l->prepares[i].cb)
            l->prepares[kept++] = l->prepares[i];
    l->nprepares = kept;
}

void sd_loop_del_prepare(struct sd_loop *l, int64_t id)
{
    for (size_t i = 0; i < l->nprepares; i++) {
        if (l->prepares[i].id == id)
            l->prepares[i].cb = NULL;
    }
    if (!l->preparing)
        compact_prepares(l);
}

static void run_prepares(struct sd_loop *l)
{
    int again = 1;

    l->preparing = 1;
    for (int round = 0; again && round < LOOP_PREPARE_ROUNDS; round++) {
        again = 0;
        /* A hook added by a hook runs in the same pass (the count is re-read). */
        for (size_t i = 0; i < l->nprepares; i++) {
            struct loop_prepare *p = &l->prepares[i];

            if (p->cb && p->cb(p->ctx))
                again = 1;
        }
    }
    l->preparing = 0;
    compact_prepares(l);
}

/* ---- running ---- */

static int wait_ms(struct sd_loop *l, int timeout_ms, uint64_t now)
{
    uint64_t next;

    if (l->heap_len == 0)
        return timeout_ms;
    next = l->heap[0]->at_ms;
    if (next <= now)
        return 0;
    if (timeout_ms >= 0 && (uint64_t)timeout_ms < next - now)
        return timeout_ms;
    return next - now > (uint64_t)INT32_MAX ? INT32_MAX : (int)(next - now);
}

void sd_loop_set_busy_poll(struct sd_loop *l, unsigned max_us)
{
    l->poll_max_us = max_us;
    l->poll_budget_us = max_us;
}

void sd_loop_poll_hold(struct sd_loop *l, int delta)
{
    if (delta > 0)
        l->poll_holds++;
    else if (delta < 0 && l->poll_holds > 0)
        l->poll_holds--;
}

void sd_loop_poll_stats(const struct sd_loop *l, struct sd_loop_poll_stats *st)
{
    *st = l->poll;
    st->budget_us = l->poll_budget_us;
}

/* The next budget from how long the wait that just ended took (waited_us) and whether
 * it found an event (sd_loop_set_busy_poll says why). */
static void poll_adapt(struct sd_loop *l, uint64_t waited_us, int found)
{
    unsigned b = l->poll_budget_us;

    if (found && waited_us <= l->poll_max_us) {
        b -= b / 8;
        if (2 * waited_us > b)
            b = 2 * waited_us > l->poll_max_us ? l->poll_max_us : (unsigned)(2 * waited_us);
    } else {
        b /= 2;
    }
    l->poll_budget_us = b < LOOP_POLL_MIN_US ? 0 : b;
}

/* epoll_wait for up to wait ms, polling first within the busy-poll budget unless held
 * (read under run_lock by the caller). */
static int loop_wait(struct sd_loop *l, struct epoll_event *evs, int wait, int held)
{
    uint64_t t0;
    int n = 0;

    if (!l->poll_max_us || wait == 0)
        return epoll_wait(l->epfd, evs, LOOP_MAX_EVENTS, wait);
    if (held) {
        l->poll.held++;
        return epoll_wait(l->epfd, evs, LOOP_MAX_EVENTS, wait);
    }
    t0 = sd_now_us();
    if (l->poll_budget_us) {
        uint64_t spin = l->poll_budget_us;
        int whole = wait > 0 && (uint64_t)wait * 1000 <= spin; /* the poll is the wait */

        if (whole)
            spin = (uint64_t)wait * 1000;
        while ((n = epoll_wait(l->epfd, evs, LOOP_MAX_EVENTS, 0)) == 0 && sd_now_us() - t0 < spin)
            sched_yield();
        if (n > 0)
            l->poll.hits++;
        else if (n == 0)
            l->poll.misses++;
        if (n == 0 && whole) {
            poll_adapt(l, sd_now_us() - t0, 0);
            return 0;
        }
    }
    if (n == 0) {
        l->poll.sleeps++;
        n = epoll_wait(l->epfd, evs, LOOP_MAX_EVENTS, wait);
    }
    if (n >= 0)
        poll_adapt(l, sd_now_us() - t0, n > 0);
    return n;
}

int sd_loop_run_once(struct sd_loop *l, int timeout_ms)
{
    struct epoll_event evs[LOOP_MAX_EVENTS];
    int n, wait, err, held, ran = 0, tasks_pending = 0;
    uint64_t now;

    pthread_mutex_lock(&l->run_lock);
    run_prepares(l);
    now = sd_now_ms();
    wait = wait_ms(l, timeout_ms, now);
    l->wait_until = wait < 0 ? UINT64_MAX : now + (uint64_t)wait;
    held = l->poll_holds > 0;
    pthread_mutex_unlock(&l->run_lock);
    n = loop_wait(l, evs, wait, held);
    err = errno;
    pthread_mutex_lock(&l->run_lock);
    l->wait_until = 0; /* not waiting: a thread in sd_loop_enter need not wake it */
    if (n < 0) {
        pthread_mutex_unlock(&l->run_lock);
        return err == EINTR ? 0 : -err;
    }
    for (int i = 0; i < n; i++) {
        int fd = (int)(uint32_t)evs[i].data.u64;
        uint32_t gen = (uint32_t)(evs[i].data.u64 >> 32);
        struct loop_watch *w;

        if (evs[i].data.u64 == UINT64_MAX) {
            tasks_pending = 1;
            continue;
        }
        w = watch_of(l, fd);
        if (!w || w->gen != gen)
            continue; /* deleted or replaced by an earlier callback (or another thread) */
        w->cb(w->ctx, (int)(evs[i].events & (EPOLLIN | EPOLLOUT | EPOLLERR | EPOLLHUP)));
        ran++;
    }
    ran += run_timers(l, sd_now_ms());
    if (tasks_pending)
        ran += run_tasks(l);
    pthread_mutex_unlock(&l->run_lock);
    return ran;
}

void sd_loop_enter(struct sd_loop *l)
{
    pthread_mutex_lock(&l->run_lock);
}

void sd_loop_leave(struct sd_loop *l)
{
    int wake;

    run_prepares(l);
    /* A timer armed here that is due before the waiting loop wakes wakes it now. */
    wake = l->heap_len > 0 && l->heap[0]->at_ms < l->wait_until;
    pthread_mutex_unlock(&l->run_lock);
    if (wake)
        loop_wake(l);
}

int sd_loop_run(struct sd_loop *l)
{
    while (!atomic_exchange(&l->stopped, 0)) {
        int rc = sd_loop_run_once(l, -1);

        if (rc < 0)
            return rc;
    }
    return 0;
}

/* Async-signal-safe: a flag and one write(2) to the eventfd. */
void sd_loop_stop(struct sd_loop *l)
{
    atomic_store(&l->stopped, 1);
    loop_wake(l);
}
