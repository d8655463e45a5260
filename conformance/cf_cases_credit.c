/* SPDX-License-Identifier: BSD-3-Clause */
/* conformance/cf_cases_credit.c — the SmbdCreditMgmt group: SMB Direct credits (MS-SMBD
 * 3.1.5.1, 3.1.5.8, 3.1.5.9): the fewest credits, the client's send credits spent
 * mid-message (the server must grant more by itself), the server's send credits
 * withheld (it must stop, and resume on each grant), and CreditsRequested 0. Every
 * session uses the case list's defaults (1024-byte messages, 10 credits) unless the
 * case asks for fewer credits.
 *
 * Time bounds: QUIET_MS of silence is checked once when the server runs out of
 * credits; later stalls are detected after STALL_MS; a server never granted more
 * credits is watched for CREDIT_END_MS. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cf_fixture.h"
#include "sd_clock.h"

#define MODERATE 8192u       /* a WRITE of 9 fragments of 1000 bytes */
#define SPEND 32768u         /* a WRITE of 33 fragments: more than 10 send credits */
#define READ_LEN 32768u      /* a READ response of 33 fragments */
#define QUIET_MS 4000        /* out of credits: the server stays silent this long */
#define STALL_MS 1000        /* later stalls: no message for this long */
#define MAX_GRANTS 40        /* batches of 10 credits before giving up */
#define CREDIT_END_MS 6500   /* never granted more: watched this long (list: about 5 s) */

/* A session with the list's defaults and credits receive credits (CreditsRequested). */
static int open_credits(struct cf_ctx *ctx, uint16_t credits, struct cf_target *t,
                        struct cf_file *f, const char *tag, struct cf_result *r)
{
    struct cf_ctx c;

    cf_list_target(ctx, t, &c);
    t->credits = credits;
    return cf_file_open(&c, f, CF_DIALECTS_ALL, tag, r);
}

/* CreditsRequested credits in the Negotiate Request, and a moderate WRITE completes
 * with that few receives posted. The list wants CreditsGranted no more than asked;
 * MS-SMBD makes only "at least one" a MUST (3.1.5.3: CreditsGranted is the receives
 * posted; 3.1.5.9: at least one MUST be posted, and the bound by ReceiveCreditTarget
 * is part of the SHOULD that raises the count). So 0 FAILs; more than asked PASSes
 * and the detail says so. */
static void few_credits(struct cf_ctx *ctx, struct cf_result *r, uint16_t credits,
                        const char *tag)
{
    struct cf_target t;
    struct cf_file f;
    uint16_t g;

    if (open_credits(ctx, credits, &t, &f, tag, r) < 0)
        goto out;
    g = f.c.sd.neg.credits_granted;
    if (g == 0)
        cf_result(r, CF_FAIL, "CreditsGranted 0 for CreditsRequested %u", credits);
    else if (cf_write_back(&f, MODERATE, 21, NULL, r) < 0)
        ; /* r says what failed */
    else if (f.c.sd.over_credit)
        cf_result(r, CF_FAIL, "the server sent %u messages beyond the credits granted to it",
                  f.c.sd.over_credit);
    else
        cf_result(r, CF_PASS, "CreditsRequested %u: %u granted%s; a %u-byte WRITE completed "
                  "and read back equal", credits, g, g > credits ? " (more than asked: a "
                  "SHOULD of MS-SMBD 3.1.5.9, not a MUST)" : "", MODERATE);
out:
    cf_file_end(&f);
}

static void minimum_credits(struct cf_ctx *ctx, struct cf_result *r)
{
    few_credits(ctx, r, 1, "mincred");
}

static void limited_credits(struct cf_ctx *ctx, struct cf_result *r)
{
    few_credits(ctx, r, 10, "limcred");
}

/* 3.1.5.8, 3.1.5.9: a receiver whose peer runs out of credits grants more, by an
 * empty message when it has nothing else to send (here: the SMB2 request is not
 * complete yet, so nothing can answer it). */
