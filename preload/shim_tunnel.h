/* SPDX-License-Identifier: BSD-3-Clause */
/* preload/shim_tunnel.h — the connect() decision and the socketpair swap: a connect
 * of a TCP stream socket to a port in SMBDIRECT_PORTS is turned into an SMB Direct
 * connection, set up synchronously and bounded by SMBDIRECT_CONNECT_TIMEOUT, with
 * the program's fd swapped for one end of an AF_UNIX socketpair the engine bridges. */
#ifndef SMBDIRECT_SHIM_TUNNEL_H
#define SMBDIRECT_SHIM_TUNNEL_H

#include <sys/socket.h>

/* 1 when the shim handled this connect (its return value in *rc, errno set on
 * failure), 0 when the caller must call the real connect unchanged. */
int shim_tunnel_connect(int fd, const struct sockaddr *addr, socklen_t len, int *rc);

#endif
