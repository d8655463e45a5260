/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/soft/soft_mem.c — memory registration and the STag table: every tagged
 * access is checked for a valid STag, bounds and access rights (RFC 5040 6.4,
 * RFC 5042 5.3), and a Send with Invalidate can revoke an STag (RFC 5040 6.3.1). */
#include "soft_qp.h"

#include <errno.h>
#include <stdlib.h>

#include "log.h"

/* STag = (slot index + 1) << 8 | 8-bit key; the key changes on every reuse of a slot
 * so a stale STag never reaches a newer registration (RFC 5040 6.4: STag Key). */
#define STAG_INDEX(stag) (((stag) >> 8) - 1)

static struct sd_soft_region *lookup(const struct sd_soft_mem *m, uint32_t stag)
{
    if ((stag >> 8) == 0 || STAG_INDEX(stag) >= m->n)
        return NULL;
    struct sd_soft_region *r = &m->r[STAG_INDEX(stag)];
    return r->stag == stag && r->valid ? r : NULL;
}

enum sd_soft_mem_check sd_soft_mem_check(const struct sd_soft_mem *m, uint32_t stag,
                                         uint64_t to, uint32_t len, int access,
                                         uint8_t **where)
{
    const struct sd_soft_region *r = lookup(m, stag);
    if (!r || !(r->access & (SD_ACCESS_REMOTE_READ | SD_ACCESS_REMOTE_WRITE)))
        return SD_SOFT_MEM_BAD_STAG;
    if ((r->access & access) != access)
        return SD_SOFT_MEM_RIGHTS;
    if (to < r->addr || len > r->length || to - r->addr > r->length - len)
        return SD_SOFT_MEM_BOUNDS;
    *where = r->base + (to - r->addr);
    return SD_SOFT_MEM_OK;
}

int sd_soft_mem_check_local(const struct sd_soft_mem *m, const struct sd_sge *sge, int access)
{
    if (!sge || !sge->mr || (!sge->addr && sge->length))
        return -EINVAL;
    const struct sd_soft_region *r = lookup(m, sge->mr->lkey);
    if (!r || (r->access & access) != access)
        return -EINVAL;
    uintptr_t a = (uintptr_t)sge->addr, b = (uintptr_t)r->base;
    if (sge->length && (a < b || sge->length > r->length || a - b > r->length - sge->length))
        return -EINVAL;
    return 0;
}

int sd_soft_mem_invalidate(struct sd_soft_mem *m, uint32_t stag)
{
    struct sd_soft_region *r = lookup(m, stag);
    if (!r || !(r->access & (SD_ACCESS_REMOTE_READ | SD_ACCESS_REMOTE_WRITE)))
        return -1;
    r->valid = 0;
    return 0;
}

void sd_soft_mem_free(struct sd_soft_mem *m)
{
    free(m->r);
    *m = (struct sd_soft_mem){0};
}

int sd_soft_reg_mr(struct sd_qp *qp, void *base, size_t length, int access, struct sd_mr *mr)
{
    struct sd_soft_mem *m = &qp->mem;
    const int all = SD_ACCESS_LOCAL_WRITE | SD_ACCESS_REMOTE_READ | SD_ACCESS_REMOTE_WRITE |
                    SD_ACCESS_READ_SINK; /* a sink needs nothing more here (soft_rx places) */
    /* As verbs: remote write needs local write; lengths fit the 32-bit SGE length. */
    if (!mr || (!base && length) || (access & ~all) || length > UINT32_MAX ||
        ((access & SD_ACCESS_REMOTE_WRITE) && !(access & SD_ACCESS_LOCAL_WRITE)))
        return -EINVAL;
    size_t i = 0;
    while (i < m->n && m->r[i].stag)
        i++;
    if (i == m->n) {
        if (m->n == 0xffffff)
            return -ENOMEM;
        if (m->n == m->cap) {
            size_t ncap = m->cap ? m->cap * 2 : 64;
            struct sd_soft_region *nr = realloc(m->r, ncap * sizeof(*nr));
            if (!nr)
                return -ENOMEM;
            m->r = nr;
            m->cap = ncap;
        }
        m->r[m->n++] = (struct sd_soft_region){0};
    }
    uint32_t stag = (uint32_t)(i + 1) << 8 | m->next_key++;
    m->r[i] = (struct sd_soft_region){.base = base, .length = length, .addr = (uintptr_t)base,
                                      .stag = stag, .access = access, .valid = 1};
    *mr = (struct sd_mr){.base = base, .length = length, .lkey = stag, .addr = (uintptr_t)base,
                         .access = access};
    if (access & (SD_ACCESS_REMOTE_READ | SD_ACCESS_REMOTE_WRITE))
        mr->rkey = stag;
    return 0;
}

int sd_soft_dereg_mr(struct sd_qp *qp, struct sd_mr *mr)
{
    struct sd_soft_mem *m = &qp->mem;
    if (!mr || (mr->lkey >> 8) == 0 || STAG_INDEX(mr->lkey) >= m->n ||
        m->r[STAG_INDEX(mr->lkey)].stag != mr->lkey)
        return -EINVAL;
    struct sd_soft_region *r = &m->r[STAG_INDEX(mr->lkey)];
    /* Whoever deregisters may free the memory next, so nothing may touch it after this
     * call: RDMA in flight that still uses it ends with the connection (as a verbs QP goes
     * to its error state), a partly written FPDU finished from a copy. */
    enum sd_soft_use rx = SD_SOFT_UNUSED, tx = SD_SOFT_UNUSED;
    if (sd_soft_qp_up(qp)) { /* a failed connection touches nothing any more */
        rx = sd_soft_rx_uses(qp, r->base, r->length);
        tx = sd_soft_tx_uses(qp, r->base, r->length, r->stag);
    }
    if (rx == SD_SOFT_USED_BY_PEER || tx == SD_SOFT_USED_BY_PEER) {
        /* The peer's Write into it or Read of it fails: a Terminate says so (RFC 5040 4.8). */
        sd_warn("soft-iWARP: STag 0x%08x was revoked while the peer was %s it", r->stag,
                rx == SD_SOFT_USED_BY_PEER ? "writing" : "reading");
        sd_soft_qp_terminate(qp, TERM_LAYER_RDMAP, RDMAP_ETYPE_CATASTROPHIC,
                             RDMAP_ECODE_UNSPECIFIED, SD_WC_LOCAL_PROT, SD_SOFT_BLAME_NONE);
    } else if (rx || tx) {
        /* Our own requests: an owner tearing a live connection down (smbd_conn_free
         * before the provider's destroy) comes here with its receives still posted. */
        sd_debug("soft-iWARP: memory of STag 0x%08x (%zu bytes) deregistered while requests "
                 "in flight still use it: the connection fails", r->stag, r->length);
        sd_soft_qp_fail(qp, SD_WC_LOCAL_PROT, SD_SOFT_BLAME_NONE);
    }
    *r = (struct sd_soft_region){0};
    return 0;
}
