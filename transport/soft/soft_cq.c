/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/soft/soft_cq.c — the completion queue of a soft-iWARP connection. */
#include "soft_qp.h"
#include "log.h"


struct sd_wc *sd_soft_cq_push(struct sd_qp *qp, uint64_t wr_id, enum sd_wc_opcode op,
                              enum sd_wc_status status, uint32_t byte_len)
{
    struct sd_wc *wc = sd_soft_ring_push(&qp->cq);
    if (!wc) {
        /* Cannot happen short of memory exhaustion; the request is lost to the
         * caller, so say so loudly. */
        sd_error("soft-iWARP: out of memory queueing a completion (wr_id %llu)",
                 (unsigned long long)wr_id);
        return NULL;
    }
    *wc = (struct sd_wc){.wr_id = wr_id, .opcode = op, .status = status, .byte_len = byte_len};
    return wc;
}

int sd_soft_poll_cq(struct sd_qp *qp, struct sd_wc *wc, int max)
{
    int n = 0;
    while (n < max && qp->cq.count) {
        wc[n++] = *(struct sd_wc *)sd_soft_ring_at(&qp->cq, 0);
        sd_soft_ring_pop(&qp->cq);
    }
    return n;
}
