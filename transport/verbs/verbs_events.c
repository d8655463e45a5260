/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/verbs/verbs_events.c — a verbs connection's one event-loop fd: an epoll fd
 * over the completion channel, the CM event channel, a wake-up eventfd, the device's
 * async fd and (after a loss) the flush timer; progress() reads only what it reports
 * ready: CM events end the connection, the completion channel is acknowledged and the
 * CQ re-armed. */
#include <errno.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "verbs_priv.h"

int sd_verbs_fd(struct sd_qp *qp) { return qp->epoll_fd; }

int sd_verbs_poll_events(struct sd_qp *qp)
{
    (void)qp;
    return SD_POLL_IN;
}

/* Drains the connection's CM events: anything but TIMEWAIT_EXIT ends it. */
static void drain_cm_events(struct sd_qp *qp)
{
    struct rdma_cm_event *e;

    while (rdma_get_cm_event(qp->cm_channel, &e) == 0) {
        enum rdma_cm_event_type type = e->event;

        rdma_ack_cm_event(e);
        if (type == RDMA_CM_EVENT_DISCONNECTED)
            sd_verbs_qp_set_lost(qp, SD_WC_FLUSHED, "the peer disconnected");
        else if (type != RDMA_CM_EVENT_TIMEWAIT_EXIT)
            sd_verbs_qp_set_lost(qp, SD_WC_FATAL, rdma_event_str(type));
    }
}

/* The completion channel's event: acknowledged, and the CQ re-armed before the caller
 * polls, so nothing arriving after the poll is missed. One read takes the one event an
 * armed CQ raises; another would keep the channel readable for the next progress(). */
static int take_cq_event(struct sd_qp *qp)
{
    struct ibv_cq *cq;
    void *ctx;
    int rc;

    if (ibv_get_cq_event(qp->comp_channel, &cq, &ctx) != 0)
        return 0;
    ibv_ack_cq_events(qp->cq, 1);
    if ((rc = ibv_req_notify_cq(qp->cq, 0)) != 0) {
        sd_verbs_qp_set_lost(qp, SD_WC_FATAL, "cannot re-arm the completion queue");
        return -rc;
    }
    return 0;
}

/* Reads only what epoll_fd reports ready (a CM event, a device event, the completion
 * channel, the wake fd), and nothing at all while the owner's readiness reports
 * (sd_verbs_readable) say it is drained: a request posted from the program's thread then
 * costs no read of four idle fds, and its completions are polled from the CQ alone. */
int sd_verbs_progress(struct sd_qp *qp)
{
    struct epoll_event ev[6];
    uint64_t v;
    int n, rc = 0;

    if (qp->epoll_fd < 0 || (qp->events_hinted && qp->events_drained))
        return 0;
    n = epoll_wait(qp->epoll_fd, ev, (int)(sizeof(ev) / sizeof(ev[0])), 0);
    if (n < 0)
        return errno == EINTR ? 0 : -errno;
    qp->events_drained = 1;
    for (int i = 0; i < n; i++) {
        int fd = ev[i].data.fd;

        if (fd == qp->cm_channel->fd) {
            drain_cm_events(qp);
        } else if (fd == qp->comp_channel->fd) {
            int err = take_cq_event(qp);

            rc = err ? err : rc;
        } else if (fd == qp->wake_fd) { /* a loss to report, or a device event marked us */
            if (read(qp->wake_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
                rc = -errno;
            sd_verbs_async_progress(qp, 0);
        } else if (fd == qp->id->verbs->async_fd) {
            sd_verbs_async_progress(qp, 0);
        } /* the flush timer is read by poll_cq (flush_wait_over) */
    }
    return rc;
}

void sd_verbs_readable(struct sd_qp *qp)
{
    qp->events_hinted = 1;
    qp->events_drained = 0;
}
