/* SPDX-License-Identifier: BSD-3-Clause */
/* preload/interpose_getsockopt.c — getsockopt(2): tunneled fds answer like TCP
 * sockets (see shim_sockopt.c); everything else is the real call. */
#include <sys/socket.h>

#include "sd_libc.h"
#include "shim_sockopt.h"

int getsockopt(int fd, int level, int name, void *__restrict val, socklen_t *__restrict len)
{
    int rc;

    if (shim_sockopt_get(fd, level, name, val, len, &rc))
        return rc;
    return sd_libc()->getsockopt(fd, level, name, val, len);
}
