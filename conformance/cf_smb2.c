/* SPDX-License-Identifier: BSD-3-Clause */
/* conformance/cf_smb2.c — the minimal SMB2 client of the conformance cases over the raw
 * SMB Direct session (see cf_smb2.h): one request at a time, credits and MessageIds
 * kept, responses matched by MessageId with interim responses skipped. */
#include "cf_smb2.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cf_ntlm.h"

#define CREDITS_ASKED 512     /* CreditRequest of every request (3.2.4.1.2) */
#define INLINE_CHUNK (256u * 1024u)
#define REQ_SMALL 1024u

static int say(struct cf_smb2 *c, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int say(struct cf_smb2 *c, int err, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(c->why, sizeof(c->why), fmt, ap);
    va_end(ap);
    return err;
}

static const char *command_name(uint16_t cmd)
{
    switch (cmd) {
    case SMB2_NEGOTIATE: return "NEGOTIATE";
    case CF_SMB2_SESSION_SETUP: return "SESSION_SETUP";
    case CF_SMB2_TREE_CONNECT: return "TREE_CONNECT";
    case CF_SMB2_CREATE: return "CREATE";
    case CF_SMB2_CLOSE: return "CLOSE";
    case SMB2_READ: return "READ";
    case SMB2_WRITE: return "WRITE";
    }
    return "request";
}

/* 3.2.4.1.5: one credit per 64 KiB of the larger of request and response payload. */
static uint16_t charge_of(uint32_t payload)
{
    return (uint16_t)(payload ? (payload - 1) / 65536 + 1 : 1);
}

static struct cf_smb2_req_hdr next_hdr(struct cf_smb2 *c, uint16_t command, uint32_t payload)
{
    return (struct cf_smb2_req_hdr){ .command = command, .credit_charge = charge_of(payload),
                                     .credit_request = CREDITS_ASKED,
                                     .message_id = c->next_mid, .session_id = c->session_id,
                                     .tree_id = c->tree_id };
}

/* Sends the request built with h and waits for its final response (*resp). */
static int call(struct cf_smb2 *c, const struct cf_smb2_req_hdr *h, const uint8_t *req, int len,
                const struct cf_msg **resp)
{
    const char *name = command_name(h->command);
    struct cf_smb2_resp r;
    int rc;

    if (len < 0)
        return say(c, -EINVAL, "cannot encode the %s request", name);
    if (c->credits < h->credit_charge)
        return say(c, -EAGAIN, "%s needs %u SMB2 credits, the server granted %u", name,
                   h->credit_charge, c->credits);
    c->credits -= h->credit_charge;
    c->next_mid += h->credit_charge;
    rc = cf_smbd_send_msg(&c->sd, req, (size_t)len);
    for (;;) {
        if (rc == 0)
            rc = cf_smbd_recv_msg(&c->sd, c->sd.t->timeout_ms, resp);
        if (rc == -ENOTCONN)
            return say(c, rc, "the connection ended before the %s response%s%s%s", name,
                       c->sd.first_error ? " (" : "",
                       c->sd.first_error ? sd_wc_status_str(c->sd.first_error) : "",
                       c->sd.first_error ? ")" : "");
        if (rc == -ETIMEDOUT)
            return say(c, rc, "no %s response in %d ms", name, c->sd.t->timeout_ms);
        if (rc < 0)
            return say(c, rc, "%s: %s", name, c->sd.why[0] ? c->sd.why : strerror(-rc));
        if (cf_smb2_resp_decode((*resp)->data, (*resp)->len, &r) != 0)
            return say(c, -EPROTO, "a %zu-byte message that is no SMB2 response", (*resp)->len);
        c->credits += r.credit_response;
        if (r.h.message_id != h->message_id || smb2_hdr_is_interim(&r.h))
            continue; /* interim (3.2.5.1.5) or unsolicited (oplock break) */
        c->status = r.h.status;
        c->invalidate = (*resp)->invalidate;
        c->inv_rkey = (*resp)->inv_rkey;
        if (h->command == CF_SMB2_SESSION_SETUP)
            c->session_id = r.session_id;
        if (h->command == CF_SMB2_TREE_CONNECT)
            c->tree_id = r.tree_id;
        if (smb2_status_is_error(r.h.status) &&
            !(h->command == CF_SMB2_SESSION_SETUP && r.h.status == CF_STATUS_MORE_PROCESSING))
            return say(c, -EREMOTEIO, "%s answered status 0x%08x", name, r.h.status);
        return 0;
    }
}

int cf_smb2_connect(struct cf_smb2 *c, const struct cf_target *t, const uint16_t *dialects,
                    int n)
{
    struct smbd_negotiate_req nreq;
    struct cf_smb2_req_hdr h;
    const struct cf_msg *resp;
    uint8_t req[REQ_SMALL], guid[16];
    int rc, offered = 0;

    memset(c, 0, sizeof(*c));
    c->credits = 1;
    rc = cf_smbd_connect(&c->sd, t);
    if (rc == 0) {
        cf_smbd_default_negotiate(t, &nreq);
        rc = cf_smbd_negotiate(&c->sd, &nreq);
    }
    if (rc < 0)
        return say(c, rc, "SMB Direct: %s", c->sd.why);
    for (size_t i = 0; i < sizeof(guid); i++)
        guid[i] = (uint8_t)(rand() ^ getpid() ^ (int)i);
    h = next_hdr(c, SMB2_NEGOTIATE, 0);
    rc = call(c, &h, req, cf_smb2_negotiate_req(&h, dialects, n, guid, req, sizeof(req)), &resp);
    if (rc < 0)
        return rc;
    if (cf_smb2_negotiate_resp_decode(resp->data, resp->len, &c->neg) != 0)
        return say(c, -EPROTO, "the NEGOTIATE response does not decode");
    for (int i = 0; i < n; i++)
        offered |= dialects[i] == c->neg.dialect;
    if (!offered)
        return say(c, -EPROTO, "the server chose dialect 0x%04x, not one offered", c->neg.dialect);
    /* MS-SMB2 3.2.5.2 / MS-SMBD 3.1.4.3: channel I/O is bounded by both. */
    c->max_read = c->neg.max_read < c->sd.neg.max_read_write_size ? c->neg.max_read
                                                                  : c->sd.neg.max_read_write_size;
    c->max_write = c->neg.max_write < c->sd.neg.max_read_write_size
                       ? c->neg.max_write : c->sd.neg.max_read_write_size;
    return 0;
}

/* Splits DOMAIN\USER (or DOMAIN/USER) into dom and name. */
static void split_user(const char *user, char *dom, char *name, size_t cap)
{
    const char *sep = strpbrk(user, "\\/");

    snprintf(dom, cap, "%.*s", sep ? (int)(sep - user) : 0, user);
    snprintf(name, cap, "%s", sep ? sep + 1 : user);
}

int cf_smb2_login(struct cf_smb2 *c, const char *user, const char *password)
{
    struct cf_ntlm_challenge ch;
    struct cf_smb2_req_hdr h;
    const struct cf_msg *resp;
    const uint8_t *blob;
    uint8_t tok[2048], req[REQ_SMALL + sizeof(tok)], cc[8], rk[CF_NTLM_HASH_SIZE];
    char dom[128], name[128];
    size_t blob_len;
    uint16_t flags;
    int n, rc;

    if (c->neg.security_mode & CF_SMB2_SIGNING_REQUIRED)
        return say(c, -EPERM, "the server requires signing, which this client does not do");
    n = cf_ntlm_negotiate(tok, sizeof(tok));
    h = next_hdr(c, CF_SMB2_SESSION_SETUP, 0);
    rc = call(c, &h, req, cf_smb2_session_setup_req(&h, tok, (size_t)n, req, sizeof(req)), &resp);
    if (rc < 0)
        return rc;
    if (c->status != CF_STATUS_MORE_PROCESSING ||
        cf_smb2_session_setup_resp_decode(resp->data, resp->len, &flags, &blob, &blob_len) != 0 ||
        cf_ntlm_parse_challenge(blob, blob_len, &ch) != 0)
        return say(c, -EPROTO, "SESSION_SETUP: no NTLMSSP CHALLENGE_MESSAGE (status 0x%08x)",
                   c->status);
    for (size_t i = 0; i < sizeof(cc); i++)
        cc[i] = (uint8_t)rand();
    for (size_t i = 0; i < sizeof(rk); i++) /* the session key: unused, nothing is signed */
        rk[i] = (uint8_t)rand();
    if (user)
        split_user(user, dom, name, sizeof(dom));
    /* FILETIME: 100 ns units since 1601 */
    n = cf_ntlm_authenticate(&ch, user ? name : NULL, password, user ? dom : NULL, cc,
                             ((uint64_t)time(NULL) + 11644473600ull) * 10000000ull, rk, tok,
                             sizeof(tok), NULL);
    h = next_hdr(c, CF_SMB2_SESSION_SETUP, 0);
    rc = call(c, &h, req, n < 0 ? -1 : cf_smb2_session_setup_req(&h, tok, (size_t)n, req,
                                                                 sizeof(req)), &resp);
    if (rc == -EREMOTEIO)
        return say(c, rc, "SESSION_SETUP as %s refused: status 0x%08x", user ? user : "anonymous",
                   c->status);
    return rc;
}

int cf_smb2_tree_connect(struct cf_smb2 *c, const char *share)
{
    struct cf_smb2_req_hdr h = next_hdr(c, CF_SMB2_TREE_CONNECT, 0);
    const struct cf_msg *resp;
    uint8_t req[REQ_SMALL];

    return call(c, &h, req, cf_smb2_tree_connect_req(&h, c->sd.t->host, share, req, sizeof(req)),
                &resp);
}

int cf_smb2_create(struct cf_smb2 *c, const char *name, uint8_t fid[16])
{
    struct cf_smb2_req_hdr h = next_hdr(c, CF_SMB2_CREATE, 0);
    const struct cf_msg *resp;
    uint8_t req[REQ_SMALL];
    int rc = call(c, &h, req, cf_smb2_create_req(&h, name, req, sizeof(req)), &resp);

    if (rc == 0 && cf_smb2_create_resp_decode(resp->data, resp->len, fid) != 0)
        return say(c, -EPROTO, "the CREATE response does not decode");
    return rc;
}

int cf_smb2_close_file(struct cf_smb2 *c, const uint8_t fid[16])
{
    struct cf_smb2_req_hdr h = next_hdr(c, CF_SMB2_CLOSE, 0);
    const struct cf_msg *resp;
    uint8_t req[REQ_SMALL];

    return call(c, &h, req, cf_smb2_close_req(&h, fid, req, sizeof(req)), &resp);
}

/* Inline data per request: at most max (the channel's bound), INLINE_CHUNK, and what
 * one SMB Direct message to its receiver carries: that receiver's MaxFragmentedSize less
 * the SMB2 header and the larger READ/WRITE body (MS-SMBD 3.1.4.2; ksmbd takes 173910). */
static uint32_t chunk(uint32_t max, uint32_t receiver_fragmented, size_t left)
{
    uint32_t n = max < INLINE_CHUNK ? max : INLINE_CHUNK;

    if (receiver_fragmented > SMB2_RW_REQ_FIXED && receiver_fragmented - SMB2_RW_REQ_FIXED < n)
        n = receiver_fragmented - SMB2_RW_REQ_FIXED;
    return left < n ? (uint32_t)left : n;
}

int cf_smb2_write_one(struct cf_smb2 *c, const uint8_t fid[16], uint64_t offset,
                      const void *data, uint32_t len)
{
    size_t cap = SMB2_RW_REQ_FIXED + (size_t)len + 8;
    uint8_t *req = malloc(cap);
    struct cf_smb2_req_hdr h = next_hdr(c, SMB2_WRITE, len);
    const struct cf_msg *resp;
    uint32_t count;
    int rc;

    if (!req)
        return say(c, -ENOMEM, "out of memory");
    rc = call(c, &h, req, cf_smb2_write_req(&h, fid, offset, data, len, 0, NULL, 0, req, cap),
              &resp);
    free(req);
    if (rc == 0 && (cf_smb2_write_resp_decode(resp->data, resp->len, &count) != 0 || count != len))
        rc = say(c, -EPROTO, "inline WRITE of %u bytes: the response does not say %u written",
                 len, len);
    return rc;
}

int cf_smb2_write(struct cf_smb2 *c, const uint8_t fid[16], uint64_t offset, const void *data,
                  size_t len)
{
    int rc = 0;

    for (size_t off = 0; rc == 0 && off < len;) {
        uint32_t n = chunk(c->max_write, c->sd.neg.max_fragmented_size, len - off);

        rc = cf_smb2_write_one(c, fid, offset + off, (const uint8_t *)data + off, n);
        off += n;
    }
    return rc;
}

int cf_smb2_read(struct cf_smb2 *c, const uint8_t fid[16], uint64_t offset, void *out,
                 size_t len, size_t *got)
{
    uint8_t req[CF_SMB2_RW_REQ_SIZE(0)];
    const struct cf_msg *resp;
    const uint8_t *data;
    struct smb2_read_resp r;
    int rc = 0;

    *got = 0;
    while (rc == 0 && *got < len) {
        uint32_t n = chunk(c->max_read, c->sd.t->max_fragmented_size, len - *got);
        struct cf_smb2_req_hdr h = next_hdr(c, SMB2_READ, n);

        rc = call(c, &h, req, cf_smb2_read_req(&h, fid, offset + *got, n, 0, NULL, 0, req,
                                               sizeof(req)), &resp);
        if (rc == -EREMOTEIO && c->status == CF_STATUS_END_OF_FILE)
            return 0;
        if (rc == 0 && (cf_smb2_read_resp_data(resp->data, resp->len, &r, &data) != 0 ||
                        r.data_length > n))
            rc = say(c, -EPROTO, "inline READ: the response does not decode");
        if (rc == 0) {
            memcpy((uint8_t *)out + *got, data, r.data_length);
            *got += r.data_length;
            if (r.data_length < n)
                break;
        }
    }
    return rc;
}

/* A READ or WRITE over the channel (2.2.19, 2.2.21): *resp is its success response. */
static int chan_call(struct cf_smb2 *c, uint16_t command, const uint8_t fid[16], uint64_t offset,
                     uint32_t len, uint32_t channel, const struct smbd_buffer_desc *d, size_t nd,
                     const struct cf_msg **resp)
{
    size_t cap = CF_SMB2_RW_REQ_SIZE(nd);
    uint8_t *req = malloc(cap);
    struct cf_smb2_req_hdr h = next_hdr(c, command, len);
    int rc;

    if (!req)
        return say(c, -ENOMEM, "out of memory");
    rc = call(c, &h, req,
              command == SMB2_WRITE
                  ? cf_smb2_write_req(&h, fid, offset, NULL, len, channel, d, nd, req, cap)
                  : cf_smb2_read_req(&h, fid, offset, len, channel, d, nd, req, cap),
              resp);
    free(req);
    return rc;
}

int cf_smb2_write_chan(struct cf_smb2 *c, const uint8_t fid[16], uint64_t offset, uint32_t len,
                       uint32_t channel, const struct smbd_buffer_desc *d, size_t nd,
                       uint32_t *count)
{
    const struct cf_msg *resp;
    int rc = chan_call(c, SMB2_WRITE, fid, offset, len, channel, d, nd, &resp);

    if (rc == 0 && cf_smb2_write_resp_decode(resp->data, resp->len, count) != 0)
        rc = say(c, -EPROTO, "the channel WRITE response does not decode");
    return rc;
}

int cf_smb2_read_chan(struct cf_smb2 *c, const uint8_t fid[16], uint64_t offset, uint32_t len,
                      uint32_t channel, const struct smbd_buffer_desc *d, size_t nd,
                      uint32_t *remaining)
{
    const struct cf_msg *resp;
    const uint8_t *data;
    struct smb2_read_resp r;
    int rc = chan_call(c, SMB2_READ, fid, offset, len, channel, d, nd, &resp);

    if (rc < 0)
        return rc;
    if (cf_smb2_read_resp_data(resp->data, resp->len, &r, &data) != 0)
        return say(c, -EPROTO, "the channel READ response does not decode");
    /* MS-SMB2 3.3.5.12: over the channel, DataLength 0 and DataRemaining the bytes written */
    if (r.data_length != 0)
        return say(c, -EPROTO, "channel READ response with DataLength %u inline (expected 0)",
                   r.data_length);
    *remaining = r.data_remaining;
    return 0;
}

void cf_smb2_close(struct cf_smb2 *c)
{
    cf_smbd_close(&c->sd);
}
