/* transport/bridge/out_queue.h — the bytes a bridge owes its stream socket, in order:
 * small pieces copied into a growable buffer (sd_buf), and large messages adopted
 * whole (the allocation they arrived in, from buf_pool, written from where the bytes
 * lie and given back to the pool once written), so an 8 MiB READ or WRITE that the
 * socket does not take at once is not copied again. One sendmsg writes up to
 * OUTQ_IOV_MAX segments. */
#ifndef SMBDIRECT_OUT_QUEUE_H
#define SMBDIRECT_OUT_QUEUE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "bridge_buf.h"

#define OUTQ_IOV_MAX 64

struct outq_seg {
    struct outq_seg *next;
    struct sd_buf buf;
    int adopted;             /* buf's memory is an adopted allocation: never appended to */
};

struct out_queue {
    struct outq_seg *head, *tail;
    size_t len;              /* bytes queued */
    size_t base_cap, idle_cap; /* of the copy buffers (sd_buf_init) */
};

/* Allocates nothing. */
void out_queue_init(struct out_queue *q, size_t base_cap, size_t idle_cap);
/* Frees every segment (adopted allocations go back to buf_pool). */
void out_queue_free(struct out_queue *q);
static inline size_t out_queue_len(const struct out_queue *q) { return q->len; }

/* Appends a copy of the iovecs' bytes, skipping the first skip. 0 or -ENOMEM. */
int out_queue_append(struct out_queue *q, const struct iovec *iov, int iovcnt, size_t skip);
/* Appends the len bytes at data, which lie in alloc (cap bytes, from buf_pool), taking
 * the allocation over. 0, or -ENOMEM with nothing taken. */
int out_queue_adopt(struct out_queue *q, uint8_t *alloc, size_t cap, const uint8_t *data,
                    size_t len);

/* Writes queued bytes to fd (MSG_NOSIGNAL) until the queue is empty or the socket is
 * full. Returns the bytes written (0 when it would block), or -errno. */
ssize_t out_queue_write(struct out_queue *q, int fd);

#endif