static void spend_send_credits(struct cf_ctx *ctx, struct cf_result *r)
{
    struct cf_target t;
    struct cf_file f;
    uint32_t before;
    uint16_t start;

    if (open_credits(ctx, 10, &t, &f, "spend", r) < 0)
        goto out;
    before = f.c.sd.empty_grants;
    start = (uint16_t)f.c.sd.send_credits;
    if (cf_write_back(&f, SPEND, 22, NULL, r) < 0)
        goto out;
    if (f.c.sd.empty_grants == before)
        cf_result(r, CF_FAIL, "a %u-byte WRITE in %u fragments with %u send credits completed "
                  "without an empty message granting credits", SPEND,
                  (SPEND + SMB2_RW_REQ_FIXED + 999) / 1000, start);
    else if (f.c.sd.zero_requested)
        cf_result(r, CF_FAIL, "%u of the server's messages had CreditsRequested 0",
                  f.c.sd.zero_requested);
    else
        cf_result(r, CF_PASS, "a %u-byte WRITE in %u fragments with %u send credits: %u empty "
                  "messages granted more (CreditsRequested > 0); read back equal", SPEND,
                  (SPEND + SMB2_RW_REQ_FIXED + 999) / 1000, start,
                  f.c.sd.empty_grants - before);
out:
    cf_file_end(&f);
}

/* Sends a READ of len at 0 without waiting for its response (the cases that watch the
 * response arrive). 0, or -1 with r FAIL. */
static int send_read(struct cf_file *f, uint32_t len, struct cf_result *r)
{
    struct cf_smb2_req_hdr h = { .command = SMB2_READ, .credit_charge = 1, .credit_request = 1,
                                 .message_id = f->c.next_mid, .session_id = f->c.session_id,
                                 .tree_id = f->c.tree_id };
    uint8_t req[CF_SMB2_RW_REQ_SIZE(0)];
    int n = cf_smb2_read_req(&h, f->fid, 0, len, 0, NULL, 0, req, sizeof(req));

    f->c.next_mid++;
    f->c.credits--;
    if (n < 0 || cf_smbd_send_msg(&f->c.sd, req, (size_t)n) < 0)
        return cf_result(r, CF_FAIL, "sending a READ of %u bytes: %s", len, f->c.sd.why), -1;
    return 0;
}

/* 1 when m is an interim response (STATUS_PENDING, MS-SMB2 3.2.5.1.5), whose credits
 * it counts; the final response to the same request follows. */
static int interim(struct cf_file *f, const struct cf_msg *m)
{
    struct cf_smb2_resp resp;

    if (cf_smb2_resp_decode(m->data, m->len, &resp) != 0 || !smb2_hdr_is_interim(&resp.h))
        return 0;
    f->c.credits += resp.credit_response;
    return 1;
}

/* Checks the READ response m holds the pattern's first len bytes. */
static int read_ok(const struct cf_msg *m, uint32_t len, uint32_t seed, struct cf_result *r)
{
    struct smb2_read_resp rr;
    struct cf_smb2_resp resp;
    const uint8_t *data;

    if (cf_smb2_read_resp_data(m->data, m->len, &rr, &data) != 0 || rr.data_length != len ||
        cf_pattern_diff(data, len, 0, seed) >= 0)
        return cf_result(r, CF_FAIL, "the %zu-byte READ response (status 0x%08x) is not the %u "
                         "bytes written", m->len,
                         cf_smb2_resp_decode(m->data, m->len, &resp) == 0 ? resp.h.status : 0,
                         len), -1;
    return 0;
}

/* 3.1.5.1: no send without a credit. The server runs out mid-response; it must stay
 * silent (QUIET_MS) and send at most what each grant of 10 allows. */
static void spend_receive_credits(struct cf_ctx *ctx, struct cf_result *r)
{
    struct cf_target t;
    struct cf_file f;
    const struct cf_msg *m = NULL;
    unsigned stalls = 0;
    uint32_t held = 0;
    int rc;

    if (open_credits(ctx, 10, &t, &f, "recvcred", r) < 0 || cf_file_fill(&f, READ_LEN, 23, r) < 0)
        goto out;
    f.c.sd.hold_credits = 1;
    if (send_read(&f, READ_LEN, r) < 0)
        goto out;
    for (;;) {
        rc = cf_smbd_recv_msg(&f.c.sd, stalls ? STALL_MS : QUIET_MS, &m);
        if (f.c.sd.over_credit) {
            cf_result(r, CF_FAIL, "the server sent %u messages beyond the credits granted to it",
                      f.c.sd.over_credit);
            goto out;
        }
        if (rc == 0 && interim(&f, m))
            continue; /* smbd went async on the READ (MS-SMB2 3.3.4.2): the final one follows */
        if (rc == 0)
            break;
        if (rc != -ETIMEDOUT || stalls == MAX_GRANTS) {
            cf_result(r, CF_FAIL, "waiting for the READ response after %u grants: %s", stalls,
                      rc == -ETIMEDOUT ? "still incomplete" : f.c.sd.lost ? "the connection "
                      "ended" : f.c.sd.why);
            goto out;
        }
        if (stalls++ == 0)
            held = f.c.sd.peer_credits;
        if (cf_smbd_grant(&f.c.sd, 10) < 0) {
            cf_result(r, CF_FAIL, "granting 10 credits: %s", f.c.sd.why);
            goto out;
        }
    }
    f.c.sd.hold_credits = 0;
    if (read_ok(m, READ_LEN, 23, r) < 0)
        goto out;
    if (stalls == 0)
        cf_result(r, CF_FAIL, "the %u-byte READ response (%u messages) came without a stall: "
                  "more credits than granted?", READ_LEN, m->frags);
    else
        cf_result(r, CF_PASS, "a %u-byte READ response in %u messages: out of credits the "
                  "server stopped (%u of ours left, silent %d ms), resumed on each of %u grants "
                  "of 10, never beyond them; reassembled, equal", READ_LEN, m->frags, held,
                  QUIET_MS, stalls);
out:
    cf_file_end(&f);
}

