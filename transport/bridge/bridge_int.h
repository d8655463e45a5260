/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/bridge/bridge_int.h — the bridge's private header: struct smbd_bridge, its
 * tunables, and the functions its files call across (smbd_bridge.c: start, events and
 * bridge_sync; bridge_state.c: the state's changes; bridge_to_stream.c: link -> stream;
 * bridge_from_stream.c: stream -> link; bridge_end.c: how it ends). Internal to
 * transport/bridge/. */
#ifndef SMBDIRECT_BRIDGE_INT_H
#define SMBDIRECT_BRIDGE_INT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "bridge_buf.h"
#include "bridge_chan.h"
#include "bridge_framer.h"
#include "bridge_outq.h"
#include "sd_fsm.h"
#include "smb2_pending.h"
#include "smbd_bridge.h"

#define BRIDGE_SEND_HIGH     (4u << 20) /* engine send queue: stop reading the stream */
#define BRIDGE_SEND_LOW      (1u << 20) /* ... and resume */
#define BRIDGE_STREAM_HIGH   (4u << 20) /* stream write queue: pause receive credits */
#define BRIDGE_STREAM_LOW    (1u << 20) /* ... and resume */
#define BRIDGE_READ_BUDGET   (4u << 20) /* stream bytes read per event, for fairness */
#define BRIDGE_FLUSH         (64u << 10) /* gathered fragment bytes written at once */
#define BRIDGE_DIRECT_MIN    (64u << 10) /* a fragment this large is written uncopied */
#define BRIDGE_CHAN_RETRY_MS 2          /* retry while a message waits for memory */
#define BRIDGE_SEND_WAIT     BRIDGE_CHAN_WAIT /* bridge_send_message: no send buffers now */
#define BRIDGE_OUTQ_BASE     (64u << 10) /* output queue: first allocation */
#define BRIDGE_OUTQ_IDLE     (256u << 10) /* ... and the most an idle queue keeps */
#define BRIDGE_POLL_HOLD_MIN (256u << 10) /* channel I/O in flight from which the loop
                                             does not busy-poll (bridge_sync) */

typedef void (*bridge_end_fn)(void *ctx, const struct smbd_bridge_stats *st, int err);

/* Where a bridge is in its life. Every change goes through bridge_enter (bridge_state.c),
 * which refuses one this table does not list: that is a bug, logged as an error, and
 * the bridge fails instead.
 *
 *   from           to             when
 *   OPEN           HALF_CLOSED    the stream's EOF (the program's SHUT_WR, the backend's FIN)
 *                  FINISHING      smbd_bridge_finish (the program is exiting)
 *                  FLUSHING       the peer closed in order, between messages
 *   FINISHING      FINISHED       the stream read to the end of what it held (or its EOF)
 *                  FLUSHING       as from OPEN
 *   HALF_CLOSED    DISCONNECTING  sends out, and (client role) every request answered
 *                  CLOSING        half_close_ms passed
 *                  FINISHED       smbd_bridge_finish
 *                  FLUSHING       as from OPEN
 *   FINISHED       DISCONNECTING  sends out, and the peer's RDMA on channel buffers done
 *                  CLOSING        half_close_ms passed
 *                  FLUSHING       as from OPEN
 *   CLOSING        DISCONNECTING  sends out
 *                  FLUSHING       as from OPEN
 *   DISCONNECTING  CLOSED         the link's orderly end, or close_ms without it
 *   FLUSHING       CLOSED         every delivered byte written, or the stream gone too
 *   any of these   FAILED         an error, smbd_bridge_stop, smbd_bridge_finish while
 *                                 FLUSHING, a refused change
 *   CLOSED, FAILED                final: the end is scheduled (bridge_end.c); a later end
 *                                 keeps the first reason
 *
 * Only OPEN and FINISHING read the stream (FLUSHING reads and drops); every state but
 * the final ones delivers what the peer sends. */
enum bridge_state {
    BRIDGE_OPEN,          /* both ways */
    BRIDGE_FINISHING,     /* the program is exiting: the stream is read to the end of what
                             it holds, which then counts as its EOF */
    BRIDGE_HALF_CLOSED,   /* the stream ended: its answers are still delivered; the link
                             is disconnected once the sends are out and (client role)
                             every request is answered, at most half_close_ms */
    BRIDGE_FINISHED,      /* the exiting program's stream ended: disconnected once the
                             sends are out and the peer no longer accesses channel buffers
                             (nobody reads answers), at most half_close_ms */
    BRIDGE_CLOSING,       /* the stream ended, the wait is over: disconnected once the
                             sends are out */
    BRIDGE_DISCONNECTING, /* the link is disconnecting in order */
    BRIDGE_FLUSHING,      /* the peer closed in order: the stream gets what it delivered,
                             then its EOF; what the stream still sends is dropped */
    BRIDGE_CLOSED,        /* ended in order: the stream gets its EOF */
    BRIDGE_FAILED,        /* ended by a failure: the stream is reset (TCP) or drained */
    BRIDGE_STATES
};

