/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/channel/smb2_wire.c — SMB2 header, chain, NEGOTIATE response, READ/WRITE
 * request and READ response fields for the channel (see smb2_wire.h). */
#include "smb2_wire.h"

#include <string.h>

#include "sd_bytes.h"

/* 2.2.1.2 SYNC / 2.2.1.1 ASYNC header: the fields both share at the same offsets. */
#define HDR_STRUCTURE_SIZE 4u
#define HDR_STATUS         8u
#define HDR_COMMAND        12u
#define HDR_FLAGS          16u
#define HDR_NEXT_COMMAND   20u
#define HDR_MESSAGE_ID     24u
#define HDR_SESSION_ID     40u

#define BODY(off) (SMB2_HDR_SIZE + (off))   /* a body field, from the header start */

/* 2.2.4 NEGOTIATE response */
#define NEGOTIATE_RESP_STRUCTURE_SIZE 65u
#define NEGOTIATE_RESP_DIALECT        BODY(4u)

/* 2.2.19 READ and 2.2.21 WRITE requests: Length at the same offset, the channel fields
 * 4 bytes apart (READ has MinimumCount where WRITE has Channel). */
#define RW_REQ_LENGTH            BODY(4u)
#define WRITE_REQ_DATA_OFFSET    BODY(2u)
struct rw_layout {
    size_t channel, remaining, info_offset, info_length;
};
static const struct rw_layout read_layout = { BODY(36u), BODY(40u), BODY(44u), BODY(46u) };
static const struct rw_layout write_layout = { BODY(32u), BODY(36u), BODY(40u), BODY(42u) };

/* 2.2.20 READ response */
#define READ_RESP_DATA_OFFSET    BODY(2u)  /* one byte, then one Reserved byte */
#define READ_RESP_DATA_LENGTH    BODY(4u)
#define READ_RESP_DATA_REMAINING BODY(8u)
#define READ_RESP_FLAGS          BODY(12u) /* Reserved2 before 3.1.1 */

static uint16_t body_size(const uint8_t *msg, size_t len)
{
    return len >= SMB2_HDR_SIZE + 2 ? sd_le16(msg + SMB2_HDR_SIZE) : 0;
}

/* 1 when p (len bytes) starts with n >= 6 bytes of an SMB2 header's start. */
static int starts_header(const uint8_t *p, size_t len, size_t n)
{
    return len >= n && p[0] == 0xFE && p[1] == 'S' && p[2] == 'M' && p[3] == 'B' &&
           sd_le16(p + HDR_STRUCTURE_SIZE) == SMB2_HDR_SIZE;
}

int smb2_hdr_signed_part(const uint8_t *p, size_t len, uint64_t *session_id)
{
    if (!starts_header(p, len, SMB2_HDR_SIGNATURE))
        return -1;
    *session_id = sd_le64(p + HDR_SESSION_ID);
    return 0;
}

int smb2_hdr_decode(const uint8_t *msg, size_t len, struct smb2_hdr *h)
{
    if (!starts_header(msg, len, SMB2_HDR_SIZE))
        return -1;
    h->status = sd_le32(msg + HDR_STATUS);
    h->command = sd_le16(msg + HDR_COMMAND);
    h->flags = sd_le32(msg + HDR_FLAGS);
    h->next_command = sd_le32(msg + HDR_NEXT_COMMAND);
    h->message_id = sd_le64(msg + HDR_MESSAGE_ID);
    h->session_id = sd_le64(msg + HDR_SESSION_ID);
    if (h->next_command &&
        (h->next_command < SMB2_HDR_SIZE || h->next_command >= len || h->next_command % 8))
        return -1;
    return 0;
}

int smb2_signed_regardless(const struct smb2_hdr *h, const uint8_t *msg, size_t len)
{
    if (h->command == SMB2_SESSION_SETUP || h->command == SMB2_TREE_CONNECT)
        return 1;
    /* 2.2.31: StructureSize (2), Reserved (2), CtlCode (4) */
    return h->command == SMB2_IOCTL && len >= SMB2_HDR_SIZE + 8 &&
           sd_le32(msg + SMB2_HDR_SIZE + 4) == SMB2_FSCTL_VALIDATE_NEGOTIATE_INFO;
}

void smb2_chain_init(struct smb2_chain *c, const uint8_t *msg, size_t len)
{
    c->msg = msg;
    c->len = len;
    c->off = 0;
    c->done = 0;
}

