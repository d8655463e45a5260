/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/test_channel_client.c — the client role of the READ/WRITE RDMA channel
 * (transport/channel/chan_client.c): every rule of chan_client_plan_request accepting
 * and rejecting, tracking, and what each server response means: READ_DONE, inline and
 * error answers, interim then final, WRITEs, compound chains, cancel, remote
 * invalidation and the teardown drain; a signed session's I/O with its key (signed
 * again, responses checked) and without one (inline). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include <nettle/cmac.h>

#include "chan_client.h"
#include "sd_bytes.h"
#include "smb2_sign.h"
#include "smb2_wire.h"
#include "th_smb2.h"

#define THRESHOLD 4096u
#define MAX_IO    (1u << 20)
#define TOKEN     0x00C0FFEEu

static uint8_t msg[TH_RW_FIXED + MAX_IO + 16];

/* A client whose server answered NEGOTIATE with dialect. */
static void client_at(struct chan_client *cc, uint16_t dialect, uint32_t threshold)
{
    uint8_t neg[129];
    struct chan_client_result res;

    chan_client_init(cc, threshold, MAX_IO);
    th_smb2_negotiate_resp(neg, dialect);
    chan_client_on_response(cc, neg, sizeof(neg), 0, &res);
    assert_int_equal(res.action, CHAN_CLIENT_PASS);
}

static enum chan_kind plan_read(struct chan_client *cc, uint32_t length)
{
    struct chan_client_plan plan;
    size_t len = th_smb2_plain_read(msg, 1, length);

    return chan_client_plan_request(cc, msg, len, &plan);
}

static enum chan_kind plan_write(struct chan_client *cc, uint32_t length)
{
    struct chan_client_plan plan;
    size_t len = th_smb2_plain_write(msg, 1, length);

    return chan_client_plan_request(cc, msg, len, &plan);
}

static void read_plan_names_id_length_and_channel(void **state)
{
    struct chan_client cc;
    struct chan_client_plan plan;
    size_t len;

    (void)state;
    client_at(&cc, 0x0302, THRESHOLD);
    len = th_smb2_plain_read(msg, 0x0102030405060708ull, 65536);
    assert_int_equal(chan_client_plan_request(&cc, msg, len, &plan), CHAN_READ);
    assert_int_equal(plan.kind, CHAN_READ);
    assert_true(plan.message_id == 0x0102030405060708ull);
    assert_int_equal(plan.length, 65536);
    assert_int_equal(plan.channel, SMB2_CHANNEL_RDMA_V1_INVALIDATE);
    assert_null(plan.data);
    chan_client_fini(&cc);
}

static void write_plan_points_at_the_inline_data(void **state)
{
    struct chan_client cc;
    struct chan_client_plan plan;
    size_t len;

    (void)state;
    client_at(&cc, 0x0311, THRESHOLD);
    len = th_smb2_plain_write(msg, 9, 5000);
    assert_int_equal(chan_client_plan_request(&cc, msg, len, &plan), CHAN_WRITE);
    assert_true(plan.message_id == 9);
    assert_int_equal(plan.length, 5000);
    assert_ptr_equal(plan.data, msg + TH_RW_FIXED);
    assert_int_equal(plan.channel, SMB2_CHANNEL_RDMA_V1_INVALIDATE);
    chan_client_fini(&cc);
}

/* MS-SMB2 2.2.19 Channel: SMB 3.x only; RDMA_V1_INVALIDATE from 3.0.2. */
static void dialects_decide_the_channel(void **state)
{
    const struct { uint16_t dialect; enum chan_kind kind; uint32_t channel; } cases[] = {
        { 0x0202, CHAN_PASS, 0 },
        { 0x0210, CHAN_PASS, 0 },
        { 0x02FF, CHAN_PASS, 0 },
        { 0x0300, CHAN_READ, SMB2_CHANNEL_RDMA_V1 },
        { 0x0302, CHAN_READ, SMB2_CHANNEL_RDMA_V1_INVALIDATE },
        { 0x0311, CHAN_READ, SMB2_CHANNEL_RDMA_V1_INVALIDATE },
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct chan_client cc;
        struct chan_client_plan plan;
        size_t len = th_smb2_plain_read(msg, 1, 65536);

        client_at(&cc, cases[i].dialect, THRESHOLD);
        assert_int_equal(chan_client_plan_request(&cc, msg, len, &plan), cases[i].kind);
        assert_int_equal(plan.channel, cases[i].channel);
        /* Registrations the provider cannot have invalidated remotely (verbs MRs):
         * RDMA_V1 and local deregistration at every dialect. */
        cc.remote_invalidation = 0;
        assert_int_equal(chan_client_plan_request(&cc, msg, len, &plan), cases[i].kind);
        if (cases[i].kind != CHAN_PASS)
            assert_int_equal(plan.channel, SMB2_CHANNEL_RDMA_V1);
        chan_client_fini(&cc);
    }
}

static void nothing_before_negotiate_or_with_threshold_zero(void **state)
{
    struct chan_client cc;

    (void)state;
    chan_client_init(&cc, THRESHOLD, MAX_IO);
    assert_int_equal(plan_read(&cc, 65536), CHAN_PASS);
    chan_client_fini(&cc);
    client_at(&cc, 0x0311, 0);
    assert_int_equal(plan_read(&cc, 65536), CHAN_PASS);
    assert_int_equal(plan_write(&cc, 65536), CHAN_PASS);
    chan_client_fini(&cc);
}

