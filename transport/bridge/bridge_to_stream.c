/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/bridge/bridge_to_stream.c — link -> stream: what the SMB Direct peer delivers
 * goes to the stream with its Direct-TCP prefix. The engine delivers by fragments
 * straight from its receive buffers (no reassembly); a whole message or a large fragment
 * is written at once when the stream queue is empty (no copy), smaller fragments are
 * gathered in the output queue (bridge_outq) and written in batches; what the socket does
 * not take waits there. The channel's own messages for the stream (rebuilt READ
 * responses, the relay's inline requests) wait in `held` while a delivered message is
 * part-way into the stream, and a message the channel wants whole is gathered in
 * `whole` first.
 *
 * How the channel's large buffers (READ data) go into the stream is the stream's way,
 * chosen once at the bridge's start (bridge_out_choose): by reference where the stream
 * takes spliced pages (the shim's socketpair, bridge_splice), else by copy (the relay's
 * TCP stream, SMBDIRECT_SPLICE=off, a kernel that refuses). Each way is one function
 * below; the queue, its flush and the backpressure are theirs in common. */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "bridge_int.h"
#include "bridge_pool.h"
#include "log.h"
#include "sd_libc.h"

typedef int bridge_out_fn(struct smbd_bridge *b, const struct iovec *iov, int n, int last,
                          uint8_t *alloc, size_t cap);
static bridge_out_fn out_by_copy, out_by_reference;

static const struct {
    const char *name;
    bridge_out_fn *put; /* one message or fragment: see stream_out */
} ways[] = {
    [BRIDGE_OUT_BY_COPY] = { "by copy", out_by_copy },
    [BRIDGE_OUT_BY_REFERENCE] = { "by reference (splice)", out_by_reference },
};

void bridge_out_choose(struct smbd_bridge *b, int splice_reads)
{
    bridge_splice_init(&b->out.splice, b->fd, splice_reads);
    sd_debug("bridge fd %d: READ data goes into the stream %s", b->fd,
             ways[bridge_out_way(b)].name);
}

void bridge_flush(struct smbd_bridge *b)
{
    ssize_t n;

    bridge_splice_reap(&b->out.splice, b->fd, b->out.bytes);
    /* When the kernel refuses a splice mid-stream, bridge_splice_out turns the splice
     * state off (logging why): the stream is by copy from then on, never back. No byte is
     * lost or reordered: the buffer whose splice failed is still at the queue's head,
     * adopted, and this same bridge_outq_write goes on to write it and what follows by
     * sendmsg, in queue order; a buffer spliced in part before stays held in the splice
     * state, passed here always, until the reader is past it; later channel buffers take
     * out_by_copy. */
    n = bridge_outq_write(&b->out.queue, b->fd, &b->out.splice, b->out.bytes);
    if (n < 0) {
        bridge_fail(b, (int)n, "stream write: %s", strerror((int)-n));
        return;
    }
    b->out.bytes += (size_t)n;
    b->out.blocked = bridge_outq_len(&b->out.queue) > 0;
}

/* Writes iov straight to the stream (nothing is queued ahead of it); returns the bytes
 * the socket took, or -1 after failing the bridge. */
static ssize_t bridge_write_direct(struct smbd_bridge *b, struct iovec *iov, int iovcnt)
{
    struct msghdr mh = { .msg_iov = iov, .msg_iovlen = (size_t)iovcnt };
    ssize_t n;

    do
        n = sd_libc()->sendmsg(b->fd, &mh, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
        bridge_fail(b, -errno, "stream write: %s", strerror(errno));
        return -1;
    }
    n = n > 0 ? n : 0;
    b->out.bytes += (size_t)n;
    return n;
}

static size_t iov_total(const struct iovec *iov, int n)
{
    size_t total = 0;

    for (int i = 0; i < n; i++)
        total += iov[i].iov_len;
    return total;
}

/* Both ways: what the socket did not take of iov (its first sent bytes went already)
 * joins the stream queue, the pieces before the last copied, the last one adopted when it
 * is large and lies in alloc (whose allocation the queue then takes over), else copied;
 * the queue is written at the message's end or once BRIDGE_FLUSH bytes wait, unless the
 * socket is full. Returns 1 when the queue took alloc, else 0. */
