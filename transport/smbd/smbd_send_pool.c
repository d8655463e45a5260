/* transport/smbd/smbd_send_pool.c — the per-connection pool of registered send buffers
 * ("slots", one MS-SMBD message each). One chunk is registered at start and kept;
 * under load further chunks are added and freed again once unused for
 * SMBD_POOL_SHRINK_MS, so an idle connection holds only its base chunk. */
#include "smbd_conn_int.h"

#include <errno.h>
#include <stdlib.h>

#include "log.h"

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
        c->ops->dereg_mr(c->qp, &ch->mr);
    free(ch->mem);
    free(ch->slots);
    free(ch);
}

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
    err = c->ops->reg_mr(c->qp, ch->mem, bytes, SD_ACCESS_LOCAL_WRITE, &ch->mr);
    if (err) {
        chunk_free(c, ch);
        sd_warn("smbd: cannot register %zu bytes of send buffers: %d", bytes, err);
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

/* Enough slots for the whole credit window plus one unsignaled batch, but at most
 * SMBD_POOL_BASE_BYTES of them: with large send sizes a chunk of that size already
 * carries a whole SMB2 READ/WRITE of 1 MiB, and more chunks are added under load. */
static uint32_t base_slots(const struct smbd_conn *c)
{
    uint32_t window = (uint32_t)c->cfg.send_credit_target + SMBD_SIGNAL_EVERY;
    uint32_t cap = SMBD_POOL_BASE_BYTES / c->send_buf_size;

    if (cap < 2 * SMBD_SIGNAL_EVERY)
        cap = 2 * SMBD_SIGNAL_EVERY;
    return window < cap ? window : cap;
}

int smbd_send_pool_init(struct smbd_conn *c)
{
    c->send_buf_size = (c->cfg.max_send_size + 63u) & ~63u;
    return chunk_add(c, base_slots(c));
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
    c->slots_free = 0;
}

int smbd_send_pool_reserve(struct smbd_conn *c, uint32_t nslots, uint64_t now_ms)
{
    while (c->slots_free < nslots) {
        uint32_t want = nslots - c->slots_free;
        int err = chunk_add(c, want > base_slots(c) ? want : base_slots(c));

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
    c->ops->dereg_mr(c->qp, &m->mr);
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
    struct smbd_send_chunk **pp;

    if (!c->chunks || now_ms < c->pool_extra_used_ms + SMBD_POOL_SHRINK_MS)
        return;
    for (pp = &c->chunks->next; *pp;) {
        struct smbd_send_chunk *ch = *pp;

        if (ch->used == 0) {
            *pp = ch->next;
            c->slots_free -= ch->nslots;
            chunk_free(c, ch);
        } else {
            pp = &ch->next;
        }
    }
}

uint64_t smbd_send_pool_next_shrink(const struct smbd_conn *c)
{
    return has_free_extra_chunk(c) ? c->pool_extra_used_ms + SMBD_POOL_SHRINK_MS : UINT64_MAX;
}
