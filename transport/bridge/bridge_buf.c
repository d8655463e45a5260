/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/bridge/bridge_buf.c — the growable byte buffer of bridge_buf.h; large
 * allocations come from and go back to bridge_pool. */
#include "bridge_buf.h"

#include "bridge_pool.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define BUF_ALIGN 4096u

void bridge_buf_init(struct bridge_buf *b, size_t base_cap, size_t idle_cap)
{
    memset(b, 0, sizeof(*b));
    b->base_cap = base_cap;
    b->idle_cap = idle_cap;
}

void bridge_buf_free(struct bridge_buf *b)
{
    bridge_pool_put(b->data, b->cap);
    bridge_buf_init(b, b->base_cap, b->idle_cap);
}

/* Moves the held bytes into a new allocation of at least cap bytes (copied once); the
 * old one is left in *old (*old_cap bytes). */
static int move_bytes(struct bridge_buf *b, size_t cap, uint8_t **old, size_t *old_cap)
{
    size_t n = bridge_buf_len(b);
    uint8_t *nb = bridge_pool_get(cap, &cap);

    if (!nb)
        return -ENOMEM;
    if (n)
        memcpy(nb, b->data + b->head, n);
    *old = b->data;
    *old_cap = b->cap;
    b->data = nb;
    b->cap = cap;
    b->head = 0;
    b->tail = n;
    return 0;
}

static int reallocate(struct bridge_buf *b, size_t cap)
{
    uint8_t *old;
    size_t old_cap;
    int rc = move_bytes(b, cap, &old, &old_cap);

    if (rc == 0)
        bridge_pool_put(old, old_cap);
    return rc;
}

uint8_t *bridge_buf_reserve(struct bridge_buf *b, size_t need)
{
    size_t n = bridge_buf_len(b), cap;

    if (need > b->max_need)
        b->max_need = need;
    if (b->cap - b->tail >= need)
        return b->data + b->tail;
    if (b->head > 0 && b->cap - n >= need && n <= b->cap / 2) {
        memmove(b->data, b->data + b->head, n); /* cheap: at most half the buffer */
        b->head = 0;
        b->tail = n;
        return b->data + b->tail;
    }
    cap = n + need;
    if (cap < b->cap + b->cap / 2)
        cap = b->cap + b->cap / 2;
    if (cap < b->base_cap)
        cap = b->base_cap;
    cap = (cap + BUF_ALIGN - 1) / BUF_ALIGN * BUF_ALIGN;
    return reallocate(b, cap) == 0 ? b->data + b->tail : NULL;
}

int bridge_buf_detach(struct bridge_buf *b, size_t n, uint8_t **mem, size_t *cap)
{
    size_t rest = bridge_buf_len(b) - n;
    int rc;

    b->head += n; /* the bytes after the n move; the n stay where they are */
    rc = move_bytes(b, rest > b->base_cap ? rest : b->base_cap, mem, cap);
    if (rc < 0)
        b->head -= n;
    return rc;
}

void bridge_buf_consume(struct bridge_buf *b, size_t n)
{
    b->head += n;
    if (b->head == b->tail)
        b->head = b->tail = 0;
}

void bridge_buf_trim(struct bridge_buf *b)
{
    if (bridge_buf_len(b) > 0)
        return;
    if (b->cap > b->idle_cap && b->max_need <= b->idle_cap) {
        bridge_pool_put(b->data, b->cap); /* the next reserve allocates base_cap again */
        b->data = NULL;
        b->cap = 0;
    }
    b->max_need = 0;
}

int bridge_buf_append(struct bridge_buf *b, const struct iovec *iov, int iovcnt, size_t skip)
{
    size_t total = 0;
    uint8_t *dst;

    for (int i = 0; i < iovcnt; i++)
        total += iov[i].iov_len;
    if (skip >= total)
        return 0;
    if (!(dst = bridge_buf_reserve(b, total - skip)))
        return -ENOMEM;
    for (int i = 0; i < iovcnt; i++) {
        size_t len = iov[i].iov_len;

        if (skip >= len) {
            skip -= len;
            continue;
        }
        memcpy(dst, (const uint8_t *)iov[i].iov_base + skip, len - skip);
        dst += len - skip;
        b->tail += len - skip;
        skip = 0;
    }
    return 0;
}
