/* SPDX-License-Identifier: BSD-3-Clause */
/* conformance/cf_cases_negotiate.c — the SmbdNegotiate group: raw MS-SMBD Negotiate
 * Requests, well-formed or not, on fresh connections (MS-SMBD 2.2.1, 2.2.2, 3.1.5.3,
 * 3.1.5.6; the negotiation timer 3.1.6.1). Each step is one connection whose outcome is
 * success (Status 0), refusal (STATUS_NOT_SUPPORTED) or termination; after a refusal
 * or termination the server must still negotiate on a new connection. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cf_case.h"
#include "cf_smb2_wire.h"
#include "sd_clock.h"

/* The case list's defaults: 1.0 only, 10 credits, 1024-byte sends and receives,
 * 128 KiB fragmented. */
static const struct smbd_negotiate_req defaults = {
    .min_version = SMBD_VERSION_1_0, .max_version = SMBD_VERSION_1_0, .credits_requested = 10,
    .preferred_send_size = 1024, .max_receive_size = 1024, .max_fragmented_size = 131072,
};

#define AFTER_REFUSAL_MS 2000   /* how long SMB2 traffic after a refusal must go unanswered */
#define END_MS 3000             /* how long a refused connection may take to end */

enum expect { EXPECT_SUCCESS, EXPECT_NOT_SUPPORTED, EXPECT_TERMINATE };

/* One connection: len bytes of msg as the first message, and the outcome checked.
 * 0 (*resp the response, when one came), or -1 with r set. */
static int step(struct cf_ctx *ctx, const void *msg, size_t len, enum expect e, const char *what,
                struct smbd_negotiate_resp *resp, struct cf_result *r)
{
    struct cf_smbd s;
    int rc = cf_smbd_connect(&s, ctx->t), ret = -1;

    if (rc == 0)
        rc = cf_smbd_send_raw(&s, msg, len);
    if (rc == 0 || rc == -ENOTCONN)
        rc = cf_smbd_wait_negotiate(&s, ctx->t->timeout_ms);
    if (rc == 0 && resp)
        *resp = s.neg;
    if (rc == -ETIMEDOUT || rc == -EPROTO || (rc < 0 && rc != -ENOTCONN)) {
        cf_result(r, CF_FAIL, "%s: %s", what, s.why);
    } else if (e == EXPECT_SUCCESS) {
        if (rc == 0 && s.neg.status == SMBD_STATUS_SUCCESS)
            ret = 0;
        else if (rc == 0)
            cf_result(r, CF_FAIL, "%s: Status 0x%08x, expected success", what, s.neg.status);
        else
            cf_result(r, CF_FAIL, "%s: the connection ended, expected success", what);
    } else if (rc == 0 && s.neg.status == SMBD_STATUS_SUCCESS) {
        cf_result(r, CF_FAIL, "%s: the server negotiated, expected %s", what,
                  e == EXPECT_TERMINATE ? "termination" : "STATUS_NOT_SUPPORTED");
    } else if (e == EXPECT_NOT_SUPPORTED && (rc < 0 || s.neg.status != SMBD_STATUS_NOT_SUPPORTED)) {
        cf_result(r, CF_FAIL, "%s: expected a STATUS_NOT_SUPPORTED response, got %s", what,
                  rc < 0 ? "the connection ended" : "another Status");
    } else if (e == EXPECT_NOT_SUPPORTED) {
        /* then SMB2 traffic must go unanswered: an SMB2 NEGOTIATE in a Data Transfer */
        uint8_t m[SMBD_DATA_OFFSET + 200], guid[16] = { 0 };
        const uint16_t dialect = SMB2_DIALECT_0302;
        const struct cf_smb2_req_hdr h = { .command = SMB2_NEGOTIATE, .credit_charge = 1 };
        int n = cf_smb2_negotiate_req(&h, &dialect, 1, guid, m + SMBD_DATA_OFFSET, 200);
        struct smbd_data_hdr dh = { .credits_requested = 1, .credits_granted = 1,
                                    .data_offset = SMBD_DATA_OFFSET, .data_length = (uint32_t)n };
        uint32_t before = s.recv_count;

        smbd_encode_data_hdr(&dh, m, sizeof(m));
        if (!s.lost)
            cf_smbd_send_raw(&s, m, SMBD_DATA_OFFSET + (size_t)n);
        cf_smbd_wait_lost(&s, AFTER_REFUSAL_MS);
        if (s.recv_count != before)
            cf_result(r, CF_FAIL, "%s: the server answered SMB2 traffic after refusing", what);
        else
            ret = 0;
    } else if (rc == 0 && cf_smbd_wait_lost(&s, END_MS) < 0) {
        cf_result(r, CF_FAIL, "%s: Status 0x%08x, but the connection did not end in %d ms",
                  what, s.neg.status, END_MS);
    } else {
        ret = 0; /* terminated (with or without a failure response) */
    }
    cf_smbd_close(&s);
    return ret;
}

