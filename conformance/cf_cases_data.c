/* SPDX-License-Identifier: BSD-3-Clause */
/* conformance/cf_cases_data.c — the SmbdDataTransfer group: Data Transfer messages
 * (MS-SMBD 2.2.3) sent whole, fragmented every way the format allows, padded, and
 * malformed against each MUST-verify rule of 3.1.5.8 (the server must terminate, and
 * then still negotiate on a new connection); the idle connection timer both ways
 * (3.1.2.2, 3.1.6.2). Every connection uses the case list's defaults: PreferredSendSize
 * and MaxReceiveSize 1024, 10 credits, MaxFragmentedSize 131072.
 *
 * Time bounds: a connection the server must end has CF_END_MS; the client's keepalive
 * must be answered within CF_ANSWER_MS; the server's keepalive is awaited for
 * ctx->keepalive_wait_ms (--keepalive-wait, default CF_KEEPALIVE_WAIT_MS) and the
 * cases needing it SKIP when none comes by then (a longer KeepaliveInterval, e.g. the
 * relay's default 120 s); after an unanswered keepalive the server has KA_END_MS. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cf_fixture.h"
#include "sd_clock.h"

#define IDLE_MS 2000         /* IdleConnection_Client: idle this long first (2 s) */
#define KA_END_MS 7000       /* an unanswered keepalive: 5 s (Appendix B <3>) + slack */
#define SMALL 100u           /* a WRITE that fits one 1024-byte message */
#define MODERATE 8192u       /* a WRITE of 9 fragments of 1000 bytes */

/* ---- SMB2 traffic over a session with the list's defaults ---- */

/* Opens f with the list's defaults (t is its target). */
static int open_list(struct cf_ctx *ctx, struct cf_target *t, struct cf_file *f, const char *tag,
                     struct cf_result *r)
{
    struct cf_ctx c;

    cf_list_target(ctx, t, &c);
    return cf_file_open(&c, f, CF_DIALECTS_ALL, tag, r);
}

static void send_small(struct cf_ctx *ctx, struct cf_result *r)
{
    struct cf_target t;
    struct cf_file f;
    struct cf_msg w;  /* the WRITE response (its data not copied) */
    struct smbd_data_hdr h;
    size_t wlen;
    unsigned frags;

    if (open_list(ctx, &t, &f, "small", r) < 0 || cf_write_back(&f, SMALL, 11, &w, r) < 0)
        goto out;
    h = w.first;
    wlen = w.len;
    frags = w.frags;
    /* MS-SMBD 2.2.3, 3.1.5.4: the WRITE response in one message */
    if (frags != 1 || h.remaining_data_length != 0)
        cf_result(r, CF_FAIL, "the %zu-byte WRITE response came in %u messages (first "
                  "RemainingDataLength %u)", wlen, frags, h.remaining_data_length);
    else if (h.credits_requested == 0)
        cf_result(r, CF_FAIL, "the WRITE response has CreditsRequested 0");
    else if (h.data_offset % 8 != 0)
        cf_result(r, CF_FAIL, "the WRITE response has DataOffset %u, not 8-byte aligned",
                  h.data_offset);
    else if (h.data_length != wlen)
        cf_result(r, CF_FAIL, "the WRITE response has DataLength %u for a %zu-byte response",
                  h.data_length, wlen);
    else
        cf_result(r, CF_PASS, "WRITE of %u bytes in one message; response: CreditsRequested %u, "
                  "RemainingDataLength 0, DataOffset %u, DataLength %u; read back equal",
                  SMALL, h.credits_requested, h.data_offset, h.data_length);
out:
    cf_file_end(&f);
}

/* A WRITE of len bytes with the session's fragments cut by plan (n sizes, cycled;
 * NULL: the negotiated size) and padded to pad_to, read back. */
static void write_cut(struct cf_ctx *ctx, struct cf_result *r, const char *tag, uint32_t len,
                      const uint32_t *plan, size_t n, int pad, const char *pass)
{
    struct cf_target t;
    struct cf_file f;

    if (open_list(ctx, &t, &f, tag, r) < 0)
        goto out;
    f.c.sd.frag_plan = plan;
    f.c.sd.frag_plan_n = n;
    f.c.sd.pad_to = pad ? f.c.sd.max_send : 0;
    if (cf_write_back(&f, len, 12, NULL, r) == 0)
        cf_result(r, CF_PASS, "WRITE of %u bytes %s (MaxSendSize %u); read back equal", len,
                  pass, f.c.sd.max_send);
out:
    cf_file_end(&f);
}