static void threshold_edge(void **state)
{
    struct chan_client cc;

    (void)state;
    client_at(&cc, 0x0300, THRESHOLD);
    assert_int_equal(plan_read(&cc, THRESHOLD), CHAN_PASS);
    assert_int_equal(plan_read(&cc, THRESHOLD + 1), CHAN_READ);
    assert_int_equal(plan_write(&cc, THRESHOLD), CHAN_PASS);
    assert_int_equal(plan_write(&cc, THRESHOLD + 1), CHAN_WRITE);
    chan_client_fini(&cc);
}

static void max_io_edge(void **state)
{
    struct chan_client cc;

    (void)state;
    client_at(&cc, 0x0300, THRESHOLD);
    assert_int_equal(plan_read(&cc, MAX_IO), CHAN_READ);
    assert_int_equal(plan_read(&cc, MAX_IO + 1), CHAN_PASS);
    assert_int_equal(plan_write(&cc, MAX_IO), CHAN_WRITE);
    chan_client_fini(&cc);
    client_at(&cc, 0x0300, THRESHOLD);
    cc.max_io = MAX_IO - 1; /* a WRITE one byte over */
    assert_int_equal(plan_write(&cc, MAX_IO), CHAN_PASS);
    chan_client_fini(&cc);
}

/* What makes READ/WRITE inline for good (the shim then sizes the program's I/O to fit
 * one SMB Direct message), and what does not. */
static void inline_only_follows_dialect_threshold_signing_and_sealing(void **state)
{
    struct chan_client cc;
    struct chan_client_plan plan;
    size_t len;

    (void)state;
    chan_client_init(&cc, THRESHOLD, MAX_IO);
    assert_false(chan_client_inline_only(&cc)); /* dialect not decided yet */
    chan_client_fini(&cc);
    client_at(&cc, 0x02FF, THRESHOLD);
    assert_false(chan_client_inline_only(&cc)); /* a second NEGOTIATE follows */
    chan_client_fini(&cc);
    client_at(&cc, 0x0210, THRESHOLD);
    assert_true(chan_client_inline_only(&cc));
    chan_client_fini(&cc);
    client_at(&cc, 0x0311, 0);
    assert_true(chan_client_inline_only(&cc));
    chan_client_fini(&cc);

    /* 3.1.1 with the channel on: plain requests leave it usable ... */
    client_at(&cc, 0x0311, THRESHOLD);
    len = th_smb2_plain_read(msg, 1, 65536);
    assert_int_equal(chan_client_plan_request(&cc, msg, len, &plan), CHAN_READ);
    len = th_smb2_plain_read(msg, 2, 100);
    assert_int_equal(chan_client_plan_request(&cc, msg, len, &plan), CHAN_PASS);
    assert_false(chan_client_inline_only(&cc));
    /* ... and so do the requests every 3.x client signs, whatever the session's signing:
     * SESSION_SETUP, the 3.1.1 TREE_CONNECT, the VALIDATE_NEGOTIATE_INFO IOCTL ... */
    sd_put_le32(msg + 16, SMB2_FLAGS_SIGNED);
    sd_put_le16(msg + 12, 0x0001); /* SESSION_SETUP */
    chan_client_plan_request(&cc, msg, len, &plan);
    sd_put_le16(msg + 12, 0x0003); /* TREE_CONNECT */
    chan_client_plan_request(&cc, msg, len, &plan);
    sd_put_le16(msg + 12, 0x000B); /* IOCTL */
    sd_put_le32(msg + 64 + 4, 0x00140204); /* FSCTL_VALIDATE_NEGOTIATE_INFO */
    chan_client_plan_request(&cc, msg, len, &plan);
    assert_false(chan_client_inline_only(&cc));
    /* ... any other signed request ends it (the session signs its data too) */
    sd_put_le32(msg + 64 + 4, 0x0011C017); /* another IOCTL: FSCTL_PIPE_TRANSCEIVE */
    chan_client_plan_request(&cc, msg, len, &plan);
    assert_true(chan_client_inline_only(&cc));
    chan_client_fini(&cc);
    client_at(&cc, 0x0311, THRESHOLD);
    sd_put_le16(msg + 12, 0x0005); /* CREATE */
    chan_client_plan_request(&cc, msg, len, &plan);
    assert_true(chan_client_inline_only(&cc));
    chan_client_fini(&cc);

    /* an encrypted message (transform header) ends it too */
    client_at(&cc, 0x0311, THRESHOLD);
    memcpy(msg, "\xFDSMB", 4);
    chan_client_plan_request(&cc, msg, 64, &plan);
    assert_true(chan_client_inline_only(&cc));
    chan_client_fini(&cc);
}

