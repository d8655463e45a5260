/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/verbs/verbs_qp.c — one RC connection over rdma-core: QP, CQ and completion
 * channel, posting Send (with invalidate), Receive, RDMA Write and Read, the event-loop
 * fd (epoll over the completion channel, the CM channel and a wake-up eventfd),
 * completion polling and connection loss (flush, then one CONN_LOST; MS-SMBD 3.1.7.1). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "log.h"
#include "verbs_priv.h"

#define LINK_SETTLE_MS      200 /* the most a failed request waits for its port's event */
#define LINK_SETTLE_STEP_MS 20

#define RECV_TAG (1ull << 32) /* ibv wr_id = ring slot, plus this bit on the RQ */

static int ring_init(struct sd_verbs_ring *r, uint32_t size)
{
    r->slot = calloc(size, sizeof(*r->slot));
    r->size = size;
    r->head = r->span = r->count = 0;
    return r->slot ? 0 : -ENOMEM;
}

/* The slot the next posted request will use, or NULL when the queue is full. The
 * slot is committed by ring_commit once the request is posted. */
static struct sd_verbs_wr *ring_next(struct sd_verbs_ring *r, uint32_t *index)
{
    if (r->span == r->size)
        return NULL;
    *index = (r->head + r->span) % r->size;
    memset(&r->slot[*index], 0, sizeof(r->slot[*index]));
    return &r->slot[*index];
}

static void ring_commit(struct sd_verbs_ring *r, uint32_t index)
{
    r->slot[index].busy = 1;
    r->span++;
    r->count++;
}

/* Retires the request in slot index (which must be busy); returns a copy of it. */
static struct sd_verbs_wr ring_retire(struct sd_verbs_ring *r, uint32_t index)
{
    struct sd_verbs_wr wr = r->slot[index];

    r->slot[index].busy = 0;
    r->count--;
    while (r->span && !r->slot[r->head].busy) {
        r->head = (r->head + 1) % r->size;
        r->span--;
    }
    return wr;
}

static void wake(struct sd_qp *qp)
{
    if (eventfd_write(qp->wake_fd, 1) < 0 && errno != EAGAIN)
        sd_warn("verbs: eventfd write failed: %s", strerror(errno));
}

static int watch(int epfd, int fd);

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
        watch(qp->epoll_fd, qp->flush_timer_fd) < 0)
        sd_debug("verbs: no flush timer: %s", strerror(errno));
}

/* Whether the flush wait is over (the timer fired). */
static int flush_wait_over(struct sd_qp *qp)
{
    uint64_t n;

    return qp->flush_timer_fd >= 0 && read(qp->flush_timer_fd, &n, sizeof(n)) == sizeof(n);
}

void sd_verbs_qp_set_lost(struct sd_qp *qp, enum sd_wc_status cause, const char *why)
{
    struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };

    if (qp->lost)
        return;
    qp->lost = 1;
    qp->lost_cause = cause;
    if (cause == SD_WC_FLUSHED)
        sd_info("verbs: connection lost: %s", why);
    else
        sd_warn("verbs: connection lost: %s", why);
    /* Tell the peer at once: on InfiniBand/RoCE a failed request (e.g. a Send the
     * peer had no receive for) breaks only our QP, the peer would never notice. */
    if (qp->connected && rdma_disconnect(qp->id))
        sd_debug("verbs: rdma_disconnect: %s", strerror(errno));
    qp->connected = 0;
    /* The error state flushes every outstanding request (IBTA 10.3.1). */
    if (qp->id && qp->id->qp && ibv_modify_qp(qp->id->qp, &attr, IBV_QP_STATE))
        sd_warn("verbs: moving the QP to error failed: %s", strerror(errno));
    arm_flush_timer(qp);
    wake(qp);
}

