/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/bridge/bridge_outq.h — the bytes a bridge owes its stream socket, in order:
 * small pieces copied into a growable buffer (bridge_buf), and large messages adopted
 * whole (the allocation they arrived in, from bridge_pool, written from where the bytes
 * lie and given back to the pool once written), so an 8 MiB READ or WRITE that the
 * socket does not take at once is not copied again. One sendmsg writes up to
 * BRIDGE_OUTQ_IOV_MAX segments. Given a splice state (bridge_splice: the bridge's way into
 * its stream is by reference) an adopted message goes by splice instead, and its
 * allocation waits there until the reader has read it. */
#ifndef SMBDIRECT_BRIDGE_OUTQ_H
#define SMBDIRECT_BRIDGE_OUTQ_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "bridge_buf.h"
#include "bridge_splice.h"

#define BRIDGE_OUTQ_IOV_MAX 64

struct bridge_outq_seg {
    struct bridge_outq_seg *next;
    struct bridge_buf buf;
    int adopted;             /* buf's memory is an adopted allocation: never appended to */
    int spliced;             /* ... some of whose bytes went by reference: the socket may
                                hold its pages, it is never reused before they are read */
};

struct bridge_outq {
    struct bridge_outq_seg *head, *tail;
    size_t len;              /* bytes queued */
    size_t base_cap, idle_cap; /* of the copy buffers (bridge_buf_init) */
};

/* Allocates nothing. */
void bridge_outq_init(struct bridge_outq *q, size_t base_cap, size_t idle_cap);
/* Frees every segment (adopted allocations go back to bridge_pool; one partly spliced is
 * unmapped instead, bridge_pool_drop). */
void bridge_outq_free(struct bridge_outq *q);
static inline size_t bridge_outq_len(const struct bridge_outq *q) { return q->len; }

/* Appends a copy of the iovecs' bytes, skipping the first skip. 0 or -ENOMEM. */
int bridge_outq_append(struct bridge_outq *q, const struct iovec *iov, int iovcnt, size_t skip);
/* Appends the len bytes at data, which lie in alloc (cap bytes, from bridge_pool), taking
 * the allocation over. 0, or -ENOMEM with nothing taken. */
int bridge_outq_adopt(struct bridge_outq *q, uint8_t *alloc, size_t cap, const uint8_t *data,
                      size_t len);

/* Writes queued bytes to fd (MSG_NOSIGNAL) until the queue is empty or the socket is
 * full; adopted segments by reference while sp (may be NULL) is on, their allocations
 * then handed to sp once spliced whole (pos: the stream's bytes written before this
 * call). Returns the bytes written (0 when it would block), or -errno. */
ssize_t bridge_outq_write(struct bridge_outq *q, int fd, struct bridge_splice *sp, uint64_t pos);

#endif
