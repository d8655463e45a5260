/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/verbs/verbs_wc.c — translation between rdma-core and provider.h terms:
 * ibv_wc -> sd_wc, and enum sd_access -> the minimal IBV_ACCESS_* flags. */
#include "verbs_priv.h"

enum sd_wc_status sd_verbs_wc_status(enum ibv_wc_status s)
{
    switch (s) {
    case IBV_WC_SUCCESS:
        return SD_WC_SUCCESS;
    case IBV_WC_WR_FLUSH_ERR:
        return SD_WC_FLUSHED;
    case IBV_WC_LOC_LEN_ERR:
        return SD_WC_LOCAL_LENGTH;
    case IBV_WC_LOC_PROT_ERR:
        return SD_WC_LOCAL_PROT;
    case IBV_WC_REM_ACCESS_ERR:
        return SD_WC_REMOTE_ACCESS;
    case IBV_WC_REM_INV_REQ_ERR:
    case IBV_WC_REM_OP_ERR:
    case IBV_WC_REM_ABORT_ERR:
    case IBV_WC_RNR_RETRY_EXC_ERR: /* the peer had no receive posted */
        return SD_WC_REMOTE_OP;
    default:
        return SD_WC_FATAL;
    }
}

void sd_verbs_wc_fill(const struct ibv_wc *in, const struct sd_verbs_wr *wr, int is_recv,
                      struct sd_wc *out)
{
    out->wr_id = wr->wr_id;
    /* ibv_wc.opcode is undefined on error completions: use what was posted. */
    out->opcode = is_recv ? SD_WC_RECV : wr->opcode;
    out->status = sd_verbs_wc_status(in->status);
    out->byte_len = (is_recv && in->status == IBV_WC_SUCCESS) ? in->byte_len : 0;
    out->with_invalidate =
        is_recv && in->status == IBV_WC_SUCCESS && (in->wc_flags & IBV_WC_WITH_INV) != 0;
    out->invalidated_rkey = out->with_invalidate ? in->invalidated_rkey : 0;
}

int sd_verbs_access_flags(int sd_access)
{
    int flags = 0;

    if (sd_access & SD_ACCESS_LOCAL_WRITE)
        flags |= IBV_ACCESS_LOCAL_WRITE;
    if (sd_access & SD_ACCESS_REMOTE_READ)
        flags |= IBV_ACCESS_REMOTE_READ;
    /* Verbs requires local write whenever remote write is granted. */
    if (sd_access & SD_ACCESS_REMOTE_WRITE)
        flags |= IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE;
    return flags;
}
