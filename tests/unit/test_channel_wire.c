/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/test_channel_wire.c — the SMB2 fields the channel reads and writes
 * (transport/channel/smb2_wire.c): header and chain decoding with every rejection, the
 * SessionId in the part of a header a signer MACs first, the dialect a NEGOTIATE response
 * settles, READ/WRITE request and READ response fields against the MS-SMB2 2.2 offsets,
 * and the exact bytes of a built response. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "sd_bytes.h"
#include "smb2_wire.h"
#include "th_smb2.h"

static void hdr_decodes_fields(void **state)
{
    const struct th_hdr th = { .command = 9, .status = 0xC0000022, .flags = 0x0000000B,
                               .message_id = 0x1122334455667788ull };
    uint8_t b[64];
    struct smb2_hdr h;

    (void)state;
    th_smb2_hdr(b, &th);
    assert_int_equal(smb2_hdr_decode(b, sizeof(b), &h), 0);
    assert_int_equal(h.command, 9);
    assert_int_equal(h.status, 0xC0000022);
    assert_int_equal(h.flags, 0x0B);
    assert_int_equal(h.next_command, 0);
    assert_true(h.message_id == 0x1122334455667788ull);
    assert_true(h.session_id == 0x778899AABBCCDDEEull);
}

/* What a signer MACs first, the 48 bytes before the Signature, names the session. */
static void signed_part_of_a_header_gives_its_session(void **state)
{
    const struct th_hdr th = { .command = 9 };
    uint64_t sid = 0;
    uint8_t b[64];

    (void)state;
    th_smb2_hdr(b, &th);
    assert_int_equal(smb2_hdr_signed_part(b, 48, &sid), 0);
    assert_true(sid == 0x778899AABBCCDDEEull);
    assert_int_equal(smb2_hdr_signed_part(b, 47, &sid), -1);
    b[4] = 65; /* StructureSize */
    assert_int_equal(smb2_hdr_signed_part(b, 48, &sid), -1);
    b[4] = 64;
    b[0] = 0xFD; /* a transform header's first bytes: its Signature, then its Nonce */
    assert_int_equal(smb2_hdr_signed_part(b, 48, &sid), -1);
}

static void hdr_rejects_short_transform_compressed_smb1_and_bad_size(void **state)
{
    const struct th_hdr th = { .command = 8 };
    uint8_t b[64];
    struct smb2_hdr h;

    (void)state;
    th_smb2_hdr(b, &th);
    assert_int_equal(smb2_hdr_decode(b, 63, &h), -1);
    b[0] = 0xFD; /* MS-SMB2 2.2.41 transform header */
    assert_int_equal(smb2_hdr_decode(b, sizeof(b), &h), -1);
    b[0] = 0xFC; /* 2.2.42 compression transform header */
    assert_int_equal(smb2_hdr_decode(b, sizeof(b), &h), -1);
    b[0] = 0xFF; /* SMB1 */
    assert_int_equal(smb2_hdr_decode(b, sizeof(b), &h), -1);
    b[0] = 0xFE;
    b[4] = 65;
    assert_int_equal(smb2_hdr_decode(b, sizeof(b), &h), -1);
}

static void hdr_checks_next_command(void **state)
{
    const struct th_hdr th = { .command = 8 };
    uint8_t b[200];
    struct smb2_hdr h;

    (void)state;
    memset(b, 0, sizeof(b));
    th_smb2_hdr(b, &th);
    sd_put_le32(b + 20, 56); /* inside the header */
    assert_int_equal(smb2_hdr_decode(b, sizeof(b), &h), -1);
    sd_put_le32(b + 20, 116); /* not 8-byte aligned */
    assert_int_equal(smb2_hdr_decode(b, sizeof(b), &h), -1);
    sd_put_le32(b + 20, 200); /* at the end */
    assert_int_equal(smb2_hdr_decode(b, sizeof(b), &h), -1);
    sd_put_le32(b + 20, 120);
    assert_int_equal(smb2_hdr_decode(b, sizeof(b), &h), 0);
    assert_int_equal(h.next_command, 120);
    assert_true(smb2_hdr_in_compound(&h));
}