static int watch(int epfd, int fd)
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
    rc = ring_init(&qp->sq, init.cap.max_send_wr);
    if (!rc)
        rc = ring_init(&qp->rq, init.cap.max_recv_wr);
    if (rc)
        return rc;
    qp->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    qp->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (qp->epoll_fd < 0 || qp->wake_fd < 0)
        return -errno;
    if ((rc = watch(qp->epoll_fd, qp->comp_channel->fd)) ||
        (rc = watch(qp->epoll_fd, qp->cm_channel->fd)) || (rc = watch(qp->epoll_fd, qp->wake_fd)) ||
        (rc = watch(qp->epoll_fd, ctx->async_fd)))
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

static int check_postable(struct sd_qp *qp)
{
    return qp->lost ? -ENOTCONN : 0;
}

/* provider.h: a local SGE must lie inside its registration; refused at post time
 * instead of breaking the connection with a local protection error. */
static int to_ibv_sge(const struct sd_sge *in, struct ibv_sge *out)
{
    const uint8_t *base, *p;

    if (!in || !in->mr || !in->mr->priv)
        return -EINVAL;
    base = in->mr->base;
    p = in->addr;
    if (p < base || (size_t)(p - base) > in->mr->length ||
        in->length > in->mr->length - (size_t)(p - base))
        return -EINVAL;
    out->addr = (uint64_t)(uintptr_t)in->addr;
    out->length = in->length;
    out->lkey = in->mr->lkey;
    return 0;
}

int sd_verbs_post_recv(struct sd_qp *qp, uint64_t wr_id, const struct sd_sge *sge)
{
    struct ibv_recv_wr wr = { 0 }, *bad;
    struct ibv_sge s;
    struct sd_verbs_wr *slot;
    uint32_t index;
    int rc = check_postable(qp);

    if (!rc)
        rc = to_ibv_sge(sge, &s);
    if (!rc && !(sge->mr->access & SD_ACCESS_LOCAL_WRITE))
        rc = -EINVAL; /* a receive buffer must be locally writable */
    if (rc)
        return rc;
    slot = ring_next(&qp->rq, &index);
    if (!slot)
        return -ENOBUFS;
    slot->wr_id = wr_id;
    slot->opcode = SD_WC_RECV;
    slot->signaled = 1;
    wr.wr_id = RECV_TAG | index;
    wr.sg_list = &s;
    wr.num_sge = 1;
    rc = ibv_post_recv(qp->id->qp, &wr, &bad);
    if (rc)
        return -rc;
    ring_commit(&qp->rq, index);
    return 0;
}

/* Posts one send-queue request; every one is signaled so it is accounted for. */
static int post_sq(struct sd_qp *qp, struct ibv_send_wr *wr, struct sd_verbs_wr *slot,
                   uint32_t index)
{
    struct ibv_send_wr *bad;
    int rc;

    wr->wr_id = index;
    wr->send_flags |= IBV_SEND_SIGNALED;
    rc = ibv_post_send(qp->id->qp, wr, &bad);
    if (rc) {
        if (slot->read_sink_mr)
            ibv_dereg_mr(slot->read_sink_mr);
        return -rc;
    }
    ring_commit(&qp->sq, index);
    return 0;
}

int sd_verbs_post_send(struct sd_qp *qp, uint64_t wr_id, const struct sd_sge *sge, int nsge,
                       uint32_t invalidate_rkey, int signaled)
{
    struct ibv_send_wr wr = { 0 };
    struct ibv_sge s[SD_VERBS_MAX_SGE];
    struct sd_verbs_wr *slot;
    uint32_t index;
    int rc = check_postable(qp);

    if (rc)
        return rc;
    if (nsge < 1 || (uint32_t)nsge > qp->max_sge)
        return -EINVAL;
    for (int i = 0; i < nsge; i++)
        if ((rc = to_ibv_sge(&sge[i], &s[i])) != 0)
            return rc;
    slot = ring_next(&qp->sq, &index);
    if (!slot)
        return -ENOBUFS;
    slot->wr_id = wr_id;
    slot->opcode = SD_WC_SEND;
    slot->signaled = signaled;
    wr.sg_list = s;
    wr.num_sge = nsge;
    if (invalidate_rkey) {
        wr.opcode = IBV_WR_SEND_WITH_INV; /* MS-SMBD 3.1.4.2 / SMB2 RDMA_V1_INVALIDATE */
        wr.invalidate_rkey = invalidate_rkey;
        /* rdma-core's siw provider (libsiw) takes the STag it sends from wr.rdma.rkey
         * for every opcode, never from invalidate_rkey: without this the Send carries
         * STag 0 and a kernel siw peer Terminates. Other providers read invalidate_rkey
         * and ignore wr.rdma for a Send. */
        wr.wr.rdma.rkey = invalidate_rkey;
    } else {
        wr.opcode = IBV_WR_SEND;
    }
    return post_sq(qp, &wr, slot, index);
}

