/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/smbd/smbd_send_pool.c — the per-connection pool of registered send buffers
 * ("slots", one MS-SMBD message each). A connection starts with one slot, for its
 * Negotiate Request or Response; once negotiated it registers its base chunk at the
 * negotiated MaxSendSize and keeps it; under load further chunks are added and freed
 * again once unused for SMBD_POOL_SHRINK_MS, so an idle connection holds only its base
 * chunk. */
#include "smbd_conn_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "sd_pinned.h"
#include "smbd_memplan.h"

void smbd_fifo_push(struct smbd_fifo *q, struct smbd_send_slot *s)
{
    s->next = NULL;
    if (q->tail)
        q->tail->next = s;
    else
        q->head = s;
    q->tail = s;
}

struct smbd_send_slot *smbd_fifo_pop(struct smbd_fifo *q)
{
    struct smbd_send_slot *s = q->head;

    if (s) {
        q->head = s->next;
        if (!q->head)
            q->tail = NULL;
        s->next = NULL;
    }
    return s;
}

static void chunk_free(struct smbd_conn *c, struct smbd_send_chunk *ch)
{
    if (ch->registered)
        smbd_dereg(c, &ch->mr, ch->drawn);
    free(ch->mem);
    free(ch->slots);
    free(ch);
}

/* Takes ch out of the pool and frees it. */
static void unlink_free(struct smbd_conn *c, struct smbd_send_chunk *ch)
{
    struct smbd_send_chunk **pp = &c->chunks;

    while (*pp != ch)
        pp = &(*pp)->next;
    *pp = ch->next;
    c->slots_free -= ch->nslots - ch->used;
    chunk_free(c, ch);
}

/* A chunk of nslots slots of c->send_buf_size bytes, last in the list. */
static int chunk_add(struct smbd_conn *c, uint32_t nslots)
{
    struct smbd_send_chunk *ch = calloc(1, sizeof(*ch)), **tail;
    size_t bytes = (size_t)nslots * c->send_buf_size;
    int err;

    if (!ch)
        return -ENOMEM;
    ch->mem = aligned_alloc(64, bytes);
    ch->slots = calloc(nslots, sizeof(*ch->slots));
    if (!ch->mem || !ch->slots) {
        chunk_free(c, ch);
        return -ENOMEM;
    }
    /* The base chunk, and an extra one serving a burst of sends, may use the reserve. */
    err = smbd_reg(c, ch->mem, bytes, SD_ACCESS_LOCAL_WRITE, 1, &ch->mr, &ch->drawn);
    if (err) {
        chunk_free(c, ch);
        sd_debug("smbd: cannot register %zu more bytes of send buffers: %s", bytes,
                 strerror(-err));
        return err;
    }
    ch->registered = 1;
    ch->nslots = nslots;
    for (uint32_t i = nslots; i-- > 0;) {
        ch->slots[i].buf = ch->mem + (size_t)i * c->send_buf_size;
        ch->slots[i].chunk = ch;
        ch->slots[i].next = ch->free;
        ch->free = &ch->slots[i];
    }
    for (tail = &c->chunks; *tail; tail = &(*tail)->next)
        ;
    *tail = ch;
    c->slots_free += nslots;
    return 0;
}

static uint32_t base_slots(const struct smbd_conn *c)
{
    return smbd_send_base_slots(&c->cfg, c->neg.max_send_size);
}

size_t smbd_conn_send_capacity(const struct smbd_conn *c)
{
    /* the reserve holds this many more send buffers (less sd_pinned_cost_len's two pages
     * of slack) */
    size_t slack = 2 * sd_pinned_page();
    size_t extra = c->pin_reserve > slack ? (c->pin_reserve - slack) / c->send_buf_size : 0;

    if (!c->chunks || c->neg.max_send_size <= SMBD_DATA_OFFSET)
        return 0;
    return ((size_t)c->chunks->nslots + extra) * (c->neg.max_send_size - SMBD_DATA_OFFSET);
}

/* Before negotiating, either role sends exactly one message (MS-SMBD 3.1.5.2, 3.1.5.6). */
int smbd_send_pool_init(struct smbd_conn *c)
{
    c->send_buf_size = smbd_send_stride(&c->cfg);
    return chunk_add(c, 1);
}

