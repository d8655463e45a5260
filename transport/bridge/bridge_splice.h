/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/bridge/bridge_splice.h — large READ data into a local stream by reference: a
 * buffer from bridge_pool goes into an AF_UNIX stream socket with vmsplice(2) and
 * splice(2) instead of a copy, so the program's own read is the only copy of those bytes
 * on this side. The socket then holds the buffer's pages until the reader has read them:
 * the buffer is kept (bridge_splice_hold) until the socket's unread bytes (SIOCOUTQ)
 * show that the reader is past its end, and a buffer still unread when the bridge ends
 * is unmapped, never reused (bridge_pool_drop). */
#ifndef SMBDIRECT_BRIDGE_SPLICE_H
#define SMBDIRECT_BRIDGE_SPLICE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A buffer the socket may still reference: its allocation, and the stream offset just
 * past its last spliced byte. */
struct bridge_spliced {
    struct bridge_spliced *next;
    uint8_t *alloc;
    size_t cap;
    uint64_t end;
};

struct bridge_splice {
    int on;                               /* splicing into this stream */
    struct bridge_spliced *head, *tail;   /* held buffers, oldest first */
    uint64_t bytes;                       /* spliced so far */
};

/* Whether fd is an AF_UNIX stream socket and this kernel lets us splice into it and count
 * its unread bytes (checked once per process on a socketpair of its own). */
int bridge_splice_usable(int fd);

/* Starts the state: on only when want and bridge_splice_usable(fd). */
void bridge_splice_init(struct bridge_splice *s, int fd, int want);

/* Splices up to len bytes at data (inside a buffer from bridge_pool of at least
 * BRIDGE_POOL_MIN bytes) into fd without blocking. Returns the bytes the socket took
 * (0 when it is full), or -errno when splicing failed: then s is off and the caller
 * writes those bytes as usual (a closed socket reports its error there). */
ssize_t bridge_splice_out(struct bridge_splice *s, int fd, const uint8_t *data, size_t len);

/* The buffer alloc (cap bytes, from bridge_pool) had bytes spliced up to stream offset
 * end (the stream's bytes written so far): kept until the reader is past it. 0, or
 * -ENOMEM after dropping it (bridge_pool_drop: never reused). */
int bridge_splice_hold(struct bridge_splice *s, uint8_t *alloc, size_t cap, uint64_t end);

/* Gives back to bridge_pool every held buffer the reader of fd is past; written is the
 * stream's bytes written so far. */
void bridge_splice_reap(struct bridge_splice *s, int fd, uint64_t written);

/* The stream is about to close: what the reader is past goes back to the pool, the rest
 * is unmapped (the socket keeps those pages for the reader). */
void bridge_splice_end(struct bridge_splice *s, int fd, uint64_t written);

/* Buffers held now (for tests). */
size_t bridge_splice_held(const struct bridge_splice *s);

#endif
