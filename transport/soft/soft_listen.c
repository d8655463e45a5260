/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/soft/soft_listen.c — the soft-iWARP listener: a TCP listening socket and
 * the connections accepted on it whose MPA request (RFC 5044 7.1.2) is still
 * arriving, each with a handshake deadline. One epoll fd (listener_fd) watches the
 * listening socket, those connections and a timerfd set to the earliest deadline, so
 * it is readable whenever accept() can make progress; accept() itself only does
 * non-blocking work, and polls that fd when the caller gives it time. */
#include "soft_cm.h"
#include "soft_pending.h"
#include "log.h"
#include "sd_clock.h"
#include "sd_libc.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#define MAX_PENDING          256   /* handshakes in progress; more are refused */
#define ACCEPT_BATCH         16    /* new TCP connections taken per accept() step */
#define EVENT_BATCH          32

struct sd_listener {
    int fd;           /* listening TCP socket */
    int epfd;         /* listener_fd: fd + pending sockets + tfd */
    int tfd;          /* timerfd: the earliest handshake deadline */
    int handshake_ms; /* sd_listen_params */
    size_t npending;
    struct sd_soft_pending *pending[MAX_PENDING];
};

static int watch(struct sd_listener *l, int fd, void *tag)
{
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = tag};

    return epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &ev) == 0 ? 0 : -errno;
}

struct sd_listener *sd_soft_listen(const struct sockaddr *addr, socklen_t addrlen,
                                   const struct sd_listen_params *lp, int *err)
{
    struct sd_listener *l = calloc(1, sizeof(*l));
    int one = 1, e = addr && lp && lp->handshake_ms > 0 ? 0 : -EINVAL;

    if (!l) {
        if (err)
            *err = -ENOMEM;
        return NULL;
    }
    l->epfd = l->tfd = -1;
    l->fd = !e ? socket(addr->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0) : -1;
    l->handshake_ms = !e ? lp->handshake_ms : 0;
    if (!e && (l->fd < 0 ||
               sd_libc()->setsockopt(l->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
               bind(l->fd, addr, addrlen) || listen(l->fd, lp->backlog)))
        e = -errno;
    if (!e && ((l->epfd = epoll_create1(EPOLL_CLOEXEC)) < 0 ||
               (l->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC)) < 0))
        e = -errno;
    if (!e && !(e = watch(l, l->fd, &l->fd)))
        e = watch(l, l->tfd, &l->tfd);
    if (e) {
        sd_soft_listener_close(l);
        if (err)
            *err = e;
        return NULL;
    }
    return l;
}

int sd_soft_listener_fd(struct sd_listener *l) { return l->epfd; }

int sd_soft_listener_addr(struct sd_listener *l, struct sockaddr *addr, socklen_t *len)
{
    return sd_libc()->getsockname(l->fd, addr, len) == 0 ? 0 : -errno;
}

/* Takes pending[i] out of the listener (the caller then answers or drops it). */
static void detach(struct sd_listener *l, size_t i)
{
    epoll_ctl(l->epfd, EPOLL_CTL_DEL, l->pending[i]->fd, NULL);
    l->pending[i] = l->pending[--l->npending];
}

void sd_soft_listener_close(struct sd_listener *l)
{
    if (!l)
        return;
    while (l->npending) {
        struct sd_soft_pending *p = l->pending[0];
        detach(l, 0);
        sd_soft_pending_drop(p, "the listener is closing");
    }
    if (l->fd >= 0)
        close(l->fd);
    if (l->epfd >= 0)
        close(l->epfd);
    if (l->tfd >= 0)
        close(l->tfd);
    free(l);
}

/* Accepts the TCP connections that are waiting (a bounded batch) as pending; returns
 * how many were added. */
static int take_new(struct sd_listener *l, int64_t now)
{
    int added = 0;

    for (int n = 0; n < ACCEPT_BATCH; n++) {
        int fd = accept4(l->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        struct sd_soft_pending *p;

        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK)
                sd_warn("soft-iWARP: accepting a TCP connection: %s", strerror(errno));
            break;
        }
        sd_soft_tune_socket(fd);
        p = l->npending < MAX_PENDING ? sd_soft_pending_new(fd, now + l->handshake_ms) : NULL;
        if (!p) {
            sd_warn("soft-iWARP: refusing a connection: %s",
                    l->npending < MAX_PENDING ? "out of memory" : "too many MPA handshakes pending");
            close(fd);
            continue;
        }
        if (watch(l, fd, p) < 0) {
            sd_soft_pending_drop(p, "cannot watch its socket");
            continue;
        }
        l->pending[l->npending++] = p;
        added++;
    }
    return added;
}