/* Where the message the peer is delivering goes (bridge_deliver_fragment). */
enum bridge_deliver {
    BRIDGE_DELIVER_IDLE,   /* between messages */
    BRIDGE_DELIVER_STREAM, /* part-way into the stream: the channel's messages wait in held */
    BRIDGE_DELIVER_WHOLE,  /* gathered in whole, for the channel */
    BRIDGE_DELIVER_SKIP,   /* the channel took it: its further fragments are dropped */
};

/* How the channel's large buffers go into the stream, chosen once at start
 * (bridge_out_choose; bridge_to_stream.c has one function for each): the splice state's
 * on, which only a kernel refusing a splice turns off, for good (bridge_out_way). */
enum bridge_out_way {
    BRIDGE_OUT_BY_COPY,      /* written from where they lie, what the socket does not take
                                queued in them (adopted), not copied */
    BRIDGE_OUT_BY_REFERENCE, /* spliced (bridge_splice), their headers copied: a local
                                stream that takes spliced pages */
};

/* Link -> stream (bridge_to_stream.c). */
struct bridge_out {
    struct bridge_outq queue; /* delivered bytes the stream has not taken yet */
    int blocked;              /* the stream socket is full: write again once writable */
    int recv_paused;          /* the queue is high: receive credits paused */
    enum bridge_deliver deliver;
    struct bridge_buf held;   /* the channel's messages waiting for a delivered message's end */
    struct bridge_buf whole;  /* a delivered message the channel wants whole, so far */
    uint64_t bytes;           /* written to the stream */
    uint64_t adopted;         /* of them, queued in the buffer they arrived in (not copied) */
    struct bridge_splice splice; /* on: the way is by reference */
};

/* Stream -> link (bridge_from_stream.c). */
struct bridge_in {
    struct bridge_framer framer;
    int send_blocked;       /* engine send queue high: not reading the stream */
    int mem_wait;           /* no memory for the next stream message now (channel buffers,
                               or registered send buffers near RLIMIT_MEMLOCK): it stays in
                               the framer (or in unsent), the stream is not read */
    int copy_sends;         /* smbd_conn_send_owned failed once: large messages are copied */
    size_t offered_len;     /* the stream message bridge_chan_from_stream is looking at */
    int offered_taken;      /* ... and the channel took its buffer (take_message) */
    int offered_again;      /* the framer's next message was offered and left there (a
                               wait for memory): on_request has seen it */
    struct {                /* a large message taken from the framer whose copy into send */
        uint8_t *alloc;     /* buffers waits for memory: its allocation (NULL: none), */
        size_t cap;
        const uint8_t *msg; /* ... where it lies in it and its length */
        size_t len;
    } unsent;
    int64_t retry_timer;    /* armed while a message or the channel waits for memory */
    uint64_t bytes;         /* read from the stream, or fed (smbd_bridge_feed) */
    uint64_t fed;           /* ... of which fed */
};

struct smbd_bridge {
    struct sd_loop *loop;
    struct smbd_link *link;
    struct smbd_conn *conn;
    struct bridge_chan *chan;  /* the READ/WRITE channel, NULL when off */
    enum bridge_chan_role role; /* BRIDGE_CHAN_CLIENT (the shim): requests are tracked in
                                   pending, so that a half-close awaits their answers */
    enum bridge_state state;

    int fd;                 /* the stream */
    int is_tcp;             /* ... a TCP socket: a failure resets it */
    int watched;            /* events the stream fd is watched for, -1: not watched */
    int hup;                /* the stream reported HUP (watch only while reading it) */
    int poll_held;          /* holds the loop's busy polling off (bridge_sync) */

    struct bridge_out out;  /* link -> stream */
    struct bridge_in in;    /* stream -> link */

    /* The end (bridge_end.c). */
    struct smb2_pending pending; /* client role: the program's requests not answered yet */
    uint32_t half_close_ms, close_ms; /* opts', or their defaults */
    int64_t half_close_timer; /* HALF_CLOSED, FINISHED: half_close_ms */
    int64_t close_timer;    /* DISCONNECTING: close_ms */
    int64_t end_timer;      /* the end, made at start far ahead (bridge_end_reserve) and
                               brought forward at CLOSED, FAILED: ending needs no memory */
    int end_err;            /* ... for on_end */
    char end_reason[256];
    bridge_end_fn on_end;
    void *ctx;
    void (*on_inline_io)(void *ctx); /* opts.on_inline_io */
    void (*on_request)(void *ctx, const uint8_t *msg, size_t len); /* opts.on_request */
    int (*signing_key)(void *ctx, uint64_t session_id,
                       struct smb2_sign_key *key); /* opts.signing_key */
};

