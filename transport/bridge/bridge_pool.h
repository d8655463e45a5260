/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/bridge/bridge_pool.h — a process-wide cache of the bridge's large buffers: the
 * READ/WRITE channel's I/O buffers (up to MaxReadWriteSize each) and the framer's and
 * output queue's buffers once a large message grew them. A buffer of at least
 * BRIDGE_POOL_MIN bytes given back is kept, up to BRIDGE_POOL_IDLE_MAX bytes, and handed out
 * again, so a stream of 8 MiB I/Os does not map, fault in and unmap 8 MiB per I/O.
 * Smaller ones are plain malloc/free; larger ones are anonymous mappings of their own.
 * Everything idle is freed when the last user (a bridge) goes. */
#ifndef SMBDIRECT_BRIDGE_POOL_H
#define SMBDIRECT_BRIDGE_POOL_H

#include <stddef.h>

/* Idle bytes kept for reuse, over all connections of the process. */
#define BRIDGE_POOL_IDLE_MAX (32u << 20)
/* Smallest buffer worth keeping. */
#define BRIDGE_POOL_MIN (256u << 10)

/* Users (bridges) of the pool; the last unref frees the idle buffers. */
void bridge_pool_ref(void);
void bridge_pool_unref(void);

/* A buffer of at least len bytes (an idle one of at most twice len, else a new one);
 * *cap is its size. NULL when out of memory. */
void *bridge_pool_get(size_t len, size_t *cap);
/* Gives back a buffer of cap bytes from bridge_pool_get: kept while the idle bytes stay
 * within BRIDGE_POOL_IDLE_MAX, else freed. */
void bridge_pool_put(void *mem, size_t cap);

/* Frees a buffer from bridge_pool_get without keeping it: one of at least
 * BRIDGE_POOL_MIN bytes is unmapped, so pages a socket still holds by reference (vmsplice)
 * keep their bytes until the socket lets go of them, and nothing else ever writes there. */
void bridge_pool_drop(void *mem, size_t cap);

/* Idle bytes held now (for tests). */
size_t bridge_pool_idle(void);

#endif
