/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/test_conf_smb2_wire.c — the conformance client's SMB2 requests and response
 * decoders (conformance/cf_smb2_wire.c): request fields at their MS-SMB2 2.2 offsets
 * (NEGOTIATE with the 3.1.1 preauth context, WRITE/READ with Buffer Descriptor V1 lists
 * read back through the channel's own decoder), and every decoder refusing a response
 * cut short, a wrong StructureSize, or a buffer pointing outside the message. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "cf_smb2_wire.h"
#include "chan_desc.h"
#include "sd_bytes.h"

static const struct cf_smb2_req_hdr hdr = { .command = SMB2_READ, .credit_charge = 3,
                                            .credit_request = 512, .message_id = 77,
                                            .session_id = 0x1122334455667788ull, .tree_id = 9 };
static const uint8_t fid[16] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };

static void negotiate_311_has_preauth_context(void **state)
{
    const uint16_t d[] = { 0x0300, 0x0302, 0x0311 };
    struct cf_smb2_req_hdr h = hdr;
    uint8_t out[300];
    int n;

    (void)state;
    h.command = SMB2_NEGOTIATE;
    n = cf_smb2_negotiate_req(&h, d, 3, fid, out, sizeof(out));
    assert_int_equal(n, 112 + 8 + 38);
    assert_int_equal(sd_le16(out + 64), 36);
    assert_int_equal(sd_le16(out + 66), 3);
    assert_int_equal(sd_le32(out + 72), 0x0c);  /* Capabilities: LARGE_MTU, MULTI_CHANNEL */
    assert_int_equal(sd_le16(out + 100), 0x0300);
    assert_int_equal(sd_le16(out + 104), 0x0311);
    assert_int_equal(sd_le32(out + 92), 112);    /* NegotiateContextOffset, 8-aligned */
    assert_int_equal(sd_le16(out + 96), 1);      /* NegotiateContextCount */
    assert_int_equal(sd_le16(out + 112), 1);     /* PREAUTH_INTEGRITY_CAPABILITIES */
    assert_int_equal(sd_le16(out + 114), 38);
    assert_int_equal(sd_le16(out + 124), 1);     /* SHA-512 */
    assert_int_equal(cf_smb2_negotiate_req(&h, d, 2, fid, out, sizeof(out)), 104);
    assert_int_equal(cf_smb2_negotiate_req(&h, d, 3, fid, out, 150), -1);
    assert_int_equal(cf_smb2_negotiate_req(&h, d, 0, fid, out, sizeof(out)), -1);
}

static void rw_requests_carry_descriptors(void **state)
{
    struct smbd_buffer_desc d[2] = { { 0x1000, 0x501, 100 }, { 0x2000, 0x502, 28 } }, e;
    struct cf_smb2_req_hdr h = hdr;
    struct smb2_rw_req r;
    struct smb2_hdr sh;
    uint8_t out[400];
    int n;

    (void)state;
    n = cf_smb2_read_req(&h, fid, 4096, 128, SMB2_CHANNEL_RDMA_V1_INVALIDATE, d, 2, out,
                         sizeof(out));
    assert_int_equal(n, 112 + 32);
    assert_int_equal(smb2_hdr_decode(out, (size_t)n, &sh), 0);
    assert_true(sh.message_id == 77);
    assert_int_equal(smb2_rw_req_decode(out, (size_t)n, SMB2_READ, &r), 0);
    assert_int_equal(r.length, 128);
    assert_int_equal(r.channel, SMB2_CHANNEL_RDMA_V1_INVALIDATE);
    assert_int_equal(r.info_offset, 112);
    assert_int_equal(r.info_length, 32);
    assert_true(sd_le64(out + 72) == 4096);
    assert_memory_equal(out + 80, fid, 16);
    chan_desc_get(out + 112, 1, &e);
    assert_true(e.offset == 0x2000 && e.token == 0x502 && e.length == 28);
    /* inline READ: the Buffer's one byte */
    assert_int_equal(cf_smb2_read_req(&h, fid, 0, 10, 0, d, 2, out, sizeof(out)), 113);

    h.command = SMB2_WRITE;
    n = cf_smb2_write_req(&h, fid, 0, NULL, 128, SMB2_CHANNEL_RDMA_V1, d, 2, out, sizeof(out));
    assert_int_equal(smb2_rw_req_decode(out, (size_t)n, SMB2_WRITE, &r), 0);
    assert_int_equal(r.length, 0);        /* MS-SMB2 2.2.21: no inline data ... */
    assert_int_equal(r.data_offset, 0);
    assert_int_equal(r.remaining, 128);   /* ... RemainingBytes the channel's */
    assert_int_equal(r.info_length, 32);
    n = cf_smb2_write_req(&h, fid, 0, (const uint8_t *)"abc", 3, 0, NULL, 0, out, sizeof(out));
    assert_int_equal(n, 115);
    assert_int_equal(smb2_rw_req_decode(out, (size_t)n, SMB2_WRITE, &r), 0);
    assert_int_equal(r.data_offset, 112);
    assert_int_equal(r.length, 3);
    assert_int_equal(cf_smb2_write_req(&h, fid, 0, NULL, 128, 1, d, 2, out, 143), -1);
}

