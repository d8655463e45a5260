/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/th_shim.h — test helpers for the shim tests: the fd-table record of a
 * tunnel to an IPv4 peer, as the shim's connect() leaves it, and an fd-table reset. */
#ifndef TH_SHIM_H
#define TH_SHIM_H

#include <stdint.h>

#include "shim_fdtable.h"

/* Zeroes info and records an AF_INET tunnel to peer:peer_port (dotted quad), with the
 * local address local:local_port unless local is NULL. */
void th_ipv4_tunnel_info(struct shim_fd_info *info, const char *peer, uint16_t peer_port,
                         const char *local, uint16_t local_port);

/* cmocka setup for the shim tests: each test starts with an empty fd table (inline:
 * only the shim tests link the fd table). */
static inline int th_fdtable_reset(void **state)
{
    (void)state;
    shim_fdtable_clear();
    return 0;
}

#endif
