/* SPDX-License-Identifier: BSD-3-Clause */
/* common/sd_loop_fd.c — the loop's fd watches: a table indexed by fd, and epoll carrying
 * fd + generation, so that a watch deleted or replaced by an earlier callback of the same
 * batch is recognised and skipped. */
#include "sd_loop_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

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

int sd_loop_fds_run(struct sd_loop *l, const struct epoll_event *evs, int n, int *woken)
{
    int ran = 0;

    for (int i = 0; i < n; i++) {
        int fd = (int)(uint32_t)evs[i].data.u64;
        uint32_t gen = (uint32_t)(evs[i].data.u64 >> 32);
        struct loop_watch *w;

        if (evs[i].data.u64 == LOOP_WAKE_TAG) {
            *woken = 1;
            continue;
        }
        w = watch_of(l, fd);
        if (!w || w->gen != gen)
            continue; /* deleted or replaced by an earlier callback (or another thread) */
        w->cb(w->ctx, (int)(evs[i].events & (EPOLLIN | EPOLLOUT | EPOLLERR | EPOLLHUP)));
        ran++;
    }
    return ran;
}

void sd_loop_fds_free(struct sd_loop *l)
{
    for (size_t fd = 0; fd < l->nwatches; fd++)
        if (l->watches[fd].gen != 0 && l->watches[fd].release)
            l->watches[fd].release(l->watches[fd].ctx);
    free(l->watches);
}
