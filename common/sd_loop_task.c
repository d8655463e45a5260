/* SPDX-License-Identifier: BSD-3-Clause */
/* common/sd_loop_task.c — the loop's cross-thread task queue: sd_loop_post queues under
 * a mutex and wakes the loop through its eventfd, which the loop thread reads before it
 * runs what was queued. */
#include "sd_loop_int.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/eventfd.h>

/* Async-signal-safe (eventfd_write is one write(2), made inside libc, so the shim's
 * write interposer never sees it). EAGAIN means the counter is already non-zero: the
 * loop wakes anyway. */
int sd_loop_wake(struct sd_loop *l)
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
    return sd_loop_wake(l);
}

int sd_loop_tasks_run(struct sd_loop *l)
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

void sd_loop_tasks_free(struct sd_loop *l)
{
    struct loop_task *task;

    while ((task = l->task_head)) {
        l->task_head = task->next;
        free(task);
    }
}