static void compound_and_interim_predicates(void **state)
{
    struct smb2_hdr h = { .flags = SMB2_FLAGS_RELATED_OPERATIONS };

    (void)state;
    assert_true(smb2_hdr_in_compound(&h));
    h.flags = 0;
    assert_false(smb2_hdr_in_compound(&h));
    h.flags = SMB2_FLAGS_ASYNC_COMMAND | SMB2_FLAGS_SERVER_TO_REDIR;
    h.status = 0x103;
    assert_true(smb2_hdr_is_interim(&h));
    h.flags = SMB2_FLAGS_SERVER_TO_REDIR; /* STATUS_PENDING without ASYNC: not interim */
    assert_false(smb2_hdr_is_interim(&h));
    h.flags = SMB2_FLAGS_ASYNC_COMMAND;
    h.status = 0;
    assert_false(smb2_hdr_is_interim(&h));
    assert_false(smb2_status_is_error(0x00000000));
    assert_false(smb2_status_is_error(0x80000005)); /* STATUS_BUFFER_OVERFLOW */
    assert_true(smb2_status_is_error(0xC0000011));  /* STATUS_END_OF_FILE */
}

static void chain_walks_each_command(void **state)
{
    uint8_t b[80 + 73 + 7];
    const struct th_hdr first = { .command = 8, .next_command = 80, .message_id = 5 };
    const struct th_hdr second = { .command = 9, .message_id = 6 };
    struct smb2_chain c;
    struct smb2_hdr h;
    const uint8_t *cmd;
    size_t cmd_len;

    (void)state;
    memset(b, 0, sizeof(b));
    th_smb2_read_resp(b, &first, 0, 0, 0);
    th_smb2_error_resp(b + 80, &second);
    smb2_chain_init(&c, b, 80 + 73);
    assert_int_equal(smb2_chain_next(&c, &h, &cmd, &cmd_len), 0);
    assert_ptr_equal(cmd, b);
    assert_int_equal(cmd_len, 80);
    assert_true(h.message_id == 5);
    assert_int_equal(smb2_chain_next(&c, &h, &cmd, &cmd_len), 0);
    assert_ptr_equal(cmd, b + 80);
    assert_int_equal(cmd_len, 73);
    assert_true(h.message_id == 6);
    assert_int_equal(smb2_chain_next(&c, &h, &cmd, &cmd_len), -1);
    assert_int_equal(smb2_chain_next(&c, &h, &cmd, &cmd_len), -1);
}

static void chain_stops_at_a_command_that_does_not_decode(void **state)
{
    uint8_t b[80 + 40];
    const struct th_hdr first = { .command = 8, .next_command = 80, .message_id = 5 };
    struct smb2_chain c;
    struct smb2_hdr h;
    const uint8_t *cmd;
    size_t cmd_len;

    (void)state;
    memset(b, 0, sizeof(b));
    th_smb2_read_resp(b, &first, 0, 0, 0);
    smb2_chain_init(&c, b, sizeof(b)); /* 40 bytes after it: no header */
    assert_int_equal(smb2_chain_next(&c, &h, &cmd, &cmd_len), 0);
    assert_int_equal(smb2_chain_next(&c, &h, &cmd, &cmd_len), -1);
    smb2_chain_init(&c, b, 10);
    assert_int_equal(smb2_chain_next(&c, &h, &cmd, &cmd_len), -1);
}

static void negotiated_dialect_from_each_answer(void **state)
{
    const uint16_t dialects[] = { 0x0202, 0x0210, 0x0300, 0x0302, 0x0311 };
    uint8_t b[129];
    uint16_t d = 0xBEEF;

    (void)state;
    for (size_t i = 0; i < sizeof(dialects) / sizeof(dialects[0]); i++) {
        th_smb2_negotiate_resp(b, dialects[i]);
        assert_int_equal(smb2_negotiated_dialect(b, sizeof(b), &d), 0);
        assert_int_equal(d, dialects[i]);
    }
    th_smb2_negotiate_resp(b, 0x02FF); /* wildcard: a second NEGOTIATE decides */
    assert_int_equal(smb2_negotiated_dialect(b, sizeof(b), &d), 0);
    assert_int_equal(d, 0);
}

