/* SPDX-License-Identifier: BSD-3-Clause */
/* conformance/cf_smb2_wire.c — SMB2 request encoders and response decoders of the
 * conformance client (see cf_smb2_wire.h). Offsets count from the start of the SMB2
 * header, as MS-SMB2 does. */
#include "cf_smb2_wire.h"

#include <stdio.h>
#include <string.h>

#include "chan_desc.h"
#include "sd_bytes.h"

#define B(off) (SMB2_HDR_SIZE + (off)) /* a body field */

/* 2.2.1.2 header fields */
#define HDR_CREDIT_CHARGE 6u
#define HDR_COMMAND       12u
#define HDR_CREDIT        14u
#define HDR_MESSAGE_ID    24u
#define HDR_PROCESS_ID    32u
#define HDR_TREE_ID       36u
#define HDR_SESSION_ID    40u

/* 2.2.3 Capabilities: multi-credit I/O over 64 KiB; with CF_SMB2_CAP_MULTI_CHANNEL,
 * channels bound to a session (without it a server refuses SMB2_SESSION_FLAG_BINDING) */
#define CAP_LARGE_MTU 0x00000004u

static int room(size_t need, size_t cap)
{
    return need <= cap;
}

void cf_smb2_put_hdr(uint8_t *out, const struct cf_smb2_req_hdr *h)
{
    memset(out, 0, SMB2_HDR_SIZE);
    out[0] = 0xFE;
    out[1] = 'S';
    out[2] = 'M';
    out[3] = 'B';
    sd_put_le16(out + 4, SMB2_HDR_SIZE);
    sd_put_le16(out + HDR_CREDIT_CHARGE, h->credit_charge);
    sd_put_le16(out + HDR_COMMAND, h->command);
    sd_put_le16(out + HDR_CREDIT, h->credit_request);
    sd_put_le64(out + HDR_MESSAGE_ID, h->message_id);
    sd_put_le32(out + HDR_PROCESS_ID, 0xFEFF);
    sd_put_le32(out + HDR_TREE_ID, h->tree_id);
    sd_put_le64(out + HDR_SESSION_ID, h->session_id);
}

int cf_smb2_negotiate_req(const struct cf_smb2_req_hdr *h, const uint16_t *dialects, int n,
                          const uint8_t guid[16], uint8_t *out, size_t cap)
{
    size_t end = B(36u) + 2u * (size_t)n, ctx;
    int smb311 = 0;

    for (int i = 0; i < n; i++)
        smb311 |= dialects[i] == CF_SMB2_DIALECT_0311;
    ctx = (end + 7u) & ~(size_t)7u;
    if (n <= 0 || n > CF_SMB2_MAX_DIALECTS || !room(smb311 ? ctx + 8u + 38u : end, cap))
        return -1;
    memset(out, 0, smb311 ? ctx + 8u + 38u : end);
    cf_smb2_put_hdr(out, h);
    sd_put_le16(out + B(0), 36);
    sd_put_le16(out + B(2), (uint16_t)n);
    sd_put_le16(out + B(4), CF_SMB2_SIGNING_ENABLED);
    sd_put_le32(out + B(8), CAP_LARGE_MTU | CF_SMB2_CAP_MULTI_CHANNEL);
    memcpy(out + B(12), guid, 16);
    for (int i = 0; i < n; i++)
        sd_put_le16(out + B(36) + 2 * i, dialects[i]);
    if (!smb311)
        return (int)end;
    /* 2.2.3.1: NegotiateContextOffset/Count, then SMB2_PREAUTH_INTEGRITY_CAPABILITIES
     * (2.2.3.1.1): one algorithm, SHA-512 (1), and a 32-byte salt. */
    sd_put_le32(out + B(28), (uint32_t)ctx);
    sd_put_le16(out + B(32), 1);
    sd_put_le16(out + ctx, 1);
    sd_put_le16(out + ctx + 2, 38);
    sd_put_le16(out + ctx + 8, 1);
    sd_put_le16(out + ctx + 10, 32);
    sd_put_le16(out + ctx + 12, 1);
    memcpy(out + ctx + 14, guid, 16); /* salt: any bytes */
    memcpy(out + ctx + 30, guid, 16);
    return (int)(ctx + 8u + 38u);
}

