/* transport/bridge/smbd_bridge.c — the data pump between a Direct-TCP byte stream and an SMB
 * Direct link on an sd_loop (see smbd_bridge.h).
 *
 * Stream -> link: recv() straight into the framer, complete messages to smbd_conn_send
 * (which copies), or a large one, with the framer's buffer holding it, to
 * smbd_conn_send_owned (no copy); the link moves them to the provider before the loop
 * sleeps. Reading stops while the engine's
 * send queue is above BRIDGE_SEND_HIGH and resumes below BRIDGE_SEND_LOW.
 * Link -> stream: the engine delivers by fragments straight from its receive buffers
 * (no reassembly); a whole message or a large fragment is written with its prefix at
 * once when the stream queue is empty (no copy), smaller fragments are gathered in an
 * output queue (an sd_buf) and written in batches; what the socket does not take waits
 * there.
 * Receive credits are paused above BRIDGE_STREAM_HIGH queued bytes and resumed below
 * BRIDGE_STREAM_LOW.
 * Engine upcalls only record state; bridge_sync (run after every link event and every
 * stream event, outside engine calls) applies flow control and ends the bridge. */
#include "smbd_bridge.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "log.h"
#include "smb2_pending.h"
#include "bridge_chan.h"
#include "buf_pool.h"
#include "out_queue.h"
#include "sd_buf.h"
#include "sd_libc.h"
#include "smbd_framer.h"
#include "smbd_link_int.h"

#define BRIDGE_SEND_HIGH     (4u << 20) /* engine send queue: stop reading the stream */
#define BRIDGE_SEND_LOW      (1u << 20) /* ... and resume */
#define BRIDGE_STREAM_HIGH   (4u << 20) /* stream write queue: pause receive credits */
#define BRIDGE_STREAM_LOW    (1u << 20) /* ... and resume */
#define BRIDGE_READ_BUDGET   (4u << 20) /* stream bytes read per event, for fairness */
#define BRIDGE_FLUSH         (64u << 10) /* gathered fragment bytes written at once */
#define BRIDGE_DIRECT_MIN    (64u << 10) /* a fragment this large is written uncopied */
#define BRIDGE_CLOSE_MS      2000       /* orderly disconnect after stream EOF */
#define BRIDGE_CHAN_RETRY_MS 2          /* retry while a message waits for memory */
#define BRIDGE_SEND_WAIT     BRIDGE_CHAN_WAIT /* bridge_send_message: no send buffers now */
#define BRIDGE_HALF_CLOSE_MS 10000      /* after the program's SHUT_WR: the most we wait for
                                           the answers to what it asked */
#define BRIDGE_OUTQ_BASE     (64u << 10) /* output queue: first allocation */
#define BRIDGE_OUTQ_IDLE     (256u << 10) /* ... and the most an idle queue keeps */

typedef void (*bridge_end_fn)(void *ctx, const struct smbd_bridge_stats *st, int err);

struct smbd_bridge {
    struct sd_loop *loop;
    struct smbd_link *link;
    struct smbd_conn *conn;
    int fd;
    int is_tcp;
    int watched;            /* events the stream fd is watched for, -1: not watched */
    int hup;                /* the stream reported HUP (watch only while reading it) */
    struct smbd_framer framer;
    struct out_queue outq;  /* delivered bytes the stream has not taken yet */
    int out_blocked;        /* the stream socket is full: write again once writable */
    int mid_message;        /* a delivered message is part-way into the stream */
    struct sd_buf held;     /* the channel's messages waiting for that message's end */

    struct bridge_chan *chan;  /* the READ/WRITE channel, NULL when off */
    struct sd_buf whole;    /* a delivered message the channel wants whole, so far */
    int whole_active;
    int skip;               /* the channel took the message being delivered */

    int send_blocked;       /* engine send queue high: not reading the stream */
    int copy_sends;         /* smbd_conn_send_owned failed once: large messages are copied */
    size_t offered_len;     /* the stream message bridge_chan_from_stream is looking at */
    int offered_taken;      /* ... and the channel took its buffer (chan_take_message_cb) */
    int mem_wait;           /* no memory for the next stream message now (channel buffers,
                               or registered send buffers near RLIMIT_MEMLOCK): it stays in
                               the framer (or in held_msg), the stream is not read */
    uint8_t *held_alloc;    /* a large message taken from the framer whose copy into send */
    size_t held_cap;        /* buffers must wait for memory: its allocation, */
    const uint8_t *held_msg; /* ... where it lies in it and its length */
    size_t held_len;
    int64_t retry_timer;    /* armed while a message or the channel waits for memory */
    int recv_paused;        /* stream queue high: receive credits paused */
    int stream_eof;
    int program_exiting;    /* smbd_bridge_finish: the stream drained means its EOF */
    int disconnecting;
    int flushing;           /* the peer closed in order: writing what it delivered */
    int track_requests;     /* client role: half-close waits for pending's answers */
    struct smb2_pending pending; /* the program's SMB2 requests not answered yet */
    int64_t half_close_timer;
    int half_close_expired;
    int orderly;            /* ending after flushing: the stream gets EOF, never RST */
    int64_t close_timer;

