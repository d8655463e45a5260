/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/test_channel_server.c — the server role of the READ/WRITE RDMA channel
 * (transport/channel/chan_server.c): every validation rule of a channel request
 * accepting and rejecting (dialects, signing, compounds, descriptor lists, sizes),
 * tracking, and what each backend response means: data to RDMA-write, interim and
 * error answers, remote invalidation, chains and the teardown drain. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "chan_desc.h"
#include "chan_server.h"
#include "sd_bytes.h"
#include "smb2_wire.h"
#include "th_smb2.h"

#define MAX_IO (1u << 20)
#define TOKEN0 0x1000u         /* descriptor i has token TOKEN0 + i */

static uint8_t msg[TH_RW_FIXED + 65536 + 64];

static void server_at(struct chan_server *cs, uint16_t dialect)
{
    uint8_t neg[129];
    struct chan_server_result res;

    chan_server_init(cs, MAX_IO);
    th_smb2_negotiate_resp(neg, dialect);
    chan_server_on_response(cs, neg, sizeof(neg), &res);
    assert_int_equal(res.action, CHAN_SERVER_PASS);
}

/* n descriptors of each bytes after the fixed part of the request at b. */
static size_t put_descs(uint8_t *b, size_t n, uint32_t each)
{
    for (size_t i = 0; i < n; i++)
        th_smb2_desc(b + TH_RW_FIXED + 16 * i, 0x10000 * i, TOKEN0 + (uint32_t)i, each);
    return TH_RW_FIXED + 16 * n;
}

static size_t channel_read(uint64_t mid, uint32_t length, uint32_t channel, size_t n,
                           uint32_t each)
{
    const struct th_hdr h = { .command = SMB2_READ, .message_id = mid };
    const struct th_rw rw = { .length = length, .channel = channel, .info_offset = 112,
                              .info_length = (uint16_t)(16 * n) };

    th_smb2_read_req(msg, &h, &rw);
    return put_descs(msg, n, each);
}

static size_t channel_write(uint64_t mid, uint32_t remaining, uint32_t channel, size_t n,
                            uint32_t each)
{
    const struct th_hdr h = { .command = SMB2_WRITE, .message_id = mid };
    const struct th_rw rw = { .remaining = remaining, .channel = channel, .info_offset = 112,
                              .info_length = (uint16_t)(16 * n) };

    th_smb2_write_req(msg, &h, &rw);
    return put_descs(msg, n, each);
}

static void expect_reject(const struct chan_server *cs, size_t len, int err, const char *needle)
{
    struct chan_server_plan plan;

    assert_int_equal(chan_server_plan_request(cs, msg, len, &plan), err);
    assert_int_equal(plan.kind, CHAN_PASS);
    assert_non_null(plan.why);
    assert_non_null(strstr(plan.why, needle));
}

static void expect_kind(const struct chan_server *cs, size_t len, enum chan_kind kind)
{
    struct chan_server_plan plan;

    assert_int_equal(chan_server_plan_request(cs, msg, len, &plan), 0);
    assert_int_equal(plan.kind, kind);
}

static void read_plan_names_the_descriptors(void **state)
{
    struct chan_server cs;
    struct chan_server_plan plan;
    struct smbd_buffer_desc d;
    size_t len;

    (void)state;
    server_at(&cs, 0x0302);
    len = channel_read(0x77, 65536, SMB2_CHANNEL_RDMA_V1_INVALIDATE, 2, 32768);
    assert_int_equal(chan_server_plan_request(&cs, msg, len, &plan), 0);
    assert_int_equal(plan.kind, CHAN_READ);
    assert_true(plan.message_id == 0x77);
    assert_int_equal(plan.size, 65536);
    assert_int_equal(plan.channel, SMB2_CHANNEL_RDMA_V1_INVALIDATE);
    assert_int_equal(plan.invalidate, 1);
    assert_ptr_equal(plan.descs, msg + 112);
    assert_int_equal(plan.ndescs, 2);
    chan_desc_get(plan.descs, 1, &d);
    assert_true(d.offset == 0x10000);
    assert_int_equal(d.token, TOKEN0 + 1);
    assert_int_equal(d.length, 32768);
    chan_server_fini(&cs);
}