/* A response header (SERVER_TO_REDIR) with body StructureSize size; len bytes total. */
static void resp(uint8_t *b, size_t len, uint16_t command, uint16_t size)
{
    struct cf_smb2_req_hdr h = hdr;

    memset(b, 0, len);
    h.command = command;
    cf_smb2_put_hdr(b, &h);
    sd_put_le32(b + 16, SMB2_FLAGS_SERVER_TO_REDIR);
    sd_put_le16(b + 64, size);
}

static void decoders_reject_short_and_wrong_size(void **state)
{
    uint8_t b[256], f[16];
    struct cf_smb2_negotiate_resp nr;
    struct cf_smb2_resp r;
    struct smb2_read_resp rr;
    const uint8_t *p;
    size_t pl;
    uint16_t flags;
    uint32_t count;

    (void)state;
    resp(b, sizeof(b), SMB2_NEGOTIATE, 65);
    sd_put_le16(b + 68, 0x0302);
    assert_int_equal(cf_smb2_resp_decode(b, 128, &r), 0);
    assert_int_equal(cf_smb2_negotiate_resp_decode(b, 128, &nr), 0);
    assert_int_equal(nr.dialect, 0x0302);
    for (size_t len = 0; len < 128; len++)
        assert_int_equal(cf_smb2_negotiate_resp_decode(b, len, &nr), -1);
    sd_put_le32(b + 16, 0);
    assert_int_equal(cf_smb2_resp_decode(b, 128, &r), -1); /* a request */

    resp(b, sizeof(b), CF_SMB2_CREATE, 89);
    assert_int_equal(cf_smb2_create_resp_decode(b, 152, f), 0);
    assert_int_equal(cf_smb2_create_resp_decode(b, 151, f), -1);
    sd_put_le16(b + 64, 88);
    assert_int_equal(cf_smb2_create_resp_decode(b, 152, f), -1);

    resp(b, sizeof(b), SMB2_WRITE, 17);
    assert_int_equal(cf_smb2_write_resp_decode(b, 80, &count), 0);
    assert_int_equal(cf_smb2_write_resp_decode(b, 79, &count), -1);
    sd_put_le16(b + 64, 9);
    assert_int_equal(cf_smb2_write_resp_decode(b, 80, &count), -1);

    resp(b, sizeof(b), CF_SMB2_SESSION_SETUP, 9);
    sd_put_le16(b + 68, 72);
    sd_put_le16(b + 70, 20);
    assert_int_equal(cf_smb2_session_setup_resp_decode(b, 92, &flags, &p, &pl), 0);
    assert_ptr_equal(p, b + 72);
    assert_int_equal(cf_smb2_session_setup_resp_decode(b, 91, &flags, &p, &pl), -1);
    sd_put_le16(b + 68, 40);               /* the blob inside the header */
    assert_int_equal(cf_smb2_session_setup_resp_decode(b, 92, &flags, &p, &pl), -1);
    sd_put_le16(b + 68, 0xFFFF);
    assert_int_equal(cf_smb2_session_setup_resp_decode(b, 92, &flags, &p, &pl), -1);

    resp(b, sizeof(b), SMB2_READ, 17);
    b[66] = 80;
    sd_put_le32(b + 68, 10);
    assert_int_equal(cf_smb2_read_resp_data(b, 90, &rr, &p), 0);
    assert_ptr_equal(p, b + 80);
    assert_int_equal(cf_smb2_read_resp_data(b, 89, &rr, &p), -1);
    b[66] = 8;                             /* data inside the header */
    assert_int_equal(cf_smb2_read_resp_data(b, 90, &rr, &p), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(negotiate_311_has_preauth_context),
        cmocka_unit_test(rw_requests_carry_descriptors),
        cmocka_unit_test(decoders_reject_short_and_wrong_size),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
