/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/verbs/verbs_post.c — posting to a verbs connection: Receive, Send (with
 * invalidate), RDMA Write and RDMA Read (on iWARP with a temporary sink registration),
 * each local SGE checked against its registration and remembered in its queue's ring
 * until its completion is polled. */
#include <errno.h>
#include <string.h>

#include "verbs_priv.h"

static int check_postable(struct sd_qp *qp)
{
    return sd_verbs_qp_lost(qp) ? -ENOTCONN : 0;
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
    slot = sd_verbs_ring_next(&qp->rq, &index);
    if (!slot)
        return -ENOBUFS;
    slot->wr_id = wr_id;
    slot->opcode = SD_WC_RECV;
    slot->signaled = 1;
    wr.wr_id = SD_VERBS_RECV_TAG | index;
    wr.sg_list = &s;
    wr.num_sge = 1;
    rc = ibv_post_recv(qp->id->qp, &wr, &bad);
    if (rc)
        return sd_verbs_post_refused(qp, "ibv_post_recv", rc);
    sd_verbs_ring_commit(&qp->rq, index);
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
        return sd_verbs_post_refused(qp, "ibv_post_send", rc);
    }
    sd_verbs_ring_commit(&qp->sq, index);
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
    slot = sd_verbs_ring_next(&qp->sq, &index);
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
    slot = sd_verbs_ring_next(&qp->sq, index);
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