static void signed_transform_compressed_and_compound_pass(void **state)
{
    struct chan_client cc;
    struct chan_client_plan plan;
    size_t len;

    (void)state;
    client_at(&cc, 0x0311, THRESHOLD);
    len = th_smb2_plain_read(msg, 1, 65536);
    sd_put_le32(msg + 16, SMB2_FLAGS_SIGNED);
    assert_int_equal(chan_client_plan_request(&cc, msg, len, &plan), CHAN_PASS);
    sd_put_le32(msg + 16, SMB2_FLAGS_RELATED_OPERATIONS);
    assert_int_equal(chan_client_plan_request(&cc, msg, len, &plan), CHAN_PASS);
    sd_put_le32(msg + 16, 0);
    assert_int_equal(chan_client_plan_request(&cc, msg, len, &plan), CHAN_READ);

    /* a READ followed by a second command */
    len = th_smb2_plain_read(msg, 1, 65536);
    sd_put_le32(msg + 20, 120);
    th_smb2_plain_read(msg + 120, 2, 65536);
    assert_int_equal(chan_client_plan_request(&cc, msg, 120 + 113, &plan), CHAN_PASS);

    /* 0xFD / 0xFC 'SMB' (MS-SMB2 2.2.41, 2.2.42) in front of a READ */
    for (int i = 0; i < 2; i++) {
        len = th_smb2_plain_read(msg, 1, 65536);
        msg[0] = i ? 0xFC : 0xFD;
        assert_int_equal(chan_client_plan_request(&cc, msg, len, &plan), CHAN_PASS);
    }
    chan_client_fini(&cc);
}

static void requests_with_channel_information_pass(void **state)
{
    const struct th_hdr h = { .command = SMB2_READ, .message_id = 3 };
    const struct th_rw with_channel = { .length = 65536, .channel = 1 };
    const struct th_rw with_info = { .length = 65536, .info_offset = 112 };
    const struct th_rw with_info_len = { .length = 65536, .info_length = 16 };
    struct chan_client cc;
    struct chan_client_plan plan;

    (void)state;
    client_at(&cc, 0x0311, THRESHOLD);
    th_smb2_read_req(msg, &h, &with_channel);
    assert_int_equal(chan_client_plan_request(&cc, msg, 113, &plan), CHAN_PASS);
    th_smb2_read_req(msg, &h, &with_info);
    assert_int_equal(chan_client_plan_request(&cc, msg, 113, &plan), CHAN_PASS);
    th_smb2_read_req(msg, &h, &with_info_len);
    assert_int_equal(chan_client_plan_request(&cc, msg, 113, &plan), CHAN_PASS);
    chan_client_fini(&cc);
}

static void write_data_outside_the_message_passes(void **state)
{
    const struct th_hdr h = { .command = SMB2_WRITE, .message_id = 3 };
    const struct th_rw inside_fixed = { .data_offset = 111, .length = 5000 };
    const struct th_rw at_fixed_end = { .data_offset = 112, .length = 5000 };
    const struct th_rw later = { .data_offset = 120, .length = 5000 };
    struct chan_client cc;
    struct chan_client_plan plan;

    (void)state;
    client_at(&cc, 0x0311, THRESHOLD);
    th_smb2_write_req(msg, &h, &inside_fixed);
    assert_int_equal(chan_client_plan_request(&cc, msg, 112 + 5000, &plan), CHAN_PASS);
    th_smb2_write_req(msg, &h, &at_fixed_end);
    assert_int_equal(chan_client_plan_request(&cc, msg, 112 + 4999, &plan), CHAN_PASS);
    assert_int_equal(chan_client_plan_request(&cc, msg, 112 + 5000, &plan), CHAN_WRITE);
    th_smb2_write_req(msg, &h, &later);
    assert_int_equal(chan_client_plan_request(&cc, msg, 120 + 4999, &plan), CHAN_PASS);
    assert_int_equal(chan_client_plan_request(&cc, msg, 120 + 5000, &plan), CHAN_WRITE);
    assert_ptr_equal(plan.data, msg + 120);
    chan_client_fini(&cc);
}

static void other_commands_cancel_and_malformed_requests_pass(void **state)
{
    const struct th_hdr cancel = { .command = 0x000C, .message_id = 3 };
    const struct th_hdr create = { .command = 0x0005, .message_id = 3 };
    struct chan_client cc;
    struct chan_client_plan plan;
    size_t len;

    (void)state;
    client_at(&cc, 0x0311, THRESHOLD);
    th_smb2_hdr(msg, &cancel);
    sd_put_le16(msg + 64, 4);
    assert_int_equal(chan_client_plan_request(&cc, msg, 68, &plan), CHAN_PASS);
    len = th_smb2_plain_read(msg, 1, 65536);
    sd_put_le16(msg + 12, create.command);
    assert_int_equal(chan_client_plan_request(&cc, msg, len, &plan), CHAN_PASS);
    len = th_smb2_plain_read(msg, 1, 65536);
    sd_put_le16(msg + 64, 48); /* StructureSize */
    assert_int_equal(chan_client_plan_request(&cc, msg, len, &plan), CHAN_PASS);
    assert_int_equal(chan_client_plan_request(&cc, msg, 111, &plan), CHAN_PASS);
    assert_int_equal(chan_client_plan_request(&cc, msg, 10, &plan), CHAN_PASS);
    chan_client_fini(&cc);
}

/* A client at 3.0.2 with the READ of message_id (length bytes) tracked, its first
 * descriptor token TOKEN. */
static void track_read(struct chan_client *cc, uint64_t message_id, uint32_t length, void *cookie)
{
    const struct smbd_buffer_desc d = { .offset = 0x1000, .token = TOKEN, .length = length };
    struct chan_client_plan plan;
    size_t len = th_smb2_plain_read(msg, message_id, length);

    assert_int_equal(chan_client_plan_request(cc, msg, len, &plan), CHAN_READ);
    assert_int_equal(chan_client_track(cc, &plan, &d, 1, cookie), 0);
}