/* Claims a send-queue slot for a one-SGE RDMA Write or Read and fills wr for it. */
static struct sd_verbs_wr *rdma_slot(struct sd_qp *qp, uint64_t wr_id, enum sd_wc_opcode op,
                                     const struct sd_sge *local, uint32_t rkey, uint64_t raddr,
                                     struct ibv_send_wr *wr, struct ibv_sge *s, uint32_t *index,
                                     int *rc)
{
    struct sd_verbs_wr *slot;

    *rc = check_postable(qp);
    if (!*rc)
        *rc = to_ibv_sge(local, s);
    if (*rc)
        return NULL;
    slot = ring_next(&qp->sq, index);
    if (!slot) {
        *rc = -ENOBUFS;
        return NULL;
    }
    slot->wr_id = wr_id;
    slot->opcode = op;
    slot->signaled = 1;
    memset(wr, 0, sizeof(*wr));
    wr->opcode = op == SD_WC_RDMA_WRITE ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ;
    wr->sg_list = s;
    wr->num_sge = 1;
    wr->wr.rdma.rkey = rkey;
    wr->wr.rdma.remote_addr = raddr;
    return slot;
}

int sd_verbs_post_write(struct sd_qp *qp, uint64_t wr_id, const struct sd_sge *local,
                        uint32_t rkey, uint64_t raddr)
{
    struct ibv_send_wr wr;
    struct ibv_sge s;
    uint32_t index;
    int rc;
    struct sd_verbs_wr *slot = rdma_slot(qp, wr_id, SD_WC_RDMA_WRITE, local, rkey, raddr,
                                         &wr, &s, &index, &rc);

    return slot ? post_sq(qp, &wr, slot, index) : rc;
}

