/* SPDX-License-Identifier: BSD-3-Clause */
/* conformance/cf_smb2.c — the minimal SMB2 client of the conformance cases over the raw
 * SMB Direct session or TCP (see cf_smb2.h): one request at a time, credits and
 * MessageIds kept, responses matched by MessageId with interim responses skipped, signed
 * and verified on a signed session. */
#include "cf_smb2.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cf_tcp.h"

#define CREDITS_ASKED 512     /* CreditRequest of every request (3.2.4.1.2) */
#define INLINE_CHUNK (256u * 1024u)
#define REQ_SMALL 1024u

int cf_smb2_say(struct cf_smb2 *c, int err, const char *fmt, ...)
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

struct cf_smb2_req_hdr cf_smb2_next_hdr(struct cf_smb2 *c, uint16_t command, uint32_t payload)
{
    return (struct cf_smb2_req_hdr){ .command = command, .credit_charge = charge_of(payload),
                                     .credit_request = CREDITS_ASKED,
                                     .message_id = c->next_mid, .session_id = c->session_id,
                                     .tree_id = c->tree_id };
}

static int send_msg(struct cf_smb2 *c, const uint8_t *req, size_t len)
{
    return c->tcp >= 0 ? cf_tcp_send(c->tcp, req, len, c->t->timeout_ms)
                       : cf_smbd_send_msg(&c->sd, req, len);
}

static int recv_msg(struct cf_smb2 *c, const struct cf_msg **resp)
{
    int rc;

    if (c->tcp < 0)
        return cf_smbd_recv_msg(&c->sd, c->t->timeout_ms, resp);
    free(c->tcp_msg);
    c->tcp_msg = NULL;
    rc = cf_tcp_recv(c->tcp, c->t->timeout_ms, &c->tcp_msg);
    *resp = c->tcp_msg;
    return rc;
}

/* 3.2.5.1.3: on a signed session, the response to h must carry a signature that verifies
 * with Channel.SigningKey; a SESSION_SETUP response other than the final one, with
 * Session.SigningKey (binding: the final one is checked by cf_smb2_bind, with the key
 * it derives). 0, or -EBADMSG with why naming the response. */
static int check_signature(struct cf_smb2 *c, const char *name, const struct cf_msg *m,
                           const struct smb2_hdr *rh)
{
    int setup = rh->command == CF_SMB2_SESSION_SETUP;
    const struct smb2_sign_key *k = setup ? &c->session_key : &c->channel_key;

    if (!(c->sign || (c->binding && setup)) || (setup && rh->status == 0))
        return 0;
    /* 3.3.4.1.1: the server SHOULD sign a binding's intermediate response */
    if (c->binding && setup && !(rh->flags & SMB2_FLAGS_SIGNED))
        return 0;
    if (!(rh->flags & SMB2_FLAGS_SIGNED))
        return cf_smb2_say(c, -EBADMSG, "the server's %s response (status 0x%08x) is not "
                           "signed on a signed session", name, rh->status);
    if (smb2_sign_verify(k, SMB2_SIGN_FROM_SERVER, m->data, m->len) != 0)
        return cf_smb2_say(c, -EBADMSG, "the server's %s response (status 0x%08x) has a bad "
                           "signature", name, rh->status);
    c->verified++;
    return 0;
}

