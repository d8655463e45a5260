/* SPDX-License-Identifier: BSD-3-Clause */
/* preload/interpose_getpeername.c — getpeername(2): a tunneled fd reports the inet
 * address the program connected to. */
#include <sys/socket.h>

#include "sd_libc.h"
#include "shim_names.h"

int getpeername(int fd, __SOCKADDR_ARG addr, socklen_t *__restrict len)
{
    int rc;

    if (shim_names_get(fd, SHIM_NAME_PEER, addr.__sockaddr__, len, &rc))
        return rc;
    return sd_libc()->getpeername(fd, addr.__sockaddr__, len);
}