int cf_smb2_session_setup_req(const struct cf_smb2_req_hdr *h, uint8_t flags,
                              uint8_t security_mode, const uint8_t *blob, size_t len,
                              uint8_t *out, size_t cap)
{
    if (len > UINT16_MAX || !room(B(24u) + len, cap))
        return -1;
    memset(out, 0, B(24u));
    cf_smb2_put_hdr(out, h);
    sd_put_le16(out + B(0), 25);
    out[B(2)] = flags;
    out[B(3)] = security_mode;
    sd_put_le16(out + B(12), B(24));
    sd_put_le16(out + B(14), (uint16_t)len);
    memcpy(out + B(24), blob, len);
    return (int)(B(24u) + len);
}

/* UTF-16LE of ASCII text at out; its byte length, or -1. */
static int utf16(const char *s, uint8_t *out, size_t cap)
{
    size_t n = 0;

    for (; *s; s++, n += 2) {
        if (n + 2 > cap)
            return -1;
        sd_put_le16(out + n, (uint8_t)*s);
    }
    return (int)n;
}

int cf_smb2_tree_connect_req(const struct cf_smb2_req_hdr *h, const char *host,
                             const char *share, uint8_t *out, size_t cap)
{
    char path[300];
    int n;

    if (!room(B(8u), cap) ||
        snprintf(path, sizeof(path), "\\\\%s\\%s", host, share) >= (int)sizeof(path) ||
        (n = utf16(path, out + B(8), cap - B(8u))) < 0)
        return -1;
    memset(out, 0, B(8u));
    cf_smb2_put_hdr(out, h);
    sd_put_le16(out + B(0), 9);
    sd_put_le16(out + B(4), B(8));
    sd_put_le16(out + B(6), (uint16_t)n);
    return (int)B(8u) + n;
}

int cf_smb2_create_req(const struct cf_smb2_req_hdr *h, const char *name, uint8_t *out,
                       size_t cap)
{
    int n;

    if (!room(B(56u), cap) || (n = utf16(name, out + B(56), cap - B(56u))) <= 0)
        return -1;
    memset(out, 0, B(56u));
    cf_smb2_put_hdr(out, h);
    sd_put_le16(out + B(0), 57);
    sd_put_le32(out + B(4), 2);           /* ImpersonationLevel: Impersonation */
    sd_put_le32(out + B(24), 0xC0010000u); /* GENERIC_READ | GENERIC_WRITE | DELETE */
    sd_put_le32(out + B(28), 0x80);       /* FILE_ATTRIBUTE_NORMAL */
    sd_put_le32(out + B(32), 7);          /* share read, write, delete */
    sd_put_le32(out + B(36), 5);          /* FILE_OVERWRITE_IF */
    sd_put_le32(out + B(40), 0x1040);     /* FILE_DELETE_ON_CLOSE | FILE_NON_DIRECTORY_FILE */
    sd_put_le16(out + B(44), B(56));
    sd_put_le16(out + B(46), (uint16_t)n);
    return (int)B(56u) + n;
}

int cf_smb2_close_req(const struct cf_smb2_req_hdr *h, const uint8_t fid[16], uint8_t *out,
                      size_t cap)
{
    if (!room(B(24u), cap))
        return -1;
    memset(out, 0, B(24u));
    cf_smb2_put_hdr(out, h);
    sd_put_le16(out + B(0), 24);
    memcpy(out + B(8), fid, CF_SMB2_FILEID_SIZE);
    return (int)B(24u);
}

/* The common part of READ and WRITE (2.2.19, 2.2.21): Offset, FileId, channel fields
 * and the descriptor list at the end of the fixed part. */
static size_t rw_req(const struct cf_smb2_req_hdr *h, const uint8_t fid[16], uint64_t offset,
                     struct smb2_rw_req *r, const struct smbd_buffer_desc *d, size_t nd,
                     uint8_t *out)
{
    memset(out, 0, SMB2_RW_REQ_FIXED);
    cf_smb2_put_hdr(out, h);
    sd_put_le16(out + B(0), SMB2_RW_REQ_STRUCTURE_SIZE);
    sd_put_le64(out + B(8), offset);
    memcpy(out + B(16), fid, CF_SMB2_FILEID_SIZE);
    if (nd) {
        r->info_offset = SMB2_RW_REQ_FIXED;
        r->info_length = (uint16_t)(nd * SMBD_BUFFER_DESC_SIZE);
        chan_desc_put(out + SMB2_RW_REQ_FIXED, d, nd);
    }
    smb2_rw_req_put(out, h->command, r);
    return SMB2_RW_REQ_FIXED + nd * SMBD_BUFFER_DESC_SIZE;
}

