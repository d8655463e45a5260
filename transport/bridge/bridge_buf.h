/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/bridge/bridge_buf.h — the bridge's one growable byte buffer: bytes live in
 * [head, tail) of one allocation; producers reserve contiguous room after tail (to
 * recv() or memcpy into) and commit, consumers take from head. Used for the stream
 * bytes waiting to be framed (bridge_framer) and the delivered bytes waiting for the
 * stream socket (smbd_bridge's output queue).
 *
 * Memory: nothing is allocated until the first reserve (base_cap bytes at least);
 * room is made by moving the held bytes to the front when they are at most half the
 * buffer, else by growing (to at least 1.5x). bridge_buf_trim gives back a buffer grown
 * past idle_cap once it is empty and no reserve since the previous trim asked for more
 * than idle_cap, so a connection back to small traffic holds at most idle_cap bytes
 * while one moving large messages keeps its buffer (no shrink/regrow churn). */
#ifndef SMBDIRECT_BRIDGE_BUF_H
#define SMBDIRECT_BRIDGE_BUF_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

struct bridge_buf {
    uint8_t *data;    /* NULL until the first reserve */
    size_t cap;       /* allocated bytes */
    size_t head;      /* first byte held */
    size_t tail;      /* end of the bytes held */
    size_t base_cap;  /* smallest allocation */
    size_t idle_cap;  /* largest capacity kept across a rewind after small traffic */
    size_t max_need;  /* largest reserve since the last trim */
};

static inline size_t bridge_buf_len(const struct bridge_buf *b) { return b->tail - b->head; }
static inline uint8_t *bridge_buf_head(const struct bridge_buf *b) { return b->data + b->head; }

/* Allocates nothing. */
void bridge_buf_init(struct bridge_buf *b, size_t base_cap, size_t idle_cap);
void bridge_buf_free(struct bridge_buf *b);

/* Makes at least need bytes of contiguous room after tail (the held bytes may move).
 * Returns the room's start, or NULL when out of memory. bridge_buf_room() tells how much
 * room there is (it may exceed need). */
uint8_t *bridge_buf_reserve(struct bridge_buf *b, size_t need);
static inline size_t bridge_buf_room(const struct bridge_buf *b) { return b->cap - b->tail; }

/* n (<= the room) bytes were written after tail. */
static inline void bridge_buf_commit(struct bridge_buf *b, size_t n) { b->tail += n; }

/* Drops n (<= bridge_buf_len) bytes at head; an emptied buffer is rewound to its start
 * (its memory stays: pointers into it remain valid until the next reserve or trim). */
void bridge_buf_consume(struct bridge_buf *b, size_t n);

/* Hands the allocation over to the caller (*mem, *cap bytes; free it with bridge_pool_put)
 * after consuming the first n held bytes, which stay readable in it at the addresses
 * they had; the bytes held after them move to a new allocation. 0, or -ENOMEM with
 * nothing changed. */
int bridge_buf_detach(struct bridge_buf *b, size_t n, uint8_t **mem, size_t *cap);

/* When empty, frees a buffer grown past idle_cap unless a reserve since the previous
 * trim needed more than idle_cap (see above). */
void bridge_buf_trim(struct bridge_buf *b);

/* Appends the iovecs' bytes, skipping the first `skip` of them. 0 or -ENOMEM. */
int bridge_buf_append(struct bridge_buf *b, const struct iovec *iov, int iovcnt, size_t skip);

#endif