    int ending;
    int end_err;
    char end_reason[256];
    int64_t end_timer;

    uint64_t bytes_in, bytes_out;
    bridge_end_fn on_end;
    void *ctx;
    void (*on_inline_io)(void *ctx); /* opts.on_inline_io */
};

static void bridge_sync(struct smbd_bridge *b);
static void bridge_watch_stream(struct smbd_bridge *b);

/* ---- ending ---- */

/* After a failed end of a local (AF_UNIX) stream the program reads EOF, and what it
 * still writes is read and discarded until it closes: it sees an ordinary end of
 * the connection and an error from its protocol layer, not SIGPIPE/EPIPE. */
struct bridge_drain {
    struct sd_loop *loop;
    int fd;
};

/* Reads and drops what fd holds: 1 while it stays open (nothing more now), 0 at its EOF
 * or error. */
static int discard_input(int fd)
{
    char scratch[65536];
    ssize_t n;

    while ((n = read(fd, scratch, sizeof(scratch))) > 0)
        ;
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR);
}

static void bridge_drain_cb(void *ctx, int revents)
{
    struct bridge_drain *d = ctx;

    (void)revents;
    if (discard_input(d->fd))
        return;
    sd_loop_del_fd(d->loop, d->fd);
    close(d->fd);
    free(d);
}

