/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/link/smbd_link_pump.c — an sd_loop drives a link (smbd_link_attach): it
 * watches the provider fd, runs the engine's timers and, before the loop sleeps, moves
 * what the owner's engine calls asked of the provider; each turn runs progress() and
 * feeds the completions to the engine, then lets the owner react (its after hook). */
#include "smbd_link_int.h"

#include <errno.h>
#include <string.h>

#include "log.h"

#define LINK_WC_BATCH    32
#define LINK_PUMP_ROUNDS 4

/* Feeds the provider's completions to the engine; returns how many. While nobody is
 * bound they are taken one at a time and left in the provider once established (see
 * smbd_link_set_upper). */
static int link_drain(struct smbd_link *k, uint64_t now)
{
    struct sd_wc wc[LINK_WC_BATCH];
    int total = 0, n;

    for (;;) {
        if (!k->bound && smbd_conn_is_established(k->conn))
            break;
        n = k->ops->poll_cq(k->qp, wc, k->bound ? LINK_WC_BATCH : 1);
        if (n <= 0)
            break;
        for (int i = 0; i < n; i++)
            smbd_conn_on_completion(k->conn, &wc[i], now);
        total += n;
    }
    return total;
}

/* progress + completions, again while completions came (the engine's reactions, such
 * as reposted receives and credit grants, then leave in the same turn), bounded. */
static void link_pump(struct smbd_link *k)
{
    uint64_t now = sd_now_ms();

    for (int round = 0; round < LINK_PUMP_ROUNDS; round++) {
        int rc = k->ops->progress(k->qp);

        if (rc < 0) /* the loss itself arrives as completions (provider.h) */
            sd_debug("smbd link: provider progress: %s", strerror(-rc));
        if (link_drain(k, now) == 0)
            break;
    }
    k->requests_seen = smbd_conn_provider_requests(k->conn);
}

static void link_fd_cb(void *ctx, int revents);
static void link_timer_cb(void *ctx, uint64_t now);

static void link_rearm(struct smbd_link *k)
{
    int terminated = smbd_conn_is_terminated(k->conn);
    int fd = k->ops->fd(k->qp), ev = terminated ? -1 : k->ops->poll_events(k->qp), rc = 0;
    uint64_t next = terminated ? UINT64_MAX : smbd_conn_next_timer(k->conn);

    if (!k->loop)
        return;
    if (ev != k->watched) {
        if (ev < 0)
            rc = sd_loop_del_fd(k->loop, fd);
        else if (k->watched < 0)
            rc = sd_loop_add_fd(k->loop, fd, ev, link_fd_cb, k);
        else
            rc = sd_loop_mod_fd(k->loop, fd, ev);
        if (rc < 0)
            sd_error("smbd link: cannot watch provider fd %d: %s", fd, strerror(-rc));
        k->watched = ev;
    }
    if (next != k->timer_at) {
        if (k->timer_id > 0)
            sd_loop_cancel_timer(k->loop, k->timer_id);
        k->timer_id = 0;
        if (next != UINT64_MAX) {
            k->timer_id = sd_loop_add_timer(k->loop, next, link_timer_cb, k);
            if (k->timer_id < 0)
                sd_error("smbd link: cannot arm timer: %s", strerror((int)-k->timer_id));
        }
        k->timer_at = next;
    }
}

static void link_fd_cb(void *ctx, int revents)
{
    struct smbd_link *k = ctx;

    /* progress() finds out what happened, including errors */
    if ((revents & (SD_EV_IN | SD_EV_HUP | SD_EV_ERR)) && k->ops->readable)
        k->ops->readable(k->qp);
    link_pump(k);
    link_rearm(k);
    if (k->after)
        k->after(k->after_ctx); /* last: it may free the link */
}

static void link_timer_cb(void *ctx, uint64_t now)
{
    struct smbd_link *k = ctx;

    k->timer_id = 0;
    k->timer_at = UINT64_MAX;
    smbd_conn_on_timer(k->conn, now);
    link_pump(k);
    link_rearm(k);
    if (k->after)
        k->after(k->after_ctx);
}

/* Before the loop sleeps: when the engine asked its provider for something since the
 * last pump (sends and credits queued by the owner's calls, a disconnect), move it now
 * and let the owner react. Otherwise only the fd watch and timer are brought up to date
 * (an owner's call may have moved the engine's timer). */
static int link_prepare_cb(void *ctx)
{
    struct smbd_link *k = ctx;

    if (smbd_conn_provider_requests(k->conn) == k->requests_seen) {
        link_rearm(k);
        return 0;
    }
    link_pump(k);
    link_rearm(k);
    if (k->after)
        k->after(k->after_ctx); /* last: it may free the link */
    return 1;
}

int smbd_link_attach(struct smbd_link *k, struct sd_loop *loop, void (*after)(void *ctx),
                     void *ctx)
{
    if (k->loop)
        return -EBUSY;
    k->prepare_id = sd_loop_add_prepare(loop, link_prepare_cb, k);
    if (k->prepare_id < 0)
        return (int)k->prepare_id;
    k->loop = loop;
    k->after = after;
    k->after_ctx = ctx;
    link_pump(k);
    link_rearm(k);
    return 0;
}

void smbd_link_detach(struct smbd_link *k)
{
    if (!k->loop)
        return;
    if (k->watched >= 0)
        sd_loop_del_fd(k->loop, k->ops->fd(k->qp));
    if (k->timer_id > 0)
        sd_loop_cancel_timer(k->loop, k->timer_id);
    if (k->deadline_timer > 0)
        sd_loop_cancel_timer(k->loop, k->deadline_timer);
    sd_loop_del_prepare(k->loop, k->prepare_id);
    k->watched = -1;
    k->timer_id = k->deadline_timer = 0;
    k->timer_at = UINT64_MAX;
    k->loop = NULL;
    k->after = NULL;
}
