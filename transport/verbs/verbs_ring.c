/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/verbs/verbs_ring.c — the work requests of one queue, remembered from their
 * post until their completion is polled (struct sd_verbs_ring in verbs_priv.h): slots
 * taken in ring order, retired in any order, a retired RDMA Read's temporary iWARP sink
 * deregistered. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "verbs_priv.h"

int sd_verbs_ring_init(struct sd_verbs_ring *r, uint32_t size)
{
    r->slot = calloc(size, sizeof(*r->slot));
    r->size = size;
    r->head = r->span = r->count = 0;
    return r->slot ? 0 : -ENOMEM;
}

struct sd_verbs_wr *sd_verbs_ring_next(struct sd_verbs_ring *r, uint32_t *index)
{
    if (r->span == r->size)
        return NULL;
    *index = (r->head + r->span) % r->size;
    memset(&r->slot[*index], 0, sizeof(r->slot[*index]));
    return &r->slot[*index];
}

void sd_verbs_ring_commit(struct sd_verbs_ring *r, uint32_t index)
{
    r->slot[index].busy = 1;
    r->span++;
    r->count++;
}

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

struct sd_verbs_wr sd_verbs_ring_retire(struct sd_verbs_ring *r, uint32_t index)
{
    struct sd_verbs_wr wr = ring_retire(r, index);

    if (wr.read_sink_mr)
        ibv_dereg_mr(wr.read_sink_mr);
    return wr;
}

void sd_verbs_ring_drop(struct sd_verbs_ring *r)
{
    for (uint32_t i = 0; i < r->size && r->count; i++)
        if (r->slot[i].busy)
            sd_verbs_ring_retire(r, i);
}
