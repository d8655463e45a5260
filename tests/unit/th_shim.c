/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/th_shim.c — test helper for the shim tests (see th_shim.h). */
#include "th_shim.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <string.h>

#include <cmocka.h>

#include "sd_bytes.h"
#include "th_smb2.h"

static socklen_t put_ipv4(struct sockaddr_storage *ss, const char *addr, uint16_t port)
{
    struct sockaddr_in *sin = (struct sockaddr_in *)ss;

    sin->sin_family = AF_INET;
    sin->sin_port = htons(port);
    inet_pton(AF_INET, addr, &sin->sin_addr);
    return sizeof(*sin);
}

void th_ipv4_tunnel_info(struct shim_fd_info *info, const char *peer, uint16_t peer_port,
                         const char *local, uint16_t local_port)
{
    memset(info, 0, sizeof(*info));
    info->family = AF_INET;
    info->peer_len = put_ipv4(&info->peer, peer, peer_port);
    if (local)
        info->local_len = put_ipv4(&info->local, local, local_port);
}

void th_shim_request(uint8_t *b, uint16_t command, uint64_t id, uint64_t session_id,
                     const struct smb2_sign_key *k)
{
    const struct th_hdr h = { .command = command, .message_id = id };

    th_smb2_hdr(b, &h);
    sd_put_le64(b + 40, session_id); /* MS-SMB2 2.2.1.2 SessionId */
    memset(b + 64, 0x5C, TH_SHIM_REQUEST_SIZE - 64);
    if (k)
        assert_int_equal(smb2_sign(k, SMB2_SIGN_FROM_CLIENT, b, TH_SHIM_REQUEST_SIZE), 0);
}