int cf_smb2_call(struct cf_smb2 *c, const struct cf_smb2_req_hdr *h, uint8_t *req, int len,
                 const struct cf_msg **resp)
{
    const char *name = command_name(h->command);
    int setup = h->command == CF_SMB2_SESSION_SETUP, rc;
    struct cf_smb2_resp r;

    if (len < 0)
        return cf_smb2_say(c, -EINVAL, "cannot encode the %s request", name);
    if (c->credits < h->credit_charge)
        return cf_smb2_say(c, -EAGAIN, "%s needs %u SMB2 credits, the server granted %u", name,
                           h->credit_charge, c->credits);
    c->credits -= h->credit_charge;
    c->next_mid += h->credit_charge;
    /* 3.2.4.1.1: a binding's SESSION_SETUP with Session.SigningKey, the rest with the
     * channel's */
    if ((c->sign || (c->binding && setup)) &&
        smb2_sign(setup ? &c->session_key : &c->channel_key, SMB2_SIGN_FROM_CLIENT, req,
                  (size_t)len) != 0)
        return cf_smb2_say(c, -EINVAL, "cannot sign the %s request", name);
    /* 3.2.4.2.1, 3.2.4.2.3: the preauth hash covers the requests as sent */
    if (h->command == SMB2_NEGOTIATE)
        cf_preauth_reset(&c->preauth);
    if (h->command == SMB2_NEGOTIATE || setup)
        cf_preauth_update(&c->preauth, req, (size_t)len);
    rc = send_msg(c, req, (size_t)len);
    for (;;) {
        if (rc == 0)
            rc = recv_msg(c, resp);
        if (rc == -ENOTCONN)
            return cf_smb2_say(c, rc, "the connection ended before the %s response%s%s%s", name,
                               c->sd.first_error ? " (" : "",
                               c->sd.first_error ? sd_wc_status_str(c->sd.first_error) : "",
                               c->sd.first_error ? ")" : "");
        if (rc == -ETIMEDOUT)
            return cf_smb2_say(c, rc, "no %s response in %d ms", name, c->t->timeout_ms);
        if (rc < 0)
            return cf_smb2_say(c, rc, "%s: %s", name, c->sd.why[0] ? c->sd.why : strerror(-rc));
        if (cf_smb2_resp_decode((*resp)->data, (*resp)->len, &r) != 0)
            return cf_smb2_say(c, -EPROTO, "a %zu-byte message that is no SMB2 response",
                               (*resp)->len);
        c->credits += r.credit_response;
        if (r.h.message_id != h->message_id || smb2_hdr_is_interim(&r.h))
            continue; /* interim (3.2.5.1.5) or unsolicited (oplock break) */
        c->status = r.h.status;
        c->invalidate = (*resp)->invalidate;
        c->inv_rkey = (*resp)->inv_rkey;
        /* 3.2.5.2, 3.2.5.3.1: every response of the exchange but the final one */
        if (h->command == SMB2_NEGOTIATE || (setup && r.h.status == CF_STATUS_MORE_PROCESSING))
            cf_preauth_update(&c->preauth, (*resp)->data, (*resp)->len);
        rc = check_signature(c, name, *resp, &r.h);
        if (rc < 0)
            return rc;
        if (setup)
            c->session_id = r.session_id;
        if (h->command == CF_SMB2_TREE_CONNECT)
            c->tree_id = r.tree_id;
        if (smb2_status_is_error(r.h.status) &&
            !(setup && r.h.status == CF_STATUS_MORE_PROCESSING))
            return cf_smb2_say(c, -EREMOTEIO, "%s answered status 0x%08x", name, r.h.status);
        return 0;
    }
}

/* SMB2 NEGOTIATE of dialects on c's connection; max_rw: the transport's bound on READ
 * and WRITE (0: none). */
static int negotiate(struct cf_smb2 *c, const uint16_t *dialects, int n, const uint8_t *guid,
                     uint32_t max_rw)
{
    struct cf_smb2_req_hdr h;
    const struct cf_msg *resp;
    uint8_t req[REQ_SMALL];
    int rc, offered = 0;

    for (size_t i = 0; i < sizeof(c->client_guid); i++)
        c->client_guid[i] = guid ? guid[i] : (uint8_t)(rand() ^ getpid() ^ (int)i);
    h = cf_smb2_next_hdr(c, SMB2_NEGOTIATE, 0);
    rc = cf_smb2_call(c, &h, req,
                      cf_smb2_negotiate_req(&h, dialects, n, c->client_guid, req, sizeof(req)),
                      &resp);
    if (rc < 0)
        return rc;
    if (cf_smb2_negotiate_resp_decode(resp->data, resp->len, &c->neg) != 0)
        return cf_smb2_say(c, -EPROTO, "the NEGOTIATE response does not decode");
    for (int i = 0; i < n; i++)
        offered |= dialects[i] == c->neg.dialect;
    if (!offered)
        return cf_smb2_say(c, -EPROTO, "the server chose dialect 0x%04x, not one offered",
                           c->neg.dialect);
    /* MS-SMB2 3.2.5.2 / MS-SMBD 3.1.4.3: channel I/O is bounded by both. */
    c->max_read = max_rw && max_rw < c->neg.max_read ? max_rw : c->neg.max_read;
    c->max_write = max_rw && max_rw < c->neg.max_write ? max_rw : c->neg.max_write;
    return 0;
}

static void init(struct cf_smb2 *c, const struct cf_target *t)
{
    memset(c, 0, sizeof(*c));
    c->t = t;
    c->tcp = -1;
    c->credits = 1;
}

int cf_smb2_connect(struct cf_smb2 *c, const struct cf_target *t, const uint16_t *dialects,
                    int n, const uint8_t *guid)
{
    struct smbd_negotiate_req nreq;
    int rc;

    init(c, t);
    rc = cf_smbd_connect(&c->sd, t);
    if (rc == 0) {
        cf_smbd_default_negotiate(t, &nreq);
        rc = cf_smbd_negotiate(&c->sd, &nreq);
    }
    if (rc < 0)
        return cf_smb2_say(c, rc, "SMB Direct: %s", c->sd.why);
    return negotiate(c, dialects, n, guid, c->sd.neg.max_read_write_size);
}

