/* SPDX-License-Identifier: BSD-3-Clause */
/* preload/interpose_send.c — write(2), writev(2), send(2), sendto(2) and sendmsg(2):
 * on a tunnel the program's thread may send in place (shim_direct_send), else the
 * real call with the same arguments. */
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "sd_libc.h"
#include "shim_direct.h"

ssize_t write(int fd, const void *buf, size_t len)
{
    ssize_t rc;

    if (shim_direct_send(fd, &(struct iovec){ (void *)buf, len }, 1, 0, &rc))
        return rc;
    return sd_libc()->write(fd, buf, len);
}

ssize_t writev(int fd, const struct iovec *iov, int iovcnt)
{
    ssize_t rc;

    if (shim_direct_send(fd, iov, iovcnt, 0, &rc))
        return rc;
    return sd_libc()->writev(fd, iov, iovcnt);
}

ssize_t send(int fd, const void *buf, size_t len, int flags)
{
    ssize_t rc;

    if (shim_direct_send(fd, &(struct iovec){ (void *)buf, len }, 1, flags, &rc))
        return rc;
    return sd_libc()->send(fd, buf, len, flags);
}

ssize_t sendto(int fd, const void *buf, size_t len, int flags, __CONST_SOCKADDR_ARG addr,
               socklen_t addr_len)
{
    ssize_t rc;

    if (!addr.__sockaddr__ &&
        shim_direct_send(fd, &(struct iovec){ (void *)buf, len }, 1, flags, &rc))
        return rc;
    return sd_libc()->sendto(fd, buf, len, flags, addr.__sockaddr__, addr_len);
}

ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
    ssize_t rc;

    if (!msg->msg_name && msg->msg_controllen == 0 && msg->msg_iovlen <= SHIM_DIRECT_MAX_IOV &&
        shim_direct_send(fd, msg->msg_iov, (int)msg->msg_iovlen, flags, &rc))
        return rc;
    return sd_libc()->sendmsg(fd, msg, flags);
}
