/* SPDX-License-Identifier: BSD-3-Clause */
/* preload/shim_direct.c — the write family on a tunneled fd, sent from the program's
 * thread (shim_direct.h): the checks that keep every other call untouched, the hand-over
 * to the engine (shim_engine_feed), and the rest of a partly taken call written to the
 * socketpair. */
#include "shim_direct.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <sys/socket.h>

#include "sd_libc.h"
#include "shim_config.h"
#include "shim_engine.h"
#include "shim_fdtable.h"
#include "shim_guard.h"

#define DIRECT_FLAGS (MSG_NOSIGNAL | MSG_DONTWAIT | MSG_MORE)

/* What the socketpair takes of iov past its first skip bytes, written with the
 * program's flags; a refusal counts as none (the call reports what the engine took;
 * the socketpair's error shows on the program's next call, as after a short write). */
static size_t send_rest(int fd, const struct iovec *iov, int iovcnt, size_t skip, int flags)
{
    struct iovec rest[SHIM_DIRECT_MAX_IOV];
    struct msghdr mh = { .msg_iov = rest };
    int saved = errno;
    ssize_t n;

    for (int i = 0; i < iovcnt; i++) {
        if (skip >= iov[i].iov_len) {
            skip -= iov[i].iov_len;
            continue;
        }
        rest[mh.msg_iovlen++] = (struct iovec){ (uint8_t *)iov[i].iov_base + skip,
                                                iov[i].iov_len - skip };
        skip = 0;
    }
    n = sd_libc()->sendmsg(fd, &mh, flags); /* blocks as the program's call would */
    errno = saved;
    return n > 0 ? (size_t)n : 0;
}

int shim_direct_send(int fd, const struct iovec *iov, int iovcnt, int flags, ssize_t *result)
{
    struct shim_fd_key key;
    size_t total = 0, taken;

    if (iovcnt <= 0 || iovcnt > SHIM_DIRECT_MAX_IOV || (flags & ~DIRECT_FLAGS) ||
        shim_guard_active() || !shim_fdtable_connected(fd, &key) ||
        !shim_config_get()->set.direct_send)
        return 0;
    for (int i = 0; i < iovcnt; i++) {
        if (iov[i].iov_len > (size_t)SSIZE_MAX - total)
            return 0;
        total += iov[i].iov_len;
    }
    if (total == 0 || (taken = shim_engine_feed(&key, iov, iovcnt)) == 0)
        return 0;
    if (taken < total)
        taken += send_rest(fd, iov, iovcnt, taken, flags);
    *result = (ssize_t)taken;
    return 1;
}