static void negotiated_dialect_ignores_other_messages(void **state)
{
    uint8_t b[129];
    uint16_t d = 0x1234;

    (void)state;
    th_smb2_negotiate_resp(b, 0x0311);
    sd_put_le32(b + 16, 0); /* a request (no SERVER_TO_REDIR) */
    assert_int_equal(smb2_negotiated_dialect(b, sizeof(b), &d), -1);
    th_smb2_negotiate_resp(b, 0x0311);
    sd_put_le32(b + 8, 0xC0000022); /* failed */
    assert_int_equal(smb2_negotiated_dialect(b, sizeof(b), &d), -1);
    th_smb2_negotiate_resp(b, 0x0311);
    sd_put_le16(b + 12, 8); /* READ */
    assert_int_equal(smb2_negotiated_dialect(b, sizeof(b), &d), -1);
    th_smb2_negotiate_resp(b, 0x0311);
    sd_put_le16(b + 64, 9); /* an ERROR body */
    assert_int_equal(smb2_negotiated_dialect(b, sizeof(b), &d), -1);
    th_smb2_negotiate_resp(b, 0x0311);
    assert_int_equal(smb2_negotiated_dialect(b, 69, &d), -1); /* short of DialectRevision */
    assert_int_equal(d, 0x1234);
}

static void rw_req_decodes_read_fields(void **state)
{
    const struct th_hdr h = { .command = 8 };
    const struct th_rw rw = { .length = 0x11223344, .channel = 2, .remaining = 0x55667788,
                              .info_offset = 0x99AA, .info_length = 0xBBCC };
    uint8_t b[113];
    struct smb2_rw_req r;

    (void)state;
    th_smb2_read_req(b, &h, &rw);
    assert_int_equal(smb2_rw_req_decode(b, sizeof(b), 8, &r), 0);
    assert_int_equal(r.data_offset, 0);
    assert_int_equal(r.length, 0x11223344);
    assert_int_equal(r.channel, 2);
    assert_int_equal(r.remaining, 0x55667788);
    assert_int_equal(r.info_offset, 0x99AA);
    assert_int_equal(r.info_length, 0xBBCC);
    assert_int_equal(smb2_rw_req_decode(b, 112, 8, &r), 0); /* Buffer may be absent */
}

static void rw_req_decodes_write_fields(void **state)
{
    const struct th_hdr h = { .command = 9 };
    const struct th_rw rw = { .data_offset = 0x0102, .length = 0x11223344, .channel = 1,
                              .remaining = 0x55667788, .info_offset = 0x99AA,
                              .info_length = 0xBBCC };
    uint8_t b[112];
    struct smb2_rw_req r;

    (void)state;
    th_smb2_write_req(b, &h, &rw);
    assert_int_equal(smb2_rw_req_decode(b, sizeof(b), 9, &r), 0);
    assert_int_equal(r.data_offset, 0x0102);
    assert_int_equal(r.length, 0x11223344);
    assert_int_equal(r.channel, 1);
    assert_int_equal(r.remaining, 0x55667788);
    assert_int_equal(r.info_offset, 0x99AA);
    assert_int_equal(r.info_length, 0xBBCC);
}

static void rw_req_rejects_short_wrong_size_and_other_commands(void **state)
{
    uint8_t b[113];
    struct smb2_rw_req r;

    (void)state;
    th_smb2_plain_read(b, 1, 100);
    assert_int_equal(smb2_rw_req_decode(b, 111, 8, &r), -1);
    assert_int_equal(smb2_rw_req_decode(b, sizeof(b), 5, &r), -1);
    sd_put_le16(b + 64, 48);
    assert_int_equal(smb2_rw_req_decode(b, sizeof(b), 8, &r), -1);
}

/* Writing back the decoded fields changes nothing; new values land where MS-SMB2 puts
 * them and nowhere else. */