int smbd_send_pool_rebase(struct smbd_conn *c)
{
    struct smbd_send_chunk *first = c->chunks; /* the negotiate message's */
    int err;

    /* Send buffers hold the negotiated size from now on, not the configured one
     * (ksmbd's and Windows' 1364-byte receives against 8136: six times fewer pinned
     * bytes per buffer). */
    if (smbd_stride_for(c->neg.max_send_size) < c->send_buf_size)
        c->send_buf_size = smbd_stride_for(c->neg.max_send_size);
    /* The new chunk is the base, first in the list, added to an empty one. */
    c->chunks = NULL;
    err = chunk_add(c, base_slots(c));
    if (err) {
        c->chunks = first;
        return err;
    }
    c->chunks->next = first;
    smbd_pin_settle_reserve(c, c->chunks->drawn);
    c->chunks->drawn = 0;
    /* The negotiate message's chunk is freed now if its slot is back, else as soon as it
     * is (smbd_slot_put); what it drew goes back to the reserve. */
    if (first->used)
        c->retired = first;
    else
        unlink_free(c, first);
    return 0;
}

void smbd_send_pool_free(struct smbd_conn *c)
{
    /* Slots still queued or posted may hold callers' memory (smbd_slot_put gives it back). */
    smbd_fifo_release(c, &c->send_queue);
    smbd_fifo_release(c, &c->in_flight);
    while (c->chunks) {
        struct smbd_send_chunk *ch = c->chunks;

        c->chunks = ch->next;
        chunk_free(c, ch);
    }
    c->retired = NULL;
    c->slots_free = 0;
}

int smbd_send_pool_reserve(struct smbd_conn *c, uint32_t nslots, uint64_t now_ms)
{
    while (c->slots_free < nslots) {
        uint32_t want = nslots - c->slots_free;
        int err = chunk_add(c, want > base_slots(c) ? want : base_slots(c));

        /* Near RLIMIT_MEMLOCK a chunk of just the slots missing may still fit. */
        if (err == -ENOMEM && want < base_slots(c))
            err = chunk_add(c, want);
        if (err)
            return err;
        c->pool_extra_used_ms = now_ms;
    }
    return 0;
}

struct smbd_send_slot *smbd_slot_get(struct smbd_conn *c, uint64_t now_ms)
{
    struct smbd_send_chunk *ch;
    struct smbd_send_slot *s;

    if (smbd_send_pool_reserve(c, 1, now_ms))
        return NULL;
    for (ch = c->chunks; !ch->free; ch = ch->next)
        ;
    s = ch->free;
    ch->free = s->next;
    s->next = NULL;
    s->invalidate = 0;
    ch->used++;
    c->slots_free--;
    if (ch != c->chunks)
        c->pool_extra_used_ms = now_ms;
    return s;
}

void smbd_fifo_release(struct smbd_conn *c, struct smbd_fifo *q)
{
    struct smbd_send_slot *s;

    while ((s = smbd_fifo_pop(q)) != NULL)
        smbd_slot_put(c, s);
}

void smbd_owned_put(struct smbd_conn *c, struct smbd_owned_msg *m)
{
    if (--m->refs > 0)
        return;
    smbd_dereg(c, &m->mr, 0);
    m->release(m->alloc, m->cap);
    free(m);
}

void smbd_slot_put(struct smbd_conn *c, struct smbd_send_slot *s)
{
    struct smbd_send_chunk *ch = s->chunk;

    if (s->owned) /* a fragment sent from the caller's memory is done with */
        smbd_owned_put(c, s->owned);
    s->owned = NULL;
    s->ext = NULL;

    s->next = ch->free;
    ch->free = s;
    ch->used--;
    c->slots_free++;
    if (ch == c->retired && ch->used == 0) {
        c->retired = NULL;
        unlink_free(c, ch);
    }
}

static int has_free_extra_chunk(const struct smbd_conn *c)
{
    for (const struct smbd_send_chunk *ch = c->chunks ? c->chunks->next : NULL; ch; ch = ch->next)
        if (ch->used == 0)
            return 1;
    return 0;
}

void smbd_send_pool_shrink(struct smbd_conn *c, uint64_t now_ms)
{
    struct smbd_send_chunk *ch, *next;

    if (!c->chunks || now_ms < c->pool_extra_used_ms + SMBD_POOL_SHRINK_MS)
        return;
    for (ch = c->chunks->next; ch; ch = next) {
        next = ch->next;
        if (ch->used == 0)
            unlink_free(c, ch);
    }
}

uint64_t smbd_send_pool_next_shrink(const struct smbd_conn *c)
{
    return has_free_extra_chunk(c) ? c->pool_extra_used_ms + SMBD_POOL_SHRINK_MS : UINT64_MAX;
}