static void write_plan_sizes_by_remaining_bytes(void **state)
{
    struct chan_server cs;
    struct chan_server_plan plan;
    size_t len;

    (void)state;
    server_at(&cs, 0x0300);
    len = channel_write(0x78, 5000, SMB2_CHANNEL_RDMA_V1, 1, 5000);
    assert_int_equal(chan_server_plan_request(&cs, msg, len, &plan), 0);
    assert_int_equal(plan.kind, CHAN_WRITE);
    assert_int_equal(plan.size, 5000);
    assert_int_equal(plan.invalidate, 0);
    assert_int_equal(plan.ndescs, 1);
    chan_server_fini(&cs);
}

static void non_channel_messages_pass(void **state)
{
    struct chan_server cs;
    size_t len;

    (void)state;
    server_at(&cs, 0x0311);
    expect_kind(&cs, th_smb2_plain_read(msg, 1, 65536), CHAN_PASS);
    expect_kind(&cs, th_smb2_plain_write(msg, 1, 100), CHAN_PASS);
    len = channel_read(1, 4096, 3, 1, 4096); /* SMB2_CHANNEL_RDMA_TRANSFORM */
    expect_kind(&cs, len, CHAN_PASS);
    len = channel_read(1, 4096, SMB2_CHANNEL_RDMA_V1, 1, 4096);
    sd_put_le16(msg + 12, 5); /* CREATE */
    expect_kind(&cs, len, CHAN_PASS);
    len = channel_read(1, 4096, SMB2_CHANNEL_RDMA_V1, 1, 4096);
    msg[0] = 0xFD; /* encrypted: its Channel cannot be seen */
    expect_kind(&cs, len, CHAN_PASS);
    expect_kind(&cs, 10, CHAN_PASS);
    chan_server_fini(&cs);
}

/* MS-SMB2 3.3.5.12 / 3.3.5.13: STATUS_INVALID_PARAMETER for a channel before 3.0; on 3.0
 * RDMA_V1_INVALIDATE is served without remote invalidation (the SMB300 RemoteInvalidation
 * cases of the MS-SMBD server test design). */
static void dialects_decide_which_channels_are_valid(void **state)
{
    const struct { uint16_t dialect; int v1, v1_invalidate; } cases[] = {
        { 0x0000, -EINVAL, -EINVAL },  /* no NEGOTIATE seen */
        { 0x02FF, -EINVAL, -EINVAL },
        { 0x0202, -EINVAL, -EINVAL },
        { 0x0210, -EINVAL, -EINVAL },
        { 0x0300, 0, 0 },
        { 0x0302, 0, 0 },
        { 0x0311, 0, 0 },
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct chan_server cs;
        struct chan_server_plan plan;
        size_t len;

        server_at(&cs, cases[i].dialect);
        len = channel_read(1, 4096, SMB2_CHANNEL_RDMA_V1, 1, 4096);
        assert_int_equal(chan_server_plan_request(&cs, msg, len, &plan), cases[i].v1);
        len = channel_write(1, 4096, SMB2_CHANNEL_RDMA_V1_INVALIDATE, 1, 4096);
        assert_int_equal(chan_server_plan_request(&cs, msg, len, &plan),
                         cases[i].v1_invalidate);
        if (cases[i].v1_invalidate == 0)
            assert_int_equal(plan.invalidate, cases[i].dialect >= 0x0302);
        chan_server_fini(&cs);
    }
}

static void signed_and_compound_channel_requests_cannot_be_forwarded(void **state)
{
    struct chan_server cs;
    size_t len;

    (void)state;
    server_at(&cs, 0x0311);
    len = channel_read(1, 4096, SMB2_CHANNEL_RDMA_V1, 1, 4096);
    sd_put_le32(msg + 16, SMB2_FLAGS_SIGNED);
    expect_reject(&cs, len, -ENOTSUP, "signed");
    sd_put_le32(msg + 16, SMB2_FLAGS_RELATED_OPERATIONS);
    expect_reject(&cs, len, -ENOTSUP, "compound");
    sd_put_le32(msg + 16, 0);
    sd_put_le32(msg + 20, 128); /* followed by another command */
    th_smb2_plain_read(msg + 128, 2, 10);
    expect_reject(&cs, 128 + 113, -ENOTSUP, "compound");

    /* a plain READ first, the channel READ second */
    len = channel_read(1, 4096, SMB2_CHANNEL_RDMA_V1, 1, 4096);
    memmove(msg + 120, msg, len);
    th_smb2_plain_read(msg, 2, 10);
    sd_put_le32(msg + 20, 120);
    expect_reject(&cs, 120 + len, -ENOTSUP, "compound");
    chan_server_fini(&cs);
}