static void bridge_close_stream(struct smbd_bridge *b)
{
    struct bridge_drain *d;

    if (b->end_err != 0 && b->is_tcp && !b->orderly) {
        struct linger lg = { .l_onoff = 1, .l_linger = 0 }; /* close sends RST */

        sd_libc()->setsockopt(b->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
    } else if (b->end_err != 0 && (d = malloc(sizeof(*d))) != NULL) {
        d->loop = b->loop;
        d->fd = b->fd;
        shutdown(b->fd, SHUT_WR);
        if (sd_loop_add_fd(b->loop, b->fd, SD_EV_IN, bridge_drain_cb, d) == 0)
            return;
        free(d);
    }
    shutdown(b->fd, SHUT_RDWR);
    close(b->fd);
}

void smbd_bridge_get_stats(const struct smbd_bridge *b, struct smbd_bridge_stats *st)
{
    memset(st, 0, sizeof(*st));
    smbd_conn_get_stats(b->conn, &st->smbd);
    smbd_conn_query(b->conn, &st->params);
    st->stream_bytes_in = b->bytes_in;
    st->stream_bytes_out = b->bytes_out;
    if (b->chan)
        bridge_chan_get_stats(b->chan, &st->chan);
}

static void bridge_end_cb(void *ctx, uint64_t now)
{
    struct smbd_bridge *b = ctx;
    struct smbd_bridge_stats st = { 0 };

    (void)now;
    if (b->close_timer > 0)
        sd_loop_cancel_timer(b->loop, b->close_timer);
    if (b->retry_timer > 0)
        sd_loop_cancel_timer(b->loop, b->retry_timer);
    if (b->half_close_timer > 0)
        sd_loop_cancel_timer(b->loop, b->half_close_timer);
    smb2_pending_fini(&b->pending);
    if (b->end_err == 0 && out_queue_len(&b->outq) > 0)
        (void)out_queue_write(&b->outq, b->fd); /* last bytes of an orderly end, best effort */
    smbd_bridge_get_stats(b, &st);
    st.reason = b->end_reason;
    bridge_chan_free(b->chan); /* deregisters through the link's engine: before it goes */
    smbd_link_set_upper(b->link, NULL, NULL);
    smbd_link_free(b->link);
    bridge_close_stream(b);
    smbd_framer_destroy(&b->framer);
    out_queue_free(&b->outq);
    sd_buf_free(&b->held);
    sd_buf_free(&b->whole);
    if (b->held_alloc)
        buf_pool_put(b->held_alloc, b->held_cap);
    buf_pool_unref();
    b->on_end(b->ctx, &st, b->end_err);
    free(b);
}

/* Records the first reason and ends the bridge from the loop, outside engine calls. */
static void bridge_fail(struct smbd_bridge *b, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void bridge_fail(struct smbd_bridge *b, int err, const char *fmt, ...)
{
    va_list ap;

    if (b->ending)
        return;
    b->ending = 1;
    b->end_err = err;
    va_start(ap, fmt);
    vsnprintf(b->end_reason, sizeof(b->end_reason), fmt, ap);
    va_end(ap);
    if (b->watched >= 0)
        sd_loop_del_fd(b->loop, b->fd);
    b->watched = -1;
    b->end_timer = sd_loop_add_timer(b->loop, 0, bridge_end_cb, b);
    if (b->end_timer < 0) /* cannot defer: the loop is out of memory; end on the close timer */
        sd_error("bridge: cannot schedule the end: %s", strerror((int)-b->end_timer));
    /* What the program sent cannot be carried: say why and what to do. Link losses
     * were logged by the engine already. */
    if (err == -EPROTO || err == -EMSGSIZE)
        sd_error("SMB Direct connection closed: %s", b->end_reason);
    else
        sd_debug("bridge fd %d ending: %s", b->fd, b->end_reason);
}

/* The program sent an SMB2 message the peer cannot reassemble (3.1.4.2). */
static void fail_too_large(struct smbd_bridge *b, size_t len)
{
    struct smbd_params p;

    smbd_conn_query(b->conn, &p);
    bridge_fail(b, -EMSGSIZE, "a %zu-byte SMB2 message exceeds the peer's MaxFragmentedSize "
                "of %u bytes (MS-SMBD 3.1.4.2); the server must offer a larger "
                "MaxFragmentedSize, or the program must use smaller reads/writes",
                len, p.neg.max_fragmented_send_size);
}

static void bridge_close_timeout_cb(void *ctx, uint64_t now)
{
    struct smbd_bridge *b = ctx;

    (void)now;
    b->close_timer = 0;
    if (!b->ending)
        bridge_fail(b, 0, "stream closed; SMB Direct disconnect not confirmed in %d ms",
                    BRIDGE_CLOSE_MS);
}

/* ---- link -> stream ---- */

/* Writes the stream queue; the socket is full (out_blocked) when bytes remain. */
static void bridge_flush(struct smbd_bridge *b)
{
    ssize_t n = out_queue_write(&b->outq, b->fd);

    if (n < 0) {
        bridge_fail(b, (int)n, "stream write: %s", strerror((int)-n));
        return;
    }
    b->bytes_out += (size_t)n;
    b->out_blocked = out_queue_len(&b->outq) > 0;
}

/* Writes iov straight to the stream (nothing is queued ahead of it); returns the bytes
 * the socket took, or -1 after failing the bridge. */
static ssize_t bridge_write_direct(struct smbd_bridge *b, struct iovec *iov, int iovcnt)
{
    struct msghdr mh = { .msg_iov = iov, .msg_iovlen = (size_t)iovcnt };
    ssize_t n;

    do
        n = sendmsg(b->fd, &mh, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
        bridge_fail(b, -errno, "stream write: %s", strerror(errno));
        return -1;
    }
    n = n > 0 ? n : 0;
    b->bytes_out += (size_t)n;
    return n;
}

/* One fragment of a delivered message (deliver_fragment): its first fragment carries
 * the Direct-TCP prefix of the whole message. A whole message, or a large fragment,
 * goes straight to the socket when nothing is queued; smaller fragments are gathered
 * in the stream queue and written BRIDGE_FLUSH bytes at a time, or at the message's
 * end, so the reader is not woken once per fragment. What the socket does not take
 * stays queued until it is writable: copied, except a large last piece lying in alloc
 * (cap bytes from buf_pool; NULL: none), whose allocation the queue then takes over.
 * Returns 1 when it did (alloc is the queue's now), else 0. */
static int stream_out(struct smbd_bridge *b, const struct iovec *iov, int n, int last,
                      uint8_t *alloc, size_t cap)
{
    size_t total = 0, sent = 0, lead, skip;
    int rc = 0, adopted = 0;

    for (int i = 0; i < n; i++)
        total += iov[i].iov_len;
    if (out_queue_len(&b->outq) == 0 && !b->out_blocked &&
        (last || iov[n - 1].iov_len >= BRIDGE_DIRECT_MIN)) {
        ssize_t w = bridge_write_direct(b, (struct iovec *)iov, n);

        if (w < 0)
            return 0;
        sent = (size_t)w;
        b->out_blocked = sent < total;
    }
    lead = total - iov[n - 1].iov_len; /* the bytes before the last piece */
    skip = sent > lead ? sent - lead : 0;
    if (sent < lead)
        rc = out_queue_append(&b->outq, iov, n - 1, sent);
    if (sent < total && rc == 0 && alloc && iov[n - 1].iov_len - skip >= BUF_POOL_MIN)
        adopted = out_queue_adopt(&b->outq, alloc, cap,
                                  (const uint8_t *)iov[n - 1].iov_base + skip,
                                  iov[n - 1].iov_len - skip) == 0;
    if (sent < total && rc == 0 && !adopted)
        rc = out_queue_append(&b->outq, iov + n - 1, 1, skip);
    if (rc < 0) {
        bridge_fail(b, rc, "stream queue: %s", strerror(-rc));
        return 0;
    }
    if (!b->out_blocked && out_queue_len(&b->outq) > 0 &&
        (last || out_queue_len(&b->outq) >= BRIDGE_FLUSH))
        bridge_flush(b);
    return adopted;
}

/* The channel's whole messages for the stream (bridge_chan_host.to_stream): written with
 * their prefix at once, or, while a delivered message is still arriving in fragments,
 * kept until its end so the two never interleave. */
static int chan_to_stream(void *ctx, const struct iovec *iov, int iovcnt, uint8_t *alloc,
                          size_t cap)
{
    struct smbd_bridge *b = ctx;
    uint8_t prefix[SMBD_FRAMER_PREFIX_SIZE];
    struct iovec all[4];
    size_t total = 0;
    int rc;

    if (b->ending || iovcnt > 3)
        return -ECANCELED;
    for (int i = 0; i < iovcnt; i++)
        total += iov[i].iov_len;
    smbd_framer_prefix((uint32_t)total, prefix);
    all[0] = (struct iovec){ prefix, sizeof(prefix) };
    memcpy(all + 1, iov, (size_t)iovcnt * sizeof(*iov));
    if (b->mid_message) {
        rc = sd_buf_append(&b->held, all, iovcnt + 1, 0);
        if (rc < 0)
            bridge_fail(b, rc, "stream queue: %s", strerror(-rc));
        return rc;
    }
    rc = stream_out(b, all, iovcnt + 1, 1, alloc, cap);
    return b->ending && !rc ? -ECANCELED : rc;
}

static void chan_fail_cb(void *ctx, int err, const char *why)
{
    bridge_fail(ctx, err, "%s", why);
}

static size_t chan_backlog_cb(void *ctx)
{
    struct smbd_bridge *b = ctx;

    return out_queue_len(&b->outq);
}

static void chan_inline_io_cb(void *ctx)
{
    struct smbd_bridge *b = ctx;

    if (b->on_inline_io)
        b->on_inline_io(b->ctx);
}

/* A delivered message the channel wanted whole is complete: the channel takes it, or
 * it goes to the stream as it is. */
static void deliver_whole(struct smbd_bridge *b)
{
    struct iovec iov = { sd_buf_head(&b->whole), sd_buf_len(&b->whole) };

    b->whole_active = 0;
    if (bridge_chan_from_peer(b->chan, iov.iov_base, iov.iov_len, 0) == 0)
        chan_to_stream(b, &iov, 1, NULL, 0);
    sd_buf_consume(&b->whole, sd_buf_len(&b->whole));
    sd_buf_trim(&b->whole);
}

static void br_deliver_fragment(void *ctx, const uint8_t *data, size_t len, uint32_t remaining,
                                int first)
{
    struct smbd_bridge *b = ctx;
    uint8_t prefix[SMBD_FRAMER_PREFIX_SIZE];
    struct iovec iov[2];
    int n = 0;

    if (b->ending)
        return;
    if (first && b->track_requests)
        smb2_pending_response(&b->pending, data, len);
    if (first && b->chan) {
        if (remaining > 0 && bridge_chan_wants_whole(b->chan, data, len))
            b->whole_active = 1;
        else if (bridge_chan_from_peer(b->chan, data, len, remaining > 0) != 0)
            b->skip = 1; /* the channel took the message (or failed the bridge) */
    }
    if (b->whole_active) {
        int rc = sd_buf_append(&b->whole, &(struct iovec){ (void *)data, len }, 1, 0);

        if (rc < 0)
            bridge_fail(b, rc, "channel reassembly: %s", strerror(-rc));
        else if (remaining == 0)
            deliver_whole(b);
        return;
    }
    if (b->ending || b->skip) {
        b->skip = remaining > 0 && b->skip;
        return;
    }
    if (first) {
        smbd_framer_prefix((uint32_t)(len + remaining), prefix);
        iov[n++] = (struct iovec){ prefix, sizeof(prefix) };
    }
    iov[n++] = (struct iovec){ (void *)data, len };
    b->mid_message = remaining > 0;
    stream_out(b, iov, n, remaining == 0, NULL, 0);
    if (!b->mid_message && sd_buf_len(&b->held) > 0 && !b->ending) {
        stream_out(b, &(struct iovec){ sd_buf_head(&b->held), sd_buf_len(&b->held) }, 1, 1, NULL,
                   0);
        sd_buf_consume(&b->held, sd_buf_len(&b->held));
        sd_buf_trim(&b->held);
    }
}

static void br_invalidated(void *ctx, uint32_t token)
{
    struct smbd_bridge *b = ctx;

    if (b->chan)
        bridge_chan_invalidated(b->chan, token);
}

static void br_rdma_done(void *ctx, uint64_t cookie, int status)
{
    struct smbd_bridge *b = ctx;

    if (b->chan && !b->ending)
        bridge_chan_rdma_done(b->chan, cookie, status);
}

/* Flushing: once every delivered byte is in the stream, it ends with EOF (TCP's FIN
 * after the last byte), not a reset. */
static void bridge_flush_step(struct smbd_bridge *b)
{
    if (b->ending || out_queue_len(&b->outq) > 0)
        return;
    b->orderly = 1;
    bridge_fail(b, -ECONNRESET, "SMB Direct: the peer closed the connection in order (MS-SMBD "
                "3.1.7.1); every byte it sent was delivered");
}

static void br_terminated(void *ctx, int err, const char *reason)
{
    struct smbd_bridge *b = ctx;

    if (b->disconnecting && err == 0) {
        bridge_fail(b, 0, "stream closed; SMB Direct disconnected");
    } else if (smbd_conn_peer_closed(b->conn) && !b->mid_message && !b->whole_active &&
               sd_buf_len(&b->held) == 0) {
        /* Between messages: like TCP, every byte the peer sent before it closed reaches
         * the stream before its end, however slowly the program or backend reads. */
        b->flushing = 1;
        bridge_flush_step(b);
    } else {
        bridge_fail(b, err ? err : -ECONNRESET, "SMB Direct: %s", reason);
    }
}

static const struct smbd_upper bridge_upper = {
    .deliver_fragment = br_deliver_fragment,
    .invalidated = br_invalidated,
    .rdma_done = br_rdma_done,
    .terminated = br_terminated,
};

/* ---- stream -> link ---- */

/* Whether the stream is not read now: the engine's send queue is full, or the message
 * at the framer's head (or held_msg) waits for memory. */
static int stream_held(const struct smbd_bridge *b)
{
    return b->send_blocked || b->mem_wait;
}

/* One message from the stream to the SMB Direct peer unchanged. 0, BRIDGE_SEND_WAIT (the
 * send buffers it needs cannot be registered until earlier sends complete: nothing was
 * sent, offer it again), or -1 after the bridge was failed. */
static int bridge_send_message(struct smbd_bridge *b, const uint8_t *msg, size_t len,
                               uint64_t now)
{
    int rc = smbd_conn_send(b->conn, &(struct iovec){ (void *)msg, len }, 1, now);

    if (rc == -EAGAIN)
        return BRIDGE_SEND_WAIT;
    if (rc == -EMSGSIZE) {
        fail_too_large(b, len);
        return -1;
    }
    if (rc < 0) {
        bridge_fail(b, rc, "SMB Direct send: %s", strerror(-rc));
        return -1;
    }
    return 0;
}

static void release_to_pool(uint8_t *alloc, size_t cap)
{
    buf_pool_put(alloc, cap);
}

/* A large stream message for the peer unchanged, without a copy: the framer's buffer
 * holding it goes to the engine, which posts its fragments from there and gives it
 * back to the pool once sent. 0 (sent, or held in held_msg until send buffers come
 * free), 1 when it could not be handed over (the message was not taken: send it as
 * usual), or -1 after the bridge was failed. Not where registered memory is budgeted
 * (RLIMIT_MEMLOCK): a copy registers fewer bytes than the message plus its headers. */
static int bridge_send_owned(struct smbd_bridge *b, const uint8_t *msg, size_t len, uint64_t now)
{
    uint8_t *mem;
    size_t cap;
    int rc;

    if (len < BUF_POOL_MIN || b->copy_sends || smbd_link_io_limit(b->link) != UINT32_MAX ||
        smbd_framer_take(&b->framer, len, &mem, &cap) < 0)
        return 1;
    rc = smbd_conn_send_owned(b->conn, msg, len, mem, cap, release_to_pool, now);
    if (rc == 0)
        return 0;
    if (rc != -EMSGSIZE) { /* e.g. registration refused (RLIMIT_MEMLOCK) */
        sd_info("bridge fd %d: sending a %zu-byte message from its buffer failed (%s); large "
                "messages are copied into the send buffers from now on", b->fd, len,
                strerror(-rc));
        b->copy_sends = 1;
    }
    rc = bridge_send_message(b, msg, len, now); /* copied; a too-large one fails the bridge */
    if (rc == BRIDGE_SEND_WAIT) {
        b->held_alloc = mem;
        b->held_cap = cap;
        b->held_msg = msg;
        b->held_len = len;
        b->mem_wait = 1;
        return 0;
    }
    buf_pool_put(mem, cap);
    return rc < 0 ? -1 : 0;
}

/* Sends held_msg if there is one: 0 when none is left, 1 while it still waits, -1 after
 * the bridge was failed. */
static int bridge_send_held(struct smbd_bridge *b, uint64_t now)
{
    int rc;

    if (!b->held_alloc)
        return 0;
    rc = bridge_send_message(b, b->held_msg, b->held_len, now);
    if (rc == BRIDGE_SEND_WAIT) {
        b->mem_wait = 1;
        return 1;
    }
    buf_pool_put(b->held_alloc, b->held_cap);
    b->held_alloc = NULL;
    return rc < 0 ? -1 : 0;
}

/* The channel keeps the message being offered (b->offered) in its own buffer. */
static int chan_take_message_cb(void *ctx, uint8_t **mem, size_t *cap)
{
    struct smbd_bridge *b = ctx;
    int rc;

    if (b->offered_taken)
        return -EALREADY;
    rc = smbd_framer_take(&b->framer, b->offered_len, mem, cap);
    b->offered_taken = rc == 0;
    return rc;
}

/* Sends the complete messages the framer holds while the engine queue has room. */
static void bridge_send_buffered(struct smbd_bridge *b, uint64_t now)
{
    const uint8_t *msg;
    const char *why;
    size_t len;
    int rc;

    if (!b->ending && !stream_held(b) && bridge_send_held(b, now) != 0)
        return;
    while (!b->ending && !stream_held(b)) {
        rc = smbd_framer_peek(&b->framer, &msg, &len, &why);
        if (rc == 0)
            return;
        if (rc < 0 && b->framer.too_long) {
            fail_too_large(b, b->framer.too_long);
            return;
        }
        if (rc < 0) {
            bridge_fail(b, -EPROTO, "stream: %s", why);
            return;
        }
        if (len == 0) {
            /* MS-SMBD 2.2.3: an empty Data Transfer only carries credits or a
             * keepalive, so an empty frame would vanish; SMB2 never sends one. */
            bridge_fail(b, -EPROTO, "stream: a zero-length SMB2 message cannot be carried "
                        "over SMB Direct (an empty Data Transfer is a credit/keepalive message, "
                        "MS-SMBD 2.2.3)");
            return;
        }
        if (b->track_requests)
            smb2_pending_request(&b->pending, msg, len); /* a retried one is known already */
        b->offered_len = len;
        b->offered_taken = 0;
        rc = b->chan ? bridge_chan_from_stream(b->chan, msg, len, now) : 0;
        if (rc < 0)
            return;
        if (rc == BRIDGE_CHAN_WAIT) {
            b->mem_wait = 1; /* bridge_sync offers it again as memory frees */
            return;
        }
        if (rc == 0 && !b->offered_taken) { /* unchanged: handed over, or copied */
            rc = bridge_send_owned(b, msg, len, now);
            if (rc == 1) { /* not taken: copied from the framer, then dropped from it */
                rc = bridge_send_message(b, msg, len, now);
                if (rc == BRIDGE_SEND_WAIT) {
                    b->mem_wait = 1; /* it stays in the framer: offered again */
                    return;
                }
                if (rc == 0)
                    smbd_framer_drop(&b->framer, len);
            }
            if (rc < 0 || b->held_alloc)
                return; /* failed, or held_msg waits for send buffers */
        } else if (!b->offered_taken) {
            smbd_framer_drop(&b->framer, len); /* the channel sent it rewritten */
        }
        if (smbd_conn_send_queued(b->conn) >= BRIDGE_SEND_HIGH)
            b->send_blocked = 1;
    }
}

static void bridge_half_close_cb(void *ctx, uint64_t now)
{
    struct smbd_bridge *b = ctx;

    (void)now;
    b->half_close_timer = 0;
    b->half_close_expired = 1;
    bridge_sync(b);
}

static void bridge_stream_eof(struct smbd_bridge *b)
{
    b->stream_eof = 1;
    if (b->track_requests)
        b->half_close_timer = sd_loop_add_timer(b->loop, sd_now_ms() + BRIDGE_HALF_CLOSE_MS,
                                                bridge_half_close_cb, b);
    if (smbd_framer_buffered(&b->framer) > 0)
        sd_debug("bridge fd %d: stream ended inside a message (%zu bytes dropped)", b->fd,
                 smbd_framer_buffered(&b->framer));
}

/* Reads up to the budget, sending complete messages as they arrive. */
static void bridge_read_stream(struct smbd_bridge *b)
{
    uint64_t now = sd_now_ms();
    size_t budget = BRIDGE_READ_BUDGET;

    bridge_send_buffered(b, now);
    while (!b->ending && !stream_held(b) && !b->stream_eof && budget > 0) {
        uint8_t *dst;
        size_t room;
        ssize_t n;
        int rc = smbd_framer_space(&b->framer, &dst, &room);

        if (rc < 0) {
            bridge_fail(b, rc, "stream buffer: %s", strerror(-rc));
            break;
        }
        n = recv(b->fd, dst, room, 0);
        if (n == 0) {
            bridge_stream_eof(b);
            break;
        }
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK)
                bridge_fail(b, -errno, "stream read: %s", strerror(errno));
            else if (b->program_exiting)
                bridge_stream_eof(b);
            break;
        }
        smbd_framer_commit(&b->framer, (size_t)n);
        b->bytes_in += (size_t)n;
        budget = (size_t)n < budget ? budget - (size_t)n : 0;
        bridge_send_buffered(b, now);
        if ((size_t)n < room) {
            if (b->program_exiting)
                bridge_stream_eof(b);
            break; /* the socket had no more: its next readiness brings us back */
        }
    }
}