static int out_queue(struct smbd_bridge *b, const struct iovec *iov, int n, size_t sent,
                     int last, uint8_t *alloc, size_t cap)
{
    size_t total = iov_total(iov, n);
    size_t lead = total - iov[n - 1].iov_len; /* the bytes before the last piece */
    size_t skip = sent > lead ? sent - lead : 0;
    int rc = 0, adopted = 0;

    if (sent < lead)
        rc = bridge_outq_append(&b->out.queue, iov, n - 1, sent);
    if (sent < total && rc == 0 && alloc && iov[n - 1].iov_len - skip >= BRIDGE_POOL_MIN)
        adopted = bridge_outq_adopt(&b->out.queue, alloc, cap,
                                    (const uint8_t *)iov[n - 1].iov_base + skip,
                                    iov[n - 1].iov_len - skip) == 0;
    if (adopted)
        b->out.adopted += iov[n - 1].iov_len - skip;
    if (sent < total && rc == 0 && !adopted)
        rc = bridge_outq_append(&b->out.queue, iov + n - 1, 1, skip);
    if (rc < 0) {
        bridge_fail(b, rc, "stream queue: %s", strerror(-rc));
        return 0;
    }
    if (!b->out.blocked && bridge_outq_len(&b->out.queue) > 0 &&
        (last || bridge_outq_len(&b->out.queue) >= BRIDGE_FLUSH))
        bridge_flush(b); /* which also gives back what the reader is past */
    else
        bridge_splice_reap(&b->out.splice, b->fd, b->out.bytes); /* a syscall only while held */
    return adopted;
}

/* By copy: with nothing queued ahead, a whole message or a large fragment goes straight
 * to the socket from where it lies; the rest is queued (out_queue). */
static int out_by_copy(struct smbd_bridge *b, const struct iovec *iov, int n, int last,
                       uint8_t *alloc, size_t cap)
{
    size_t sent = 0;

    if (bridge_outq_len(&b->out.queue) == 0 && !b->out.blocked &&
        (last || iov[n - 1].iov_len >= BRIDGE_DIRECT_MIN)) {
        ssize_t w = bridge_write_direct(b, (struct iovec *)iov, n);

        if (w < 0)
            return 0;
        sent = (size_t)w;
        b->out.blocked = sent < iov_total(iov, n);
    }
    return out_queue(b, iov, n, sent, last, alloc, cap);
}

/* By reference: a large channel buffer (the last piece, in alloc from bridge_pool) is
 * queued whole, its lead (a READ response's header) copied and the buffer adopted, and
 * the flush splices it; what is not a channel buffer goes as by copy. */
static int out_by_reference(struct smbd_bridge *b, const struct iovec *iov, int n, int last,
                            uint8_t *alloc, size_t cap)
{
    if (!alloc || iov[n - 1].iov_len < BRIDGE_POOL_MIN)
        return out_by_copy(b, iov, n, last, alloc, cap);
    return out_queue(b, iov, n, 0, last, alloc, cap);
}

/* One fragment of a delivered message (bridge_deliver_fragment; its first fragment
 * carries the Direct-TCP prefix of the whole message), or a whole message of the channel's
 * whose last piece may lie in alloc (cap bytes from bridge_pool; NULL: none), by the
 * stream's way. Smaller fragments are gathered in the stream queue and written
 * BRIDGE_FLUSH bytes at a time, or at the message's end, so the reader is not woken once
 * per fragment; what the socket does not take stays queued until it is writable. Returns
 * 1 when the queue took alloc (it is the queue's now), else 0. */
static int stream_out(struct smbd_bridge *b, const struct iovec *iov, int n, int last,
                      uint8_t *alloc, size_t cap)
{
    return ways[bridge_out_way(b)].put(b, iov, n, last, alloc, cap);
}

/* The channel's whole messages for the stream (bridge_chan_host.to_stream): written with
 * their prefix at once, or, while a delivered message is still arriving in fragments,
 * kept until its end so the two never interleave. */
