/* transport/bridge/sd_byteq.c — the byte FIFO of sd_byteq.h. */
#include "sd_byteq.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#define BYTEQ_KEEP_CAP (256u * 1024) /* an empty queue keeps at most this much */

static int byteq_reserve(struct sd_byteq *q, size_t n)
{
    size_t used = sd_byteq_len(q), cap;
    uint8_t *nb;

    if (q->cap - q->tail >= n)
        return 0;
    if (q->head > 0 && q->cap - used >= n && used <= q->cap / 2) {
        memmove(q->buf, q->buf + q->head, used); /* cheap: at most half the buffer */
        q->head = 0;
        q->tail = used;
        return 0;
    }
    cap = q->cap ? q->cap : 64u * 1024;
    while (cap < used + n)
        cap *= 2;
    nb = malloc(cap);
    if (!nb)
        return -ENOMEM;
    if (used)
        memcpy(nb, q->buf + q->head, used);
    free(q->buf);
    q->buf = nb;
    q->cap = cap;
    q->head = 0;
    q->tail = used;
    return 0;
}

int sd_byteq_append(struct sd_byteq *q, const struct iovec *iov, int iovcnt, size_t skip)
{
    size_t total = 0;
    int rc;

    for (int i = 0; i < iovcnt; i++)
        total += iov[i].iov_len;
    if (skip >= total)
        return 0;
    q->last_append = total - skip;
    if ((rc = byteq_reserve(q, total - skip)) < 0)
        return rc;
    for (int i = 0; i < iovcnt; i++) {
        size_t len = iov[i].iov_len;
        const uint8_t *p = iov[i].iov_base;

        if (skip >= len) {
            skip -= len;
            continue;
        }
        memcpy(q->buf + q->tail, p + skip, len - skip);
        q->tail += len - skip;
        skip = 0;
    }
    return 0;
}

ssize_t sd_byteq_send(struct sd_byteq *q, int fd)
{
    size_t written = 0;

    while (sd_byteq_len(q) > 0) {
        ssize_t n = send(fd, q->buf + q->head, sd_byteq_len(q), MSG_NOSIGNAL);

        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                break;
            return -errno;
        }
        q->head += (size_t)n;
        written += (size_t)n;
    }
    if (sd_byteq_len(q) == 0) {
        q->head = q->tail = 0;
        if (q->cap > BYTEQ_KEEP_CAP && q->last_append <= BYTEQ_KEEP_CAP) {
            free(q->buf);
            q->buf = NULL;
            q->cap = 0;
        }
    }
    return (ssize_t)written;
}

void sd_byteq_free(struct sd_byteq *q)
{
    free(q->buf);
    memset(q, 0, sizeof(*q));
}