/* step() with req encoded (exactly 20 bytes). */
static int step_req(struct cf_ctx *ctx, const struct smbd_negotiate_req *req, enum expect e,
                    const char *what, struct smbd_negotiate_resp *resp, struct cf_result *r)
{
    uint8_t m[SMBD_NEGOTIATE_REQ_SIZE];

    smbd_encode_negotiate_req(req, m, sizeof(m));
    return step(ctx, m, sizeof(m), e, what, resp, r);
}

/* After a refusal or termination: a new connection with the defaults negotiates. */
static int still_negotiates(struct cf_ctx *ctx, struct cf_result *r)
{
    return step_req(ctx, &defaults, EXPECT_SUCCESS, "then a new connection", NULL, r);
}

static void basic(struct cf_ctx *ctx, struct cf_result *r)
{
    struct smbd_negotiate_resp p;

    if (step_req(ctx, &defaults, EXPECT_SUCCESS, "default Negotiate Request", &p, r) < 0)
        return;
    /* MS-SMBD 2.2.2, 3.1.5.3, 3.1.5.6 */
    if (p.min_version != SMBD_VERSION_1_0 || p.max_version != SMBD_VERSION_1_0 ||
        p.negotiated_version != SMBD_VERSION_1_0)
        cf_result(r, CF_FAIL, "versions 0x%04x/0x%04x/0x%04x, expected 0x0100 each",
                  p.min_version, p.max_version, p.negotiated_version);
    else if (p.credits_requested == 0)
        cf_result(r, CF_FAIL, "CreditsRequested 0");
    else if (p.credits_granted == 0 || p.credits_granted > defaults.credits_requested)
        cf_result(r, CF_FAIL, "CreditsGranted %u, expected 1 to %u (the credits asked for)",
                  p.credits_granted, defaults.credits_requested);
    else if (p.max_read_write_size < 1048576)
        cf_result(r, CF_FAIL, "MaxReadWriteSize %u, expected at least 1 MiB", p.max_read_write_size);
    else if (p.preferred_send_size < 128 || p.preferred_send_size > defaults.max_receive_size)
        cf_result(r, CF_FAIL, "PreferredSendSize %u, expected 128 to our MaxReceiveSize %u",
                  p.preferred_send_size, defaults.max_receive_size);
    else if (p.max_receive_size < 128)
        cf_result(r, CF_FAIL, "MaxReceiveSize %u, expected at least 128", p.max_receive_size);
    else if (p.max_fragmented_size < 131072)
        cf_result(r, CF_FAIL, "MaxFragmentedSize %u, expected at least 128 KiB",
                  p.max_fragmented_size);
    else
        cf_result(r, CF_PASS, "0x0100, credits %u granted of %u asked (server asks %u), "
                  "MaxReadWriteSize %u, PreferredSendSize %u, MaxReceiveSize %u, "
                  "MaxFragmentedSize %u", p.credits_granted, defaults.credits_requested,
                  p.credits_requested, p.max_read_write_size, p.preferred_send_size,
                  p.max_receive_size, p.max_fragmented_size);
}