static void bridge_stream_cb(void *ctx, int revents)
{
    struct smbd_bridge *b = ctx;

    if (b->flushing) {
        if (revents & SD_EV_OUT)
            bridge_flush(b);
        /* What the program or backend still writes has nowhere to go: read and dropped,
         * so it never blocks on a full socket. */
        if (!b->ending && (revents & (SD_EV_IN | SD_EV_HUP | SD_EV_ERR)) &&
            !discard_input(b->fd)) {
            b->orderly = 1; /* the other side is gone too: nothing left to deliver */
            bridge_fail(b, -ECONNRESET, "SMB Direct: the peer closed the connection in order "
                        "(MS-SMBD 3.1.7.1); the stream ended before all was written");
        }
        bridge_sync(b);
        return;
    }
    if (revents & SD_EV_ERR) {
        int soerr = 0;
        socklen_t sl = sizeof(soerr);

        sd_libc()->getsockopt(b->fd, SOL_SOCKET, SO_ERROR, &soerr, &sl);
        bridge_fail(b, soerr ? -soerr : -EIO, "stream error: %s",
                    strerror(soerr ? soerr : EIO));
        return;
    }
    if (revents & SD_EV_OUT) {
        bridge_flush(b);
        if (b->ending)
            return;
    }
    if (revents & SD_EV_HUP)
        b->hup = 1;
    if ((revents & (SD_EV_IN | SD_EV_HUP)) && (b->watched & SD_EV_IN))
        bridge_read_stream(b);
    bridge_sync(b);
}