static void channel_information_must_lie_past_the_fixed_part_and_inside(void **state)
{
    struct chan_server cs;
    size_t len;

    (void)state;
    server_at(&cs, 0x0311);
    len = channel_read(1, 4096, SMB2_CHANNEL_RDMA_V1, 1, 4096);
    sd_put_le16(msg + 108, 111); /* ReadChannelInfoOffset inside the fixed part */
    expect_reject(&cs, len + 1, -EINVAL, "offset inside");
    sd_put_le16(msg + 108, 0);
    expect_reject(&cs, len, -EINVAL, "offset inside");
    len = channel_read(1, 4096, SMB2_CHANNEL_RDMA_V1, 1, 4096);
    expect_reject(&cs, len - 1, -EINVAL, "past the end");
    /* a list further in (after padding) is fine while it ends inside */
    sd_put_le16(msg + 108, 120);
    th_smb2_desc(msg + 120, 0, TOKEN0, 4096);
    expect_reject(&cs, 135, -EINVAL, "past the end");
    expect_kind(&cs, 136, CHAN_READ);
    chan_server_fini(&cs);
}

static void channel_information_length_is_a_nonzero_multiple_of_16(void **state)
{
    struct chan_server cs;
    size_t len;

    (void)state;
    server_at(&cs, 0x0311);
    len = channel_write(1, 4096, SMB2_CHANNEL_RDMA_V1, 2, 4096);
    sd_put_le16(msg + 106, 0);
    expect_reject(&cs, len, -EINVAL, "multiple of 16");
    sd_put_le16(msg + 106, 15);
    expect_reject(&cs, len, -EINVAL, "multiple of 16");
    sd_put_le16(msg + 106, 17);
    expect_reject(&cs, len, -EINVAL, "multiple of 16");
    sd_put_le16(msg + 106, 16);
    expect_kind(&cs, len, CHAN_WRITE);
    chan_server_fini(&cs);
}

static void zero_length_descriptor_and_short_sum_are_invalid(void **state)
{
    struct chan_server cs;
    size_t len;

    (void)state;
    server_at(&cs, 0x0311);
    len = channel_read(1, 3000, SMB2_CHANNEL_RDMA_V1, 3, 1000);
    expect_kind(&cs, len, CHAN_READ); /* exactly enough */
    sd_put_le32(msg + 112 + 32 + 12, 0);
    expect_reject(&cs, len, -EINVAL, "zero-length");
    len = channel_read(1, 3001, SMB2_CHANNEL_RDMA_V1, 3, 1000);
    expect_reject(&cs, len, -EINVAL, "fewer bytes");
    len = channel_write(1, 3001, SMB2_CHANNEL_RDMA_V1, 3, 1000);
    expect_reject(&cs, len, -EINVAL, "fewer bytes");
    len = channel_write(1, 2000, SMB2_CHANNEL_RDMA_V1, 3, 1000);
    expect_kind(&cs, len, CHAN_WRITE); /* more than enough */
    chan_server_fini(&cs);
}

/* The conformance case ReadWriteMultipleBufferDescriptorList: 4095 descriptors, the
 * most a 16-bit ChannelInfoLength holds (4096 cannot be expressed). */
static void descriptor_list_of_4095_is_accepted(void **state)
{
    struct chan_server cs;
    struct chan_server_plan plan;
    size_t len;

    (void)state;
    server_at(&cs, 0x0302);
    len = channel_read(1, 4095 * 16, SMB2_CHANNEL_RDMA_V1, 4095, 16);
    assert_int_equal(chan_server_plan_request(&cs, msg, len, &plan), 0);
    assert_int_equal(plan.ndescs, 4095);
    len = channel_write(2, 4095 * 16, SMB2_CHANNEL_RDMA_V1_INVALIDATE, 4095, 16);
    assert_int_equal(chan_server_plan_request(&cs, msg, len, &plan), 0);
    assert_int_equal(plan.ndescs, 4095);
    chan_server_fini(&cs);
}

