/* SPDX-License-Identifier: BSD-3-Clause */
/* preload/shim_names.h — getpeername/getsockname answers for tunneled fds: the inet
 * addresses the program connected to and a plausible local one (Samba's
 * smbXcli_conn_create reads both). */
#ifndef SMBDIRECT_SHIM_NAMES_H
#define SMBDIRECT_SHIM_NAMES_H

#include <sys/socket.h>

enum shim_name_kind { SHIM_NAME_PEER, SHIM_NAME_LOCAL };

/* 1 when fd is tunneled (result in *rc, errno set on failure), else 0. */
int shim_names_get(int fd, enum shim_name_kind kind, struct sockaddr *addr, socklen_t *len,
                   int *rc);

#endif