/* ---- state ---- */

static void bridge_watch_stream(struct smbd_bridge *b)
{
    int want = 0, rc = 0;

    if (b->flushing)
        want |= SD_EV_IN; /* read and dropped */
    else if (!b->stream_eof && !stream_held(b) && !b->disconnecting)
        want |= SD_EV_IN;
    if (out_queue_len(&b->outq) > 0)
        want |= SD_EV_OUT;
    if (want == 0 && b->hup)
        want = -1; /* a hung-up fd would report HUP forever: stop watching it */
    if (want == b->watched)
        return;
    if (want < 0)
        rc = sd_loop_del_fd(b->loop, b->fd);
    else if (b->watched < 0)
        rc = sd_loop_add_fd(b->loop, b->fd, want, bridge_stream_cb, b);
    else
        rc = sd_loop_mod_fd(b->loop, b->fd, want);
    b->watched = want;
    if (rc < 0)
        bridge_fail(b, rc, "cannot watch the stream: %s", strerror(-rc));
}

/* TCP's half-close, which SMB Direct cannot carry: after the program's shutdown(SHUT_WR)
 * a TCP server still answers what it was asked before it closes, so the link stays up
 * until every request the program sent has its final response written to the stream.
 * The program's full close (HUP), unreadable (encrypted) traffic past
 * BRIDGE_HALF_CLOSE_MS, or that bound itself end the wait. */
