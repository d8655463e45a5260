/* SPDX-License-Identifier: BSD-3-Clause */
/* common/sd_loop.c — the epoll event loop behind sd_loop.h: making and freeing it, one
 * round (prepare hooks, the wait, fd callbacks, due timers, queued tasks), running until
 * stopped, and another thread's turn on the loop (sd_loop_enter/leave) under run_lock.
 * The loop's parts live beside it around sd_loop_int.h: fd watches (sd_loop_fd.c), timers
 * (sd_loop_timer.c), the task queue (sd_loop_task.c), prepare hooks (sd_loop_prepare.c)
 * and the adaptive busy poll (sd_loop_poll.c). */
#include "sd_loop_int.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

struct sd_loop *sd_loop_new(void)
{
    struct sd_loop *l = calloc(1, sizeof(*l));
    struct epoll_event ev = { .events = EPOLLIN, .data.u64 = LOOP_WAKE_TAG };

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
    if (!l)
        return;
    sd_loop_fds_free(l);
    sd_loop_timers_free(l);
    sd_loop_tasks_free(l);
    pthread_mutex_destroy(&l->task_lock);
    pthread_mutex_destroy(&l->run_lock);
    close(l->epfd);
    close(l->wakefd);
    free(l->prepares);
    free(l);
}

int sd_loop_run_once(struct sd_loop *l, int timeout_ms)
{
    struct epoll_event evs[LOOP_MAX_EVENTS];
    int n, wait, err, held, ran = 0, tasks_pending = 0;
    uint64_t now;

    pthread_mutex_lock(&l->run_lock);
    sd_loop_prepares_run(l);
    now = sd_now_ms();
    wait = sd_loop_timers_wait_ms(l, timeout_ms, now);
    l->wait_until = wait < 0 ? UINT64_MAX : now + (uint64_t)wait;
    held = l->poll_holds > 0;
    pthread_mutex_unlock(&l->run_lock);
    n = sd_loop_wait(l, evs, wait, held);
    err = errno;
    pthread_mutex_lock(&l->run_lock);
    l->wait_until = 0; /* not waiting: a thread in sd_loop_enter need not wake it */
    if (n < 0) {
        pthread_mutex_unlock(&l->run_lock);
        return err == EINTR ? 0 : -err;
    }
    ran += sd_loop_fds_run(l, evs, n, &tasks_pending);
    ran += sd_loop_timers_run(l, sd_now_ms());
    if (tasks_pending)
        ran += sd_loop_tasks_run(l);
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

    sd_loop_prepares_run(l);
    /* A timer armed here that is due before the waiting loop wakes wakes it now. */
    wake = sd_loop_timers_due_before(l, l->wait_until);
    pthread_mutex_unlock(&l->run_lock);
    if (wake)
        sd_loop_wake(l);
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
    sd_loop_wake(l);
}