static void send_moderate(struct cf_ctx *ctx, struct cf_result *r)
{
    write_cut(ctx, r, "moderate", MODERATE, NULL, 0, 0, "in fragments of up to 1000 bytes");
}

/* 2.2.3 allows any DataLength: 1-byte and empty (DataLength 0, DataOffset 0) fragments
 * in the middle of a message are part of it (3.1.5.8 appends DataLength bytes). */
static void variable_length(struct cf_ctx *ctx, struct cf_result *r)
{
    static const uint32_t plan[] = { 1, 0, 7, 1000, 1, 0, 333, 64, 2, 999, 0, 13 };

    write_cut(ctx, r, "varlen", MODERATE, plan, sizeof(plan) / sizeof(plan[0]), 0,
              "in fragments of 1, 0, 7, 1000, 1, 0, 333, 64, 2, 999, 0, 13, ... bytes");
}

static void small_length(struct cf_ctx *ctx, struct cf_result *r)
{
    static const uint32_t plan[] = { 1 };

    write_cut(ctx, r, "onebyte", SMALL, plan, 1, 0, "one byte per fragment");
}

static void redundancy(struct cf_ctx *ctx, struct cf_result *r)
{
    write_cut(ctx, r, "redundant", SMALL, NULL, 0, 1,
              "in one message padded with junk after DataLength to MaxSendSize");
}

/* A READ whose response is exactly MaxReceiveSize - 24 bytes. */
static void receive_max(struct cf_ctx *ctx, struct cf_result *r)
{
    struct cf_target t;
    struct cf_file f;
    uint8_t buf[1024];
    uint32_t n = 1024 - SMBD_DATA_OFFSET - (SMB2_HDR_SIZE + 16); /* 2.2.20: data at 80 */
    const struct cf_msg *m;
    size_t got = 0;

    if (open_list(ctx, &t, &f, "recvmax", r) < 0 || cf_file_fill(&f, n, 13, r) < 0)
        goto out;
    if (cf_smb2_read(&f.c, f.fid, 0, buf, n, &got) < 0) {
        cf_result(r, CF_FAIL, "READ of %u bytes: %s", n, f.c.why);
        goto out;
    }
    m = f.c.sd.taken;
    /* 2.2.3, 3.1.5.4 */
    if (got != n || cf_pattern_diff(buf, n, 0, 13) >= 0)
        cf_result(r, CF_FAIL, "READ of %u bytes returned %zu or wrong data", n, got);
    else if (m->first.data_offset % 8 != 0)
        cf_result(r, CF_FAIL, "DataOffset %u, not 8-byte aligned", m->first.data_offset);
    else if ((size_t)m->first.data_length + m->first.remaining_data_length != m->len)
        cf_result(r, CF_FAIL, "DataLength %u + RemainingDataLength %u != the %zu-byte response",
                  m->first.data_length, m->first.remaining_data_length, m->len);
    else
        cf_result(r, CF_PASS, "the %zu-byte READ response: DataOffset %u, DataLength %u, "
                  "RemainingDataLength %u (%u message%s); data equal", m->len,
                  m->first.data_offset, m->first.data_length, m->first.remaining_data_length,
                  m->frags, m->frags == 1 ? "" : "s");
out:
    cf_file_end(&f);
}

/* ---- malformed Data Transfer messages: the server must terminate (3.1.5.8) ---- */

#define OK_HDR 10, 0, 0 /* CreditsRequested 10, no credits granted, no flags */

static void uncompleted(struct cf_ctx *ctx, struct cf_result *r)
{
    static const struct cf_bad v[] = { { "19 bytes", { { OK_HDR, 0, 0, 0, 19 } }, 1 } };

    cf_expect_end(ctx, r, v, 1, "a 19-byte Data Transfer message");
}

static void offset_aligned(struct cf_ctx *ctx, struct cf_result *r)
{
    static const struct cf_bad v[] = {
        { "DataOffset 23", { { OK_HDR, 0, 23, 100, 132 } }, 1 },
        { "DataOffset 25", { { OK_HDR, 0, 25, 100, 132 } }, 1 },
    };

    cf_expect_end(ctx, r, v, 2, "DataOffset 23, 25 (not 8-byte aligned)");
}

