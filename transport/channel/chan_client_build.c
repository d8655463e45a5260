/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/channel/chan_client_build.c — the client role's rewritten READ/WRITE
 * requests and inline READ responses (see chan_client_build.h). */
#include "chan_client_build.h"

#include <string.h>

#include "chan_desc.h"
#include "smb2_wire.h"

/* The request with its channel fields set; r starts as msg's own fields. */
static int build_request(const uint8_t *msg, size_t len, uint16_t command,
                         const struct chan_client_plan *plan, const struct smbd_buffer_desc *descs,
                         size_t ndescs, uint8_t *out, size_t outlen)
{
    struct smb2_rw_req r;
    size_t need = CHAN_REQUEST_SIZE(ndescs);

    if (ndescs == 0 || ndescs > CHAN_MAX_DESCS || outlen < need ||
        smb2_rw_req_decode(msg, len, command, &r) != 0)
        return -1;
    memcpy(out, msg, SMB2_RW_REQ_FIXED);
    r.channel = plan->channel;
    r.info_offset = SMB2_RW_REQ_FIXED;
    r.info_length = (uint16_t)(ndescs * SMBD_BUFFER_DESC_SIZE);
    if (command == SMB2_WRITE) {
        /* MS-SMB2 3.2.4.7: the data travels by RDMA; RemainingBytes says how much. */
        r.data_offset = 0;
        r.length = 0;
        r.remaining = plan->length;
    } else {
        r.remaining = 0;
    }
    smb2_rw_req_put(out, command, &r);
    chan_desc_put(out + SMB2_RW_REQ_FIXED, descs, ndescs);
    return (int)need;
}

int chan_build_write_request(const uint8_t *msg, size_t len, const struct chan_client_plan *plan,
                             const struct smbd_buffer_desc *descs, size_t ndescs, uint8_t *out,
                             size_t outlen)
{
    if (plan->kind != CHAN_WRITE)
        return -1;
    return build_request(msg, len, SMB2_WRITE, plan, descs, ndescs, out, outlen);
}

int chan_build_read_request(const uint8_t *msg, size_t len, const struct chan_client_plan *plan,
                            const struct smbd_buffer_desc *descs, size_t ndescs, uint8_t *out,
                            size_t outlen)
{
    if (plan->kind != CHAN_READ)
        return -1;
    return build_request(msg, len, SMB2_READ, plan, descs, ndescs, out, outlen);
}

int chan_build_read_response(const uint8_t *resp, size_t len, uint32_t bytes, uint8_t *out,
                             size_t outlen)
{
    const struct smb2_read_resp r = {
        .data_offset = SMB2_READ_RESP_FIXED, .data_length = bytes, .data_remaining = 0,
    };

    return smb2_read_resp_build(resp, len, &r, out, outlen);
}