/* PreferredSendSize values with the MaxReceiveSize the response must then carry
 * (3.1.5.6: the smaller of the server's and PreferredSendSize, at least 128; 0: any). */
static void preferred_send(struct cf_ctx *ctx, struct cf_result *r, const uint32_t *sizes,
                           size_t n, uint32_t want_max_receive)
{
    struct smbd_negotiate_req q = defaults;
    struct smbd_negotiate_resp p;
    char what[64];

    for (size_t i = 0; i < n; i++) {
        q.preferred_send_size = sizes[i];
        snprintf(what, sizeof(what), "PreferredSendSize %u", sizes[i]);
        if (step_req(ctx, &q, EXPECT_SUCCESS, what, &p, r) < 0)
            return;
        if (want_max_receive && p.max_receive_size != want_max_receive) {
            cf_result(r, CF_FAIL, "%s: response MaxReceiveSize %u, expected %u", what,
                      p.max_receive_size, want_max_receive);
            return;
        }
    }
    cf_result(r, CF_PASS, "negotiated%s%.0u", want_max_receive ? ", MaxReceiveSize " : "",
              want_max_receive);
}

static void preferred_zero(struct cf_ctx *ctx, struct cf_result *r)
{
    static const uint32_t v[] = { 0 };

    preferred_send(ctx, r, v, 1, 128);
}

static void preferred_below_128(struct cf_ctx *ctx, struct cf_result *r)
{
    static const uint32_t v[] = { 127, 128 };

    preferred_send(ctx, r, v, 2, 128);
}

static void preferred_max(struct cf_ctx *ctx, struct cf_result *r)
{
    static const uint32_t v[] = { 0xFFFFFFFFu };

    preferred_send(ctx, r, v, 1, 0);
}

static void redundancy(struct cf_ctx *ctx, struct cf_result *r)
{
    uint8_t m[SMBD_NEGOTIATE_REQ_SIZE + 492];

    memset(m, 0xA5, sizeof(m));
    smbd_encode_negotiate_req(&defaults, m, sizeof(m));
    if (step(ctx, m, sizeof(m), EXPECT_SUCCESS, "20-byte request + 492 extra bytes", NULL, r) == 0)
        cf_result(r, CF_PASS, "a 512-byte message holding a 20-byte request negotiated");
}

static void disconnect_after(struct cf_ctx *ctx, struct cf_result *r)
{
    if (step_req(ctx, &defaults, EXPECT_SUCCESS, "negotiate, disconnect", NULL, r) == 0 &&
        still_negotiates(ctx, r) == 0)
        cf_result(r, CF_PASS, "negotiated, disconnected; a new connection negotiated");
}

static void uncompleted(struct cf_ctx *ctx, struct cf_result *r)
{
    uint8_t m[SMBD_NEGOTIATE_REQ_SIZE];

    smbd_encode_negotiate_req(&defaults, m, sizeof(m));
    if (step(ctx, m, 19, EXPECT_TERMINATE, "a 19-byte request", NULL, r) == 0 &&
        still_negotiates(ctx, r) == 0)
        cf_result(r, CF_PASS, "19 bytes: terminated; 20 bytes on a new connection: negotiated");
}

/* Negotiate Requests with up to two fields changed from the defaults, each on its own
 * connection with its outcome; then a new connection negotiates. */
enum field { F_NONE, F_MIN_VERSION, F_MAX_VERSION, F_CREDITS, F_MAX_RECEIVE, F_MAX_FRAGMENTED };

struct variant {
    const char *what;
    enum field f1;
    uint32_t v1;
    enum field f2;
    uint32_t v2;
    enum expect e;
};

static void set_field(struct smbd_negotiate_req *q, enum field f, uint32_t v)
{
    switch (f) {
    case F_NONE: break;
    case F_MIN_VERSION: q->min_version = (uint16_t)v; break;
    case F_MAX_VERSION: q->max_version = (uint16_t)v; break;
    case F_CREDITS: q->credits_requested = (uint16_t)v; break;
    case F_MAX_RECEIVE: q->max_receive_size = v; break;
    case F_MAX_FRAGMENTED: q->max_fragmented_size = v; break;
    }
}

