/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/th_shim.h — test helpers for the shim tests: the fd-table record of a
 * tunnel to an IPv4 peer, as the shim's connect() leaves it, a tunnel in the fd table,
 * an fd-table reset, and a small SMB2 request signed as the program signs it. */
#ifndef TH_SHIM_H
#define TH_SHIM_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "shim_fdtable.h"
#include "smb2_sign.h"

/* Zeroes info and records an AF_INET tunnel to peer:peer_port (dotted quad), with the
 * local address local:local_port unless local is NULL. */
void th_ipv4_tunnel_info(struct shim_fd_info *info, const char *peer, uint16_t peer_port,
                         const char *local, uint16_t local_port);

/* A tunnel as the shim leaves it: a socketpair whose program end (returned) is in the fd
 * table; the engine's end in *engine_fd, or closed when engine_fd is NULL (inline, as
 * th_fdtable_reset below). */
static inline int th_fake_tunnel(int *engine_fd)
{
    struct shim_fd_info info;
    int sv[2];

    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    th_ipv4_tunnel_info(&info, "10.0.0.1", 445, NULL, 0);
    assert_int_equal(shim_fdtable_add(sv[0], sv[1], &info), 0);
    if (engine_fd)
        *engine_fd = sv[1];
    else
        close(sv[1]);
    return sv[0];
}

/* th_shim_request's size: a header and a small body. */
#define TH_SHIM_REQUEST_SIZE 88u

/* A request of the program (command, MessageId id) in session session_id, signed with k
 * unless k is NULL, into b (TH_SHIM_REQUEST_SIZE bytes). */
void th_shim_request(uint8_t *b, uint16_t command, uint64_t id, uint64_t session_id,
                     const struct smb2_sign_key *k);

/* cmocka setup for the shim tests: each test starts with an empty fd table (inline:
 * only the shim tests link the fd table). */
static inline int th_fdtable_reset(void **state)
{
    (void)state;
    shim_fdtable_clear();
    return 0;
}

#endif