/* Drops the pending connections whose handshake deadline has passed. */
static void expire(struct sd_listener *l, int64_t now)
{
    char why[64];

    snprintf(why, sizeof(why), "no complete MPA request within %d ms", l->handshake_ms);
    for (size_t i = 0; i < l->npending;) {
        struct sd_soft_pending *p = l->pending[i];

        if (p->deadline > now) {
            i++;
            continue;
        }
        detach(l, i);
        sd_soft_pending_drop(p, why);
    }
}

/* Sets the timerfd to the earliest handshake deadline (disarmed when none). */
static void rearm(struct sd_listener *l)
{
    int64_t first = INT64_MAX;
    struct itimerspec t;

    memset(&t, 0, sizeof(t));
    for (size_t i = 0; i < l->npending; i++)
        if (l->pending[i]->deadline < first)
            first = l->pending[i]->deadline;
    if (first != INT64_MAX) {
        t.it_value.tv_sec = first / 1000;
        t.it_value.tv_nsec = (long)(first % 1000) * 1000000 + 1;   /* 0 would disarm */
    }
    if (timerfd_settime(l->tfd, TFD_TIMER_ABSTIME, &t, NULL) != 0)
        sd_warn("soft-iWARP: cannot set the handshake timer: %s", strerror(errno));
}

static size_t index_of(const struct sd_listener *l, const struct sd_soft_pending *p)
{
    size_t i = 0;

    while (l->pending[i] != p)
        i++;
    return i;
}

/* One round over what epoll reports ready. Sets *added when new connections came in
 * (their request bytes may be waiting already). */
static struct sd_qp *accept_round(struct sd_listener *l, const struct sd_cm_params *params,
                                  int64_t now, struct sd_cm_result *result, int *err,
                                  int *added)
{
    struct epoll_event ev[EVENT_BATCH];
    struct sd_qp *qp = NULL;
    int n = epoll_wait(l->epfd, ev, EVENT_BATCH, 0);

    *added = 0;
    for (int i = 0; i < n && !qp && *err == -EAGAIN; i++) {
        void *tag = ev[i].data.ptr;
        struct sd_soft_pending *p = tag;
        const char *why = NULL;
        uint64_t ticks;
        int r;

        if (tag == &l->fd) {
            *added += take_new(l, now);
        } else if (tag == &l->tfd) {
            if (read(l->tfd, &ticks, sizeof(ticks)) < 0)   /* expire() ran already */
                sd_debug("soft-iWARP: handshake timer: %s", strerror(errno));
        } else if ((r = sd_soft_pending_read(p, &why)) != 0) {
            detach(l, index_of(l, p));
            if (r < 0) {
                sd_soft_pending_drop(p, why);
                *err = r;
            } else {
                qp = sd_soft_pending_answer(p, params, result, err);
            }
        }
    }
    return qp;
}

/* Non-blocking work on whatever is ready: expired handshakes dropped, new connections
 * taken, request bytes read. A qp when a request was answered; else NULL with *err:
 * a failed connection's error, or -EAGAIN. */
static struct sd_qp *accept_step(struct sd_listener *l, const struct sd_cm_params *params,
                                 struct sd_cm_result *result, int *err)
{
    int64_t now = (int64_t)sd_now_ms();
    struct sd_qp *qp;
    int added;

    expire(l, now);
    *err = -EAGAIN;
    qp = accept_round(l, params, now, result, err, &added);
    if (!qp && *err == -EAGAIN && added)
        qp = accept_round(l, params, now, result, err, &added);
    rearm(l);
    return qp;
}

/* timeout_ms 0: one non-blocking step (-EAGAIN when nothing is complete); else steps
 * with waits on listener_fd between them, up to timeout_ms (< 0: no limit). */
struct sd_qp *sd_soft_accept(struct sd_listener *l, const struct sd_cm_params *params,
                             int timeout_ms, struct sd_cm_result *result, int *err)
{
    int64_t deadline = timeout_ms < 0 ? -1 : (int64_t)sd_now_ms() + timeout_ms;
    int e = -EINVAL;
    struct sd_qp *qp = NULL;

    while (l && params) {
        int left = -1;

        qp = accept_step(l, params, result, &e);
        if (qp || e != -EAGAIN || timeout_ms == 0)
            break;
        if (deadline >= 0) {
            int64_t d = deadline - (int64_t)sd_now_ms();
            if (d <= 0) {
                e = -ETIMEDOUT;
                break;
            }
            left = d > INT_MAX ? INT_MAX : (int)d;
        }
        struct pollfd pf = {.fd = l->epfd, .events = POLLIN};
        if (poll(&pf, 1, left) < 0 && errno != EINTR) {
            e = -errno;
            break;
        }
    }
    if (err)
        *err = qp ? 0 : e;
    return qp;
}
