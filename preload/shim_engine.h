/* SPDX-License-Identifier: BSD-3-Clause */
/* preload/shim_engine.h — the one engine thread per process: an sd_loop serving every
 * tunnel (socketpair ends, provider fds, timers), started on the first tunnel, with
 * all signals blocked. A fork child starts its own on its first tunnel; the parent's
 * engine keeps serving the fds the child inherited (they are plain sockets). */
#ifndef SMBDIRECT_SHIM_ENGINE_H
#define SMBDIRECT_SHIM_ENGINE_H

#include <stddef.h>
#include <sys/uio.h>

#include "shim_fdtable.h"
#include "smbd_link.h"

/* Starts the engine thread if this process has none. 0 or -errno. */
int shim_engine_ensure(void);

/* Hands an established link and the engine's end of the program's socketpair to the
 * engine thread, which bridges them until either side ends and then reports the end
 * to the fd table under app_key. Takes ownership of link and engine_fd, also on
 * failure (then both are released). 0 or -errno. */
int shim_engine_attach(struct smbd_link *link, int engine_fd, const struct shim_fd_key *app_key);

/* The program's thread hands bytes it writes on the tunnel keyed app_key to its bridge
 * in place (smbd_bridge_feed, inside the engine's loop, with every signal blocked).
 * Returns how many it took, a prefix of iov (0: none, e.g. no live bridge in this
 * process or the engine still has earlier bytes); the caller writes the rest to the
 * socketpair. */
size_t shim_engine_feed(const struct shim_fd_key *app_key, const struct iovec *iov, int iovcnt);

#endif
