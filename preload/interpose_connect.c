/* SPDX-License-Identifier: BSD-3-Clause */
/* preload/interpose_connect.c — connect(2): tunneled over SMB Direct when
 * shim_tunnel_connect decides so, else the real connect with the same arguments. */
#include <sys/socket.h>

#include "sd_libc.h"
#include "shim_tunnel.h"

int connect(int fd, __CONST_SOCKADDR_ARG addr, socklen_t len)
{
    int rc;

    if (shim_tunnel_connect(fd, addr.__sockaddr__, len, &rc))
        return rc;
    return sd_libc()->connect(fd, addr.__sockaddr__, len);
}
