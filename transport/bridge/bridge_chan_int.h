/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/bridge/bridge_chan_int.h — private to bridge_chan*.c: the state every role
 * shares (struct bridge_chan: the host, the buffer budget's counts, the counters), the
 * channel buffer (struct bridge_chan_buf), the hooks through which bridge_chan.c hands
 * each call to the role chosen at creation, and the budget's functions
 * (bridge_chan_budget.c). */
#ifndef SMBDIRECT_BRIDGE_CHAN_INT_H
#define SMBDIRECT_BRIDGE_CHAN_INT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "bridge_chan.h"
#include "chan_table.h"
#include "smb2_wire.h"

/* One channel buffer, named to the engine by its address (the cookie of RDMA operations)
 * and to the channel tables by the same. */
struct bridge_chan_buf {
    uint8_t *mem;                    /* the I/O's bytes, inside alloc */
    uint32_t len;
    uint8_t *alloc;                  /* from bridge_pool, or a stream message's buffer */
    int taken;                       /* alloc is the buffer of the stream message */
    size_t cap;                      /* bytes of alloc, charged to the budgets */
    struct smbd_registration *reg;   /* client role: the peer's access to mem */
    uint8_t head[SMB2_RW_REQ_FIXED]; /* server WRITE: the inline request's header + body */
    size_t head_len;
    struct bridge_chan_buf *prev, *next; /* server role: in the RDMA list until rdma_done */
};

/* What a role does at each entry point of bridge_chan.h; NULL where it has nothing to do
 * (a query then answers 0). */
struct bridge_chan_ops {
    int (*from_stream)(struct bridge_chan *ch, const uint8_t *msg, size_t len, uint64_t now_ms);
    int (*from_peer)(struct bridge_chan *ch, const uint8_t *msg, size_t len, int first_only);
    int (*wants_whole)(const struct bridge_chan *ch, const uint8_t *msg, size_t len);
    int (*retry)(struct bridge_chan *ch);
    int (*busy)(const struct bridge_chan *ch);
    void (*invalidated)(struct bridge_chan *ch, uint32_t token);
    void (*rdma_done)(struct bridge_chan *ch, uint64_t cookie, int status);
    void (*free)(struct bridge_chan *ch); /* deregisters and frees everything, ch too */
};

/* Where I/O waits for memory, in order: the stream's messages (the shim's requests, the
 * relay's READ responses) and the relay's channel WRITEs, whose RDMA Reads wait. */
enum bridge_chan_queue { BRIDGE_CHAN_Q_STREAM, BRIDGE_CHAN_Q_WRITES, BRIDGE_CHAN_QUEUES };

/* The first member of each role's own state. */
struct bridge_chan {
    const struct bridge_chan_ops *ops;
    struct bridge_chan_host host;
    uint64_t mem_used;               /* bytes of this connection's buffers */
    uint64_t pin_wait_since;         /* an I/O waits for registered memory since (ms), 0:
                                        none waits */
    uint64_t mem_wait_since[BRIDGE_CHAN_QUEUES]; /* the head of each queue is held back
                                                    for memory since (ms) ... */
    uint8_t mem_waiting[BRIDGE_CHAN_QUEUES];     /* ... when this is 1 */
    struct bridge_chan_stats stats;
};

/* The roles; max_io: the MaxReadWriteSize negotiated (0: not established, the channel
 * stays unused). NULL when out of memory. */
struct bridge_chan *bridge_chan_client_new(uint32_t threshold, uint32_t max_io,
                                           const struct bridge_chan_host *host);
struct bridge_chan *bridge_chan_server_new(uint32_t max_io, const struct bridge_chan_host *host);

/* How long the head of queue q has been held back for memory at now (ms; 0 when it is not
 * held back). */
static inline uint64_t bridge_chan_mem_waited(const struct bridge_chan *ch,
                                              enum bridge_chan_queue q, uint64_t now)
{
    return ch->mem_waiting[q] && now > ch->mem_wait_since[q] ? now - ch->mem_wait_since[q] : 0;
}

/* Ends the bridge with err and why (host.fail); returns -1. */
static inline int bridge_chan_fail(struct bridge_chan *ch, int err, const char *why)
{
    ch->host.fail(ch->host.ctx, err, why);
    return -1;
}

/* ---- the buffers and their budget (bridge_chan_budget.c) ---- */

/* Whether len more bytes fit the connection's and the process's budgets. */
int bridge_chan_budget_allows(const struct bridge_chan *ch, uint64_t len);
/* Whether a registration (or an RDMA operation) failed for want of registered memory. */
int bridge_chan_refused_for_memory(int rc);
/* The I/O at the head of queue q is held back for memory (from now, when it was not
 * already): BRIDGE_CHAN_WAIT. */
int bridge_chan_mem_wait(struct bridge_chan *ch, enum bridge_chan_queue q, uint64_t now);
/* The I/O at the head of q got its memory: its wait, if any, ends at now. */
void bridge_chan_mem_got(struct bridge_chan *ch, enum bridge_chan_queue q, uint64_t now);
/* Registered memory for a len-byte buffer for the head of q cannot be had now (rc: the
 * refusal, or 0): BRIDGE_CHAN_WAIT while it may still come free, else -1 after failing
 * the bridge. */
int bridge_chan_pin_wait(struct bridge_chan *ch, enum bridge_chan_queue q, uint32_t len, int rc,
                         uint64_t now);

/* A buffer of len bytes charged to the budgets (NULL when out of memory). */
struct bridge_chan_buf *bridge_chan_buf_new_charged(struct bridge_chan *ch, uint32_t len);
/* bridge_chan_buf_new_charged when the budgets have room: NULL with *busy 1 when they
 * have none now, NULL with *busy 0 when out of memory. */
struct bridge_chan_buf *bridge_chan_buf_new(struct bridge_chan *ch, uint32_t len, int *busy);
/* The stream message being offered, whose len bytes at data are an I/O's, taken over as
 * that I/O's buffer (host.take_message). Charged; NULL when it cannot be taken. */
struct bridge_chan_buf *bridge_chan_buf_take_message(struct bridge_chan *ch, const uint8_t *data,
                                                     uint32_t len);
/* Whether an I/O of len bytes is taken with its stream message rather than copied. */
int bridge_chan_takes_message(const struct bridge_chan *ch, uint32_t len);
/* A buffer for len bytes of the stream message being offered that start at data: taken
 * over or copied (bridge_chan_takes_message). Charged; NULL when out of memory. */
struct bridge_chan_buf *bridge_chan_buf_from_stream(struct bridge_chan *ch, const uint8_t *data,
                                                    uint32_t len);
/* Deregisters (if registered), uncharges and frees b (NULL: nothing). */
void bridge_chan_buf_free(struct bridge_chan *ch, struct bridge_chan_buf *b);
/* Frees the buffers t released (their final response came, or teardown). */
void bridge_chan_free_released(struct bridge_chan *ch, struct chan_table *t);
/* host.to_stream of a message whose last iovec lies in b, offering b's memory. */
int bridge_chan_to_stream_buf(struct bridge_chan *ch, const struct iovec *iov, int iovcnt,
                              struct bridge_chan_buf *b);

#endif
