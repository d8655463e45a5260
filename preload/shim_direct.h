/* SPDX-License-Identifier: BSD-3-Clause */
/* preload/shim_direct.h — the program's own write or send on a tunneled fd hands its
 * bytes to the engine in place (smbd_bridge_feed on the engine's loop, entered from
 * the program's thread), so a request leaves without a socketpair round and a wake-up
 * of the engine thread; whatever the engine cannot take now goes through the
 * socketpair as before, after what it took. */
#ifndef SMBDIRECT_SHIM_DIRECT_H
#define SMBDIRECT_SHIM_DIRECT_H

#include <sys/types.h>
#include <sys/uio.h>

/* Iovec arrays longer than this always go through the socketpair. */
#define SHIM_DIRECT_MAX_IOV 64

/* For the write family's interposers: 1 when fd is a tunnel and the engine took some of
 * iov (*result is then what the call returns: all of it, or what it took plus what
 * the socketpair took of the rest, written with flags), else 0 (nothing done: make the
 * real call). flags: the send flags; any but MSG_NOSIGNAL, MSG_DONTWAIT and MSG_MORE
 * means 0. errno is kept when *result is a count. */
int shim_direct_send(int fd, const struct iovec *iov, int iovcnt, int flags, ssize_t *result);

#endif
