/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/bridge/bridge_from_stream.c — stream -> link: what the program (or the relay's
 * backend) writes goes to the SMB Direct peer. recv() goes straight into the framer,
 * complete messages are offered to the channel (bridge_chan) and otherwise go to
 * smbd_conn_send (which copies), or a large one, with the framer's buffer holding it, to
 * smbd_conn_send_owned (no copy); the link moves them to the provider before the loop
 * sleeps. Reading stops while the engine's send queue is above BRIDGE_SEND_HIGH and
 * resumes below BRIDGE_SEND_LOW, and while the next message waits for memory (channel
 * buffers, registered send buffers), which a short retry timer offers again. */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "bridge_int.h"
#include "bridge_pool.h"
#include "log.h"
#include "smbd_link.h"

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
    bridge_pool_put(alloc, cap);
}

/* A large stream message for the peer unchanged, without a copy: the framer's buffer
 * holding it goes to the engine, which posts its fragments from there and gives it
 * back to the pool once sent. 0 (sent, or kept in unsent until send buffers come
 * free), 1 when it could not be handed over (the message was not taken: send it as
 * usual), or -1 after the bridge was failed. Not where registered memory is budgeted
 * (RLIMIT_MEMLOCK): a copy registers fewer bytes than the message plus its headers. */
static int bridge_send_owned(struct smbd_bridge *b, const uint8_t *msg, size_t len, uint64_t now)
{
    uint8_t *mem;
    size_t cap;
    int rc;

    if (len < BRIDGE_POOL_MIN || b->in.copy_sends || smbd_link_io_limit(b->link) != UINT32_MAX ||
        bridge_framer_take(&b->in.framer, len, &mem, &cap) < 0)
        return 1;
    rc = smbd_conn_send_owned(b->conn, msg, len, mem, cap, release_to_pool, now);
    if (rc == 0)
        return 0;
    if (rc != -EMSGSIZE) { /* e.g. registration refused (RLIMIT_MEMLOCK) */
        sd_info("bridge fd %d: sending a %zu-byte message from its buffer failed (%s); large "
                "messages are copied into the send buffers from now on", b->fd, len,
                strerror(-rc));
        b->in.copy_sends = 1;
    }
    rc = bridge_send_message(b, msg, len, now); /* copied; a too-large one fails the bridge */
    if (rc == BRIDGE_SEND_WAIT) {
        b->in.unsent.alloc = mem;
        b->in.unsent.cap = cap;
        b->in.unsent.msg = msg;
        b->in.unsent.len = len;
        b->in.mem_wait = 1;
        return 0;
    }
    bridge_pool_put(mem, cap);
    return rc < 0 ? -1 : 0;
}

/* Sends in.unsent if there is one: 0 when none is left, 1 while it still waits, -1 after
 * the bridge was failed. */
static int bridge_send_unsent(struct smbd_bridge *b, uint64_t now)
{
    int rc;

    if (!b->in.unsent.alloc)
        return 0;
    rc = bridge_send_message(b, b->in.unsent.msg, b->in.unsent.len, now);
    if (rc == BRIDGE_SEND_WAIT) {
        b->in.mem_wait = 1;
        return 1;
    }
    bridge_pool_put(b->in.unsent.alloc, b->in.unsent.cap);
    b->in.unsent.alloc = NULL;
    return rc < 0 ? -1 : 0;
}

/* The channel keeps the message being offered (in.offered_len) in its own buffer
 * (bridge_chan_host.take_message). */
int bridge_host_take_message(void *ctx, uint8_t **mem, size_t *cap)
{
    struct smbd_bridge *b = ctx;
    int rc;

    if (b->in.offered_taken)
        return -EALREADY;
    rc = bridge_framer_take(&b->in.framer, b->in.offered_len, mem, cap);
    b->in.offered_taken = rc == 0;
    return rc;
}