static void track_write(struct chan_client *cc, uint64_t message_id, uint32_t token, void *cookie)
{
    const struct smbd_buffer_desc d = { .offset = 0x2000, .token = token, .length = 8192 };
    struct chan_client_plan plan;
    size_t len = th_smb2_plain_write(msg, message_id, 8192);

    assert_int_equal(chan_client_plan_request(cc, msg, len, &plan), CHAN_WRITE);
    assert_int_equal(chan_client_track(cc, &plan, &d, 1, cookie), 0);
}

static void track_rejects_pass_plans_no_descriptors_and_duplicates(void **state)
{
    const struct smbd_buffer_desc d = { .token = TOKEN, .length = 1 };
    struct chan_client cc;
    struct chan_client_plan plan = { .kind = CHAN_PASS };
    int cookie;

    (void)state;
    client_at(&cc, 0x0302, THRESHOLD);
    assert_int_equal(chan_client_track(&cc, &plan, &d, 1, &cookie), -EINVAL);
    plan.kind = CHAN_READ;
    assert_int_equal(chan_client_track(&cc, &plan, &d, 0, &cookie), -EINVAL);
    assert_int_equal(chan_client_track(&cc, &plan, &d, 1, &cookie), 0);
    assert_int_equal(chan_client_track(&cc, &plan, &d, 1, &cookie), -EEXIST);
    assert_int_equal(chan_table_outstanding(&cc.ios), 1);
    chan_client_fini(&cc);
}

/* The released queue holds exactly cookie, with invalidated as given. */
static void expect_released(struct chan_client *cc, void *cookie, int invalidated)
{
    struct chan_released r;

    assert_int_equal(chan_table_take_released(&cc->ios, &r), 1);
    assert_ptr_equal(r.cookie, cookie);
    assert_int_equal(r.invalidated, invalidated);
    assert_int_equal(chan_table_take_released(&cc->ios, &r), 0);
}

static void respond(struct chan_client *cc, const uint8_t *b, size_t len, uint32_t token,
                    struct chan_client_result *res)
{
    chan_client_on_response(cc, b, len, token, res);
}

static void read_done_reports_cookie_and_bytes(void **state)
{
    const struct th_hdr h = { .command = SMB2_READ, .message_id = 11 };
    struct chan_client cc;
    struct chan_client_result res;
    uint8_t b[80];
    int cookie;

    (void)state;
    client_at(&cc, 0x0302, THRESHOLD);
    track_read(&cc, 11, 65536, &cookie);
    th_smb2_read_resp(b, &h, 0x50, 0, 65536);
    respond(&cc, b, sizeof(b), 0, &res);
    assert_int_equal(res.action, CHAN_CLIENT_READ_DONE);
    assert_ptr_equal(res.cookie, &cookie);
    assert_int_equal(res.bytes, 65536);
    assert_int_equal(chan_table_outstanding(&cc.ios), 0);
    expect_released(&cc, &cookie, 0);
    /* a second answer to the same id is untracked now: passes */
    respond(&cc, b, sizeof(b), 0, &res);
    assert_int_equal(res.action, CHAN_CLIENT_PASS);
    chan_client_fini(&cc);
}

static void read_done_with_a_short_read_and_a_warning_status(void **state)
{
    const struct th_hdr h = { .command = SMB2_READ, .status = 0x80000005, .message_id = 11 };
    struct chan_client cc;
    struct chan_client_result res;
    uint8_t b[80];
    int cookie;

    (void)state;
    client_at(&cc, 0x0302, THRESHOLD);
    track_read(&cc, 11, 65536, &cookie);
    th_smb2_read_resp(b, &h, 0, 0, 100); /* STATUS_BUFFER_OVERFLOW, 100 bytes */
    respond(&cc, b, sizeof(b), 0, &res);
    assert_int_equal(res.action, CHAN_CLIENT_READ_DONE);
    assert_int_equal(res.bytes, 100);
    expect_released(&cc, &cookie, 0);
    chan_client_fini(&cc);
}

static void data_remaining_past_the_registered_length_is_an_error(void **state)
{
    const struct th_hdr h = { .command = SMB2_READ, .message_id = 11 };
    struct chan_client cc;
    struct chan_client_result res;
    uint8_t b[80];
    int cookie;

    (void)state;
    client_at(&cc, 0x0302, THRESHOLD);
    track_read(&cc, 11, 65536, &cookie);
    th_smb2_read_resp(b, &h, 0x50, 0, 65537);
    respond(&cc, b, sizeof(b), 0, &res);
    assert_int_equal(res.action, CHAN_CLIENT_ERROR);
    assert_non_null(strstr(res.why, "DataRemaining"));
    expect_released(&cc, &cookie, 0);
    chan_client_fini(&cc);
}

static void signed_or_malformed_channel_read_answers_are_errors(void **state)
{
    const struct th_hdr signed_h = { .command = SMB2_READ, .flags = SMB2_FLAGS_SIGNED,
                                     .message_id = 11 };
    const struct th_hdr h = { .command = SMB2_READ, .message_id = 12 };
    struct chan_client cc;
    struct chan_client_result res;
    uint8_t b[80];
    int cookie;

    (void)state;
    client_at(&cc, 0x0302, THRESHOLD);
    track_read(&cc, 11, 65536, &cookie);
    th_smb2_read_resp(b, &signed_h, 0x50, 0, 65536);
    respond(&cc, b, sizeof(b), 0, &res);
    assert_int_equal(res.action, CHAN_CLIENT_ERROR);
    assert_non_null(strstr(res.why, "signed"));
    track_read(&cc, 12, 65536, &cookie);
    th_smb2_read_resp(b, &h, 0x50, 0, 65536);
    sd_put_le16(b + 64, 9); /* success with an ERROR-sized body */
    respond(&cc, b, sizeof(b), 0, &res);
    assert_int_equal(res.action, CHAN_CLIENT_ERROR);
    assert_non_null(strstr(res.why, "does not decode"));
    chan_client_fini(&cc);
}