static void offset_length(struct cf_ctx *ctx, struct cf_result *r)
{
    static const struct cf_bad v[] = {
        { "DataOffset 32 in a 32-byte message", { { OK_HDR, 0, 32, 8, 32 } }, 1 },
        { "DataOffset 0xFFFFFFFF", { { OK_HDR, 0, 0xFFFFFFFFu, 8, 32 } }, 1 },
    };

    cf_expect_end(ctx, r, v, 2, "DataOffset 32 and 0xFFFFFFFF past the message's end");
}

static void length_length(struct cf_ctx *ctx, struct cf_result *r)
{
    static const struct cf_bad v[] = {
        { "DataLength 101 in a 124-byte message", { { OK_HDR, 0, 24, 101, 124 } }, 1 },
        { "DataLength one past a MaxSendSize message",
          { { OK_HDR, 0, 24, CF_DT_PAST_END, CF_DT_MAX_SEND } }, 1 },
        { "DataLength 0xFFFFFFFF", { { OK_HDR, 0, 24, 0xFFFFFFFFu, 124 } }, 1 },
    };

    cf_expect_end(ctx, r, v, 3, "DataLength one byte past a small and a MaxSendSize message, "
               "0xFFFFFFFF");
}

/* The empty message's DataLength + RemainingDataLength exceeds MaxFragmentedSize. */
static void remaining_mfs(struct cf_ctx *ctx, struct cf_result *r)
{
    static const struct cf_bad v[] = {
        { "RemainingDataLength MaxFragmentedSize + 1",
          { { OK_HDR, CF_DT_MFS_PLUS_1, 0, 0, 20 } }, 1 },
        { "RemainingDataLength 0xFFFFFFFF", { { OK_HDR, 0xFFFFFFFFu, 0, 0, 20 } }, 1 },
    };

    cf_expect_end(ctx, r, v, 2, "empty messages with RemainingDataLength MaxFragmentedSize + 1, "
               "0xFFFFFFFF");
}

/* 3.1.5.8: RemainingDataLength 0 while FragmentReassemblyRemaining > 0. */
static void remaining_zero(struct cf_ctx *ctx, struct cf_result *r)
{
    static const struct cf_bad v[] = {
        { "100 of 300 bytes, then 100 more with RemainingDataLength 0",
          { { OK_HDR, 200, 24, 100, 124 }, { OK_HDR, 0, 24, 100, 124 } }, 2 },
    };

    cf_expect_end(ctx, r, v, 1, "a final fragment leaving 100 bytes of the message missing");
}

/* 3.1.5.4 makes each fragment's RemainingDataLength the bytes not yet sent; 3.1.5.8
 * counts FragmentReassemblyRemaining down by DataLength. A second fragment claiming one
 * byte more, with the rest sent as claimed, overruns what the first announced: the
 * list (and the relay) terminate at the contradiction; a receiver following 3.1.5.8
 * literally notices at the final fragment at the latest. */
static void remaining_reassembly(struct cf_ctx *ctx, struct cf_result *r)
{
    static const struct cf_bad v[] = {
        { "100 + 300 remaining; 100 + 201 remaining; 201",
          { { OK_HDR, 300, 24, 100, 124 }, { OK_HDR, 201, 24, 100, 124 },
            { OK_HDR, 0, 24, 201, 225 } }, 3 },
    };

    cf_expect_end(ctx, r, v, 1, "a second fragment claiming one byte more than the first left");
}

/* ---- size limits: one over terminates, exactly at the limit succeeds ---- */

/* A server limit probed with a WRITE one byte over it, then one exactly at it, each on
 * its own session: the first must end the connection before any answer, the second
 * must reach the SMB2 server and be answered (an SMB2 server may refuse a WRITE that
 * large: any SMB2 answer on a standing connection passes; the detail gives it). */
struct limit {
    const char *what;
    const char *tags[2];         /* file names: exact, over */
    uint32_t preferred_send;     /* PreferredSendSize of the sessions */
    int one_message;             /* the limit is MaxSendSize: the WRITE goes in one message */
    uint32_t bound;              /* a larger limit SKIPs */
};