static int awaits_answers(const struct smbd_bridge *b)
{
    if (b->program_exiting) /* nobody reads answers: only the peer's RDMA must finish */
        return b->chan && bridge_chan_busy(b->chan) && !b->half_close_expired;
    if (!b->track_requests || b->hup || b->half_close_expired)
        return 0;
    return !smb2_pending_known(&b->pending) || smb2_pending_count(&b->pending) > 0 ||
           out_queue_len(&b->outq) > 0;
}

static void bridge_retry_cb(void *ctx, uint64_t now)
{
    struct smbd_bridge *b = ctx;

    (void)now;
    b->retry_timer = 0;
    bridge_sync(b);
}

/* Offers freed memory to what waits for it (the stream's next message, the relay's
 * channel WRITEs); while anything still waits, looks again shortly, since memory other
 * connections free raises no event here. */
static void bridge_mem_wait(struct smbd_bridge *b, uint64_t now)
{
    int waiting = b->chan ? bridge_chan_retry(b->chan) : 0;

    if (b->mem_wait && !b->send_blocked) {
        b->mem_wait = 0;
        bridge_send_buffered(b, now);
    }
    if ((waiting || b->mem_wait) && b->retry_timer <= 0 && !b->ending)
        b->retry_timer = sd_loop_add_timer(b->loop, now + BRIDGE_CHAN_RETRY_MS,
                                           bridge_retry_cb, b);
}

