/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/bridge/smbd_bridge.h — joins a byte-stream fd carrying SMB2 Direct-TCP framing
 * (the program's socketpair end in the shim, the TCP connection to the backend in
 * the relay) to an established SMB Direct link, inside an sd_loop. Stream -> framer ->
 * smbd_conn_send; delivered fragments -> 4-byte prefix + payload -> stream. Flow
 * control both ways (stop reading the stream when the send queue is high; pause
 * receive credits when the stream is not writable). Ends on EOF/error of either side:
 * a lost SMB Direct link resets the stream (the program sees ECONNRESET/EOF). */
#ifndef SMBDIRECT_SMBD_BRIDGE_H
#define SMBDIRECT_SMBD_BRIDGE_H

#include "bridge_chan.h"
#include "sd_loop.h"
#include "smbd_link.h"

struct smbd_bridge;

struct smbd_bridge_stats {
    struct smbd_stats smbd;          /* engine counters */
    struct bridge_chan_stats chan;   /* the READ/WRITE channel's (zero when off) */
    struct smbd_params params;       /* negotiated values and current credits (3.1.4.7) */
    uint64_t stream_bytes_in, stream_bytes_out;
    uint64_t stream_bytes_fed;       /* of stream_bytes_in: handed over by smbd_bridge_feed */
    uint64_t stream_bytes_spliced;   /* of stream_bytes_out: by reference (bridge_splice) */
    uint64_t stream_bytes_adopted;   /* of stream_bytes_out: queued in the buffer they arrived
                                        in, not copied (bridge_outq_adopt) */
    const char *reason;              /* one line: why the bridge ended (valid in on_end;
                                        NULL from smbd_bridge_get_stats) */
};

/* Whether the bridge carries SMB2 READ/WRITE data over the RDMA channel (bridge_chan.h):
 * as the SMB2 client's side (the shim) for I/O larger than channel_threshold bytes, or as
 * the server's (the relay) for the channel requests its SMB Direct peer sends. */
struct smbd_bridge_opts {
    enum bridge_chan_role channel;
    uint32_t channel_threshold;
    /* Channel buffer bytes per connection and per process (bridge_chan_host, from the
     * settings SMBDIRECT_CHANNEL_MEMORY(_TOTAL)); 0: no bound. */
    uint64_t channel_memory, channel_memory_total;
    /* Client role, may be NULL: called with the ctx of smbd_bridge_start, once, when this
     * connection's READ/WRITE go inline from now on (bridge_chan_host.inline_io). */
    void (*on_inline_io)(void *ctx);
    /* The stream is the program's own AF_UNIX socket (the shim): large READ data goes into
     * it by reference, not copied (bridge_splice.h), where the kernel allows it. */
    int splice_reads;
    /* May be NULL: called with the ctx of smbd_bridge_start and each whole SMB2 message of
     * the stream (no Direct-TCP prefix), once, before it goes on (or waits for memory);
     * it must neither keep nor change msg (the shim checks the program's signatures). */
    void (*on_request)(void *ctx, const uint8_t *msg, size_t len);
    /* Client role, may be NULL: called with the ctx of smbd_bridge_start, the signing key
     * of an SMB2 session on this connection (bridge_chan_host.signing_key): with it, a
     * signed session's large READ/WRITE use the channel too. */
    int (*signing_key)(void *ctx, uint64_t session_id, struct smb2_sign_key *key);
    /* How long the bridge's end waits, in ms; 0: the default beside it. half_close_ms:
     * after the stream's EOF (client role: the program's SHUT_WR), for the answers to what
     * it asked, or, once the program is exiting, for the peer's RDMA on its channel
     * buffers; then the link is disconnected anyway [SMBD_BRIDGE_HALF_CLOSE_MS]. close_ms:
     * for the link's orderly disconnect to be confirmed; then the bridge ends without it
     * [SMBD_BRIDGE_CLOSE_MS]. pin_grace_ms: with the channel on, for registered memory
     * (RLIMIT_MEMLOCK) an I/O was refused while no channel I/O of the process is in
     * flight (bridge_chan_host.pin_grace_ms); then the bridge ends naming the limit
     * [SMBD_BRIDGE_PIN_GRACE_MS]. */
    uint32_t half_close_ms, close_ms, pin_grace_ms;
};

#define SMBD_BRIDGE_HALF_CLOSE_MS 10000u
#define SMBD_BRIDGE_CLOSE_MS      2000u
#define SMBD_BRIDGE_PIN_GRACE_MS  3000u /* idle send buffers go back within 1 s
                                           (SMBD_POOL_SHRINK_MS) */

/* Takes ownership of link and stream_fd (closed when the bridge ends; also when this
 * fails, returning NULL without calling on_end). on_end runs on the loop thread once,
 * never from inside smbd_bridge_start, after which the bridge is freed. err is 0 when
 * the stream ended (EOF) and the link was disconnected in order, else -errno:
 * -ECONNRESET also when the peer closed in order and the stream got all it delivered,
 * then its EOF. Must be called on the loop thread. */
struct smbd_bridge *smbd_bridge_start(struct sd_loop *loop, struct smbd_link *link, int stream_fd,
                                      const struct smbd_bridge_opts *opts,
                                      void (*on_end)(void *ctx, const struct smbd_bridge_stats *st,
                                                     int err),
                                      void *ctx);

/* The program is exiting (the shim's exit handler): what it wrote into the stream is
 * its last; once read, the stream counts as ended (EOF), and once sent the link is
 * disconnected in order and on_end follows. No answer is awaited (nobody will read it),
 * except while the peer may still access the program's channel buffers, at most
 * opts.half_close_ms; after the program's SHUT_WR this ends the wait for its answers.
 * While the bridge flushes what the peer delivered before it closed, the bridge fails
 * (nobody will read the rest). Loop thread. */
void smbd_bridge_finish(struct smbd_bridge *b);

/* The stream's writer hands its bytes to the bridge itself, on its own thread (the shim's
 * write interposers: the program's request then leaves without a wake-up of the loop
 * thread). They go where bytes read from the stream go, as if read, when the bridge
 * reads its stream now (OPEN, not held back by a full send queue or a wait for memory)
 * and the stream holds nothing unread and no EOF, so they follow whatever was written
 * there before. Returns how many were taken, a prefix of iov (0: none); the rest must
 * be written to the stream as usual, after them. errno is kept. Between sd_loop_enter
 * and sd_loop_leave on the bridge's loop. */
size_t smbd_bridge_feed(struct smbd_bridge *b, const struct iovec *iov, int iovcnt);

/* The counters of a live bridge, now (the relay's --status). Loop thread. */
void smbd_bridge_get_stats(const struct smbd_bridge *b, struct smbd_bridge_stats *st);

/* Ends the bridge now (e.g. the program is shutting down): on_end follows on the loop
 * with err -ECANCELED and this reason; the SMB Direct link is disconnected. */
void smbd_bridge_stop(struct smbd_bridge *b, const char *reason);

#endif
