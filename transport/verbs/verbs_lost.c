/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/verbs/verbs_lost.c — a verbs connection's loss: the QP moved to its error
 * state so every outstanding request flushes, a bounded wait for those flushes
 * (SD_VERBS_FLUSH_WAIT_MS on a timerfd), the cause a failed request gives (or the port
 * event behind it), a local disconnect. poll_cq (verbs_cq.c) then reports one CONN_LOST
 * (MS-SMBD 3.1.7.1). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "log.h"
#include "verbs_priv.h"

#define LINK_SETTLE_MS      200 /* the most a failed request waits for its port's event */
#define LINK_SETTLE_STEP_MS 20

static void wake(struct sd_qp *qp)
{
    if (eventfd_write(qp->wake_fd, 1) < 0 && errno != EAGAIN)
        sd_warn("verbs: eventfd write failed: %s", strerror(errno));
}

/* Wakes the connection SD_VERBS_FLUSH_WAIT_MS from now, when poll_cq gives up waiting
 * for flushes; without a timer the wait is unbounded but nothing else breaks. */
static void arm_flush_timer(struct sd_qp *qp)
{
    struct itimerspec at = { .it_value = { .tv_sec = SD_VERBS_FLUSH_WAIT_MS / 1000,
                                           .tv_nsec = SD_VERBS_FLUSH_WAIT_MS % 1000 * 1000000L } };

    if (qp->epoll_fd < 0)
        return;
    qp->flush_timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    if (qp->flush_timer_fd < 0 || timerfd_settime(qp->flush_timer_fd, 0, &at, NULL) < 0 ||
        sd_verbs_epoll_watch(qp->epoll_fd, qp->flush_timer_fd) < 0)
        sd_debug("verbs: no flush timer: %s", strerror(errno));
}

int sd_verbs_flush_wait_over(struct sd_qp *qp)
{
    uint64_t n;

    return qp->flush_timer_fd >= 0 && read(qp->flush_timer_fd, &n, sizeof(n)) == sizeof(n);
}

void sd_verbs_qp_set_lost(struct sd_qp *qp, enum sd_wc_status cause, const char *why)
{
    struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };
    int was_connected = qp->state == SD_VERBS_QP_CONNECTED;

    if (sd_verbs_qp_lost(qp))
        return;
    sd_verbs_qp_enter(qp, SD_VERBS_QP_FLUSHING);
    qp->lost_cause = cause;
    if (cause == SD_WC_FLUSHED)
        sd_info("verbs: connection lost: %s", why);
    else
        sd_warn("verbs: connection lost: %s", why);
    /* Tell the peer at once: on InfiniBand/RoCE a failed request (e.g. a Send the
     * peer had no receive for) breaks only our QP, the peer would never notice. */
    if (was_connected && rdma_disconnect(qp->id))
        sd_debug("verbs: rdma_disconnect: %s", strerror(errno));
    /* The error state flushes every outstanding request (IBTA 10.3.1). */
    if (qp->id && qp->id->qp && ibv_modify_qp(qp->id->qp, &attr, IBV_QP_STATE))
        sd_warn("verbs: moving the QP to error failed: %s", strerror(errno));
    arm_flush_timer(qp);
    wake(qp);
}

/* Statuses a link gone down produces before its PORT_ERR (rxe: a send to a netdev going
 * down fails as a local QP operation error). */
static int may_be_link(enum ibv_wc_status s)
{
    return s == IBV_WC_LOC_QP_OP_ERR || s == IBV_WC_RETRY_EXC_ERR || s == IBV_WC_FATAL_ERR ||
           s == IBV_WC_GENERAL_ERR;
}

void sd_verbs_qp_lose_on_error(struct sd_qp *qp, enum ibv_wc_status status)
{
    struct ibv_port_attr port;
    char why[160];
    int up = 1;

    for (int waited = 0;; waited += LINK_SETTLE_STEP_MS) {
        sd_verbs_async_progress(qp, 1);
        if (sd_verbs_qp_lost(qp))
            return;
        up = !(qp->id->verbs && ibv_query_port(qp->id->verbs, qp->id->port_num, &port) == 0 &&
               port.state != IBV_PORT_ACTIVE);
        if (!up || !may_be_link(status) || waited >= LINK_SETTLE_MS)
            break;
        usleep(LINK_SETTLE_STEP_MS * 1000);
    }
    if (!up)
        snprintf(why, sizeof(why), "%s; %s port %u is %s: the port went down (its network link)",
                 ibv_wc_status_str(status), ibv_get_device_name(qp->id->verbs->device),
                 qp->id->port_num, ibv_port_state_str(port.state));
    else
        snprintf(why, sizeof(why), "%s", ibv_wc_status_str(status));
    sd_verbs_qp_set_lost(qp, sd_verbs_wc_status(status), why);
}

int sd_verbs_post_refused(struct sd_qp *qp, const char *what, int rc)
{
    sd_debug("verbs: %s refused: %s", what, strerror(rc < 0 ? -rc : rc));
    sd_verbs_qp_lose_on_error(qp, IBV_WC_LOC_QP_OP_ERR);
    return -ENOTCONN;
}

void sd_verbs_disconnect(struct sd_qp *qp)
{
    sd_verbs_qp_set_lost(qp, SD_WC_FLUSHED, "local disconnect");
}