/* ---- signed sessions ---- */

#define SID TH_SMB2_SESSION_ID
#define session_key th_smb2_key

static const struct smb2_sign_key other_key = {
    SMB2_SIGN_AES_CMAC, { 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1 }
};

/* The response at b answers the tracked I/O of cookie with want, and releases it. */
static void expect_answer(struct chan_client *cc, const uint8_t *b, size_t len,
                          enum chan_client_action want, void *cookie)
{
    struct chan_client_result res;

    chan_client_on_response(cc, b, len, 0, &res);
    assert_int_equal(res.action, want);
    expect_released(cc, cookie, 0);
}

static void keyed_client_at(struct chan_client *cc, uint16_t dialect)
{
    client_at(cc, dialect, THRESHOLD);
    cc->signing_key = th_smb2_key_of;
}

/* The plan of the program's READ or WRITE (command) of length bytes, signed. */
static enum chan_kind plan_signed(struct chan_client *cc, uint16_t command, uint64_t id,
                                  uint32_t length, struct chan_client_plan *plan)
{
    size_t len = command == SMB2_READ ? th_smb2_plain_read(msg, id, length)
                                      : th_smb2_plain_write(msg, id, length);

    sd_put_le32(msg + 16, SMB2_FLAGS_SIGNED);
    return chan_client_plan_request(cc, msg, len, plan);
}

static void signed_requests_with_the_key_use_the_channel(void **state)
{
    struct chan_client cc;
    struct chan_client_plan plan;
    size_t len;

    (void)state;
    keyed_client_at(&cc, 0x0311);
    assert_int_equal(plan_signed(&cc, SMB2_READ, 1, 65536, &plan), CHAN_READ);
    assert_true(plan.signed_io);
    assert_memory_equal(&plan.key, &session_key, sizeof(session_key));
    assert_int_equal(plan_signed(&cc, SMB2_WRITE, 2, 65536, &plan), CHAN_WRITE);
    assert_true(plan.signed_io);
    len = TH_RW_FIXED + 65536; /* the WRITE in msg */
    /* a keyed session's other signed requests leave the channel usable */
    sd_put_le16(msg + 12, 0x0005); /* CREATE */
    assert_int_equal(chan_client_plan_request(&cc, msg, len, &plan), CHAN_PASS);
    assert_false(chan_client_inline_only(&cc));
    len = th_smb2_plain_read(msg, 3, 65536);
    assert_int_equal(chan_client_plan_request(&cc, msg, len, &plan), CHAN_READ);
    assert_false(plan.signed_io); /* unsigned: nothing to sign again */
    /* a signed request of a session whose key is not known: inline, for good */
    sd_put_le32(msg + 16, SMB2_FLAGS_SIGNED);
    sd_put_le64(msg + 40, SID + 1);
    assert_int_equal(chan_client_plan_request(&cc, msg, len, &plan), CHAN_PASS);
    assert_false(plan.signed_io);
    assert_true(chan_client_inline_only(&cc));
    chan_client_fini(&cc);
    /* no key store at all (a keyless relay): as before */
    client_at(&cc, 0x0311, THRESHOLD);
    len = th_smb2_plain_read(msg, 1, 65536);
    sd_put_le32(msg + 16, SMB2_FLAGS_SIGNED);
    assert_int_equal(chan_client_plan_request(&cc, msg, len, &plan), CHAN_PASS);
    assert_true(chan_client_inline_only(&cc));
    chan_client_fini(&cc);
}

static void track_signed_read(struct chan_client *cc, uint64_t message_id, void *cookie)
{
    const struct smbd_buffer_desc d = { .offset = 0x1000, .token = TOKEN, .length = 65536 };
    struct chan_client_plan plan;

    assert_int_equal(plan_signed(cc, SMB2_READ, message_id, 65536, &plan), CHAN_READ);
    assert_int_equal(chan_client_track(cc, &plan, &d, 1, cookie), 0);
}

static void signed_channel_read_is_checked_before_its_data_is_handed_on(void **state)
{
    struct chan_client cc;
    struct chan_client_result res;
    uint8_t b[80];
    size_t len;
    int cookie;

    (void)state;
    keyed_client_at(&cc, 0x0302);
    track_signed_read(&cc, 11, &cookie);
    len = th_smb2_channel_read_resp(b, 11, &session_key);
    respond(&cc, b, len, 0, &res);
    assert_int_equal(res.action, CHAN_CLIENT_READ_DONE);
    assert_int_equal(res.bytes, 65536);
    assert_true(res.signed_io);
    assert_memory_equal(&res.key, &session_key, sizeof(session_key));
    expect_released(&cc, &cookie, 0);

    /* a hostile peer: the signed response altered after signing (DataRemaining) */
    track_signed_read(&cc, 12, &cookie);
    len = th_smb2_channel_read_resp(b, 12, &session_key);
    sd_put_le32(b + 64 + 8, 4096);
    respond(&cc, b, len, 0, &res);
    assert_int_equal(res.action, CHAN_CLIENT_ERROR);
    assert_non_null(strstr(res.why, "does not verify"));
    assert_false(res.signed_io);
    expect_released(&cc, &cookie, 0);
    /* ... signed with another key */
    track_signed_read(&cc, 13, &cookie);
    len = th_smb2_channel_read_resp(b, 13, &other_key);
    respond(&cc, b, len, 0, &res);
    assert_int_equal(res.action, CHAN_CLIENT_ERROR);
    assert_non_null(strstr(res.why, "does not verify"));
    expect_released(&cc, &cookie, 0);
    /* ... not signed at all */
    track_signed_read(&cc, 14, &cookie);
    len = th_smb2_channel_read_resp(b, 14, NULL);
    respond(&cc, b, len, 0, &res);
    assert_int_equal(res.action, CHAN_CLIENT_ERROR);
    assert_non_null(strstr(res.why, "unsigned response"));
    expect_released(&cc, &cookie, 0);
    chan_client_fini(&cc);
}