int bridge_host_to_stream(void *ctx, const struct iovec *iov, int iovcnt, uint8_t *alloc,
                          size_t cap)
{
    struct smbd_bridge *b = ctx;
    uint8_t prefix[BRIDGE_FRAMER_PREFIX_SIZE];
    struct iovec all[4];
    size_t total = 0;
    int rc;

    if (bridge_ended(b) || iovcnt > 3)
        return -ECANCELED;
    for (int i = 0; i < iovcnt; i++)
        total += iov[i].iov_len;
    bridge_framer_prefix((uint32_t)total, prefix);
    all[0] = (struct iovec){ prefix, sizeof(prefix) };
    memcpy(all + 1, iov, (size_t)iovcnt * sizeof(*iov));
    if (b->out.deliver == BRIDGE_DELIVER_STREAM) {
        rc = bridge_buf_append(&b->out.held, all, iovcnt + 1, 0);
        if (rc < 0)
            bridge_fail(b, rc, "stream queue: %s", strerror(-rc));
        return rc;
    }
    rc = stream_out(b, all, iovcnt + 1, 1, alloc, cap);
    return bridge_ended(b) && !rc ? -ECANCELED : rc;
}

/* A delivered message the channel wanted whole is complete: the channel takes it, or
 * it goes to the stream as it is. */
static void deliver_whole(struct smbd_bridge *b)
{
    struct iovec iov = { bridge_buf_head(&b->out.whole), bridge_buf_len(&b->out.whole) };

    b->out.deliver = BRIDGE_DELIVER_IDLE;
    if (bridge_chan_from_peer(b->chan, iov.iov_base, iov.iov_len, 0) == 0)
        bridge_host_to_stream(b, &iov, 1, NULL, 0);
    bridge_buf_consume(&b->out.whole, bridge_buf_len(&b->out.whole));
    bridge_buf_trim(&b->out.whole);
}

void bridge_deliver_fragment(void *ctx, const uint8_t *data, size_t len, uint32_t remaining,
                             int first)
{
    struct smbd_bridge *b = ctx;
    uint8_t prefix[BRIDGE_FRAMER_PREFIX_SIZE];
    struct iovec iov[2];
    int n = 0;

    if (bridge_ended(b))
        return;
    if (first && b->role == BRIDGE_CHAN_CLIENT)
        smb2_pending_response(&b->pending, data, len);
    if (first && b->chan) {
        if (remaining > 0 && bridge_chan_wants_whole(b->chan, data, len))
            b->out.deliver = BRIDGE_DELIVER_WHOLE;
        else if (bridge_chan_from_peer(b->chan, data, len, remaining > 0) != 0)
            b->out.deliver = BRIDGE_DELIVER_SKIP; /* taken (or the bridge was failed) */
    }
    if (b->out.deliver == BRIDGE_DELIVER_WHOLE) {
        int rc = bridge_buf_append(&b->out.whole, &(struct iovec){ (void *)data, len }, 1, 0);

        if (rc < 0)
            bridge_fail(b, rc, "channel reassembly: %s", strerror(-rc));
        else if (remaining == 0)
            deliver_whole(b);
        return;
    }
    if (bridge_ended(b) || b->out.deliver == BRIDGE_DELIVER_SKIP) {
        if (remaining == 0)
            b->out.deliver = BRIDGE_DELIVER_IDLE;
        return;
    }
    if (first) {
        bridge_framer_prefix((uint32_t)(len + remaining), prefix);
        iov[n++] = (struct iovec){ prefix, sizeof(prefix) };
    }
    iov[n++] = (struct iovec){ (void *)data, len };
    b->out.deliver = remaining > 0 ? BRIDGE_DELIVER_STREAM : BRIDGE_DELIVER_IDLE;
    stream_out(b, iov, n, remaining == 0, NULL, 0);
    if (b->out.deliver == BRIDGE_DELIVER_IDLE && bridge_buf_len(&b->out.held) > 0 &&
        !bridge_ended(b)) {
        struct iovec held = { bridge_buf_head(&b->out.held), bridge_buf_len(&b->out.held) };

        stream_out(b, &held, 1, 1, NULL, 0);
        bridge_buf_consume(&b->out.held, bridge_buf_len(&b->out.held));
        bridge_buf_trim(&b->out.held);
    }
}

void bridge_invalidated(void *ctx, uint32_t token)
{
    struct smbd_bridge *b = ctx;

    if (b->chan)
        bridge_chan_invalidated(b->chan, token);
}

void bridge_rdma_done(void *ctx, uint64_t cookie, int status)
{
    struct smbd_bridge *b = ctx;

    if (b->chan && !bridge_ended(b))
        bridge_chan_rdma_done(b->chan, cookie, status);
}
