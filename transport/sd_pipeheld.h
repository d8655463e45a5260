/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/sd_pipeheld.h — RDMA Write payload held in pipes instead of memory.
 *
 * A provider that reads its peer's RDMA Writes from a socket (soft-iWARP) may, for a
 * region registered with SD_ACCESS_PIPE_HELD, splice the payload from the socket into
 * pipes: the kernel then keeps references to the socket's pages and nothing is copied.
 * Whoever consumes the region's data later (the bridge, writing a READ's data into the
 * program's socketpair) splices it on from the pipes with sd_pipeheld_emit, again by
 * reference; anything that reads the region's memory first calls
 * sd_pipeheld_materialize, which copies what the pipes hold into place.
 *
 * A region's holder keeps bytes [0, filled) of the region in its pipes, in order, as
 * long as the writes come in order from offset 0. A write anywhere else (out of order,
 * overlapping, past a gap) first puts everything held into memory, and the region's
 * writes go to memory from then on, until one starts it over at offset 0. When the
 * pipes are full (their budget, the process-wide SD_PIPEHELD_BUDGET bytes, is spent,
 * or the kernel refuses more) the rest of an in-order region goes to memory after the
 * bytes already held: the region is split, its head in pipes, its tail in memory, and
 * emitting takes the head from the pipes and leaves the tail to the caller's memory
 * path.
 *
 * The holders are keyed by the region's address, process-wide, so that the data can
 * outlive the registration (the READ buffer is deregistered before its data goes on).
 * sd_pipeheld_release ends every holder inside a range; the buffer pool calls it before
 * memory is reused or unmapped. Safe from any thread (one mutex). */
#ifndef SMBDIRECT_SD_PIPEHELD_H
#define SMBDIRECT_SD_PIPEHELD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Pipe capacity all holders of the process may use together: a quarter of Linux's default
 * per-user soft limit on pipe buffers (fs.pipe-user-pages-soft, 16384 pages). */
#define SD_PIPEHELD_BUDGET (16u << 20)

struct sd_pipeheld;

/* Producer: a write of payload bytes at offset off of the region [base, base+len) is
 * about to be placed. Returns the holder that takes them into pipes, or NULL when they
 * go to memory (the region's held bytes, if any, are in memory by then when the write is
 * out of order). */
struct sd_pipeheld *sd_pipeheld_begin(uint8_t *base, size_t len, size_t off);
/* Producer: splices up to n bytes from socket fd into h's pipes. Returns the bytes
 * taken (> 0), -EAGAIN when the socket has nothing now, -ENOSPC when the pipes are full
 * (the rest of the region goes to memory from here: the caller places it), or another
 * -errno from splice. */
ssize_t sd_pipeheld_splice_in(struct sd_pipeheld *h, int fd, size_t n);
/* Producer: n bytes the caller had already read from the socket. Returns the bytes
 * taken (the head of p); what it did not take the caller places in memory, and the
 * region's tail is memory from there. */
size_t sd_pipeheld_write_in(struct sd_pipeheld *h, const uint8_t *p, size_t n);

/* Consumer: splices up to len bytes held for addr into fd. Returns the bytes moved
 * (> 0), 0 when fd takes nothing now, -ENOENT when no held bytes start at addr (they
 * are in memory: the caller's own path), or -errno. */
ssize_t sd_pipeheld_emit(const uint8_t *addr, size_t len, int fd);
/* Consumer: the bytes held for any region overlapping [addr, addr+len) are put into
 * memory; those regions' writes go to memory until one starts them over at offset 0. */
void sd_pipeheld_materialize(const uint8_t *addr, size_t len);
/* Ends every holder whose region starts inside [addr, addr+len): what it held is
 * dropped with its pipe, and its empty pipes are kept for other holders. */
void sd_pipeheld_release(const uint8_t *addr, size_t len);

/* Process-wide figures: bytes taken into pipes, and of them bytes later copied into
 * memory (by sd_pipeheld_materialize or an out-of-order write). */
struct sd_pipeheld_stats {
    uint64_t held, copied;
};
void sd_pipeheld_get_stats(struct sd_pipeheld_stats *out);

#endif
