/* SPDX-License-Identifier: BSD-3-Clause */
/* preload/interpose_getsockname.c — getsockname(2): a tunneled fd reports an inet
 * local address (the RDMA connection's), never its AF_UNIX one. */
#include <sys/socket.h>

#include "sd_libc.h"
#include "shim_names.h"

int getsockname(int fd, __SOCKADDR_ARG addr, socklen_t *__restrict len)
{
    int rc;

    if (shim_names_get(fd, SHIM_NAME_LOCAL, addr.__sockaddr__, len, &rc))
        return rc;
    return sd_libc()->getsockname(fd, addr.__sockaddr__, len);
}
