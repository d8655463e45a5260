/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/bridge/bridge_chan.h — the SMB2 READ/WRITE RDMA channel at a bridge (the
 * "companion helper"): the I/O-free decisions of transport/channel/ carried out with
 * the engine's registrations and RDMA operations (MS-SMBD 3.1.4.3-3.1.4.6).
 *
 * Client role (the shim): a large WRITE from the program has its data copied into a
 * registered buffer and goes out with a Buffer Descriptor V1 list instead (the server
 * RDMA-reads it); a large READ registers a buffer the server RDMA-writes, and its
 * response is rebuilt into the inline READ response the program expects, after the
 * buffer is deregistered (no remote access is left once the program sees data). In a
 * signed session (host.signing_key knows its key) the rewritten request is signed
 * again, and a READ's response is checked with the key before its rebuilt form is
 * signed with it; without the key a signed session's I/O goes inline.
 * Server role (the relay): a client's channel WRITE is RDMA-read and forwarded inline
 * to the TCP backend; a channel READ is forwarded inline and the backend's data is
 * RDMA-written into the client's buffers before the rewritten response goes out, with
 * Send with Invalidate when the client asked for it (RDMA_V1_INVALIDATE).
 *
 * The bridge hands every whole SMB2 message in both directions to this module first;
 * it returns 1 when it took the message over, 0 when the bridge carries it unchanged. */
#ifndef SMBDIRECT_BRIDGE_CHAN_H
#define SMBDIRECT_BRIDGE_CHAN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "smb2_sign.h"
#include "smbd_conn.h"

enum bridge_chan_role {
    BRIDGE_CHAN_OFF,
    BRIDGE_CHAN_CLIENT, /* the shim: the program is the SMB2 client */
    BRIDGE_CHAN_SERVER, /* the relay: the SMB Direct peer is the SMB2 client */
};

/* What the channel asks of its bridge. */
struct bridge_chan_host {
    struct smbd_conn *conn;
    int remote_invalidation;         /* the provider's (provider.h): 0, the client role asks
                                        for RDMA_V1 (the server role always honours
                                        RDMA_V1_INVALIDATE with Send with Invalidate) */
    void *ctx;
    /* Writes one whole SMB2 message (the iovecs, without the Direct-TCP prefix, which
     * the bridge adds) to the stream after everything already on its way there. With
     * alloc, the last iovec lies in alloc (cap bytes, from bridge_pool), which the bridge
     * may take over instead of copying what the stream does not take at once: 1 when
     * it did (the caller must not free alloc), else 0; or -errno after which the
     * bridge ends. */
    int (*to_stream)(void *ctx, const struct iovec *iov, int iovcnt, uint8_t *alloc,
                     size_t cap);
    /* Ends the bridge with err and a reason (a protocol violation, an engine error). */
    void (*fail)(void *ctx, int err, const char *why);
    /* Channel buffer bytes (registered for the peer, RDMA sinks and sources) this
     * connection, and all connections of the process together, may hold (> 0). */
    uint64_t mem_limit, mem_limit_total;
    /* How long an I/O refused registered memory waits with no channel I/O of the process
     * in flight (ms, > 0): memory may still come free (idle send buffers given back);
     * then the bridge fails, naming RLIMIT_MEMLOCK. */
    uint32_t pin_grace_ms;
    /* May be NULL: bytes written to the stream that it has not taken yet; they count
     * against mem_limit (channel data the program or backend is slow to read). */
    size_t (*stream_backlog)(void *ctx);
    /* Client role, may be NULL: called once, before the message that decided it goes on,
     * when this connection's READ/WRITE go inline from now on (chan_client_inline_only),
     * so the program's I/O sizes must fit in one SMB Direct message. */
    void (*inline_io)(void *ctx);
    /* May be NULL: during bridge_chan_from_stream, hands over the allocation holding the
     * message being offered (*mem, *cap bytes, for bridge_pool_put; the message stays
     * where it is), which then counts as taken. 0 or -errno (nothing changed). */
    int (*take_message)(void *ctx, uint8_t **mem, size_t *cap);
    /* Client role, may be NULL (signed sessions' I/O inline): the signing key of the
     * session session_id on this connection, copied into *key (the channel wipes its
     * copies when done): 0, or -1 when none is known. */
    int (*signing_key)(void *ctx, uint64_t session_id, struct smb2_sign_key *key);
};

