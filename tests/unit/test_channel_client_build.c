/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/test_channel_client_build.c — the client role's rewritten requests and
 * inline READ responses (transport/channel/chan_client_build.c), byte for byte
 * against independently rendered SMB2 messages (th_smb2) and, for one WRITE, against
 * literal bytes; size limits and misuse. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "chan_client_build.h"
#include "smb2_wire.h"
#include "th_smb2.h"

static const struct smbd_buffer_desc descs[2] = {
    { .offset = 0x00007F0012340000ull, .token = 0x1A2B3C4D, .length = 0x00010000 },
    { .offset = 0x0000000000001000ull, .token = 0x01020304, .length = 0x00000800 },
};

static void client_plan(struct chan_client *cc, uint16_t dialect, const uint8_t *m, size_t len,
                        struct chan_client_plan *plan, enum chan_kind kind)
{
    uint8_t neg[129];
    struct chan_client_result res;

    chan_client_init(cc, 4096, 1u << 20);
    th_smb2_negotiate_resp(neg, dialect);
    chan_client_on_response(cc, neg, sizeof(neg), 0, &res);
    assert_int_equal(chan_client_plan_request(cc, m, len, plan), kind);
}

static void request_size(void **state)
{
    (void)state;
    assert_int_equal(CHAN_REQUEST_SIZE(1), 128);
    assert_int_equal(CHAN_REQUEST_SIZE(4095), 112 + 65520);
}

static void write_request_carries_descriptors_instead_of_data(void **state)
{
    const struct th_hdr h = { .command = SMB2_WRITE, .message_id = 0x55 };
    const struct th_rw expect = { .data_offset = 0, .length = 0, .channel = 2,
                                  .remaining = 0x10800, .info_offset = 112,
                                  .info_length = 32 };
    static uint8_t m[112 + 0x10800];
    uint8_t out[144], exp[144];
    struct chan_client cc;
    struct chan_client_plan plan;
    size_t len = th_smb2_plain_write(m, 0x55, 0x10800);

    (void)state;
    client_plan(&cc, 0x0302, m, len, &plan, CHAN_WRITE);
    assert_int_equal(chan_build_write_request(m, len, &plan, descs, 2, out, sizeof(out)), 144);
    th_smb2_write_req(exp, &h, &expect);
    th_smb2_desc(exp + 112, descs[0].offset, descs[0].token, descs[0].length);
    th_smb2_desc(exp + 128, descs[1].offset, descs[1].token, descs[1].length);
    assert_memory_equal(out, exp, sizeof(exp));
    chan_client_fini(&cc);
}

/* The body and descriptor of a rewritten WRITE, as MS-SMB2 2.2.21 and MS-SMBD 2.2.3.1
 * lay them out, spelled out byte by byte. */
static void write_request_body_matches_literal_bytes(void **state)
{
    static const uint8_t body[64] = {
        0x31, 0x00,             /* StructureSize 49 */
        0x00, 0x00,             /* DataOffset 0 */
        0x00, 0x00, 0x00, 0x00, /* Length 0 */
        0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01, /* Offset, unchanged */
        0x50, 0x51, 0x52, 0x53, 0x54, 0x55, 0x56, 0x57, /* FileId, unchanged */
        0x58, 0x59, 0x5A, 0x5B, 0x5C, 0x5D, 0x5E, 0x5F,
        0x01, 0x00, 0x00, 0x00, /* Channel SMB2_CHANNEL_RDMA_V1 (dialect 3.0) */
        0x01, 0x20, 0x00, 0x00, /* RemainingBytes 0x2001 */
        0x70, 0x00,             /* WriteChannelInfoOffset 112 */
        0x10, 0x00,             /* WriteChannelInfoLength 16 */
        0x01, 0x00, 0x00, 0x00, /* Flags, unchanged */
        0x00, 0x00, 0x34, 0x12, 0x00, 0x7F, 0x00, 0x00, /* descriptor Offset */
        0x4D, 0x3C, 0x2B, 0x1A, /* Token */
        0x00, 0x00, 0x01, 0x00, /* Length */
    };
    uint8_t m[112 + 0x2001], out[128];
    struct chan_client cc;
    struct chan_client_plan plan;
    size_t len = th_smb2_plain_write(m, 7, 0x2001);

    (void)state;
    client_plan(&cc, 0x0300, m, len, &plan, CHAN_WRITE);
    assert_int_equal(chan_build_write_request(m, len, &plan, descs, 1, out, sizeof(out)), 128);
    assert_memory_equal(out, m, 64); /* header, MessageId and CreditCharge included */
    assert_memory_equal(out + 64, body, sizeof(body));
    chan_client_fini(&cc);
}

