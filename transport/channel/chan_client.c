/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/channel/chan_client.c — the client role's decisions: which requests of the
 * program go over the RDMA channel, and what each response of the server means for
 * the I/Os outstanding (see chan_client.h). */
#include "chan_client.h"

#include <errno.h>
#include <string.h>

#include "smb2_sign.h"
#include "smb2_wire.h"

void chan_client_init(struct chan_client *cc, uint32_t threshold, uint32_t max_io)
{
    cc->dialect = 0;
    cc->threshold = threshold;
    cc->max_io = max_io;
    cc->remote_invalidation = 1;
    cc->protected_seen = 0;
    cc->signing_key = NULL;
    cc->key_arg = NULL;
    chan_table_init(&cc->ios);
}

void chan_client_fini(struct chan_client *cc)
{
    chan_table_fini(&cc->ios);
}

int chan_client_inline_only(const struct chan_client *cc)
{
    int dialect_known = cc->dialect != 0 && cc->dialect != SMB2_DIALECT_WILDCARD;

    return cc->threshold == 0 || cc->protected_seen ||
           (dialect_known && cc->dialect < SMB2_DIALECT_0300);
}

/* A signed request of h's session: 1 and plan->key when the glue knows the session's key
 * on this connection. A related command naming "the previous one's" session has none. */
static int session_keyed(const struct chan_client *cc, const struct smb2_hdr *h,
                         struct chan_client_plan *plan)
{
    return cc->signing_key && h->session_id != SMB2_SESSION_ID_PREVIOUS &&
           cc->signing_key(cc->key_arg, h->session_id, &plan->key) == 0;
}

enum chan_kind chan_client_plan_request(struct chan_client *cc, const uint8_t *msg,
                                        size_t len, struct chan_client_plan *plan)
{
    struct smb2_hdr h;
    struct smb2_rw_req r;
    int is_smb2 = smb2_hdr_decode(msg, len, &h) == 0;
    int is_signed = is_smb2 && (h.flags & SMB2_FLAGS_SIGNED);

    memset(plan, 0, sizeof(*plan));
    plan->kind = CHAN_PASS;
    /* MS-SMB2 3.2.4.1.1: a signature covers the whole message, so a signed one is
     * rewritten only when it can be signed again (the session's key is known); an
     * encrypted one (2.2.41 transform header) cannot even be read. A signed request that
     * every 3.x client signs (the 3.1.1 TREE_CONNECT, ...) does not mean the session
     * signs its READs and WRITEs; any other one does. */
    if (is_signed && !smb2_signed_regardless(&h, msg, len)) {
        plan->signed_io = session_keyed(cc, &h, plan);
        if (!plan->signed_io)
            cc->protected_seen = 1;
    }
    if (smb2_is_transform(msg, len))
        cc->protected_seen = 1;
    if (cc->threshold == 0 || cc->dialect < SMB2_DIALECT_0300)
        return CHAN_PASS;
    /* Nor is one of a chain rewritten, whose offsets the rewrite would move. */
    if (!is_smb2 || (is_signed && !plan->signed_io) || smb2_hdr_in_compound(&h))
        return CHAN_PASS;
    if (smb2_rw_req_decode(msg, len, h.command, &r) != 0 || r.channel != SMB2_CHANNEL_NONE ||
        r.info_offset != 0 || r.info_length != 0)
        return CHAN_PASS;
    if (r.length <= cc->threshold || r.length > cc->max_io)
        return CHAN_PASS;
    if (h.command == SMB2_WRITE) {
        if (r.data_offset < SMB2_RW_REQ_FIXED || (uint64_t)r.data_offset + r.length > len)
            return CHAN_PASS;
        plan->data = msg + r.data_offset;
    }
    plan->kind = h.command == SMB2_READ ? CHAN_READ : CHAN_WRITE;
    plan->message_id = h.message_id;
    plan->length = r.length;
    /* MS-SMB2 2.2.19 Channel: RDMA_V1_INVALIDATE is valid from 3.0.2 on. */
    plan->channel = cc->dialect >= SMB2_DIALECT_0302 && cc->remote_invalidation
                        ? SMB2_CHANNEL_RDMA_V1_INVALIDATE
                                                     : SMB2_CHANNEL_RDMA_V1;
    return plan->kind;
}

