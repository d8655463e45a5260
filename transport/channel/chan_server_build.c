/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/channel/chan_server_build.c — the server role's inline READ/WRITE requests
 * and channel READ responses (see chan_server_build.h). */
#include "chan_server_build.h"

#include <string.h>

#include "smb2_wire.h"

/* msg's fixed part copied to out with no channel information; r: its own fields. */
static int copy_without_channel(const uint8_t *msg, size_t len, uint16_t command, size_t need,
                                uint8_t *out, size_t outlen, struct smb2_rw_req *r)
{
    if (outlen < need || smb2_rw_req_decode(msg, len, command, r) != 0)
        return -1;
    memcpy(out, msg, SMB2_RW_REQ_FIXED);
    r->channel = SMB2_CHANNEL_NONE;
    r->remaining = 0;
    r->info_offset = 0;
    r->info_length = 0;
    return 0;
}

int chan_build_inline_write(const uint8_t *msg, size_t len, const struct chan_server_plan *plan,
                            uint8_t *out, size_t outlen)
{
    struct smb2_rw_req r;

    if (plan->kind != CHAN_WRITE ||
        copy_without_channel(msg, len, SMB2_WRITE, SMB2_RW_REQ_FIXED, out, outlen, &r) != 0)
        return -1;
    r.data_offset = SMB2_RW_REQ_FIXED;
    r.length = plan->size;
    smb2_rw_req_put(out, SMB2_WRITE, &r);
    return SMB2_RW_REQ_FIXED;
}

int chan_build_inline_read(const uint8_t *msg, size_t len, const struct chan_server_plan *plan,
                           uint8_t *out, size_t outlen)
{
    struct smb2_rw_req r;

    if (plan->kind != CHAN_READ ||
        copy_without_channel(msg, len, SMB2_READ, SMB2_RW_REQ_FIXED + 1, out, outlen, &r) != 0)
        return -1;
    smb2_rw_req_put(out, SMB2_READ, &r);
    out[SMB2_RW_REQ_FIXED] = 0; /* MS-SMB2 2.2.19: Buffer, at least one byte */
    return SMB2_RW_REQ_FIXED + 1;
}

int chan_build_channel_read_response(const uint8_t *resp, size_t len, uint32_t bytes,
                                     uint8_t *out, size_t outlen)
{
    const struct smb2_read_resp r = {
        .data_offset = SMB2_READ_RESP_FIXED, .data_length = 0, .data_remaining = bytes,
    };

    return smb2_read_resp_build(resp, len, &r, out, outlen);
}