int cf_smb2_connect_tcp(struct cf_smb2 *c, const struct cf_target *t,
                        const struct sockaddr *addr, socklen_t addrlen,
                        const uint16_t *dialects, int n, const uint8_t *guid)
{
    init(c, t);
    c->tcp = cf_tcp_connect(addr, addrlen, t->timeout_ms);
    if (c->tcp < 0) {
        int rc = c->tcp;

        c->tcp = -1;
        return cf_smb2_say(c, rc, "TCP connect: %s", strerror(-rc));
    }
    return negotiate(c, dialects, n, guid, 0);
}

int cf_smb2_tree_connect(struct cf_smb2 *c, const char *share)
{
    struct cf_smb2_req_hdr h = cf_smb2_next_hdr(c, CF_SMB2_TREE_CONNECT, 0);
    const struct cf_msg *resp;
    uint8_t req[REQ_SMALL];

    return cf_smb2_call(c, &h, req,
                        cf_smb2_tree_connect_req(&h, c->t->host, share, req, sizeof(req)), &resp);
}

int cf_smb2_create(struct cf_smb2 *c, const char *name, uint8_t fid[16])
{
    struct cf_smb2_req_hdr h = cf_smb2_next_hdr(c, CF_SMB2_CREATE, 0);
    const struct cf_msg *resp;
    uint8_t req[REQ_SMALL];
    int rc = cf_smb2_call(c, &h, req, cf_smb2_create_req(&h, name, req, sizeof(req)), &resp);

    if (rc == 0 && cf_smb2_create_resp_decode(resp->data, resp->len, fid) != 0)
        return cf_smb2_say(c, -EPROTO, "the CREATE response does not decode");
    return rc;
}

int cf_smb2_close_file(struct cf_smb2 *c, const uint8_t fid[16])
{
    struct cf_smb2_req_hdr h = cf_smb2_next_hdr(c, CF_SMB2_CLOSE, 0);
    const struct cf_msg *resp;
    uint8_t req[REQ_SMALL];

    return cf_smb2_call(c, &h, req, cf_smb2_close_req(&h, fid, req, sizeof(req)), &resp);
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
    struct cf_smb2_req_hdr h = cf_smb2_next_hdr(c, SMB2_WRITE, len);
    const struct cf_msg *resp;
    uint32_t count;
    int rc;

    if (!req)
        return cf_smb2_say(c, -ENOMEM, "out of memory");
    rc = cf_smb2_call(c, &h, req,
                      cf_smb2_write_req(&h, fid, offset, data, len, 0, NULL, 0, req, cap), &resp);
    free(req);
    if (rc == 0 && (cf_smb2_write_resp_decode(resp->data, resp->len, &count) != 0 || count != len))
        rc = cf_smb2_say(c, -EPROTO, "inline WRITE of %u bytes: the response does not say %u "
                         "written", len, len);
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
        uint32_t n = chunk(c->max_read, c->tcp < 0 ? c->t->max_fragmented_size : 0, len - *got);
        struct cf_smb2_req_hdr h = cf_smb2_next_hdr(c, SMB2_READ, n);

        rc = cf_smb2_call(c, &h, req, cf_smb2_read_req(&h, fid, offset + *got, n, 0, NULL, 0,
                                                        req, sizeof(req)), &resp);
        if (rc == -EREMOTEIO && c->status == CF_STATUS_END_OF_FILE)
            return 0;
        if (rc == 0 && (cf_smb2_read_resp_data(resp->data, resp->len, &r, &data) != 0 ||
                        r.data_length > n))
            rc = cf_smb2_say(c, -EPROTO, "inline READ: the response does not decode");
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
    struct cf_smb2_req_hdr h = cf_smb2_next_hdr(c, command, len);
    int rc;

    if (!req)
        return cf_smb2_say(c, -ENOMEM, "out of memory");
    rc = cf_smb2_call(c, &h, req,
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
        rc = cf_smb2_say(c, -EPROTO, "the channel WRITE response does not decode");
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
        return cf_smb2_say(c, -EPROTO, "the channel READ response does not decode");
    /* MS-SMB2 3.3.5.12: over the channel, DataLength 0 and DataRemaining the bytes written */
    if (r.data_length != 0)
        return cf_smb2_say(c, -EPROTO, "channel READ response with DataLength %u inline "
                           "(expected 0)", r.data_length);
    *remaining = r.data_remaining;
    return 0;
}

void cf_smb2_close(struct cf_smb2 *c)
{
    cf_smbd_close(&c->sd);
    if (c->tcp >= 0)
        close(c->tcp);
    c->tcp = -1;
    free(c->tcp_msg);
    c->tcp_msg = NULL;
    smb2_sign_key_wipe(&c->session_key);
    smb2_sign_key_wipe(&c->channel_key);
}