int smb2_chain_next(struct smb2_chain *c, struct smb2_hdr *h, const uint8_t **cmd,
                    size_t *cmd_len)
{
    size_t rest = c->len - c->off;

    if (c->done || smb2_hdr_decode(c->msg + c->off, rest, h) != 0) {
        c->done = 1;
        return -1;
    }
    *cmd = c->msg + c->off;
    *cmd_len = h->next_command ? h->next_command : rest;
    c->off += *cmd_len;
    c->done = h->next_command == 0;
    return 0;
}

int smb2_negotiated_dialect(const uint8_t *msg, size_t len, uint16_t *dialect)
{
    struct smb2_hdr h;

    if (smb2_hdr_decode(msg, len, &h) != 0 || h.command != SMB2_NEGOTIATE ||
        !(h.flags & SMB2_FLAGS_SERVER_TO_REDIR) || h.status != SMB2_STATUS_SUCCESS ||
        len < NEGOTIATE_RESP_DIALECT + 2 || body_size(msg, len) != NEGOTIATE_RESP_STRUCTURE_SIZE)
        return -1;
    *dialect = sd_le16(msg + NEGOTIATE_RESP_DIALECT);
    if (*dialect == SMB2_DIALECT_WILDCARD)
        *dialect = 0;
    return 0;
}

static const struct rw_layout *rw_layout(uint16_t command)
{
    return command == SMB2_READ ? &read_layout : &write_layout;
}

int smb2_rw_req_decode(const uint8_t *cmd, size_t len, uint16_t command, struct smb2_rw_req *r)
{
    const struct rw_layout *l = rw_layout(command);

    if ((command != SMB2_READ && command != SMB2_WRITE) || len < SMB2_RW_REQ_FIXED ||
        body_size(cmd, len) != SMB2_RW_REQ_STRUCTURE_SIZE)
        return -1;
    r->data_offset = command == SMB2_WRITE ? sd_le16(cmd + WRITE_REQ_DATA_OFFSET) : 0;
    r->length = sd_le32(cmd + RW_REQ_LENGTH);
    r->channel = sd_le32(cmd + l->channel);
    r->remaining = sd_le32(cmd + l->remaining);
    r->info_offset = sd_le16(cmd + l->info_offset);
    r->info_length = sd_le16(cmd + l->info_length);
    return 0;
}

void smb2_rw_req_put(uint8_t *cmd, uint16_t command, const struct smb2_rw_req *r)
{
    const struct rw_layout *l = rw_layout(command);

    if (command == SMB2_WRITE)
        sd_put_le16(cmd + WRITE_REQ_DATA_OFFSET, r->data_offset);
    sd_put_le32(cmd + RW_REQ_LENGTH, r->length);
    sd_put_le32(cmd + l->channel, r->channel);
    sd_put_le32(cmd + l->remaining, r->remaining);
    sd_put_le16(cmd + l->info_offset, r->info_offset);
    sd_put_le16(cmd + l->info_length, r->info_length);
}

int smb2_read_resp_decode(const uint8_t *cmd, size_t len, struct smb2_read_resp *r)
{
    if (len < SMB2_READ_RESP_FIXED || body_size(cmd, len) != SMB2_READ_RESP_STRUCTURE_SIZE)
        return -1;
    r->data_offset = cmd[READ_RESP_DATA_OFFSET];
    r->data_length = sd_le32(cmd + READ_RESP_DATA_LENGTH);
    r->data_remaining = sd_le32(cmd + READ_RESP_DATA_REMAINING);
    return 0;
}

int smb2_read_resp_build(const uint8_t *resp, size_t len, const struct smb2_read_resp *r,
                         uint8_t *out, size_t outlen)
{
    if (len < SMB2_HDR_SIZE || outlen < SMB2_READ_RESP_FIXED)
        return -1;
    memcpy(out, resp, SMB2_HDR_SIZE);
    sd_put_le32(out + HDR_NEXT_COMMAND, 0);
    sd_put_le16(out + SMB2_HDR_SIZE, SMB2_READ_RESP_STRUCTURE_SIZE);
    out[READ_RESP_DATA_OFFSET] = r->data_offset;
    out[READ_RESP_DATA_OFFSET + 1] = 0;
    sd_put_le32(out + READ_RESP_DATA_LENGTH, r->data_length);
    sd_put_le32(out + READ_RESP_DATA_REMAINING, r->data_remaining);
    sd_put_le32(out + READ_RESP_FLAGS, 0);
    return SMB2_READ_RESP_FIXED;
}