int cf_smb2_write_req(const struct cf_smb2_req_hdr *h, const uint8_t fid[16], uint64_t offset,
                      const uint8_t *data, uint32_t len, uint32_t channel,
                      const struct smbd_buffer_desc *d, size_t nd, uint8_t *out, size_t cap)
{
    struct smb2_rw_req r = { .channel = channel };
    size_t n;

    if (nd > CHAN_MAX_DESCS ||
        !room(channel ? CF_SMB2_RW_REQ_SIZE(nd) : SMB2_RW_REQ_FIXED + (size_t)len, cap))
        return -1;
    if (channel) {
        r.remaining = len;
    } else {
        r.data_offset = SMB2_RW_REQ_FIXED;
        r.length = len;
        nd = 0;
    }
    n = rw_req(h, fid, offset, &r, d, nd, out);
    if (!channel) {
        memcpy(out + n, data, len);
        n += len;
    }
    return (int)n;
}

int cf_smb2_read_req(const struct cf_smb2_req_hdr *h, const uint8_t fid[16], uint64_t offset,
                     uint32_t len, uint32_t channel, const struct smbd_buffer_desc *d, size_t nd,
                     uint8_t *out, size_t cap)
{
    struct smb2_rw_req r = { .length = len, .channel = channel };
    size_t n;

    if (!channel)
        nd = 0;
    if (nd > CHAN_MAX_DESCS || !room(CF_SMB2_RW_REQ_SIZE(nd), cap))
        return -1;
    n = rw_req(h, fid, offset, &r, d, nd, out);
    out[B(2)] = SMB2_READ_RESP_FIXED; /* Padding: where the data should start */
    if (nd == 0)
        out[n++] = 0; /* 2.2.19: the Buffer's one byte */
    return (int)n;
}

/* ---- responses ---- */

static uint16_t body_size(const uint8_t *msg, size_t len)
{
    return len >= B(2u) ? sd_le16(msg + B(0)) : 0;
}

int cf_smb2_resp_decode(const uint8_t *msg, size_t len, struct cf_smb2_resp *r)
{
    if (smb2_hdr_decode(msg, len, &r->h) != 0 || !(r->h.flags & SMB2_FLAGS_SERVER_TO_REDIR))
        return -1;
    r->credit_response = sd_le16(msg + HDR_CREDIT);
    r->tree_id = sd_le32(msg + HDR_TREE_ID);
    r->session_id = sd_le64(msg + HDR_SESSION_ID);
    return 0;
}

int cf_smb2_negotiate_resp_decode(const uint8_t *msg, size_t len,
                                  struct cf_smb2_negotiate_resp *r)
{
    if (len < B(64u) || body_size(msg, len) != 65)
        return -1;
    r->security_mode = sd_le16(msg + B(2));
    r->dialect = sd_le16(msg + B(4));
    r->capabilities = sd_le32(msg + B(24));
    r->max_transact = sd_le32(msg + B(28));
    r->max_read = sd_le32(msg + B(32));
    r->max_write = sd_le32(msg + B(36));
    return 0;
}

/* A buffer of a response (offset from the header, length) inside msg. */
static int inside(size_t off, size_t n, size_t fixed, size_t len)
{
    return n == 0 || (off >= fixed && off <= len && n <= len - off);
}

int cf_smb2_session_setup_resp_decode(const uint8_t *msg, size_t len, uint16_t *flags,
                                      const uint8_t **blob, size_t *blob_len)
{
    uint16_t off, n;

    if (len < B(8u) || body_size(msg, len) != 9)
        return -1;
    *flags = sd_le16(msg + B(2));
    off = sd_le16(msg + B(4));
    n = sd_le16(msg + B(6));
    if (!inside(off, n, B(8u), len))
        return -1;
    *blob = msg + off;
    *blob_len = n;
    return 0;
}

int cf_smb2_create_resp_decode(const uint8_t *msg, size_t len, uint8_t fid[16])
{
    if (len < B(88u) || body_size(msg, len) != 89)
        return -1;
    memcpy(fid, msg + B(64), CF_SMB2_FILEID_SIZE);
    return 0;
}

int cf_smb2_write_resp_decode(const uint8_t *msg, size_t len, uint32_t *count)
{
    if (len < B(16u) || body_size(msg, len) != 17)
        return -1;
    *count = sd_le32(msg + B(4));
    return 0;
}

int cf_smb2_read_resp_data(const uint8_t *msg, size_t len, struct smb2_read_resp *r,
                           const uint8_t **data)
{
    if (smb2_read_resp_decode(msg, len, r) != 0 ||
        !inside(r->data_offset, r->data_length, SMB2_READ_RESP_FIXED, len))
        return -1;
    *data = r->data_length ? msg + r->data_offset : NULL;
    return 0;
}