/* Linux ksmbd signs a channel READ's response over its Direct-TCP length and the message:
 * accepted, and the same signature on another message is not. */
static void ksmbd_signature_over_the_length_prefix_is_accepted(void **state)
{
    struct cmac_aes128_ctx c;
    struct chan_client cc;
    uint8_t b[80], framed[84];
    size_t len;
    int cookie;

    (void)state;
    keyed_client_at(&cc, 0x0302);
    track_signed_read(&cc, 31, &cookie);
    len = th_smb2_channel_read_resp(b, 31, &session_key); /* flags set as ksmbd sends them */
    sd_put_be32(framed, (uint32_t)len);
    memcpy(framed + 4, b, len);
    memset(framed + 4 + 48, 0, 16);
    cmac_aes128_set_key(&c, session_key.key);
    cmac_aes128_update(&c, 4 + len, framed);
    cmac_aes128_digest(&c, 16, b + 48);
    expect_answer(&cc, b, len, CHAN_CLIENT_READ_DONE, &cookie);
    track_signed_read(&cc, 32, &cookie);
    sd_put_le64(b + 24, 32); /* the same signature on the answer to another READ */
    expect_answer(&cc, b, len, CHAN_CLIENT_ERROR, &cookie);
    chan_client_fini(&cc);
}

static void signed_write_responses_pass_to_the_program_to_check(void **state)
{
    const struct th_hdr h = { .command = SMB2_WRITE, .flags = SMB2_FLAGS_SERVER_TO_REDIR,
                              .message_id = 21 };
    const struct smbd_buffer_desc d = { .offset = 0x2000, .token = TOKEN, .length = 8192 };
    struct chan_client cc;
    struct chan_client_plan plan;
    uint8_t b[80];
    size_t len;
    int cookie;

    (void)state;
    keyed_client_at(&cc, 0x0302);
    assert_int_equal(plan_signed(&cc, SMB2_WRITE, 21, 8192, &plan), CHAN_WRITE);
    assert_int_equal(chan_client_track(&cc, &plan, &d, 1, &cookie), 0);
    len = th_smb2_write_resp(b, &h, 8192);
    assert_int_equal(smb2_sign(&other_key, SMB2_SIGN_FROM_SERVER, b, len), 0);
    /* unchanged: the program checks it as over TCP */
    expect_answer(&cc, b, len, CHAN_CLIENT_PASS, &cookie);
    chan_client_fini(&cc);
}

static void interim_keeps_the_entry_until_the_final_response(void **state)
{
    const struct th_hdr final = { .command = SMB2_READ, .flags = SMB2_FLAGS_ASYNC_COMMAND,
                                  .message_id = 11 };
    struct chan_client cc;
    struct chan_client_result res;
    struct chan_released r;
    uint8_t b[80];
    int cookie;

    (void)state;
    client_at(&cc, 0x0302, THRESHOLD);
    track_read(&cc, 11, 65536, &cookie);
    respond(&cc, b, th_smb2_interim_resp(b, 11), 0, &res);
    assert_int_equal(res.action, CHAN_CLIENT_PASS);
    assert_int_equal(chan_table_outstanding(&cc.ios), 1);
    assert_int_equal(chan_table_take_released(&cc.ios, &r), 0);
    th_smb2_read_resp(b, &final, 0x50, 0, 4097);
    respond(&cc, b, sizeof(b), 0, &res);
    assert_int_equal(res.action, CHAN_CLIENT_READ_DONE);
    assert_int_equal(res.bytes, 4097);
    expect_released(&cc, &cookie, 0);
    chan_client_fini(&cc);
}

static void error_response_releases_and_passes(void **state)
{
    const struct th_hdr eof = { .command = SMB2_READ, .status = 0xC0000011, .message_id = 11 };
    struct chan_client cc;
    struct chan_client_result res;
    uint8_t b[80];
    int cookie;

    (void)state;
    client_at(&cc, 0x0302, THRESHOLD);
    track_read(&cc, 11, 65536, &cookie);
    respond(&cc, b, th_smb2_error_resp(b, &eof), 0, &res);
    assert_int_equal(res.action, CHAN_CLIENT_PASS);
    expect_released(&cc, &cookie, 0);
    chan_client_fini(&cc);
}