static void variants(struct cf_ctx *ctx, struct cf_result *r, const struct variant *v, size_t n,
                     const char *pass)
{
    for (size_t i = 0; i < n; i++) {
        struct smbd_negotiate_req q = defaults;

        set_field(&q, v[i].f1, v[i].v1);
        set_field(&q, v[i].f2, v[i].v2);
        if (step_req(ctx, &q, v[i].e, v[i].what, NULL, r) < 0)
            return;
    }
    if (still_negotiates(ctx, r) == 0)
        cf_result(r, CF_PASS, "%s; a new connection then negotiated", pass);
}

/* MS-SMBD 3.1.5.6: a version range without 0x0100 is refused with STATUS_NOT_SUPPORTED
 * (a range that still holds 0x0100, e.g. MinVersion 0 with MaxVersion 0x0100, is valid:
 * the other bound goes along). */
static void neg_min_version(struct cf_ctx *ctx, struct cf_result *r)
{
    static const struct variant v[] = {
        { "MinVersion 0x0000 (MaxVersion 0x0000)", F_MIN_VERSION, 0, F_MAX_VERSION, 0,
          EXPECT_NOT_SUPPORTED },
        { "MinVersion 0xFFFF", F_MIN_VERSION, 0xFFFF, F_NONE, 0, EXPECT_NOT_SUPPORTED },
    };

    variants(ctx, r, v, 2, "MinVersion 0x0000 and 0xFFFF: STATUS_NOT_SUPPORTED, SMB2 after it "
             "unanswered");
}

static void neg_max_version(struct cf_ctx *ctx, struct cf_result *r)
{
    static const struct variant v[] = {
        { "MaxVersion 0x0000", F_MAX_VERSION, 0, F_NONE, 0, EXPECT_NOT_SUPPORTED },
        { "MaxVersion 0xFFFF (MinVersion 0xFFFF)", F_MAX_VERSION, 0xFFFF, F_MIN_VERSION, 0xFFFF,
          EXPECT_NOT_SUPPORTED },
    };

    variants(ctx, r, v, 2, "MaxVersion 0x0000 and 0xFFFF: STATUS_NOT_SUPPORTED, SMB2 after it "
             "unanswered");
}

static void neg_credits(struct cf_ctx *ctx, struct cf_result *r)
{
    static const struct variant v[] = {
        { "CreditsRequested 0", F_CREDITS, 0, F_NONE, 0, EXPECT_TERMINATE },
        { "CreditsRequested 0xFFFF", F_CREDITS, 0xFFFF, F_NONE, 0, EXPECT_SUCCESS },
    };

    variants(ctx, r, v, 2, "CreditsRequested 0: terminated; 0xFFFF: negotiated");
}

static void neg_max_receive(struct cf_ctx *ctx, struct cf_result *r)
{
    static const struct variant v[] = {
        { "MaxReceiveSize 127", F_MAX_RECEIVE, 127, F_NONE, 0, EXPECT_TERMINATE },
        { "MaxReceiveSize 128", F_MAX_RECEIVE, 128, F_NONE, 0, EXPECT_SUCCESS },
        { "MaxReceiveSize 0xFFFFFFFF", F_MAX_RECEIVE, 0xFFFFFFFFu, F_NONE, 0, EXPECT_SUCCESS },
    };

    variants(ctx, r, v, 3, "MaxReceiveSize 127: terminated; 128, 0xFFFFFFFF: negotiated");
}

static void neg_max_fragmented(struct cf_ctx *ctx, struct cf_result *r)
{
    static const struct variant v[] = {
        { "MaxFragmentedSize 131071", F_MAX_FRAGMENTED, 131071, F_NONE, 0, EXPECT_TERMINATE },
        { "MaxFragmentedSize 131072", F_MAX_FRAGMENTED, 131072, F_NONE, 0, EXPECT_SUCCESS },
        { "MaxFragmentedSize 0xFFFFFFFF", F_MAX_FRAGMENTED, 0xFFFFFFFFu, F_NONE, 0,
          EXPECT_SUCCESS },
    };

    variants(ctx, r, v, 3, "MaxFragmentedSize 131071: terminated; 131072, 0xFFFFFFFF: "
             "negotiated");
}