static void rw_req_put_round_trips_and_touches_only_its_fields(void **state)
{
    const struct th_hdr hr = { .command = 8 }, hw = { .command = 9 };
    const struct th_rw set = { .data_offset = 0x0A0B, .length = 0x01020304, .channel = 2,
                               .remaining = 0x05060708, .info_offset = 0x0C0D,
                               .info_length = 0x0E0F };
    const struct th_rw set_read = { .length = 0x01020304, .channel = 2,
                                    .remaining = 0x05060708, .info_offset = 0x0C0D,
                                    .info_length = 0x0E0F };
    const struct smb2_rw_req r = { 0x0A0B, 0x01020304, 2, 0x05060708, 0x0C0D, 0x0E0F };
    uint8_t b[113], exp[113];
    struct smb2_rw_req d;

    (void)state;
    th_smb2_plain_read(b, 0, 77);
    memcpy(exp, b, sizeof(b));
    assert_int_equal(smb2_rw_req_decode(b, sizeof(b), 8, &d), 0);
    smb2_rw_req_put(b, 8, &d);
    assert_memory_equal(b, exp, sizeof(b));
    smb2_rw_req_put(b, 8, &r);
    th_smb2_read_req(exp, &hr, &set_read);
    assert_memory_equal(b, exp, 112);

    th_smb2_plain_write(b, 0, 1);
    smb2_rw_req_put(b, 9, &r);
    th_smb2_write_req(exp, &hw, &set);
    assert_memory_equal(b, exp, 112);
}

static void read_resp_decodes_and_rejects(void **state)
{
    const struct th_hdr h = { .command = 8 };
    uint8_t b[80];
    struct smb2_read_resp r;

    (void)state;
    th_smb2_read_resp(b, &h, 0x50, 0x01020304, 0x05060708);
    assert_int_equal(smb2_read_resp_decode(b, sizeof(b), &r), 0);
    assert_int_equal(r.data_offset, 0x50);
    assert_int_equal(r.data_length, 0x01020304);
    assert_int_equal(r.data_remaining, 0x05060708);
    assert_int_equal(smb2_read_resp_decode(b, 79, &r), -1);
    th_smb2_error_resp(b, &h);
    assert_int_equal(smb2_read_resp_decode(b, sizeof(b), &r), -1);
}

static void read_resp_build_is_byte_exact(void **state)
{
    const struct th_hdr h = { .command = 8, .status = 0x80000005, .flags = 0x9,
                              .next_command = 0x58, .message_id = 42 };
    const struct th_hdr h_last = { .command = 8, .status = 0x80000005, .flags = 0x9,
                                   .message_id = 42 };
    const struct smb2_read_resp r = { .data_offset = 0x50, .data_length = 0x0A0B0C0D,
                                      .data_remaining = 0x01020304 };
    uint8_t resp[0x58 + 80], out[80], exp[80];

    (void)state;
    memset(resp, 0, sizeof(resp));
    th_smb2_read_resp(resp, &h, 0x60, 9, 9);
    th_smb2_read_resp(exp, &h_last, 0x50, 0x0A0B0C0D, 0x01020304);
    assert_int_equal(smb2_read_resp_build(resp, sizeof(resp), &r, out, sizeof(out)), 80);
    assert_memory_equal(out, exp, sizeof(exp));
    assert_int_equal(smb2_read_resp_build(resp, sizeof(resp), &r, out, 79), -1);
    assert_int_equal(smb2_read_resp_build(resp, 63, &r, out, sizeof(out)), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hdr_decodes_fields),
        cmocka_unit_test(signed_part_of_a_header_gives_its_session),
        cmocka_unit_test(hdr_rejects_short_transform_compressed_smb1_and_bad_size),
        cmocka_unit_test(hdr_checks_next_command),
        cmocka_unit_test(compound_and_interim_predicates),
        cmocka_unit_test(chain_walks_each_command),
        cmocka_unit_test(chain_stops_at_a_command_that_does_not_decode),
        cmocka_unit_test(negotiated_dialect_from_each_answer),
        cmocka_unit_test(negotiated_dialect_ignores_other_messages),
        cmocka_unit_test(rw_req_decodes_read_fields),
        cmocka_unit_test(rw_req_decodes_write_fields),
        cmocka_unit_test(rw_req_rejects_short_wrong_size_and_other_commands),
        cmocka_unit_test(rw_req_put_round_trips_and_touches_only_its_fields),
        cmocka_unit_test(read_resp_decodes_and_rejects),
        cmocka_unit_test(read_resp_build_is_byte_exact),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