static void max_io_edge(void **state)
{
    struct chan_server cs;
    size_t len;

    (void)state;
    server_at(&cs, 0x0311);
    len = channel_read(1, MAX_IO, SMB2_CHANNEL_RDMA_V1, 1, MAX_IO);
    expect_kind(&cs, len, CHAN_READ);
    len = channel_read(1, MAX_IO + 1, SMB2_CHANNEL_RDMA_V1, 2, MAX_IO);
    expect_reject(&cs, len, -EINVAL, "MaxReadWriteSize");
    len = channel_write(1, MAX_IO, SMB2_CHANNEL_RDMA_V1, 1, MAX_IO);
    expect_kind(&cs, len, CHAN_WRITE);
    len = channel_write(1, MAX_IO + 1, SMB2_CHANNEL_RDMA_V1, 2, MAX_IO);
    expect_reject(&cs, len, -EINVAL, "MaxReadWriteSize");
    chan_server_fini(&cs);
}

static void channel_write_with_inline_length_or_offset_is_invalid(void **state)
{
    struct chan_server cs;
    size_t len;

    (void)state;
    server_at(&cs, 0x0311);
    len = channel_write(1, 4096, SMB2_CHANNEL_RDMA_V1, 1, 4096);
    sd_put_le32(msg + 68, 1); /* Length */
    expect_reject(&cs, len, -EINVAL, "inline Length or DataOffset");
    sd_put_le32(msg + 68, 0);
    sd_put_le16(msg + 66, 112); /* DataOffset */
    expect_reject(&cs, len, -EINVAL, "inline Length or DataOffset");
    chan_server_fini(&cs);
}

static const struct chan_io *plan_and_track(struct chan_server *cs, size_t len, void *cookie)
{
    struct chan_server_plan plan;
    const struct chan_io *io;

    assert_int_equal(chan_server_plan_request(cs, msg, len, &plan), 0);
    assert_int_equal(chan_server_track(cs, &plan, cookie, &io), 0);
    return io;
}

static void track_keeps_a_decoded_copy_of_the_descriptors(void **state)
{
    struct chan_server cs;
    struct chan_server_plan plan;
    const struct chan_io *io;
    int cookie;
    size_t len;

    (void)state;
    server_at(&cs, 0x0302);
    len = channel_read(5, 8192, SMB2_CHANNEL_RDMA_V1_INVALIDATE, 2, 4096);
    assert_int_equal(chan_server_plan_request(&cs, msg, len, &plan), 0);
    assert_int_equal(chan_server_track(&cs, &plan, &cookie, &io), 0);
    memset(msg, 0, len); /* the message may go away */
    assert_int_equal(io->kind, CHAN_READ);
    assert_int_equal(io->length, 8192);
    assert_int_equal(io->invalidate, 1);
    assert_int_equal(io->first_token, TOKEN0);
    assert_ptr_equal(io->cookie, &cookie);
    assert_int_equal(io->ndescs, 2);
    assert_true(io->descs[1].offset == 0x10000);
    assert_int_equal(io->descs[1].token, TOKEN0 + 1);
    assert_int_equal(io->descs[1].length, 4096);
    assert_int_equal(chan_server_track(&cs, &plan, &cookie, &io), -EEXIST);
    plan.kind = CHAN_PASS;
    assert_int_equal(chan_server_track(&cs, &plan, &cookie, &io), -EINVAL);
    chan_server_fini(&cs);
}

static void expect_released(struct chan_server *cs, void *cookie)
{
    struct chan_released r;

    assert_int_equal(chan_table_take_released(&cs->ios, &r), 1);
    assert_ptr_equal(r.cookie, cookie);
    assert_int_equal(chan_table_take_released(&cs->ios, &r), 0);
}

