/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/smbd/smbd_conn_rdma.c — direct data placement for the upper layer: Register
 * and Deregister Buffer producing Buffer Descriptor V1 arrays (MS-SMBD 3.1.4.3,
 * 3.1.4.4), and RDMA Write/Read at an offset into a peer's descriptor array, split
 * across its elements (3.1.4.5, 3.1.4.6). */
#include "smbd_conn_int.h"

#include <errno.h>
#include <stdlib.h>

#include "log.h"

int smbd_conn_register_buffer(struct smbd_conn *c, void *buf, size_t len, int access,
                              struct smbd_registration **reg,
                              struct smbd_buffer_desc *descs, size_t max_descs, size_t *ndescs)
{
    size_t step, n;
    struct smbd_registration *r;
    int pa = 0, err;

    if (!smbd_conn_is_established(c))
        return -ENOTCONN;
    if (!buf || len == 0 || !(access & (SMBD_REG_PEER_READ | SMBD_REG_PEER_WRITE)) ||
        (access & ~(SMBD_REG_PEER_READ | SMBD_REG_PEER_WRITE)))
        return -EINVAL;
    step = c->neg.max_read_write_size;
    n = (len + step - 1) / step;
    if (n > max_descs)
        return -ENOSPC;
    /* 3.1.4.3: only the rights asked for (a peer RDMA Write needs local write too). */
    if (access & SMBD_REG_PEER_READ)
        pa |= SD_ACCESS_REMOTE_READ;
    if (access & SMBD_REG_PEER_WRITE)
        pa |= SD_ACCESS_REMOTE_WRITE | SD_ACCESS_LOCAL_WRITE;
    r = calloc(1, sizeof(*r));
    if (!r)
        return -ENOMEM;
    smbd_pin_make_room(c, len);
    err = smbd_reg(c, buf, len, pa, 1, &r->mr, &r->drawn);
    if (err) {
        free(r);
        return err;
    }
    r->next = c->regs;
    if (c->regs)
        c->regs->prev = r;
    c->regs = r;
    for (size_t i = 0; i < n; i++) {
        size_t off = i * step;

        descs[i].offset = r->mr.addr + off;
        descs[i].token = r->mr.rkey;
        descs[i].length = (uint32_t)(len - off < step ? len - off : step);
    }
    *ndescs = n;
    *reg = r;
    return 0;
}

int smbd_conn_deregister_buffer(struct smbd_conn *c, struct smbd_registration *reg)
{
    int err;

    if (reg->prev)
        reg->prev->next = reg->next;
    else
        c->regs = reg->next;
    if (reg->next)
        reg->next->prev = reg->prev;
    err = smbd_dereg(c, &reg->mr, reg->drawn);
    free(reg);
    return err;
}

static int op_alloc(struct smbd_conn *c, uint32_t *idx)
{
    uint32_t i;

    for (i = 0; i < c->rdma_ops_cap && c->rdma_ops[i]->in_use; i++)
        ;
    if (i == c->rdma_ops_cap) {
        uint32_t cap = c->rdma_ops_cap ? c->rdma_ops_cap * 2 : 8;
        struct smbd_rdma_op **ops = realloc(c->rdma_ops, cap * sizeof(*ops));

        if (!ops)
            return -ENOMEM;
        c->rdma_ops = ops;
        for (uint32_t k = c->rdma_ops_cap; k < cap; k++) {
            ops[k] = calloc(1, sizeof(**ops));
            if (!ops[k]) {
                c->rdma_ops_cap = k;
                return -ENOMEM;
            }
        }
        c->rdma_ops_cap = cap;
    }
    *idx = i;
    return 0;
}

static int wc_errno(enum sd_wc_status st)
{
    switch (st) {
    case SD_WC_SUCCESS: return 0;
    case SD_WC_FLUSHED: return -ECONNRESET;
    case SD_WC_REMOTE_ACCESS:
    case SD_WC_LOCAL_PROT: return -EACCES;
    default: return -EIO;
    }
}