static void read_answered_inline_releases_and_passes(void **state)
{
    const struct th_hdr h = { .command = SMB2_READ, .message_id = 11 };
    struct chan_client cc;
    struct chan_client_result res;
    uint8_t b[80 + 10];
    int cookie;

    (void)state;
    client_at(&cc, 0x0302, THRESHOLD);
    track_read(&cc, 11, 65536, &cookie);
    th_smb2_read_resp(b, &h, 0x50, 10, 0);
    memset(b + 80, 0x5A, 10);
    respond(&cc, b, sizeof(b), 0, &res);
    assert_int_equal(res.action, CHAN_CLIENT_PASS);
    expect_released(&cc, &cookie, 0);
    chan_client_fini(&cc);
}

static void write_responses_release_and_pass_whatever_their_status(void **state)
{
    const struct th_hdr ok = { .command = SMB2_WRITE, .message_id = 21 };
    const struct th_hdr full = { .command = SMB2_WRITE, .status = 0xC000007F, .message_id = 22 };
    struct chan_client cc;
    struct chan_client_result res;
    uint8_t b[80];
    int c1, c2;

    (void)state;
    client_at(&cc, 0x0302, THRESHOLD);
    track_write(&cc, 21, TOKEN, &c1);
    track_write(&cc, 22, TOKEN + 1, &c2);
    respond(&cc, b, th_smb2_write_resp(b, &ok, 8192), 0, &res);
    assert_int_equal(res.action, CHAN_CLIENT_PASS);
    expect_released(&cc, &c1, 0);
    respond(&cc, b, th_smb2_error_resp(b, &full), 0, &res); /* STATUS_DISK_FULL */
    assert_int_equal(res.action, CHAN_CLIENT_PASS);
    expect_released(&cc, &c2, 0);
    chan_client_fini(&cc);
}

/* WRITE response (tracked), ERROR response to an untracked id, READ error (tracked). */
static void compound_chain_releases_every_tracked_id(void **state)
{
    const struct th_hdr w = { .command = SMB2_WRITE, .next_command = 80, .message_id = 21 };
    const struct th_hdr u = { .command = 5, .status = 0xC0000034, .next_command = 80,
                              .message_id = 99 };
    const struct th_hdr r = { .command = SMB2_READ, .status = 0xC0000011, .message_id = 11 };
    struct chan_client cc;
    struct chan_client_result res;
    struct chan_released rel;
    uint8_t b[80 + 80 + 73];
    int cw, cr, seen = 0;

    (void)state;
    client_at(&cc, 0x0302, THRESHOLD);
    track_write(&cc, 21, TOKEN + 1, &cw);
    track_read(&cc, 11, 65536, &cr);
    memset(b, 0, sizeof(b));
    th_smb2_write_resp(b, &w, 8192);
    th_smb2_error_resp(b + 80, &u);
    th_smb2_error_resp(b + 160, &r);
    respond(&cc, b, sizeof(b), 0, &res);
    assert_int_equal(res.action, CHAN_CLIENT_PASS);
    assert_int_equal(chan_table_outstanding(&cc.ios), 0);
    while (chan_table_take_released(&cc.ios, &rel))
        seen |= rel.cookie == &cw ? 1 : rel.cookie == &cr ? 2 : 4;
    assert_int_equal(seen, 3);
    chan_client_fini(&cc);
}

static void channel_read_done_inside_a_chain_is_an_error(void **state)
{
    const struct th_hdr w = { .command = SMB2_WRITE, .next_command = 80, .message_id = 21 };
    const struct th_hdr r = { .command = SMB2_READ, .message_id = 11 };
    struct chan_client cc;
    struct chan_client_result res;
    uint8_t b[160];
    int cw, cr;

    (void)state;
    client_at(&cc, 0x0302, THRESHOLD);
    track_write(&cc, 21, TOKEN + 1, &cw);
    track_read(&cc, 11, 65536, &cr);
    th_smb2_write_resp(b, &w, 8192);
    th_smb2_read_resp(b + 80, &r, 0x50, 0, 65536);
    respond(&cc, b, sizeof(b), 0, &res);
    assert_int_equal(res.action, CHAN_CLIENT_ERROR);
    assert_non_null(strstr(res.why, "compound"));
    chan_client_fini(&cc);
}

static void cancel_passes_and_the_final_response_releases(void **state)
{
    const struct th_hdr cancel = { .command = 0x000C, .flags = SMB2_FLAGS_ASYNC_COMMAND,
                                   .message_id = 11 };
    const struct th_hdr cancelled = { .command = SMB2_READ, .status = 0xC0000120,
                                      .flags = SMB2_FLAGS_ASYNC_COMMAND, .message_id = 11 };
    struct chan_client cc;
    struct chan_client_plan plan;
    struct chan_client_result res;
    uint8_t b[80];
    int cookie;

    (void)state;
    client_at(&cc, 0x0302, THRESHOLD);
    track_read(&cc, 11, 65536, &cookie);
    respond(&cc, b, th_smb2_interim_resp(b, 11), 0, &res);
    th_smb2_hdr(b, &cancel);
    sd_put_le16(b + 64, 4);
    assert_int_equal(chan_client_plan_request(&cc, b, 68, &plan), CHAN_PASS);
    assert_int_equal(chan_table_outstanding(&cc.ios), 1);
    respond(&cc, b, th_smb2_error_resp(b, &cancelled), 0, &res); /* STATUS_CANCELLED */
    assert_int_equal(res.action, CHAN_CLIENT_PASS);
    expect_released(&cc, &cookie, 0);
    chan_client_fini(&cc);
}

/* MS-SMBD 3.1.5.8 / MS-SMB2 2.2.19: the server invalidates the first token of the
 * request it answers, with its final response. */