static void over_and_exact(struct cf_ctx *ctx, struct cf_result *r, const struct limit *l)
{
    struct cf_target t;
    struct cf_ctx c;
    struct cf_file f;
    uint8_t *data = NULL;
    uint32_t lim = 0, n;
    char exact[sizeof(f.c.why)] = "";
    int rc;

    cf_list_target(ctx, &t, &c);
    t.max_send_size = l->preferred_send;
    for (int over = 1; over >= 0; over--) {
        if (cf_file_open(&c, &f, CF_DIALECTS_ALL, l->tags[over], r) < 0)
            goto out;
        lim = l->one_message ? f.c.sd.max_send : f.c.sd.neg.max_fragmented_size;
        if (lim > l->bound) {
            cf_result(r, CF_SKIP, "the server's %s %u is beyond %u (this client's sends, run "
                      "time)", l->what, lim, l->bound);
            goto out;
        }
        n = lim - (l->one_message ? SMBD_DATA_OFFSET : 0) - SMB2_RW_REQ_FIXED + (uint32_t)over;
        free(data);
        if (!(data = malloc(n))) {
            cf_result(r, CF_FAIL, "out of memory");
            goto out;
        }
        cf_pattern(data, n, 0, 14);
        if (l->one_message)
            f.c.sd.max_send = lim + (uint32_t)over; /* the whole WRITE in one message */
        rc = cf_smb2_write_one(&f.c, f.fid, 0, data, n);
        /* ended: before the response, or while the WRITE was still going out */
        if (over && (rc == 0 || rc == -EREMOTEIO || cf_smbd_wait_lost(&f.c.sd, CF_END_MS) < 0)) {
            cf_result(r, CF_FAIL, "%s %u + 1 bytes: %s", l->what, lim,
                      rc == 0 ? "the WRITE was served" : f.c.why);
            goto out;
        }
        if (!over && rc < 0 && rc != -EREMOTEIO) {
            cf_result(r, CF_FAIL, "exactly %s %u bytes: %s", l->what, lim, f.c.why);
            goto out;
        }
        if (!over)
            snprintf(exact, sizeof(exact), "%s", rc == 0 ? "written" : f.c.why);
        cf_file_end(&f);
    }
    cf_result(r, CF_PASS, "%u bytes (%s + 1): terminated; exactly %u: %s", lim + 1, l->what, lim,
              exact);
out:
    free(data);
    if (r->verdict != CF_PASS)
        cf_file_end(&f);
}

/* 2.2.3, 3.1.5.4: DataOffset + DataLength within MaxSendSize, the peer's MaxReceiveSize
 * (a PreferredSendSize of 16384 makes MaxSendSize the server's limit): one byte more is
 * beyond its receive buffers and ends the connection. */
static void length_max_receive(struct cf_ctx *ctx, struct cf_result *r)
{
    static const struct limit l = { "MaxReceiveSize", { "recvexact", "recvover" }, 16384, 1,
                                     16383 };

    over_and_exact(ctx, r, &l);
}

/* 3.1.5.8: DataLength + RemainingDataLength above MaxFragmentedSize terminates; an SMB2
 * message of exactly MaxFragmentedSize reassembles. 8192-byte sends and a 16 MiB bound
 * keep the run time down. */
static void max_fragmented(struct cf_ctx *ctx, struct cf_result *r)
{
    static const struct limit l = { "MaxFragmentedSize", { "fragexact", "fragover" }, 8192, 0,
                                     16u * 1024u * 1024u };

    over_and_exact(ctx, r, &l);
}

/* ---- the idle connection timer (3.1.2.2, 3.1.5.8, 3.1.6.2) ---- */

static void idle_client(struct cf_ctx *ctx, struct cf_result *r)
{
    struct cf_target t;
    struct cf_ctx c;
    struct cf_smbd s;

    cf_list_target(ctx, &t, &c);
    if (cf_raw_open(&t, &s, r) < 0)
        goto out;
    if (cf_smbd_grant(&s, t.credits) < 0 || cf_smbd_wait_lost(&s, IDLE_MS) == 0) {
        cf_result(r, CF_FAIL, "the connection ended while idle: %s", s.why);
        goto out;
    }
    cf_keepalive_answered(&s, "idle 2 s, then an empty message with "
                          "SMB_DIRECT_RESPONSE_REQUESTED", r);
out:
    cf_smbd_close(&s);
}

/* Waits for the server's next keepalive: 0; -1 with r set (SKIP when none came in
 * keepalive_wait_ms, FAIL when the connection ended). */
static int await_keepalive(struct cf_ctx *ctx, struct cf_smbd *s, struct cf_result *r)
{
    int rc = cf_smbd_wait_count(s, &s->keepalives, s->keepalives + 1, ctx->keepalive_wait_ms);

    if (rc == -ETIMEDOUT)
        return cf_result(r, CF_SKIP, "no keepalive from the server in %d ms: its "
                         "KeepaliveInterval is longer (the relay's default is 120 s: "
                         "--keepalive 1 there, or raise --keepalive-wait here)",
                         ctx->keepalive_wait_ms), -1;
    if (rc < 0)
        return cf_result(r, CF_FAIL, "the connection ended while idle%s%s",
                         s->why[0] ? ": " : "", s->why), -1;
    return 0;
}

