/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/verbs/verbs_qp.c — one RC connection over rdma-core, made and destroyed: its
 * protection domain, completion channel and CQ, the QP, the two rings and the epoll fd
 * over its event sources (verbs_events.c reads it). Posting is verbs_post.c, completions
 * verbs_cq.c, the loss verbs_lost.c. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "log.h"
#include "verbs_priv.h"

int sd_verbs_epoll_watch(int epfd, int fd)
{
    struct epoll_event e = { .events = EPOLLIN, .data.fd = fd };

    return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &e) ? -errno : 0;
}

/* Frees the QP resources, not the CM id and channel. */
static void release_qp_resources(struct sd_qp *qp)
{
    sd_verbs_async_unwatch(qp);
    for (uint32_t i = 0; qp->sq.slot && i < qp->sq.span; i++) {
        struct sd_verbs_wr *wr = &qp->sq.slot[(qp->sq.head + i) % qp->sq.size];

        if (wr->busy && wr->read_sink_mr)
            ibv_dereg_mr(wr->read_sink_mr);
    }
    if (qp->id && qp->id->qp)
        rdma_destroy_qp(qp->id);
    if (qp->cq)
        ibv_destroy_cq(qp->cq);
    if (qp->comp_channel)
        ibv_destroy_comp_channel(qp->comp_channel);
    if (qp->pd && ibv_dealloc_pd(qp->pd))
        sd_warn("verbs: memory regions still registered at destroy (leaked)");
    if (qp->epoll_fd >= 0)
        close(qp->epoll_fd);
    if (qp->wake_fd >= 0)
        close(qp->wake_fd);
    if (qp->flush_timer_fd >= 0)
        close(qp->flush_timer_fd);
    free(qp->sq.slot);
    free(qp->rq.slot);
}

static int setup_qp(struct sd_qp *qp)
{
    struct ibv_context *ctx = qp->id->verbs;
    struct ibv_device_attr attr;
    struct ibv_qp_init_attr init;
    uint32_t depth = SD_VERBS_QUEUE_DEPTH;
    int cqe, rc;

    if (ibv_query_device(ctx, &attr))
        return -errno;
    if ((uint32_t)attr.max_qp_wr < depth)
        depth = (uint32_t)attr.max_qp_wr;
    cqe = (int)(2 * depth) < attr.max_cqe ? (int)(2 * depth) : attr.max_cqe;
    qp->max_sge = (uint32_t)attr.max_sge < SD_VERBS_MAX_SGE ? (uint32_t)attr.max_sge
                                                             : SD_VERBS_MAX_SGE;
    qp->iwarp = ctx->device->transport_type == IBV_TRANSPORT_IWARP;
    qp->pd = ibv_alloc_pd(ctx);
    if (!qp->pd)
        return -(errno ? errno : ENOMEM);
    qp->comp_channel = ibv_create_comp_channel(ctx);
    if (!qp->comp_channel)
        return -(errno ? errno : ENOMEM);
    rc = sd_verbs_channel_nonblock(qp->comp_channel->fd);
    if (rc)
        return rc;
    qp->cq = ibv_create_cq(ctx, cqe, qp, qp->comp_channel, 0);
    if (!qp->cq)
        return -(errno ? errno : ENOMEM);
    if ((rc = ibv_req_notify_cq(qp->cq, 0)) != 0)
        return -rc;
    memset(&init, 0, sizeof(init));
    init.send_cq = init.recv_cq = qp->cq;
    init.qp_type = IBV_QPT_RC;
    init.cap.max_send_wr = depth;
    init.cap.max_recv_wr = depth;
    init.cap.max_send_sge = qp->max_sge;
    init.cap.max_recv_sge = 1;
    if (rdma_create_qp(qp->id, qp->pd, &init))
        return -errno;
    rc = sd_verbs_ring_init(&qp->sq, init.cap.max_send_wr);
    if (!rc)
        rc = sd_verbs_ring_init(&qp->rq, init.cap.max_recv_wr);
    if (rc)
        return rc;
    qp->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    qp->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (qp->epoll_fd < 0 || qp->wake_fd < 0)
        return -errno;
    if ((rc = sd_verbs_epoll_watch(qp->epoll_fd, qp->comp_channel->fd)) ||
        (rc = sd_verbs_epoll_watch(qp->epoll_fd, qp->cm_channel->fd)) || (rc = sd_verbs_epoll_watch(qp->epoll_fd, qp->wake_fd)) ||
        (rc = sd_verbs_epoll_watch(qp->epoll_fd, ctx->async_fd)))
        return rc;
    return sd_verbs_async_watch(qp);
}

struct sd_qp *sd_verbs_qp_new(struct rdma_event_channel *ch, struct rdma_cm_id *id, int *err)
{
    struct sd_qp *qp = calloc(1, sizeof(*qp));

    if (!qp) {
        *err = -ENOMEM;
        return NULL;
    }
    qp->cm_channel = ch;
    qp->id = id;
    qp->state = SD_VERBS_QP_CONNECTING;
    qp->epoll_fd = qp->wake_fd = qp->flush_timer_fd = -1;
    *err = setup_qp(qp);
    if (*err) {
        sd_error("verbs: cannot create the RDMA queue pair: %s", strerror(-*err));
        release_qp_resources(qp);
        free(qp);
        return NULL;
    }
    id->context = qp;
    return qp;
}

void sd_verbs_destroy(struct sd_qp *qp)
{
    if (!qp)
        return;
    if (qp->state == SD_VERBS_QP_CONNECTED)
        rdma_disconnect(qp->id);
    release_qp_resources(qp);
    rdma_destroy_id(qp->id);
    rdma_destroy_event_channel(qp->cm_channel);
    free(qp);
}
