/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/soft/soft_ring.c — growable FIFO of fixed-size elements for the
 * provider's queues (send, receive, inbound/outbound Read, completions). */
#include "soft_qp.h"

#include <stdlib.h>
#include <string.h>

void sd_soft_ring_init(struct sd_soft_ring *r, size_t esize)
{
    *r = (struct sd_soft_ring){.esize = esize};
}

void *sd_soft_ring_at(const struct sd_soft_ring *r, size_t i)
{
    return r->buf + ((r->head + i) % r->cap) * r->esize;
}

void *sd_soft_ring_push(struct sd_soft_ring *r)
{
    if (r->count == r->cap) {
        size_t ncap = r->cap ? r->cap * 2 : 16;
        unsigned char *nb = malloc(ncap * r->esize);
        if (!nb)
            return NULL;
        for (size_t i = 0; i < r->count; i++)
            memcpy(nb + i * r->esize, sd_soft_ring_at(r, i), r->esize);
        free(r->buf);
        r->buf = nb;
        r->cap = ncap;
        r->head = 0;
    }
    r->count++;
    return sd_soft_ring_at(r, r->count - 1);
}

void sd_soft_ring_pop(struct sd_soft_ring *r)
{
    r->head = (r->head + 1) % r->cap;
    r->count--;
}

void sd_soft_ring_free(struct sd_soft_ring *r)
{
    free(r->buf);
    sd_soft_ring_init(r, r->esize);
}