int sd_verbs_post_read(struct sd_qp *qp, uint64_t wr_id, const struct sd_sge *local,
                       uint32_t rkey, uint64_t raddr)
{
    struct ibv_send_wr wr;
    struct ibv_sge s;
    uint32_t index;
    int rc;
    struct sd_verbs_wr *slot = rdma_slot(qp, wr_id, SD_WC_RDMA_READ, local, rkey, raddr,
                                         &wr, &s, &index, &rc);

    if (!slot)
        return rc;
    /* RFC 5040 4.4: on iWARP the Read Response is a tagged write into the sink STag,
     * so the sink needs remote write; grant it only to this range, only meanwhile. */
    if (qp->iwarp && !(local->mr->access & (SD_ACCESS_REMOTE_WRITE | SD_ACCESS_READ_SINK))) {
        slot->read_sink_mr = ibv_reg_mr(qp->pd, local->addr, local->length,
                                        IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
        if (!slot->read_sink_mr)
            return -(errno ? errno : ENOMEM);
        s.lkey = slot->read_sink_mr->lkey;
    }
    return post_sq(qp, &wr, slot, index);
}

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

/* Statuses a link gone down produces before its PORT_ERR (rxe: a send to a netdev going
 * down fails as a local QP operation error). */
static int may_be_link(enum ibv_wc_status s)
{
    return s == IBV_WC_LOC_QP_OP_ERR || s == IBV_WC_RETRY_EXC_ERR || s == IBV_WC_FATAL_ERR ||
           s == IBV_WC_GENERAL_ERR;
}

/* A request failed. A port or device event names the loss (it often trails the first
 * failed request: a network link gone down; for a status a link can cause, it is awaited
 * up to LINK_SETTLE_MS, once per lost connection); else the loss takes the request's
 * status, with the port's state when the port is not up. */
static void lose_on_error(struct sd_qp *qp, enum ibv_wc_status status)
{
    struct ibv_port_attr port;
    char why[160];
    int up = 1;

    for (int waited = 0;; waited += LINK_SETTLE_STEP_MS) {
        sd_verbs_async_progress(qp, 1);
        if (qp->lost)
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

/* Retires one completion; returns 1 when it is reported to the caller. */
/* ring_retire, and the request's temporary iWARP read sink deregistered. */
static struct sd_verbs_wr retire(struct sd_verbs_ring *r, uint32_t index)
{
    struct sd_verbs_wr wr = ring_retire(r, index);

    if (wr.read_sink_mr)
        ibv_dereg_mr(wr.read_sink_mr);
    return wr;
}

static int take_completion(struct sd_qp *qp, const struct ibv_wc *in, struct sd_wc *out)
{
    int is_recv = (in->wr_id & RECV_TAG) != 0;
    uint32_t index = (uint32_t)in->wr_id;
    struct sd_verbs_ring *r = is_recv ? &qp->rq : &qp->sq;
    struct sd_verbs_wr wr;

    if (index >= r->size || !r->slot[index].busy) {
        sd_error("verbs: completion for unknown work request %#llx",
                 (unsigned long long)in->wr_id);
        sd_verbs_qp_set_lost(qp, SD_WC_FATAL, "provider returned an unknown completion");
        return 0;
    }
    wr = retire(r, index);
    if (in->status != IBV_WC_SUCCESS && in->status != IBV_WC_WR_FLUSH_ERR)
        lose_on_error(qp, in->status);
    if (in->status == IBV_WC_SUCCESS && !wr.signaled)
        return 0;
    sd_verbs_wc_fill(in, &wr, is_recv, out);
    return 1;
}

static void drop_unflushed(struct sd_verbs_ring *r)
{
    for (uint32_t i = 0; i < r->size && r->count; i++)
        if (r->slot[i].busy)
            retire(r, i);
}

int sd_verbs_poll_cq(struct sd_qp *qp, struct sd_wc *wc, int max)
{
    struct ibv_wc batch[16];
    int n = 0;

    while (n < max) {
        int want = max - n < 16 ? max - n : 16;
        int got = ibv_poll_cq(qp->cq, want, batch);

        if (got < 0) {
            sd_verbs_qp_set_lost(qp, SD_WC_FATAL, "ibv_poll_cq failed");
            break;
        }
        for (int i = 0; i < got; i++)
            n += take_completion(qp, &batch[i], &wc[n]);
        if (got < want)
            break;
    }
    /* Requests the device never flushed: dropped (their temporary sinks deregistered). */
    if (qp->lost && !qp->lost_reported && (qp->sq.count || qp->rq.count) && flush_wait_over(qp)) {
        sd_warn("verbs: %u send and %u receive requests never flushed within %d ms of the loss; "
                "reporting it without them", qp->sq.count, qp->rq.count, SD_VERBS_FLUSH_WAIT_MS);
        drop_unflushed(&qp->sq);
        drop_unflushed(&qp->rq);
    }
    /* MS-SMBD 3.1.7.1: after every request has flushed, report the loss once. */
    if (n < max && qp->lost && !qp->lost_reported && qp->sq.count == 0 && qp->rq.count == 0) {
        memset(&wc[n], 0, sizeof(wc[n]));
        wc[n].opcode = SD_WC_CONN_LOST;
        wc[n].status = qp->lost_cause;
        qp->lost_reported = 1;
        n++;
    }
    return n;
}

void sd_verbs_disconnect(struct sd_qp *qp)
{
    sd_verbs_qp_set_lost(qp, SD_WC_FLUSHED, "local disconnect");
}

void sd_verbs_destroy(struct sd_qp *qp)
{
    if (!qp)
        return;
    if (qp->connected)
        rdma_disconnect(qp->id);
    release_qp_resources(qp);
    rdma_destroy_id(qp->id);
    rdma_destroy_event_channel(qp->cm_channel);
    free(qp);
}