static void read_success_is_data_to_write_with_the_invalidation(void **state)
{
    const struct th_hdr h = { .command = SMB2_READ, .message_id = 5 };
    struct chan_server cs;
    struct chan_server_result res;
    const struct chan_io *io;
    uint8_t b[80 + 8192];
    int cookie;

    (void)state;
    server_at(&cs, 0x0302);
    io = plan_and_track(&cs, channel_read(5, 8192, SMB2_CHANNEL_RDMA_V1_INVALIDATE, 2, 4096),
                        &cookie);
    th_smb2_read_resp(b, &h, 0x50, 8192, 0);
    chan_server_on_response(&cs, b, sizeof(b), &res);
    assert_int_equal(res.action, CHAN_SERVER_WRITE_DATA);
    assert_ptr_equal(res.io, io);
    assert_ptr_equal(res.data, b + 80);
    assert_int_equal(res.data_len, 8192);
    assert_int_equal(res.invalidate, 1);
    assert_int_equal(res.token, TOKEN0);
    assert_int_equal(chan_table_outstanding(&cs.ios), 0);
    expect_released(&cs, &cookie);
    chan_server_fini(&cs);
}

static void read_on_3_0_is_not_invalidated_and_short_reads_fit(void **state)
{
    const struct th_hdr h = { .command = SMB2_READ, .message_id = 5 };
    struct chan_server cs;
    struct chan_server_result res;
    uint8_t b[0x60 + 100];
    int cookie;

    (void)state;
    server_at(&cs, 0x0300);
    plan_and_track(&cs, channel_read(5, 8192, SMB2_CHANNEL_RDMA_V1, 1, 8192), &cookie);
    memset(b, 0, sizeof(b));
    th_smb2_read_resp(b, &h, 0x60, 100, 0); /* data further in */
    chan_server_on_response(&cs, b, sizeof(b), &res);
    assert_int_equal(res.action, CHAN_SERVER_WRITE_DATA);
    assert_ptr_equal(res.data, b + 0x60);
    assert_int_equal(res.data_len, 100);
    assert_int_equal(res.invalidate, 0);
    chan_server_fini(&cs);
}

static void empty_read_success_writes_nothing(void **state)
{
    const struct th_hdr h = { .command = SMB2_READ, .message_id = 5 };
    struct chan_server cs;
    struct chan_server_result res;
    uint8_t b[80];
    int cookie;

    (void)state;
    server_at(&cs, 0x0300);
    plan_and_track(&cs, channel_read(5, 8192, SMB2_CHANNEL_RDMA_V1, 1, 8192), &cookie);
    th_smb2_read_resp(b, &h, 0, 0, 0);
    chan_server_on_response(&cs, b, sizeof(b), &res);
    assert_int_equal(res.action, CHAN_SERVER_WRITE_DATA);
    assert_null(res.data);
    assert_int_equal(res.data_len, 0);
    chan_server_fini(&cs);
}

static void read_data_outside_the_response_or_over_size_is_an_error(void **state)
{
    const struct th_hdr h = { .command = SMB2_READ, .message_id = 5 };
    const struct { uint8_t off; uint32_t len; size_t msg_len; const char *needle; } cases[] = {
        { 0x50, 101, 80 + 100, "outside" },   /* past the end */
        { 0x4F, 10, 80 + 100, "outside" },    /* inside the fixed part */
        { 0x50, 8193, 80 + 8193, "more data" },
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        static uint8_t b[80 + 8193];
        struct chan_server cs;
        struct chan_server_result res;
        int cookie;

        server_at(&cs, 0x0311);
        plan_and_track(&cs, channel_read(5, 8192, SMB2_CHANNEL_RDMA_V1, 1, 8192), &cookie);
        th_smb2_read_resp(b, &h, cases[i].off, cases[i].len, 0);
        chan_server_on_response(&cs, b, cases[i].msg_len, &res);
        assert_int_equal(res.action, CHAN_SERVER_ERROR);
        assert_non_null(strstr(res.why, cases[i].needle));
        chan_server_fini(&cs);
    }
}