static void bridge_sync(struct smbd_bridge *b)
{
    uint64_t now = sd_now_ms();
    size_t outq = out_queue_len(&b->outq);

    if (!b->ending && !b->out_blocked && outq > 0) {
        bridge_flush(b); /* fragments gathered during this event, without waiting for POLLOUT */
        outq = out_queue_len(&b->outq);
    }
    if (b->ending)
        return;
    if (b->flushing) { /* the link is gone: only the stream's output is left */
        bridge_flush_step(b);
        if (!b->ending)
            bridge_watch_stream(b);
        return;
    }
    if (!b->recv_paused && outq >= BRIDGE_STREAM_HIGH) {
        b->recv_paused = 1;
        smbd_conn_pause_receive(b->conn, 1, now);
    } else if (b->recv_paused && outq <= BRIDGE_STREAM_LOW) {
        b->recv_paused = 0;
        smbd_conn_pause_receive(b->conn, 0, now); /* the credits go out before the loop sleeps */
    }
    if (b->send_blocked && smbd_conn_send_queued(b->conn) <= BRIDGE_SEND_LOW) {
        b->send_blocked = 0;
        bridge_send_buffered(b, now); /* messages already in the framer need no event */
    }
    bridge_mem_wait(b, now);
    if (b->program_exiting && !b->stream_eof && !stream_held(b))
        bridge_read_stream(b); /* to the end of what the exiting program wrote */
    if (b->stream_eof && !b->disconnecting && !b->ending && !b->mem_wait && !b->held_alloc &&
        smbd_conn_send_queued(b->conn) == 0 && !awaits_answers(b)) {
        b->disconnecting = 1;
        smbd_conn_disconnect(b->conn);
        b->close_timer = sd_loop_add_timer(b->loop, now + BRIDGE_CLOSE_MS,
                                           bridge_close_timeout_cb, b);
    }
    if (!b->ending)
        bridge_watch_stream(b);
}