/* ---- smbd_bridge.c: sync ---- */

/* Flow control and whatever is due after every link or stream event, outside engine
 * calls. */
void bridge_sync(struct smbd_bridge *b);

/* ---- bridge_state.c: the state ---- */

/* The one way b->state changes: 0, or -1 when the table beside enum bridge_state does
 * not allow it (logged as an error; the bridge fails, unless it ended already). */
int bridge_enter(struct smbd_bridge *b, enum bridge_state to);
extern const struct sd_fsm bridge_state_fsm; /* the table and the states' names */

/* Whether the bridge has ended (the end is scheduled): nothing moves any more. */
static inline int bridge_ended(const struct smbd_bridge *b)
{
    return b->state == BRIDGE_CLOSED || b->state == BRIDGE_FAILED;
}

/* Whether the stream is still read for the link (OPEN, FINISHING). */
static inline int bridge_reads_stream(const struct smbd_bridge *b)
{
    return b->state == BRIDGE_OPEN || b->state == BRIDGE_FINISHING;
}

/* Whether the stream is not read now: the engine's send queue is full, or the message
 * at the framer's head (or in.unsent) waits for memory. */
static inline int bridge_stream_held(const struct smbd_bridge *b)
{
    return b->in.send_blocked || b->in.mem_wait;
}

/* ---- bridge_to_stream.c: link -> stream ---- */

/* At start: the stream's way (by reference when splice_reads and the stream takes spliced
 * pages, bridge_splice_init), logged once. */
void bridge_out_choose(struct smbd_bridge *b, int splice_reads);
/* The stream's way now. */
static inline enum bridge_out_way bridge_out_way(const struct smbd_bridge *b)
{
    return b->out.splice.on ? BRIDGE_OUT_BY_REFERENCE : BRIDGE_OUT_BY_COPY;
}

/* Writes the stream queue; the socket is full (out.blocked) when bytes remain. */
void bridge_flush(struct smbd_bridge *b);
/* The engine's upcalls (struct smbd_upper) that deliver to the stream. */
void bridge_deliver_fragment(void *ctx, const uint8_t *data, size_t len, uint32_t remaining,
                             int first);
void bridge_invalidated(void *ctx, uint32_t token);
void bridge_rdma_done(void *ctx, uint64_t cookie, int status);
/* bridge_chan_host.to_stream. */
int bridge_host_to_stream(void *ctx, const struct iovec *iov, int iovcnt, uint8_t *alloc,
                          size_t cap);

/* ---- bridge_from_stream.c: stream -> link ---- */

/* Reads the stream up to the budget, sending complete messages as they arrive. */
void bridge_read_stream(struct smbd_bridge *b);
/* Sends the complete messages the framer holds while the engine queue has room. */
void bridge_send_buffered(struct smbd_bridge *b, uint64_t now);
/* Offers freed memory to what waits for it; looks again shortly while anything waits. */
void bridge_mem_wait(struct smbd_bridge *b, uint64_t now);
/* bridge_chan_host.take_message. */
int bridge_host_take_message(void *ctx, uint8_t **mem, size_t *cap);

/* ---- bridge_end.c: how the bridge ends ---- */

/* At start: makes the timer that will end the bridge (0, or -ENOMEM). */
int bridge_end_reserve(struct smbd_bridge *b);

/* The two ends, each recording the first reason and ending the bridge from the loop,
 * outside engine calls; later calls are ignored. bridge_fail: a failure (err < 0), the
 * stream is reset (RST to a TCP one) -> FAILED. bridge_close: in order -> CLOSED, the
 * stream gets its EOF; err 0 when the link was disconnected after the stream's EOF,
 * -ECONNRESET when the peer closed first (on_end gets err either way). */
void bridge_fail(struct smbd_bridge *b, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void bridge_close(struct smbd_bridge *b, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The stream reported EOF (or, at program exit, has nothing more). */
void bridge_stream_eof(struct smbd_bridge *b);
/* HALF_CLOSED, FINISHED, CLOSING: disconnects the link once nothing is left to send or
 * await. */
void bridge_disconnect_when_done(struct smbd_bridge *b, uint64_t now);
/* Flushing: ends the bridge once every delivered byte is in the stream. */
void bridge_flush_step(struct smbd_bridge *b);
/* A stream event while flushing. */
void bridge_flushing_stream_event(struct smbd_bridge *b, int revents);
/* The engine's upcall: the SMB Direct connection ended. */
void bridge_terminated(void *ctx, int err, const char *reason);

#endif
