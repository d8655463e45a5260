/* SPDX-License-Identifier: BSD-3-Clause */
/* preload/shim_names.c — the socket names of tunneled fds, copied out with the
 * kernel's truncation rule (copy at most *len bytes, report the full length). */
#include "shim_names.h"

#include <errno.h>
#include <string.h>

#include "shim_fdtable.h"

int shim_names_get(int fd, enum shim_name_kind kind, struct sockaddr *addr, socklen_t *len,
                   int *rc)
{
    struct shim_fd_info info;
    const struct sockaddr_storage *name;
    socklen_t have;

    if (!shim_fdtable_lookup(fd, &info))
        return 0;
    name = kind == SHIM_NAME_PEER ? &info.peer : &info.local;
    have = kind == SHIM_NAME_PEER ? info.peer_len : info.local_len;
    *rc = -1;
    if (!len || (!addr && *len > 0)) {
        errno = EFAULT;
        return 1;
    }
    if ((int)*len < 0) {
        errno = EINVAL;
        return 1;
    }
    memcpy(addr, name, *len < have ? *len : have);
    *len = have;
    *rc = 0;
    return 1;
}