void bridge_send_buffered(struct smbd_bridge *b, uint64_t now)
{
    const uint8_t *msg;
    const char *why;
    size_t len;
    int rc;

    if (!bridge_ended(b) && !bridge_stream_held(b) && bridge_send_unsent(b, now) != 0)
        return;
    while (!bridge_ended(b) && !bridge_stream_held(b)) {
        rc = bridge_framer_peek(&b->in.framer, &msg, &len, &why);
        if (rc == 0)
            return;
        if (rc < 0 && b->in.framer.too_long) {
            fail_too_large(b, b->in.framer.too_long);
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
        if (b->role == BRIDGE_CHAN_CLIENT)
            smb2_pending_request(&b->pending, msg, len); /* a retried one is known already */
        if (b->on_request && !b->in.offered_again)
            b->on_request(b->ctx, msg, len);
        b->in.offered_again = 0;
        b->in.offered_len = len;
        b->in.offered_taken = 0;
        rc = b->chan ? bridge_chan_from_stream(b->chan, msg, len, now) : 0;
        if (rc < 0)
            return;
        if (rc == BRIDGE_CHAN_WAIT) {
            b->in.mem_wait = 1; /* bridge_sync offers it again as memory frees */
            b->in.offered_again = 1;
            return;
        }
        if (rc == 0 && !b->in.offered_taken) { /* unchanged: handed over, or copied */
            rc = bridge_send_owned(b, msg, len, now);
            if (rc == 1) { /* not taken: copied from the framer, then dropped from it */
                rc = bridge_send_message(b, msg, len, now);
                if (rc == BRIDGE_SEND_WAIT) {
                    b->in.mem_wait = 1; /* it stays in the framer: offered again */
                    b->in.offered_again = 1;
                    return;
                }
                if (rc == 0)
                    bridge_framer_drop(&b->in.framer, len);
            }
            if (rc < 0 || b->in.unsent.alloc)
                return; /* failed, or unsent waits for send buffers */
        } else if (!b->in.offered_taken) {
            bridge_framer_drop(&b->in.framer, len); /* the channel sent it rewritten */
        }
        if (smbd_conn_send_queued(b->conn) >= BRIDGE_SEND_HIGH)
            b->in.send_blocked = 1;
    }
}

void bridge_read_stream(struct smbd_bridge *b)
{
    uint64_t now = sd_now_ms();
    size_t budget = BRIDGE_READ_BUDGET;

    bridge_send_buffered(b, now);
    while (bridge_reads_stream(b) && !bridge_stream_held(b) && budget > 0) {
        uint8_t *dst;
        size_t room;
        ssize_t n;
        int rc = bridge_framer_space(&b->in.framer, &dst, &room);

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
            else if (b->state == BRIDGE_FINISHING)
                bridge_stream_eof(b);
            break;
        }
        bridge_framer_commit(&b->in.framer, (size_t)n);
        b->in.bytes += (size_t)n;
        budget = (size_t)n < budget ? budget - (size_t)n : 0;
        bridge_send_buffered(b, now);
        if ((size_t)n < room) {
            if (b->state == BRIDGE_FINISHING)
                bridge_stream_eof(b);
            break; /* the socket had no more: its next readiness brings us back */
        }
    }
}

/* Whether the stream has nothing unread and no EOF: then bytes the program hands over
 * directly follow everything it wrote before. */
static int stream_drained(const struct smbd_bridge *b)
{
    char c;

    return recv(b->fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) < 0 && (errno == EAGAIN ||
                                                               errno == EWOULDBLOCK);
}

size_t smbd_bridge_feed(struct smbd_bridge *b, const struct iovec *iov, int iovcnt)
{
    uint64_t now = sd_now_ms();
    size_t taken = 0, off = 0;
    int i = 0, saved = errno;

    if (b->state != BRIDGE_OPEN || bridge_stream_held(b) || !stream_drained(b))
        iovcnt = 0;
    while (i < iovcnt && b->state == BRIDGE_OPEN && !bridge_stream_held(b)) {
        uint8_t *dst;
        size_t room, n;
        int rc;

        if (off == iov[i].iov_len) {
            i++;
            off = 0;
            continue;
        }
        if ((rc = bridge_framer_space(&b->in.framer, &dst, &room)) < 0) {
            bridge_fail(b, rc, "stream buffer: %s", strerror(-rc));
            break;
        }
        n = iov[i].iov_len - off < room ? iov[i].iov_len - off : room;
        memcpy(dst, (const uint8_t *)iov[i].iov_base + off, n);
        bridge_framer_commit(&b->in.framer, n);
        b->in.bytes += n;
        b->in.fed += n;
        taken += n;
        off += n;
        bridge_send_buffered(b, now);
    }
    if (iovcnt > 0)
        bridge_sync(b);
    errno = saved;
    return taken;
}

static void bridge_retry_cb(void *ctx, uint64_t now)
{
    struct smbd_bridge *b = ctx;

    (void)now;
    b->in.retry_timer = 0;
    bridge_sync(b);
}

/* Offers freed memory to what waits for it (the stream's next message, the relay's
 * channel WRITEs); while anything still waits, looks again shortly, since memory other
 * connections free raises no event here. */
void bridge_mem_wait(struct smbd_bridge *b, uint64_t now)
{
    int waiting = b->chan ? bridge_chan_retry(b->chan) : 0;

    if (b->in.mem_wait && !b->in.send_blocked) {
        b->in.mem_wait = 0;
        bridge_send_buffered(b, now);
    }
    if ((waiting || b->in.mem_wait) && b->in.retry_timer <= 0 && !bridge_ended(b))
        b->in.retry_timer = sd_loop_add_timer(b->loop, now + BRIDGE_CHAN_RETRY_MS,
                                           bridge_retry_cb, b);
}