static void remote_invalidation_of_the_right_token_is_recorded(void **state)
{
    const struct th_hdr h = { .command = SMB2_READ, .message_id = 11 };
    const struct th_hdr w = { .command = SMB2_WRITE, .message_id = 21 };
    struct chan_client cc;
    struct chan_client_result res;
    uint8_t b[80];
    int cr, cw;

    (void)state;
    client_at(&cc, 0x0302, THRESHOLD);
    track_read(&cc, 11, 65536, &cr);
    th_smb2_read_resp(b, &h, 0x50, 0, 65536);
    respond(&cc, b, sizeof(b), TOKEN, &res);
    assert_int_equal(res.action, CHAN_CLIENT_READ_DONE);
    expect_released(&cc, &cr, 1);
    track_write(&cc, 21, 0x77, &cw);
    respond(&cc, b, th_smb2_write_resp(b, &w, 8192), 0x77, &res);
    assert_int_equal(res.action, CHAN_CLIENT_PASS);
    expect_released(&cc, &cw, 1);
    chan_client_fini(&cc);
}

static void remote_invalidation_of_another_token_is_an_error(void **state)
{
    const struct th_hdr h = { .command = SMB2_READ, .message_id = 11 };
    const struct th_hdr other = { .command = 5, .message_id = 99 };
    struct chan_client cc;
    struct chan_client_result res;
    uint8_t b[80];
    int cookie;

    (void)state;
    client_at(&cc, 0x0302, THRESHOLD);
    track_read(&cc, 11, 65536, &cookie);
    th_smb2_read_resp(b, &h, 0x50, 0, 65536);
    respond(&cc, b, sizeof(b), TOKEN + 1, &res);
    assert_int_equal(res.action, CHAN_CLIENT_ERROR);
    assert_non_null(strstr(res.why, "Invalidate"));
    expect_released(&cc, &cookie, 0);

    /* with an interim response, or a response to an untracked request */
    track_read(&cc, 12, 65536, &cookie);
    respond(&cc, b, th_smb2_interim_resp(b, 12), TOKEN, &res);
    assert_int_equal(res.action, CHAN_CLIENT_ERROR);
    respond(&cc, b, th_smb2_error_resp(b, &other), TOKEN, &res);
    assert_int_equal(res.action, CHAN_CLIENT_ERROR);
    chan_client_fini(&cc);
}

static void teardown_drains_every_cookie(void **state)
{
    struct chan_client cc;
    struct chan_released r;
    int cookies[3], seen[3] = { 0 };

    (void)state;
    client_at(&cc, 0x0300, THRESHOLD);
    track_read(&cc, 1, 65536, &cookies[0]);
    track_read(&cc, 2, 65536, &cookies[1]);
    track_write(&cc, 3, TOKEN, &cookies[2]);
    assert_int_equal(chan_table_outstanding(&cc.ios), 3);
    chan_table_release_all(&cc.ios);
    while (chan_table_take_released(&cc.ios, &r))
        seen[(int *)r.cookie - cookies]++;
    assert_int_equal(seen[0] + seen[1] + seen[2], 3);
    assert_true(seen[0] == 1 && seen[1] == 1 && seen[2] == 1);
    chan_client_fini(&cc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(read_plan_names_id_length_and_channel),
        cmocka_unit_test(write_plan_points_at_the_inline_data),
        cmocka_unit_test(dialects_decide_the_channel),
        cmocka_unit_test(nothing_before_negotiate_or_with_threshold_zero),
        cmocka_unit_test(threshold_edge),
        cmocka_unit_test(max_io_edge),
        cmocka_unit_test(signed_transform_compressed_and_compound_pass),
        cmocka_unit_test(requests_with_channel_information_pass),
        cmocka_unit_test(write_data_outside_the_message_passes),
        cmocka_unit_test(other_commands_cancel_and_malformed_requests_pass),
        cmocka_unit_test(track_rejects_pass_plans_no_descriptors_and_duplicates),
        cmocka_unit_test(read_done_reports_cookie_and_bytes),
        cmocka_unit_test(read_done_with_a_short_read_and_a_warning_status),
        cmocka_unit_test(data_remaining_past_the_registered_length_is_an_error),
        cmocka_unit_test(signed_or_malformed_channel_read_answers_are_errors),
        cmocka_unit_test(interim_keeps_the_entry_until_the_final_response),
        cmocka_unit_test(error_response_releases_and_passes),
        cmocka_unit_test(read_answered_inline_releases_and_passes),
        cmocka_unit_test(write_responses_release_and_pass_whatever_their_status),
        cmocka_unit_test(compound_chain_releases_every_tracked_id),
        cmocka_unit_test(channel_read_done_inside_a_chain_is_an_error),
        cmocka_unit_test(cancel_passes_and_the_final_response_releases),
        cmocka_unit_test(remote_invalidation_of_the_right_token_is_recorded),
        cmocka_unit_test(remote_invalidation_of_another_token_is_an_error),
        cmocka_unit_test(teardown_drains_every_cookie),
        cmocka_unit_test(signed_requests_with_the_key_use_the_channel),
        cmocka_unit_test(signed_channel_read_is_checked_before_its_data_is_handed_on),
        cmocka_unit_test(signed_write_responses_pass_to_the_program_to_check),
        cmocka_unit_test(ksmbd_signature_over_the_length_prefix_is_accepted),
        cmocka_unit_test(inline_only_follows_dialect_threshold_signing_and_sealing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
