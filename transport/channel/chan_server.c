/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/channel/chan_server.c — the server role's decisions: which requests of the
 * SMB Direct client carry valid channel information, and what each backend response
 * means for the channel I/Os outstanding (see chan_server.h). */
#include "chan_server.h"

#include <errno.h>
#include <string.h>

#include "chan_desc.h"
#include "smb2_wire.h"

void chan_server_init(struct chan_server *cs, uint32_t max_io)
{
    cs->dialect = 0;
    cs->max_io = max_io;
    chan_table_init(&cs->ios);
}

void chan_server_fini(struct chan_server *cs)
{
    chan_table_fini(&cs->ios);
}

/* The MS-SMB2 3.3.5.12 (READ) / 3.3.5.13 (WRITE) checks of a channel request, and the
 * descriptor list rules ksmbd applies. NULL, or the rule broken. */
static const char *invalid_channel(const struct chan_server *cs, uint16_t command,
                                   const uint8_t *cmd, size_t cmd_len, const struct smb2_rw_req *r,
                                   uint32_t *size)
{
    uint64_t sum = 0;

    if (cs->dialect < SMB2_DIALECT_0300)
        return "RDMA channel requested before dialect 3.0";
    if (command == SMB2_WRITE && (r->length != 0 || r->data_offset != 0))
        return "WRITE over the RDMA channel with inline Length or DataOffset";
    if (r->info_offset < SMB2_RW_REQ_FIXED)
        return "channel information offset inside the fixed part of the request";
    if ((size_t)r->info_offset + r->info_length > cmd_len)
        return "channel information past the end of the request";
    if (r->info_length == 0 || r->info_length % SMBD_BUFFER_DESC_SIZE)
        return "channel information length not a non-zero multiple of 16";
    *size = command == SMB2_WRITE ? r->remaining : r->length;
    if (*size > cs->max_io)
        return "RDMA channel I/O larger than MaxReadWriteSize";
    for (size_t i = 0; i < r->info_length / SMBD_BUFFER_DESC_SIZE; i++) {
        struct smbd_buffer_desc d;

        chan_desc_get(cmd + r->info_offset, i, &d);
        if (d.length == 0)
            return "zero-length buffer descriptor";
        sum += d.length;
    }
    if (sum < *size)
        return "buffer descriptors describe fewer bytes than the I/O";
    return NULL;
}

static int reject(struct chan_server_plan *plan, int err, const char *why)
{
    plan->why = why;
    return err;
}

int chan_server_plan_request(const struct chan_server *cs, const uint8_t *msg, size_t len,
                             struct chan_server_plan *plan)
{
    struct smb2_chain chain;
    struct smb2_hdr h;
    struct smb2_rw_req r;
    const uint8_t *cmd;
    const char *why;
    size_t cmd_len;
    uint32_t size = 0;

    memset(plan, 0, sizeof(*plan));
    plan->kind = CHAN_PASS;
    smb2_chain_init(&chain, msg, len);
    while (smb2_chain_next(&chain, &h, &cmd, &cmd_len) == 0) {
        if (smb2_rw_req_decode(cmd, cmd_len, h.command, &r) != 0 ||
            (r.channel != SMB2_CHANNEL_RDMA_V1 && r.channel != SMB2_CHANNEL_RDMA_V1_INVALIDATE))
            continue;
        if (cmd != msg || smb2_hdr_in_compound(&h))
            return reject(plan, -ENOTSUP, "RDMA channel READ/WRITE inside a compound request");
        if (h.flags & SMB2_FLAGS_SIGNED)
            return reject(plan, -ENOTSUP, "signed RDMA channel READ/WRITE (cannot be re-signed)");
        why = invalid_channel(cs, h.command, cmd, cmd_len, &r, &size);
        if (why)
            return reject(plan, -EINVAL, why);
        plan->kind = h.command == SMB2_READ ? CHAN_READ : CHAN_WRITE;
        plan->message_id = h.message_id;
        plan->size = size;
        plan->channel = r.channel;
        /* Remote invalidation exists from 3.0.2 (MS-SMB2 2.2.19): on 3.0 the request is
         * served without it, as Windows Server does and the public MS-SMBD server test
         * design's SMB300 RemoteInvalidation cases expect (ksmbd refuses it instead). */
        plan->invalidate = r.channel == SMB2_CHANNEL_RDMA_V1_INVALIDATE &&
                           cs->dialect >= SMB2_DIALECT_0302;
        plan->descs = cmd + r.info_offset;
        plan->ndescs = r.info_length / SMBD_BUFFER_DESC_SIZE;
        return 0;
    }
    return 0;
}