/* The server out of send credits for good: the list expects termination after about
 * 5 s. MS-SMBD has no MUST for it: a server waiting for credits sends nothing (3.1.5.1)
 * and its idle timer SHOULD end the connection once a keepalive cannot be answered
 * (3.1.6.2). So: sending beyond its credits FAILs; ending the connection, or staying
 * silent for CREDIT_END_MS, PASSes, and the detail says which. */
static void server_credit_timeout(struct cf_ctx *ctx, struct cf_result *r)
{
    struct cf_target t;
    struct cf_file f;
    uint64_t t0;

    if (open_credits(ctx, 10, &t, &f, "credend", r) < 0 || cf_file_fill(&f, READ_LEN, 24, r) < 0)
        goto out;
    f.c.sd.hold_credits = 1;
    f.c.sd.hold_acks = 1;
    if (send_read(&f, READ_LEN, r) < 0)
        goto out;
    t0 = sd_now_ms();
    if (cf_smbd_wait_lost(&f.c.sd, CREDIT_END_MS) == 0 && !f.c.sd.over_credit)
        cf_result(r, CF_PASS, "never granted more credits: the server stopped sending and "
                  "terminated after %llu ms", (unsigned long long)(sd_now_ms() - t0));
    else if (f.c.sd.over_credit)
        cf_result(r, CF_FAIL, "the server sent %u messages beyond the credits granted to it",
                  f.c.sd.over_credit);
    else
        cf_result(r, CF_PASS, "never granted more credits: the server stopped sending, held "
                  "the connection %d ms (ending it is a SHOULD, MS-SMBD 3.1.6.2)",
                  CREDIT_END_MS);
out:
    cf_file_end(&f);
}

/* 3.1.5.8: CreditsRequested 0 terminates; 1 is served. */
static void credits_requested(struct cf_ctx *ctx, struct cf_result *r)
{
    static const struct cf_bad v[] = {
        { "CreditsRequested 0", { { 0, 10, 0, 0, 0, 0, 20 } }, 1 },
    };
    struct cf_target t;
    struct cf_ctx c;
    struct cf_smbd s;

    cf_expect_end(ctx, r, v, 1, "CreditsRequested 0");
    if (r->verdict != CF_PASS)
        return;
    cf_list_target(ctx, &t, &c);
    t.credits = 1;
    if (cf_raw_open(&t, &s, r) == 0)
        cf_keepalive_answered(&s, "CreditsRequested 0: terminated; on a new connection "
                              "CreditsRequested 1 with SMB_DIRECT_RESPONSE_REQUESTED", r);
    cf_smbd_close(&s);
}

static const struct cf_case cases[] = {
    { "BVT_SmbdCreditMgmt_OperationWithMinimumCredits", minimum_credits },
    { "SmbdCreditMgmt_OperationWithLimitedCredits", limited_credits },
    { "SmbdCreditMgmt_ConsumeAllSendCredits", spend_send_credits },
    { "SmbdCreditMgmt_ConsumeAllReceiveCredits", spend_receive_credits },
    { "SmbdCreditMgmt_ConsumeAllCreditServer_Timeout", server_credit_timeout },
    { "SmbdCreditMgmt_NegativeParameter_CreditRequested", credits_requested },
};

const struct cf_group cf_group_smbd_credit_mgmt = { "SmbdCreditMgmt", cases,
                                                    sizeof(cases) / sizeof(cases[0]) };