static int rdma_op(struct smbd_conn *c, uint64_t cookie, void *local, size_t len,
                   const struct smbd_buffer_desc *descs, size_t ndescs, uint64_t offset,
                   int is_read)
{
    struct smbd_rdma_op *op;
    uint64_t total = 0;
    size_t i = 0, done = 0;
    uint32_t idx;
    int err;

    if (!smbd_conn_is_established(c))
        return -ENOTCONN;
    if (!local || len == 0)
        return -EINVAL;
    if (len > c->neg.max_read_write_size)
        return -EMSGSIZE;
    for (size_t k = 0; k < ndescs; k++)
        total += descs[k].length;
    if (offset > total || len > total - offset)
        return -EINVAL;
    /* 3.1.4.5/3.1.4.6: consume element lengths to find the first element. */
    while (offset >= descs[i].length) {
        offset -= descs[i].length;
        i++;
    }
    err = op_alloc(c, &idx);
    if (err)
        return err;
    op = c->rdma_ops[idx];
    smbd_pin_make_room(c, len);
    err = smbd_reg(c, local, len, is_read ? SD_ACCESS_LOCAL_WRITE | SD_ACCESS_READ_SINK : 0, 1,
                   &op->local_mr, &op->drawn);
    if (err)
        return err;
    op->in_use = 1;
    op->cookie = cookie;
    op->status = 0;
    op->outstanding = 0;
    for (; done < len; i++, offset = 0) {
        uint64_t piece = descs[i].length - offset;
        struct sd_sge sge = { .addr = (uint8_t *)local + done, .mr = &op->local_mr };
        uint64_t wr_id = (uint64_t)SMBD_WR_RDMA << SMBD_WR_KIND_SHIFT | idx;

        if (piece == 0)
            continue;
        if (piece > len - done)
            piece = len - done; /* leading part of the last element */
        sge.length = (uint32_t)piece;
        c->provider_requests++;
        err = is_read ? c->ops->post_read(c->qp, wr_id, &sge, descs[i].token, descs[i].offset + offset)
                      : c->ops->post_write(c->qp, wr_id, &sge, descs[i].token, descs[i].offset + offset);
        if (err)
            break;
        op->outstanding++;
        done += piece;
    }
    if (!err)
        return 0;
    if (op->outstanding == 0) {
        smbd_dereg(c, &op->local_mr, op->drawn);
        op->in_use = 0;
        return err;
    }
    /* Part is in flight: its completions report the failure through rdma_done. */
    op->status = err;
    smbd_terminate(c, -ECONNRESET, "posting an RDMA %s failed: %d", is_read ? "Read" : "Write", err);
    return 0;
}

int smbd_conn_rdma_write(struct smbd_conn *c, uint64_t cookie, const void *local, size_t len,
                         const struct smbd_buffer_desc *descs, size_t ndescs, uint64_t offset)
{
    return rdma_op(c, cookie, (void *)(uintptr_t)local, len, descs, ndescs, offset, 0);
}

int smbd_conn_rdma_read(struct smbd_conn *c, uint64_t cookie, void *local, size_t len,
                        const struct smbd_buffer_desc *descs, size_t ndescs, uint64_t offset)
{
    return rdma_op(c, cookie, local, len, descs, ndescs, offset, 1);
}

void smbd_on_rdma_done(struct smbd_conn *c, const struct sd_wc *wc)
{
    uint64_t idx = wc->wr_id & SMBD_WR_INDEX_MASK;
    struct smbd_rdma_op *op;
    int st = wc_errno(wc->status);

    if (idx >= c->rdma_ops_cap || !c->rdma_ops[idx]->in_use || !c->rdma_ops[idx]->outstanding) {
        sd_warn("smbd: ignoring a completion for RDMA operation %llu that is not running",
                (unsigned long long)idx);
        return;
    }
    op = c->rdma_ops[idx];
    if (st && !op->status)
        op->status = st;
    if (--op->outstanding == 0) {
        smbd_dereg(c, &op->local_mr, op->drawn);
        op->in_use = 0;
        if (c->upper.rdma_done)
            c->upper.rdma_done(c->ctx, op->cookie, op->status);
    }
    if (st && smbd_is_live(c))
        smbd_terminate(c, -ECONNRESET, "an RDMA %s failed: %s",
                       wc->opcode == SD_WC_RDMA_READ ? "Read" : "Write",
                       sd_wc_status_str(wc->status));
}

void smbd_rdma_free_all(struct smbd_conn *c)
{
    for (uint32_t i = 0; i < c->rdma_ops_cap; i++) {
        if (c->rdma_ops[i]->in_use)
            smbd_dereg(c, &c->rdma_ops[i]->local_mr, c->rdma_ops[i]->drawn);
        free(c->rdma_ops[i]);
    }
    free(c->rdma_ops);
    c->rdma_ops = NULL;
    c->rdma_ops_cap = 0;
    while (c->regs)
        smbd_conn_deregister_buffer(c, c->regs);
}