static void bridge_after_link(void *ctx)
{
    bridge_sync(ctx);
}

static uint64_t or_unbounded(uint64_t limit)
{
    return limit ? limit : UINT64_MAX;
}

static int stream_is_tcp(int fd)
{
    int domain = 0;
    socklen_t sl = sizeof(domain);

    return sd_libc()->getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &sl) == 0 &&
           (domain == AF_INET || domain == AF_INET6);
}

struct smbd_bridge *smbd_bridge_start(struct sd_loop *loop, struct smbd_link *link, int stream_fd,
                                      const struct smbd_bridge_opts *opts, bridge_end_fn on_end,
                                      void *ctx)
{
    struct smbd_bridge *b = calloc(1, sizeof(*b));
    struct smbd_params p;
    int flags = fcntl(stream_fd, F_GETFL), rc;

    if (!b || flags < 0 || fcntl(stream_fd, F_SETFL, flags | O_NONBLOCK) < 0 ||
        smbd_conn_query(smbd_link_conn(link), &p) < 0) {
        sd_error("bridge: cannot start on fd %d", stream_fd);
        goto fail;
    }
    *b = (struct smbd_bridge){ .loop = loop, .link = link, .conn = smbd_link_engine(link),
                               .fd = stream_fd, .is_tcp = stream_is_tcp(stream_fd),
                               .watched = -1, .on_end = on_end, .ctx = ctx,
                               .on_inline_io = opts ? opts->on_inline_io : NULL,
                               .track_requests = opts && opts->channel == BRIDGE_CHAN_CLIENT };
    smb2_pending_init(&b->pending);
    buf_pool_ref(); /* released in the end, or below on failure */
    out_queue_init(&b->outq, BRIDGE_OUTQ_BASE, BRIDGE_OUTQ_IDLE);
    sd_buf_init(&b->held, BRIDGE_OUTQ_BASE, BRIDGE_OUTQ_IDLE);
    sd_buf_init(&b->whole, BRIDGE_OUTQ_BASE, BRIDGE_OUTQ_IDLE);
    if (opts && opts->channel != BRIDGE_CHAN_OFF) {
        const struct bridge_chan_host host = { .conn = b->conn, .ctx = b,
                                               .remote_invalidation =
                                                   smbd_link_provider(link)->remote_invalidation,
                                               .to_stream = chan_to_stream,
                                               .fail = chan_fail_cb,
                                               .inline_io = chan_inline_io_cb,
                                               .stream_backlog = chan_backlog_cb,
                                               .take_message = chan_take_message_cb,
                                               .mem_limit = or_unbounded(opts->channel_memory),
                                               .mem_limit_total =
                                                   or_unbounded(opts->channel_memory_total) };

        if (!(b->chan = bridge_chan_new(opts->channel, opts->channel_threshold, &host)))
            goto fail;
    }
    /* With the channel a client's large WRITE leaves as a small request: the framer
     * takes any Direct-TCP length, and what still cannot be sent inline is refused by
     * the engine (fail_too_large). */
    rc = smbd_framer_init(&b->framer, !b->chan && p.neg.max_fragmented_send_size <
                                                       SMBD_FRAMER_MAX_MSG
                                          ? p.neg.max_fragmented_send_size
                                          : SMBD_FRAMER_MAX_MSG);
    if (rc < 0)
        goto fail;
    smbd_conn_set_send_low_water(b->conn, BRIDGE_SEND_LOW);
    smbd_link_set_upper(link, &bridge_upper, b);
    rc = smbd_link_attach(link, loop, bridge_after_link, b);
    if (rc < 0) {
        smbd_link_set_upper(link, NULL, NULL);
        goto fail;
    }
    if (smbd_conn_is_terminated(b->conn))
        bridge_fail(b, -ECONNRESET, "SMB Direct connection ended before the bridge started");
    bridge_sync(b);
    return b;

fail:
    if (b && b->link) {
        bridge_chan_free(b->chan);
        buf_pool_unref();
    }
    free(b);
    smbd_link_free(link);
    close(stream_fd);
    return NULL;
}

void smbd_bridge_finish(struct smbd_bridge *b)
{
    if (b->ending)
        return;
    if (b->flushing) { /* the link is gone already: nobody will read the rest */
        bridge_fail(b, -ECONNRESET, "the program exited before reading all the peer sent");
        return;
    }
    b->program_exiting = 1;
    bridge_sync(b);
}

void smbd_bridge_stop(struct smbd_bridge *b, const char *reason)
{
    bridge_fail(b, -ECANCELED, "%s", reason);
}
