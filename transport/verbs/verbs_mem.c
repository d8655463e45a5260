/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/verbs/verbs_mem.c — memory registration on the connection's protection
 * domain with exactly the access rights asked for (ibv_reg_mr). */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "log.h"
#include "verbs_priv.h"

int sd_verbs_reg_mr(struct sd_qp *qp, void *base, size_t length, int access, struct sd_mr *mr)
{
    struct ibv_mr *m;
    int valid = SD_ACCESS_LOCAL_WRITE | SD_ACCESS_REMOTE_READ | SD_ACCESS_REMOTE_WRITE |
                SD_ACCESS_READ_SINK;
    int flags;

    if (!qp || !base || length == 0 || (access & ~valid))
        return -EINVAL;
    /* Exactly the rights asked for, and ibv_reg_mr grants remote write only with
     * local write: the caller must ask for both. */
    if ((access & SD_ACCESS_REMOTE_WRITE) && !(access & SD_ACCESS_LOCAL_WRITE))
        return -EINVAL;
    flags = sd_verbs_access_flags(access);
    if (access & SD_ACCESS_READ_SINK) /* RFC 5040 4.4: iWARP's Read Response is tagged */
        flags |= IBV_ACCESS_LOCAL_WRITE | (qp->iwarp ? IBV_ACCESS_REMOTE_WRITE : 0);
    m = ibv_reg_mr(qp->pd, base, length, flags);
    if (!m) {
        int e = errno ? errno : ENOMEM;

        sd_warn("verbs: ibv_reg_mr of %zu bytes (%zu already registered on this connection) "
                "failed: %s (the kernel pins registered memory against RLIMIT_MEMLOCK)",
                length, qp->mr_bytes, strerror(e));
        return -e;
    }
    qp->mr_bytes += length;
    sd_debug("verbs: registered %zu bytes, %zu on this connection", length, qp->mr_bytes);
    mr->base = base;
    mr->length = length;
    mr->lkey = m->lkey;
    mr->rkey = (access & (SD_ACCESS_REMOTE_READ | SD_ACCESS_REMOTE_WRITE)) ? m->rkey : 0;
    mr->addr = (uint64_t)(uintptr_t)base;
    mr->access = access;
    mr->priv = m;
    return 0;
}

int sd_verbs_dereg_mr(struct sd_qp *qp, struct sd_mr *mr)
{
    int rc;

    if (!mr || !mr->priv)
        return -EINVAL;
    rc = ibv_dereg_mr(mr->priv);
    if (rc)
        return -rc;
    qp->mr_bytes -= mr->length;
    mr->priv = NULL;
    mr->lkey = mr->rkey = 0;
    return 0;
}