static void signed_malformed_or_chained_read_answers_are_errors(void **state)
{
    const struct th_hdr signed_h = { .command = SMB2_READ, .flags = SMB2_FLAGS_SIGNED,
                                     .message_id = 5 };
    const struct th_hdr h = { .command = SMB2_READ, .message_id = 5 };
    const struct th_hdr first = { .command = 5, .next_command = 80, .message_id = 4 };
    uint8_t b[160];
    struct chan_server cs;
    struct chan_server_result res;
    int cookie;

    (void)state;
    server_at(&cs, 0x0311);
    plan_and_track(&cs, channel_read(5, 8192, SMB2_CHANNEL_RDMA_V1, 1, 8192), &cookie);
    th_smb2_read_resp(b, &signed_h, 0x50, 0, 0);
    chan_server_on_response(&cs, b, 80, &res);
    assert_int_equal(res.action, CHAN_SERVER_ERROR);
    assert_non_null(strstr(res.why, "signed"));

    plan_and_track(&cs, channel_read(5, 8192, SMB2_CHANNEL_RDMA_V1, 1, 8192), &cookie);
    th_smb2_read_resp(b, &h, 0x50, 0, 0);
    sd_put_le16(b + 64, 9);
    chan_server_on_response(&cs, b, 80, &res);
    assert_int_equal(res.action, CHAN_SERVER_ERROR);
    assert_non_null(strstr(res.why, "does not decode"));

    plan_and_track(&cs, channel_read(5, 8192, SMB2_CHANNEL_RDMA_V1, 1, 8192), &cookie);
    th_smb2_write_resp(b, &first, 0);
    th_smb2_read_resp(b + 80, &h, 0x50, 0, 0);
    chan_server_on_response(&cs, b, 160, &res);
    assert_int_equal(res.action, CHAN_SERVER_ERROR);
    assert_non_null(strstr(res.why, "compound"));
    chan_server_fini(&cs);
}

static void interim_then_error_releases_and_passes(void **state)
{
    const struct th_hdr eof = { .command = SMB2_READ, .status = 0xC0000011,
                                .flags = SMB2_FLAGS_ASYNC_COMMAND, .message_id = 5 };
    struct chan_server cs;
    struct chan_server_result res;
    uint8_t b[80];
    int cookie;

    (void)state;
    server_at(&cs, 0x0311);
    plan_and_track(&cs, channel_read(5, 8192, SMB2_CHANNEL_RDMA_V1_INVALIDATE, 1, 8192),
                   &cookie);
    chan_server_on_response(&cs, b, th_smb2_interim_resp(b, 5), &res);
    assert_int_equal(res.action, CHAN_SERVER_PASS);
    assert_int_equal(res.invalidate, 0);
    assert_int_equal(chan_table_outstanding(&cs.ios), 1);
    chan_server_on_response(&cs, b, th_smb2_error_resp(b, &eof), &res);
    assert_int_equal(res.action, CHAN_SERVER_PASS);
    assert_int_equal(res.invalidate, 1); /* the request asked; the final answer carries it */
    assert_int_equal(res.token, TOKEN0);
    expect_released(&cs, &cookie);
    chan_server_fini(&cs);
}

/* The conformance case SMB302_Write_RemoteInvalidation: the WRITE's response comes
 * with a Send with Invalidate of its token; RDMA_V1 asks for none. */
static void write_response_carries_the_invalidation_asked_for(void **state)
{
    const struct th_hdr w1 = { .command = SMB2_WRITE, .message_id = 6 };
    const struct th_hdr w2 = { .command = SMB2_WRITE, .message_id = 7 };
    struct chan_server cs;
    struct chan_server_result res;
    uint8_t b[80];
    int c1, c2;

    (void)state;
    server_at(&cs, 0x0302);
    plan_and_track(&cs, channel_write(6, 4096, SMB2_CHANNEL_RDMA_V1_INVALIDATE, 1, 4096), &c1);
    plan_and_track(&cs, channel_write(7, 4096, SMB2_CHANNEL_RDMA_V1, 1, 4096), &c2);
    chan_server_on_response(&cs, b, th_smb2_write_resp(b, &w1, 4096), &res);
    assert_int_equal(res.action, CHAN_SERVER_PASS);
    assert_int_equal(res.invalidate, 1);
    assert_int_equal(res.token, TOKEN0);
    expect_released(&cs, &c1);
    chan_server_on_response(&cs, b, th_smb2_write_resp(b, &w2, 4096), &res);
    assert_int_equal(res.action, CHAN_SERVER_PASS);
    assert_int_equal(res.invalidate, 0);
    expect_released(&cs, &c2);
    chan_server_fini(&cs);
}

