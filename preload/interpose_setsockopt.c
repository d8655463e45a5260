/* SPDX-License-Identifier: BSD-3-Clause */
/* preload/interpose_setsockopt.c — setsockopt(2): tunneled fds accept TCP/IP-level
 * options (see shim_sockopt.c); everything else is the real call. */
#include <sys/socket.h>

#include "sd_libc.h"
#include "shim_sockopt.h"

int setsockopt(int fd, int level, int name, const void *val, socklen_t len)
{
    int rc;

    if (shim_sockopt_set(fd, level, name, val, len, &rc))
        return rc;
    return sd_libc()->setsockopt(fd, level, name, val, len);
}