struct bridge_chan;

/* threshold: client role, I/Os of more bytes use the channel (0: never). NULL when out of
 * memory. */
struct bridge_chan *bridge_chan_new(enum bridge_chan_role role, uint32_t threshold,
                                    const struct bridge_chan_host *host);
/* Deregisters and frees everything still outstanding. */
void bridge_chan_free(struct bridge_chan *ch);

/* A whole SMB2 message from the stream, bound for the SMB Direct peer. 1: taken (sent
 * rewritten, or held until RDMA data is ready; a large one's bytes may have been taken
 * over through host.take_message), 0: send it unchanged, -1: the bridge
 * was failed, BRIDGE_CHAN_WAIT: it needs a channel buffer and the budgets have no room
 * now: leave it (and what follows) in the stream and offer it again later. */
#define BRIDGE_CHAN_WAIT 2
int bridge_chan_from_stream(struct bridge_chan *ch, const uint8_t *msg, size_t len,
                            uint64_t now_ms);

/* A whole SMB2 message from the SMB Direct peer, bound for the stream. 1: taken, 0:
 * write it unchanged, -1: the bridge was failed. first_only: msg is only the first
 * fragment of a longer message (enough for its headers: the rest still streams). */
int bridge_chan_from_peer(struct bridge_chan *ch, const uint8_t *msg, size_t len,
                          int first_only);

/* Whether a message whose first fragment is msg must be handed over whole (the server
 * role rewrites channel requests, whose descriptor lists may span fragments). */
int bridge_chan_wants_whole(const struct bridge_chan *ch, const uint8_t *msg, size_t len);

/* Offers buffer memory freed elsewhere in the process to what waits for it here (the
 * server role's channel WRITEs, whose RDMA Reads start in arrival order as room comes;
 * this connection's own completions do that by themselves). 1 while some still wait. */
int bridge_chan_retry(struct bridge_chan *ch);

/* Whether the peer may still access this side's buffers (client role: channel I/O
 * registered and not answered yet). */
int bridge_chan_busy(const struct bridge_chan *ch);

/* Bytes of the channel buffers this connection holds now (its I/O in flight). */
uint64_t bridge_chan_mem_used(const struct bridge_chan *ch);
/* ... and every connection of the process (what mem_limit_total bounds). */
uint64_t bridge_chan_process_mem_used(void);

/* Engine upcalls the bridge forwards. */
void bridge_chan_invalidated(struct bridge_chan *ch, uint32_t token);
void bridge_chan_rdma_done(struct bridge_chan *ch, uint64_t cookie, int status);

/* Counters for the relay's log line and tests. */
struct bridge_chan_stats {
    uint64_t rdma_reads, rdma_read_bytes;   /* WRITE data moved by RDMA Read */
    uint64_t rdma_writes, rdma_write_bytes; /* READ data moved by RDMA Write */
    uint64_t rdma_signed;                   /* of those I/Os, signed ones (re-signed) */
    uint64_t in_place_bytes;                /* of those bytes, moved from where the stream
                                               message lay (its buffer taken, not copied):
                                               the shim's WRITE data, the relay's READ data */
    uint64_t mem_held;                      /* buffer bytes held now */
    uint64_t mem_peak;                      /* most buffer bytes held at once */
    uint64_t mem_waits;                     /* waits of an I/O held back for memory: by
                                               the buffer budgets or RLIMIT_MEMLOCK */
    uint64_t mem_wait_ms;                   /* the time they were held, summed (overlapping
                                               waits of the two queues each count) */
    uint32_t mem_waiting;                   /* I/Os held back now (0-2: the stream's next
                                               message, the relay's next WRITE) */
};
/* The counters at now (ms, the clock the calls above were given): a wait still going on
 * counts up to now. */
void bridge_chan_get_stats(const struct bridge_chan *ch, uint64_t now,
                           struct bridge_chan_stats *out);

#endif
