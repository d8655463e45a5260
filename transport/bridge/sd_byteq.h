/* transport/bridge/sd_byteq.h — a growable byte FIFO in one buffer, for bytes waiting to be
 * written to a non-blocking socket: append copies, send drains with one send(2) per
 * call. No allocation per message; the buffer is rewound when empty, and a grown one is
 * given back once it drains after a small append (idle connections stay small). */
#ifndef SMBDIRECT_SD_BYTEQ_H
#define SMBDIRECT_SD_BYTEQ_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

struct sd_byteq {
    uint8_t *buf;
    size_t cap, head, tail;
    size_t last_append; /* bytes of the latest append (shrink policy) */
};

static inline size_t sd_byteq_len(const struct sd_byteq *q) { return q->tail - q->head; }

/* Appends the iovecs' bytes, skipping the first `skip` of them. 0 or -ENOMEM. */
int sd_byteq_append(struct sd_byteq *q, const struct iovec *iov, int iovcnt, size_t skip);
/* Writes queued bytes to fd (MSG_NOSIGNAL) until empty or the socket is full. Returns
 * the bytes written (0 when it would block) or -errno. */
ssize_t sd_byteq_send(struct sd_byteq *q, int fd);
void sd_byteq_free(struct sd_byteq *q);

#endif