#define TIMER_WAIT_MS 4000    /* within the 5 s negotiation timer (3.1.6.1) */
#define TIMER_LIMIT_MS 8000   /* 5 s and some slack for the server's loop */

static void timer(struct cf_ctx *ctx, struct cf_result *r, int send)
{
    struct smbd_negotiate_req q = defaults;
    uint64_t t0 = sd_now_ms(), took;
    struct cf_smbd s;
    int rc = cf_smbd_connect(&s, ctx->t);

    if (rc < 0) {
        cf_result(r, CF_FAIL, "%s", s.why);
        cf_smbd_close(&s);
        return;
    }
    rc = cf_smbd_wait_lost(&s, send ? TIMER_WAIT_MS : TIMER_LIMIT_MS);
    took = sd_now_ms() - t0;
    if (send && rc == 0)
        cf_result(r, CF_FAIL, "the server ended the connection after %llu ms, before a request "
                  "sent within %d ms", (unsigned long long)took, TIMER_WAIT_MS);
    else if (send && cf_smbd_negotiate(&s, &q) < 0)
        cf_result(r, CF_FAIL, "a request after %d ms: %s", TIMER_WAIT_MS, s.why);
    else if (!send && rc < 0)
        cf_result(r, CF_FAIL, "silent for %d ms and the connection still stands", TIMER_LIMIT_MS);
    else if (send)
        cf_result(r, CF_PASS, "a request %d ms after connecting negotiated", TIMER_WAIT_MS);
    else
        cf_result(r, CF_PASS, "silent: terminated after %llu ms", (unsigned long long)took);
    cf_smbd_close(&s);
    if (!send && r->verdict == CF_PASS) {
        char pass[sizeof(r->detail)];

        snprintf(pass, sizeof(pass), "%s", r->detail);
        if (still_negotiates(ctx, r) == 0)
            cf_result(r, CF_PASS, "%s; a new connection negotiated", pass);
    }
}

static void negotiation_timer(struct cf_ctx *ctx, struct cf_result *r)
{
    timer(ctx, r, 1);
}

static void negotiation_timer_timeout(struct cf_ctx *ctx, struct cf_result *r)
{
    timer(ctx, r, 0);
}

static const struct cf_case cases[] = {
    { "BVT_SmbdNegotiate_Basic", basic },
    { "S1_SmbdNegotiate_PreferredSendSizeWithZero", preferred_zero },
    { "S1_SmbdNegotiate_PreferredSendSizeLessThan128", preferred_below_128 },
    { "S1_SmbdNegotiate_PreferredSendSizeMaxValue", preferred_max },
    { "S1_SmbdNegotiate_Redundancy", redundancy },
    { "SmbdNegotiate_DisconnectAfterNegotiate", disconnect_after },
    { "SmbdNegotiate_UncompletedMessage", uncompleted },
    { "SmbdNegotiate_NegativeParameter_MinVersion", neg_min_version },
    { "SmbdNegotiate_NegativeParameter_MaxVersion", neg_max_version },
    { "SmbdNegotiate_NegativeParameter_CreditsRequested", neg_credits },
    { "SmbdNegotiate_NegativeParameter_MaxReceiveSize", neg_max_receive },
    { "SmbdNegotiate_NegativeParameter_MaxFragmentedSize", neg_max_fragmented },
    { "SmbdNegotiate_NegotiationTimer", negotiation_timer },
    { "SmbdNegotiate_NegotiationTimer_Timeout", negotiation_timer_timeout },
};

const struct cf_group cf_group_smbd_negotiate = { "SmbdNegotiate", cases,
                                                  sizeof(cases) / sizeof(cases[0]) };
