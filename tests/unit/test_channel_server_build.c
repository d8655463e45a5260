/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/test_channel_server_build.c — the server role's inline requests for the
 * backend and channel READ responses for the client (transport/channel/
 * chan_server_build.c), byte for byte against independently rendered SMB2 messages;
 * size limits and misuse. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "chan_server_build.h"
#include "smb2_wire.h"
#include "th_smb2.h"

/* A server at dialect 3.1.1 planning the message m (kind expected). */
static void server_plan(struct chan_server *cs, const uint8_t *m, size_t len,
                        struct chan_server_plan *plan, enum chan_kind kind)
{
    uint8_t neg[129];
    struct chan_server_result res;

    chan_server_init(cs, 1u << 20);
    th_smb2_negotiate_resp(neg, 0x0311);
    chan_server_on_response(cs, neg, sizeof(neg), &res);
    assert_int_equal(chan_server_plan_request(cs, m, len, plan), 0);
    assert_int_equal(plan->kind, kind);
}

static void inline_write_carries_the_data_after_the_fixed_part(void **state)
{
    const struct th_hdr h = { .command = SMB2_WRITE, .message_id = 0x31 };
    const struct th_rw channel = { .channel = 2, .remaining = 6000, .info_offset = 112,
                                   .info_length = 16 };
    const struct th_rw inline_rw = { .data_offset = 112, .length = 6000 };
    uint8_t m[128], out[112], exp[112];
    struct chan_server cs;
    struct chan_server_plan plan;

    (void)state;
    th_smb2_write_req(m, &h, &channel);
    th_smb2_desc(m + 112, 0x1000, 0xAB, 6000);
    server_plan(&cs, m, sizeof(m), &plan, CHAN_WRITE);
    assert_int_equal(chan_build_inline_write(m, sizeof(m), &plan, out, sizeof(out)), 112);
    th_smb2_write_req(exp, &h, &inline_rw);
    assert_memory_equal(out, exp, sizeof(exp));
    assert_int_equal(chan_build_inline_write(m, sizeof(m), &plan, out, 111), -1);
    plan.kind = CHAN_READ;
    assert_int_equal(chan_build_inline_write(m, sizeof(m), &plan, out, sizeof(out)), -1);
    chan_server_fini(&cs);
}

static void inline_read_has_no_channel_and_a_one_byte_buffer(void **state)
{
    const struct th_hdr h = { .command = SMB2_READ, .message_id = 0x32 };
    const struct th_rw channel = { .length = 0x8000, .channel = 1, .remaining = 5,
                                   .info_offset = 112, .info_length = 32 };
    const struct th_rw inline_rw = { .length = 0x8000 };
    uint8_t m[144], out[113], exp[113];
    struct chan_server cs;
    struct chan_server_plan plan;

    (void)state;
    th_smb2_read_req(m, &h, &channel);
    th_smb2_desc(m + 112, 0x1000, 0xAB, 0x4000);
    th_smb2_desc(m + 128, 0x9000, 0xAC, 0x4000);
    server_plan(&cs, m, sizeof(m), &plan, CHAN_READ);
    assert_int_equal(chan_build_inline_read(m, sizeof(m), &plan, out, sizeof(out)), 113);
    th_smb2_read_req(exp, &h, &inline_rw);
    assert_memory_equal(out, exp, sizeof(exp));
    assert_int_equal(chan_build_inline_read(m, sizeof(m), &plan, out, 112), -1);
    plan.kind = CHAN_WRITE;
    assert_int_equal(chan_build_inline_read(m, sizeof(m), &plan, out, sizeof(out)), -1);
    chan_server_fini(&cs);
}

/* MS-SMB2 3.3.5.12 over RDMA: DataLength 0, DataRemaining the bytes written. */
static void channel_read_response_names_the_bytes_written(void **state)
{
    const struct th_hdr h = { .command = SMB2_READ, .next_command = 0x58, .message_id = 0x32 };
    const struct th_hdr last = { .command = SMB2_READ, .message_id = 0x32 };
    uint8_t resp[80 + 0x8000], out[80], exp[80];

    (void)state;
    memset(resp, 0x77, sizeof(resp));
    th_smb2_read_resp(resp, &h, 0x50, 0x8000, 0);
    th_smb2_read_resp(exp, &last, 0x50, 0, 0x8000);
    assert_int_equal(chan_build_channel_read_response(resp, sizeof(resp), 0x8000, out,
                                                      sizeof(out)), 80);
    assert_memory_equal(out, exp, sizeof(exp));
    assert_int_equal(chan_build_channel_read_response(resp, sizeof(resp), 1, out, 79), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(inline_write_carries_the_data_after_the_fixed_part),
        cmocka_unit_test(inline_read_has_no_channel_and_a_one_byte_buffer),
        cmocka_unit_test(channel_read_response_names_the_bytes_written),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