static void read_request_carries_descriptors_instead_of_buffer(void **state)
{
    const struct th_hdr h = { .command = SMB2_READ, .message_id = 0x66 };
    const struct th_rw original = { .length = 0x10000, .remaining = 0x7777 };
    const struct th_rw expect = { .length = 0x10000, .channel = 1, .remaining = 0,
                                  .info_offset = 112, .info_length = 16 };
    uint8_t m[113], out[128], exp[128];
    struct chan_client cc;
    struct chan_client_plan plan;

    (void)state;
    th_smb2_read_req(m, &h, &original);
    client_plan(&cc, 0x0300, m, sizeof(m), &plan, CHAN_READ);
    assert_int_equal(chan_build_read_request(m, sizeof(m), &plan, descs, 1, out, sizeof(out)),
                     128);
    th_smb2_read_req(exp, &h, &expect);
    th_smb2_desc(exp + 112, descs[0].offset, descs[0].token, descs[0].length);
    assert_memory_equal(out, exp, sizeof(exp));
    chan_client_fini(&cc);
}

static void request_builders_check_space_count_and_kind(void **state)
{
    uint8_t m[113], out[200];
    struct chan_client cc;
    struct chan_client_plan plan;
    struct smbd_buffer_desc *many = calloc(4096, sizeof(*many));
    uint8_t *big = malloc(CHAN_REQUEST_SIZE(4095));

    (void)state;
    assert_non_null(many);
    assert_non_null(big);
    th_smb2_plain_read(m, 1, 8192);
    client_plan(&cc, 0x0311, m, sizeof(m), &plan, CHAN_READ);
    assert_int_equal(chan_build_read_request(m, sizeof(m), &plan, descs, 1, out, 127), -1);
    assert_int_equal(chan_build_read_request(m, sizeof(m), &plan, descs, 0, out, sizeof(out)), -1);
    assert_int_equal(chan_build_write_request(m, sizeof(m), &plan, descs, 1, out, sizeof(out)),
                     -1);
    assert_int_equal(chan_build_read_request(m, 111, &plan, descs, 1, out, sizeof(out)), -1);
    for (size_t i = 0; i < 4096; i++)
        many[i] = (struct smbd_buffer_desc){ .offset = i, .token = 9, .length = 2 };
    assert_int_equal(chan_build_read_request(m, sizeof(m), &plan, many, 4095, big,
                                             CHAN_REQUEST_SIZE(4095)),
                     (int)CHAN_REQUEST_SIZE(4095));
    assert_int_equal(big[110] | big[111] << 8, 65520);
    assert_int_equal(chan_build_read_request(m, sizeof(m), &plan, many, 4096, big,
                                             CHAN_REQUEST_SIZE(4095)), -1);
    free(many);
    free(big);
    chan_client_fini(&cc);
}

static void read_response_is_the_ordinary_inline_answer(void **state)
{
    const struct th_hdr h = { .command = SMB2_READ, .status = 0x80000005,
                              .flags = SMB2_FLAGS_ASYNC_COMMAND, .message_id = 0x66 };
    uint8_t resp[80], out[80], exp[80];

    (void)state;
    th_smb2_read_resp(resp, &h, 0x50, 0, 0x1234);
    th_smb2_read_resp(exp, &h, 0x50, 0x1234, 0);
    assert_int_equal(chan_build_read_response(resp, sizeof(resp), 0x1234, out, sizeof(out)), 80);
    assert_memory_equal(out, exp, sizeof(exp));
    assert_int_equal(chan_build_read_response(resp, sizeof(resp), 1, out, 79), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(request_size),
        cmocka_unit_test(write_request_carries_descriptors_instead_of_data),
        cmocka_unit_test(write_request_body_matches_literal_bytes),
        cmocka_unit_test(read_request_carries_descriptors_instead_of_buffer),
        cmocka_unit_test(request_builders_check_space_count_and_kind),
        cmocka_unit_test(read_response_is_the_ordinary_inline_answer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