int chan_server_track(struct chan_server *cs, const struct chan_server_plan *plan, void *cookie,
                      const struct chan_io **out)
{
    struct chan_io *io;
    int err;

    if ((plan->kind != CHAN_READ && plan->kind != CHAN_WRITE) || plan->ndescs == 0)
        return -EINVAL;
    err = chan_table_add(&cs->ios, plan->message_id, plan->ndescs, &io);
    if (err)
        return err;
    io->kind = plan->kind;
    io->length = plan->size;
    io->invalidate = plan->invalidate;
    io->cookie = cookie;
    for (size_t i = 0; i < plan->ndescs; i++)
        chan_desc_get(plan->descs, i, &io->descs[i]);
    io->first_token = io->descs[0].token;
    *out = io;
    return 0;
}

/* The final non-error backend response to a tracked READ: its data goes to the
 * client's buffer. single: the message holds this response only. NULL, or why the
 * backend broke the protocol. */
static const char *read_final(const struct chan_io *io, const struct smb2_hdr *h,
                              const uint8_t *cmd, size_t cmd_len, int single,
                              struct chan_server_result *res)
{
    struct smb2_read_resp r;

    if (smb2_read_resp_decode(cmd, cmd_len, &r) != 0)
        return "backend READ response does not decode";
    if (!single)
        return "backend answered an RDMA channel READ inside a compound response";
    if (h->flags & SMB2_FLAGS_SIGNED)
        return "backend signed its response to an RDMA channel READ (cannot be re-signed)";
    if (r.data_length > 0 &&
        (r.data_offset < SMB2_READ_RESP_FIXED || (size_t)r.data_offset + r.data_length > cmd_len))
        return "backend READ response data lies outside the message";
    if (r.data_length > io->length)
        return "backend READ response carries more data than the channel READ asked for";
    res->action = CHAN_SERVER_WRITE_DATA;
    res->io = io;
    res->data = r.data_length ? cmd + r.data_offset : NULL;
    res->data_len = r.data_length;
    return NULL;
}

void chan_server_on_response(struct chan_server *cs, const uint8_t *msg, size_t len,
                             struct chan_server_result *res)
{
    struct smb2_chain chain;
    struct smb2_hdr h;
    const uint8_t *cmd;
    const char *why = NULL;
    size_t cmd_len;

    memset(res, 0, sizeof(*res));
    res->action = CHAN_SERVER_PASS;
    smb2_negotiated_dialect(msg, len, &cs->dialect);
    smb2_chain_init(&chain, msg, len);
    while (!why && smb2_chain_next(&chain, &h, &cmd, &cmd_len) == 0) {
        struct chan_io *io = chan_table_find(&cs->ios, h.message_id);

        if (!io || smb2_hdr_is_interim(&h))
            continue;
        chan_table_release(&cs->ios, io);
        /* MS-SMBD 3.1.4.2: one token per Send; MS-SMB2 2.2.19 Channel: the server is
         * asked to invalidate when it responds. */
        if (io->invalidate && !res->invalidate) {
            res->invalidate = 1;
            res->token = io->first_token;
        }
        if (io->kind == CHAN_READ && !smb2_status_is_error(h.status))
            why = read_final(io, &h, cmd, cmd_len, cmd == msg && h.next_command == 0, res);
    }
    if (why) {
        res->action = CHAN_SERVER_ERROR;
        res->why = why;
    }
}