int chan_client_track(struct chan_client *cc, const struct chan_client_plan *plan,
                      const struct smbd_buffer_desc *descs, size_t ndescs, void *cookie)
{
    struct chan_io *io;
    int err;

    if ((plan->kind != CHAN_READ && plan->kind != CHAN_WRITE) || ndescs == 0)
        return -EINVAL;
    err = chan_table_add(&cc->ios, plan->message_id, 0, &io);
    if (err)
        return err;
    io->kind = plan->kind;
    io->length = plan->length;
    io->invalidate = plan->channel == SMB2_CHANNEL_RDMA_V1_INVALIDATE;
    io->first_token = descs[0].token;
    io->cookie = cookie;
    io->signed_io = plan->signed_io;
    if (plan->signed_io)
        io->key = plan->key;
    return 0;
}

/* The final non-error response to a tracked READ (MS-SMB2 3.3.5.12: over the channel,
 * DataLength 0 and DataRemaining the bytes written into the client's buffer). single:
 * the message holds this response only. NULL, or why the server broke the protocol. */
static const char *read_final(const struct chan_io *io, const struct smb2_hdr *h,
                              const uint8_t *cmd, size_t cmd_len, int single,
                              struct chan_client_result *res)
{
    struct smb2_read_resp r;

    if (smb2_read_resp_decode(cmd, cmd_len, &r) != 0)
        return "SMB2 READ response to an RDMA channel READ does not decode";
    if (r.data_length > 0)
        return NULL; /* answered inline: the registered buffer went unused */
    if (r.data_remaining > io->length)
        return "SMB2 READ response claims more RDMA-written bytes (DataRemaining) than the "
               "channel READ registered";
    if (!single)
        return "SMB2 READ over the RDMA channel answered inside a compound response";
    if (!io->signed_io && (h->flags & SMB2_FLAGS_SIGNED))
        return "SMB2 READ over the RDMA channel answered with a signed response, which the "
               "inline rewrite would break";
    /* MS-SMB2 3.2.5.1.3: the response to a signed request is signed; the shim hands its
     * data on signed only when the server's own signature holds. */
    if (io->signed_io && !(h->flags & SMB2_FLAGS_SIGNED))
        return "SMB2 READ of a signed session answered with an unsigned response over the "
               "RDMA channel: its data is not handed on";
    /* Linux ksmbd signs this response over its Direct-TCP length too (smb2_sign.h). */
    if (io->signed_io && smb2_sign_verify(&io->key, SMB2_SIGN_FROM_SERVER, cmd, cmd_len) != 0 &&
        smb2_sign_verify_framed(&io->key, SMB2_SIGN_FROM_SERVER, cmd, cmd_len) != 0)
        return "SMB2 READ response's signature does not verify with the session's key "
               "(altered or forged): its data is not handed on";
    res->action = CHAN_CLIENT_READ_DONE;
    res->cookie = io->cookie;
    res->bytes = r.data_remaining;
    res->signed_io = io->signed_io;
    if (io->signed_io)
        res->key = io->key;
    return NULL;
}

void chan_client_on_response(struct chan_client *cc, const uint8_t *msg, size_t len,
                             uint32_t invalidated_token, struct chan_client_result *res)
{
    struct smb2_chain chain;
    struct smb2_hdr h;
    const uint8_t *cmd;
    const char *why = NULL;
    size_t cmd_len;
    int matched = 0;

    memset(res, 0, sizeof(*res));
    res->action = CHAN_CLIENT_PASS;
    smb2_negotiated_dialect(msg, len, &cc->dialect);
    smb2_chain_init(&chain, msg, len);
    while (!why && smb2_chain_next(&chain, &h, &cmd, &cmd_len) == 0) {
        struct chan_io *io = chan_table_find(&cc->ios, h.message_id);

        if (!io || smb2_hdr_is_interim(&h))
            continue;
        if (invalidated_token && invalidated_token == io->first_token) {
            io->invalidated = 1;
            matched = 1;
        }
        chan_table_release(&cc->ios, io);
        if (io->kind == CHAN_READ && !smb2_status_is_error(h.status))
            why = read_final(io, &h, cmd, cmd_len, cmd == msg && h.next_command == 0, res);
    }
    if (!why && invalidated_token && !matched)
        why = "Send with Invalidate named a token other than the first descriptor's of the "
              "RDMA channel I/O it answers";
    if (why) {
        res->action = CHAN_CLIENT_ERROR;
        res->why = why;
    }
}
