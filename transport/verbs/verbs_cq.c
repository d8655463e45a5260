/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/verbs/verbs_cq.c — completion polling: each verbs completion matched to the
 * request it ends (its ring slot), translated to an sd_wc (verbs_wc.c), a failed one
 * losing the connection; once a lost connection's requests have all flushed (or the
 * flush wait is over), one CONN_LOST (MS-SMBD 3.1.7.1). */
#include <string.h>

#include "log.h"
#include "verbs_priv.h"

/* Retires one completion; returns 1 when it is reported to the caller. */
static int take_completion(struct sd_qp *qp, const struct ibv_wc *in, struct sd_wc *out)
{
    int is_recv = (in->wr_id & SD_VERBS_RECV_TAG) != 0;
    uint32_t index = (uint32_t)in->wr_id;
    struct sd_verbs_ring *r = is_recv ? &qp->rq : &qp->sq;
    struct sd_verbs_wr wr;

    if (index >= r->size || !r->slot[index].busy) {
        sd_error("verbs: completion for unknown work request %#llx",
                 (unsigned long long)in->wr_id);
        sd_verbs_qp_set_lost(qp, SD_WC_FATAL, "provider returned an unknown completion");
        return 0;
    }
    wr = sd_verbs_ring_retire(r, index);
    if (in->status != IBV_WC_SUCCESS && in->status != IBV_WC_WR_FLUSH_ERR)
        sd_verbs_qp_lose_on_error(qp, in->status);
    if (in->status == IBV_WC_SUCCESS && !wr.signaled)
        return 0;
    sd_verbs_wc_fill(in, &wr, is_recv, out);
    return 1;
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
    if (qp->state == SD_VERBS_QP_FLUSHING && (qp->sq.count || qp->rq.count) &&
        sd_verbs_flush_wait_over(qp)) {
        sd_warn("verbs: %u send and %u receive requests never flushed within %d ms of the loss; "
                "reporting it without them", qp->sq.count, qp->rq.count, SD_VERBS_FLUSH_WAIT_MS);
        sd_verbs_ring_drop(&qp->sq);
        sd_verbs_ring_drop(&qp->rq);
    }
    /* MS-SMBD 3.1.7.1: after every request has flushed, report the loss once. */
    if (n < max && qp->state == SD_VERBS_QP_FLUSHING && qp->sq.count == 0 && qp->rq.count == 0) {
        memset(&wc[n], 0, sizeof(wc[n]));
        wc[n].opcode = SD_WC_CONN_LOST;
        wc[n].status = qp->lost_cause;
        sd_verbs_qp_enter(qp, SD_VERBS_QP_LOST);
        n++;
    }
    return n;
}
