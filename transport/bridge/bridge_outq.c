/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/bridge/bridge_outq.c — the stream output queue of bridge_outq.h: a FIFO of
 * segments, each a bridge_buf; the last copy segment takes appends, an adopted one never
 * does (its room belongs to the message). An emptied copy segment that is the only one
 * left stays (its memory is reused, bridge_buf_trim gives a grown one back). */
#include "bridge_outq.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/socket.h>

#include "bridge_pool.h"
#include "sd_libc.h"

void bridge_outq_init(struct bridge_outq *q, size_t base_cap, size_t idle_cap)
{
    *q = (struct bridge_outq){ .base_cap = base_cap, .idle_cap = idle_cap };
}

static void seg_free(struct bridge_outq_seg *s)
{
    if (s->spliced) /* the socket may hold its pages until the reader reads them */
        bridge_pool_drop(s->buf.data, s->buf.cap);
    else
        bridge_buf_free(&s->buf); /* bridge_pool_put: adopted memory came from the pool too */
    free(s);
}

void bridge_outq_free(struct bridge_outq *q)
{
    while (q->head) {
        struct bridge_outq_seg *s = q->head;

        q->head = s->next;
        seg_free(s);
    }
    bridge_outq_init(q, q->base_cap, q->idle_cap);
}

static struct bridge_outq_seg *push_seg(struct bridge_outq *q)
{
    struct bridge_outq_seg *s = calloc(1, sizeof(*s));

    if (!s)
        return NULL;
    bridge_buf_init(&s->buf, q->base_cap, q->idle_cap);
    if (q->tail)
        q->tail->next = s;
    else
        q->head = s;
    q->tail = s;
    return s;
}

int bridge_outq_append(struct bridge_outq *q, const struct iovec *iov, int iovcnt, size_t skip)
{
    struct bridge_outq_seg *s = q->tail && !q->tail->adopted ? q->tail : push_seg(q);
    size_t before;
    int rc;

    if (!s)
        return -ENOMEM;
    before = bridge_buf_len(&s->buf);
    rc = bridge_buf_append(&s->buf, iov, iovcnt, skip);
    q->len += bridge_buf_len(&s->buf) - before;
    return rc;
}

int bridge_outq_adopt(struct bridge_outq *q, uint8_t *alloc, size_t cap, const uint8_t *data,
                      size_t len)
{
    struct bridge_outq_seg *s = push_seg(q);

    if (!s)
        return -ENOMEM;
    s->adopted = 1;
    s->buf.data = alloc;
    s->buf.cap = cap;
    s->buf.head = (size_t)(data - alloc);
    s->buf.tail = s->buf.head + len;
    q->len += len;
    return 0;
}

/* Drops n written bytes from the front, which took the stream to offset end: emptied
 * segments go, except a copy segment that is the last one (kept for the next appends). An
 * emptied segment that went by reference is held in sp until the reader is past it (NULL:
 * unmapped). */
static void consume(struct bridge_outq *q, size_t n, struct bridge_splice *sp, uint64_t end)
{
    uint64_t pos = end - n;

    q->len -= n;
    while (q->head) {
        struct bridge_outq_seg *s = q->head;
        size_t take = bridge_buf_len(&s->buf) < n ? bridge_buf_len(&s->buf) : n;

        bridge_buf_consume(&s->buf, take);
        n -= take;
        pos += take;
        if (bridge_buf_len(&s->buf) > 0)
            return;
        if (s == q->tail && !s->adopted) {
            bridge_buf_trim(&s->buf);
            return;
        }
        q->head = s->next;
        if (!q->head)
            q->tail = NULL;
        if (s->spliced && sp) {
            (void)bridge_splice_hold(sp, s->buf.data, s->buf.cap, pos);
            free(s);
        } else {
            seg_free(s);
        }
    }
}

/* The head segment, when it is adopted and sp splices: its bytes go by reference. Returns
 * the bytes written, 0 when the socket is full, or -1 when splicing just failed (the
 * bytes are then written by copy). */
static ssize_t splice_head(struct bridge_outq *q, int fd, struct bridge_splice *sp)
{
    struct bridge_outq_seg *s = q->head;
    ssize_t n = bridge_splice_out(sp, fd, bridge_buf_head(&s->buf), bridge_buf_len(&s->buf));

    if (n > 0)
        s->spliced = 1;
    return n < 0 ? -1 : n;
}

ssize_t bridge_outq_write(struct bridge_outq *q, int fd, struct bridge_splice *sp, uint64_t pos)
{
    size_t written = 0;

    while (q->len > 0) {
        struct iovec iov[BRIDGE_OUTQ_IOV_MAX];
        struct msghdr mh = { .msg_iov = iov };
        int splicing = sp && sp->on;
        ssize_t n;

        if (splicing && q->head->adopted) {
            n = splice_head(q, fd, sp);
            if (n < 0)
                continue;
            if (n == 0)
                break;
            written += (size_t)n;
            consume(q, (size_t)n, sp, pos + written);
            continue;
        }
        for (struct bridge_outq_seg *s = q->head;
             s && mh.msg_iovlen < BRIDGE_OUTQ_IOV_MAX && !(splicing && s->adopted); s = s->next)
            if (bridge_buf_len(&s->buf) > 0)
                iov[mh.msg_iovlen++] =
                    (struct iovec){ bridge_buf_head(&s->buf), bridge_buf_len(&s->buf) };
        n = sd_libc()->sendmsg(fd, &mh, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                break;
            return -errno;
        }
        written += (size_t)n;
        consume(q, (size_t)n, sp, pos + written);
    }
    return (ssize_t)written;
}