static void chain_releases_tracked_writes_and_passes_the_rest(void **state)
{
    const struct th_hdr w1 = { .command = SMB2_WRITE, .next_command = 80, .message_id = 6 };
    const struct th_hdr u = { .command = 5, .next_command = 80, .message_id = 99 };
    const struct th_hdr w2 = { .command = SMB2_WRITE, .message_id = 7 };
    struct chan_server cs;
    struct chan_server_result res;
    uint8_t b[240];
    int c1, c2;

    (void)state;
    server_at(&cs, 0x0302);
    plan_and_track(&cs, channel_write(6, 4096, SMB2_CHANNEL_RDMA_V1, 1, 4096), &c1);
    plan_and_track(&cs, channel_write(7, 4096, SMB2_CHANNEL_RDMA_V1_INVALIDATE, 1, 4096), &c2);
    memset(b, 0, sizeof(b));
    th_smb2_write_resp(b, &w1, 4096);
    th_smb2_error_resp(b + 80, &u);
    th_smb2_write_resp(b + 160, &w2, 4096);
    chan_server_on_response(&cs, b, sizeof(b), &res);
    assert_int_equal(res.action, CHAN_SERVER_PASS);
    assert_int_equal(res.invalidate, 1);
    assert_int_equal(chan_table_outstanding(&cs.ios), 0);
    chan_server_fini(&cs);
}

static void untracked_responses_pass_and_teardown_drains(void **state)
{
    const struct th_hdr h = { .command = SMB2_READ, .message_id = 50 };
    struct chan_server cs;
    struct chan_server_result res;
    struct chan_released r;
    uint8_t b[80 + 10];
    int cookies[2], n = 0;

    (void)state;
    server_at(&cs, 0x0311);
    plan_and_track(&cs, channel_read(5, 8192, SMB2_CHANNEL_RDMA_V1, 1, 8192), &cookies[0]);
    plan_and_track(&cs, channel_write(6, 8192, SMB2_CHANNEL_RDMA_V1, 1, 8192), &cookies[1]);
    th_smb2_read_resp(b, &h, 0x50, 10, 0);
    chan_server_on_response(&cs, b, sizeof(b), &res);
    assert_int_equal(res.action, CHAN_SERVER_PASS);
    assert_int_equal(chan_table_outstanding(&cs.ios), 2);
    chan_table_release_all(&cs.ios);
    while (chan_table_take_released(&cs.ios, &r)) {
        assert_true(r.cookie == &cookies[0] || r.cookie == &cookies[1]);
        n++;
    }
    assert_int_equal(n, 2);
    chan_server_fini(&cs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(read_plan_names_the_descriptors),
        cmocka_unit_test(write_plan_sizes_by_remaining_bytes),
        cmocka_unit_test(non_channel_messages_pass),
        cmocka_unit_test(dialects_decide_which_channels_are_valid),
        cmocka_unit_test(signed_and_compound_channel_requests_cannot_be_forwarded),
        cmocka_unit_test(channel_information_must_lie_past_the_fixed_part_and_inside),
        cmocka_unit_test(channel_information_length_is_a_nonzero_multiple_of_16),
        cmocka_unit_test(zero_length_descriptor_and_short_sum_are_invalid),
        cmocka_unit_test(descriptor_list_of_4095_is_accepted),
        cmocka_unit_test(max_io_edge),
        cmocka_unit_test(channel_write_with_inline_length_or_offset_is_invalid),
        cmocka_unit_test(track_keeps_a_decoded_copy_of_the_descriptors),
        cmocka_unit_test(read_success_is_data_to_write_with_the_invalidation),
        cmocka_unit_test(read_on_3_0_is_not_invalidated_and_short_reads_fit),
        cmocka_unit_test(empty_read_success_writes_nothing),
        cmocka_unit_test(read_data_outside_the_response_or_over_size_is_an_error),
        cmocka_unit_test(signed_malformed_or_chained_read_answers_are_errors),
        cmocka_unit_test(interim_then_error_releases_and_passes),
        cmocka_unit_test(write_response_carries_the_invalidation_asked_for),
        cmocka_unit_test(chain_releases_tracked_writes_and_passes_the_rest),
        cmocka_unit_test(untracked_responses_pass_and_teardown_drains),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