static void idle_server(struct cf_ctx *ctx, struct cf_result *r, int answer)
{
    struct cf_target t;
    struct cf_ctx c;
    struct cf_smbd s;
    uint64_t t0 = sd_now_ms(), first;

    cf_list_target(ctx, &t, &c);
    if (cf_raw_open(&t, &s, r) < 0)
        goto out;
    s.hold_acks = !answer;
    if (cf_smbd_grant(&s, t.credits) < 0) {
        cf_result(r, CF_FAIL, "granting credits: %s", s.why);
        goto out;
    }
    s.hold_credits = !answer; /* unanswered: no credit message either (3.1.5.5: any message
                                 restarts the server's idle timer) */
    if (await_keepalive(ctx, &s, r) < 0)
        goto out;
    first = s.keepalive_ms - t0;
    if (answer) { /* answered by the session (an empty message); then the next one */
        if (await_keepalive(ctx, &s, r) == 0)
            cf_result(r, CF_PASS, "idle: keepalives after %llu and %llu ms (the server's "
                      "KeepaliveInterval; --keepalive-wait %d s), the first answered; the "
                      "connection stands", (unsigned long long)first,
                      (unsigned long long)(s.keepalive_ms - t0), ctx->keepalive_wait_ms / 1000);
    } else if (cf_smbd_wait_lost(&s, KA_END_MS) < 0) {
        cf_result(r, CF_FAIL, "a keepalive after %llu ms went unanswered, and the connection "
                  "still stands %d ms later", (unsigned long long)first, KA_END_MS);
    } else {
        cf_result(r, CF_PASS, "a keepalive after %llu ms went unanswered: terminated %llu ms "
                  "after it", (unsigned long long)first,
                  (unsigned long long)(sd_now_ms() - s.keepalive_ms));
    }
out:
    cf_smbd_close(&s);
}

static void idle_server_answered(struct cf_ctx *ctx, struct cf_result *r)
{
    idle_server(ctx, r, 1);
}

static void idle_server_timeout(struct cf_ctx *ctx, struct cf_result *r)
{
    idle_server(ctx, r, 0);
}

static const struct cf_case cases[] = {
    { "BVT_SmbdDataTransfer_Basic_SendSmallBytesOfData", send_small },
    { "BVT_SmbdDataTransfer_Basic_SendModerateBytesData", send_moderate },
    { "SmbdDataTransfer_VariableLengthSegment", variable_length },
    { "SmbdDataTransfer_SmallLengthSegment", small_length },
    { "SmbdDataTransfer_Redundancy", redundancy },
    { "SmbdDataTransfer_ReceiveMaxReceiveSize", receive_max },
    { "SmbdDataTransfer_UncompletedMessage", uncompleted },
    { "SmbdDataTransfer_NegativeParameter_DataOffset_Against8ByteAligned", offset_aligned },
    { "SmbdDataTransfer_NegativeParameter_DataOffset_AgainstMessageLength", offset_length },
    { "SmbdDataTransfer_NegativeParameter_DataLength_AgainstMessageLength", length_length },
    { "SmbdDataTransfer_NegativeParameter_DataLength_AgainstMaxReceiveSize", length_max_receive },
    { "SmbdDataTransfer_NegativeParameter_AgainstMaxFragmentedSize", max_fragmented },
    { "SmbdDataTransfer_NegativeParameter_RemainingDataLength_AgainstMaxFragmentedSize",
      remaining_mfs },
    { "SmbdDataTransfer_NegativeParameter_RemainingDataLength_Zero", remaining_zero },
    { "SmbdDataTransfer_NegativeParameter_RemainingDataLength_AgainstFragmentReassemblyRemaining",
      remaining_reassembly },
    { "SmbdDataTransfer_IdleConnection_Client", idle_client },
    { "SmbdDataTransfer_IdleConnection_Server", idle_server_answered },
    { "SmbdDataTransfer_IdleConnection_Server_Timeout", idle_server_timeout },
};

const struct cf_group cf_group_smbd_data_transfer = { "SmbdDataTransfer", cases,
                                                      sizeof(cases) / sizeof(cases[0]) };
