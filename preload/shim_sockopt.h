/* SPDX-License-Identifier: BSD-3-Clause */
/* preload/shim_sockopt.h — getsockopt/setsockopt for tunneled fds: they must look
 * like TCP sockets (SO_DOMAIN, SO_PROTOCOL, TCP_NODELAY, TCP_INFO...) and accept
 * TCP- and IP-level options that an AF_UNIX socket would reject. */
#ifndef SMBDIRECT_SHIM_SOCKOPT_H
#define SMBDIRECT_SHIM_SOCKOPT_H

#include <sys/socket.h>

/* 1 when the shim answered (result in *rc, errno set on failure), 0 when the caller
 * must call the real function (fd not tunneled, or an option the socketpair end
 * answers truthfully itself). */
int shim_sockopt_get(int fd, int level, int name, void *val, socklen_t *len, int *rc);
int shim_sockopt_set(int fd, int level, int name, const void *val, socklen_t len, int *rc);

/* Copies the TCP/IP-level options the program set on its TCP socket `from` before
 * connect() to the tunnel `to` (already in the fd table), so they read back. */
void shim_sockopt_carry(int from, int to);

#endif
