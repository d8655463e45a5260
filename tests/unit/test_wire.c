/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/test_wire.c — the MS-SMBD codec (transport/smbd/smbd_wire.c): exact little-endian
 * bytes for every encoder, round trips, and every decode rejection path (MS-SMBD 2.2). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "smbd_wire.h"

/* Field values whose bytes all differ, so a swapped or misplaced byte shows. */
static const struct smbd_negotiate_req sample_req = {
    .min_version = 0x0102, .max_version = 0x0304, .credits_requested = 0x0506,
    .preferred_send_size = 0x0708090A, .max_receive_size = 0x0B0C0D0E,
    .max_fragmented_size = 0x0F101112,
};
static const uint8_t sample_req_bytes[20] = {
    0x02, 0x01, 0x04, 0x03, 0x00, 0x00, 0x06, 0x05, 0x0A, 0x09, 0x08, 0x07,
    0x0E, 0x0D, 0x0C, 0x0B, 0x12, 0x11, 0x10, 0x0F,
};

static const struct smbd_negotiate_resp sample_resp = {
    .min_version = 0x0102, .max_version = 0x0304, .negotiated_version = 0x0506,
    .credits_requested = 0x0708, .credits_granted = 0x090A, .status = 0x0B0C0D0E,
    .max_read_write_size = 0x0F101112, .preferred_send_size = 0x13141516,
    .max_receive_size = 0x1718191A, .max_fragmented_size = 0x1B1C1D1E,
};
static const uint8_t sample_resp_bytes[32] = {
    0x02, 0x01, 0x04, 0x03, 0x06, 0x05, 0x00, 0x00, 0x08, 0x07, 0x0A, 0x09,
    0x0E, 0x0D, 0x0C, 0x0B, 0x12, 0x11, 0x10, 0x0F, 0x16, 0x15, 0x14, 0x13,
    0x1A, 0x19, 0x18, 0x17, 0x1E, 0x1D, 0x1C, 0x1B,
};

/* A Data Transfer header: CreditsRequested, CreditsGranted, Flags, Reserved,
 * RemainingDataLength, DataOffset, DataLength, then optional padding. */
static void put_data_hdr(uint8_t *b, uint16_t flags, uint32_t remaining, uint32_t offset,
                         uint32_t length)
{
    const uint8_t fixed[8] = { 0x01, 0x02, 0x03, 0x04, (uint8_t)flags, (uint8_t)(flags >> 8),
                               0x00, 0x00 };
    memcpy(b, fixed, 8);
    for (int i = 0; i < 4; i++) {
        b[8 + i] = (uint8_t)(remaining >> (8 * i));
        b[12 + i] = (uint8_t)(offset >> (8 * i));
        b[16 + i] = (uint8_t)(length >> (8 * i));
    }
}

static void expect_data_reject(const uint8_t *b, size_t len, const char *needle)
{
    struct smbd_data_hdr h;
    const char *why = NULL;

    assert_int_equal(smbd_decode_data_hdr(b, len, &h, &why), -EPROTO);
    assert_non_null(why);
    assert_non_null(strstr(why, needle));
}

/* Field-wise comparisons: struct padding bytes are unspecified. */
static void assert_req_equal(const struct smbd_negotiate_req *a, const struct smbd_negotiate_req *b)
{
    assert_int_equal(a->min_version, b->min_version);
    assert_int_equal(a->max_version, b->max_version);
    assert_int_equal(a->credits_requested, b->credits_requested);
    assert_int_equal(a->preferred_send_size, b->preferred_send_size);
    assert_int_equal(a->max_receive_size, b->max_receive_size);
    assert_int_equal(a->max_fragmented_size, b->max_fragmented_size);
}

static void assert_resp_equal(const struct smbd_negotiate_resp *a,
                              const struct smbd_negotiate_resp *b)
{
    assert_int_equal(a->min_version, b->min_version);
    assert_int_equal(a->max_version, b->max_version);
    assert_int_equal(a->negotiated_version, b->negotiated_version);
    assert_int_equal(a->credits_requested, b->credits_requested);
    assert_int_equal(a->credits_granted, b->credits_granted);
    assert_int_equal(a->status, b->status);
    assert_int_equal(a->max_read_write_size, b->max_read_write_size);
    assert_int_equal(a->preferred_send_size, b->preferred_send_size);
    assert_int_equal(a->max_receive_size, b->max_receive_size);
    assert_int_equal(a->max_fragmented_size, b->max_fragmented_size);
}

static void assert_hdr_equal(const struct smbd_data_hdr *a, const struct smbd_data_hdr *b)
{
    assert_int_equal(a->credits_requested, b->credits_requested);
    assert_int_equal(a->credits_granted, b->credits_granted);
    assert_int_equal(a->flags, b->flags);
    assert_int_equal(a->remaining_data_length, b->remaining_data_length);
    assert_int_equal(a->data_offset, b->data_offset);
    assert_int_equal(a->data_length, b->data_length);
}

/* --- Negotiate Request (2.2.1) --- */

static void negotiate_req_encodes_little_endian_bytes(void **state)
{
    uint8_t out[24];
    (void)state;
    memset(out, 0xAA, sizeof(out));
    assert_int_equal(smbd_encode_negotiate_req(&sample_req, out, sizeof(out)), 20);
    assert_memory_equal(out, sample_req_bytes, 20);
    assert_int_equal(out[20], 0xAA); /* nothing written past the message */
}

static void negotiate_req_encode_rejects_short_buffer(void **state)
{
    uint8_t out[19];
    (void)state;
    assert_int_equal(smbd_encode_negotiate_req(&sample_req, out, sizeof(out)), -1);
}

static void negotiate_req_decodes_fields(void **state)
{
    struct smbd_negotiate_req m;
    const char *why = NULL;
    (void)state;
    assert_int_equal(smbd_decode_negotiate_req(sample_req_bytes, 20, &m, &why), 0);
    assert_int_equal(m.min_version, 0x0102);
    assert_int_equal(m.max_version, 0x0304);
    assert_int_equal(m.credits_requested, 0x0506);
    assert_int_equal(m.preferred_send_size, 0x0708090A);
    assert_int_equal(m.max_receive_size, 0x0B0C0D0E);
    assert_int_equal(m.max_fragmented_size, 0x0F101112);
}

static void negotiate_req_decode_rejects_19_bytes(void **state)
{
    struct smbd_negotiate_req m;
    const char *why = NULL;
    (void)state;
    assert_int_equal(smbd_decode_negotiate_req(sample_req_bytes, 19, &m, &why), -EPROTO);
    assert_non_null(strstr(why, "3.1.5.6"));
}

static void negotiate_req_decode_ignores_reserved_and_trailing_bytes(void **state)
{
    uint8_t b[28];
    struct smbd_negotiate_req m;
    const char *why = NULL;
    (void)state;
    memset(b, 0xEE, sizeof(b));
    memcpy(b, sample_req_bytes, 20);
    b[4] = 0xFF;
    b[5] = 0xFF;
    assert_int_equal(smbd_decode_negotiate_req(b, sizeof(b), &m, &why), 0);
    assert_int_equal(m.credits_requested, 0x0506);
    assert_int_equal(m.max_fragmented_size, 0x0F101112);
}

/* A bad version range must reach the state machine, which answers STATUS_NOT_SUPPORTED
 * (3.1.5.6) instead of dropping the connection. */
static void negotiate_req_decode_passes_inverted_version_range(void **state)
{
    uint8_t b[20];
    struct smbd_negotiate_req m;
    const char *why = NULL;
    (void)state;
    memcpy(b, sample_req_bytes, 20);
    b[0] = 0x00, b[1] = 0x02; /* MinVersion 0x0200 */
    b[2] = 0x00, b[3] = 0x01; /* MaxVersion 0x0100 */
    assert_int_equal(smbd_decode_negotiate_req(b, 20, &m, &why), 0);
    assert_int_equal(m.min_version, 0x0200);
    assert_int_equal(m.max_version, 0x0100);
}

static void negotiate_req_round_trips(void **state)
{
    struct smbd_negotiate_req in = { 0x0100, 0x0100, 255, 1364, 8192, 1048576 }, out;
    uint8_t b[20];
    const char *why = NULL;
    (void)state;
    assert_int_equal(smbd_encode_negotiate_req(&in, b, sizeof(b)), 20);
    assert_int_equal(smbd_decode_negotiate_req(b, sizeof(b), &out, &why), 0);
    assert_req_equal(&in, &out);
}

/* --- Negotiate Response (2.2.2) --- */

static void negotiate_resp_encodes_little_endian_bytes(void **state)
{
    uint8_t out[40];
    (void)state;
    memset(out, 0xAA, sizeof(out));
    assert_int_equal(smbd_encode_negotiate_resp(&sample_resp, out, sizeof(out)), 32);
    assert_memory_equal(out, sample_resp_bytes, 32);
    assert_int_equal(out[32], 0xAA);
}

static void negotiate_resp_encode_rejects_short_buffer(void **state)
{
    uint8_t out[31];
    (void)state;
    assert_int_equal(smbd_encode_negotiate_resp(&sample_resp, out, sizeof(out)), -1);
}

static void negotiate_resp_decodes_fields(void **state)
{
    struct smbd_negotiate_resp m;
    const char *why = NULL;
    (void)state;
    assert_int_equal(smbd_decode_negotiate_resp(sample_resp_bytes, 32, &m, &why), 0);
    assert_int_equal(m.min_version, 0x0102);
    assert_int_equal(m.max_version, 0x0304);
    assert_int_equal(m.negotiated_version, 0x0506);
    assert_int_equal(m.credits_requested, 0x0708);
    assert_int_equal(m.credits_granted, 0x090A);
    assert_int_equal(m.status, 0x0B0C0D0E);
    assert_int_equal(m.max_read_write_size, 0x0F101112);
    assert_int_equal(m.preferred_send_size, 0x13141516);
    assert_int_equal(m.max_receive_size, 0x1718191A);
    assert_int_equal(m.max_fragmented_size, 0x1B1C1D1E);
}

static void negotiate_resp_decode_rejects_31_bytes(void **state)
{
    struct smbd_negotiate_resp m;
    const char *why = NULL;
    (void)state;
    assert_int_equal(smbd_decode_negotiate_resp(sample_resp_bytes, 31, &m, &why), -EPROTO);
    assert_non_null(strstr(why, "3.1.5.7"));
}

static void negotiate_resp_decode_ignores_reserved(void **state)
{
    uint8_t b[32];
    struct smbd_negotiate_resp m;
    const char *why = NULL;
    (void)state;
    memcpy(b, sample_resp_bytes, 32);
    b[6] = 0xFF;
    b[7] = 0xFF;
    assert_int_equal(smbd_decode_negotiate_resp(b, 32, &m, &why), 0);
    assert_int_equal(m.negotiated_version, 0x0506);
    assert_int_equal(m.credits_requested, 0x0708);
}

static void negotiate_resp_round_trips(void **state)
{
    struct smbd_negotiate_resp in = { 0x0100, 0x0100, 0x0100, 255, 255, SMBD_STATUS_NOT_SUPPORTED,
                                      8388608, 1364, 8192, 8454144 }, out;
    uint8_t b[32];
    const char *why = NULL;
    (void)state;
    assert_int_equal(smbd_encode_negotiate_resp(&in, b, sizeof(b)), 32);
    assert_int_equal(smbd_decode_negotiate_resp(b, sizeof(b), &out, &why), 0);
    assert_resp_equal(&in, &out);
}

/* --- Data Transfer (2.2.3) encode --- */

static void data_hdr_encodes_24_bytes_with_zero_padding(void **state)
{
    struct smbd_data_hdr h = { 0x0102, 0x0304, SMBD_FLAG_RESPONSE_REQUESTED, 0x05060708, 24,
                               0x090A0B0C };
    const uint8_t want[24] = { 0x02, 0x01, 0x04, 0x03, 0x01, 0x00, 0x00, 0x00,
                               0x08, 0x07, 0x06, 0x05, 0x18, 0x00, 0x00, 0x00,
                               0x0C, 0x0B, 0x0A, 0x09, 0x00, 0x00, 0x00, 0x00 };
    uint8_t out[32];
    (void)state;
    memset(out, 0xAA, sizeof(out));
    assert_int_equal(smbd_encode_data_hdr(&h, out, sizeof(out)), 24);
    assert_memory_equal(out, want, 24);
    assert_int_equal(out[24], 0xAA);
}

/* 3.1.5.4: an empty message has no Padding; the encoder stops at 20 bytes. */
static void data_hdr_encodes_empty_message_as_20_bytes(void **state)
{
    struct smbd_data_hdr h = { 10, 1, 0, 0, 0, 0 };
    const uint8_t want[20] = { 0x0A, 0x00, 0x01, 0x00, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                               0, 0, 0, 0 };
    uint8_t out[24];
    (void)state;
    memset(out, 0xAA, sizeof(out));
    assert_int_equal(smbd_encode_data_hdr(&h, out, 20), 20);
    assert_memory_equal(out, want, 20);
    assert_int_equal(out[20], 0xAA);
}

static void data_hdr_encode_rejects_short_buffer(void **state)
{
    struct smbd_data_hdr full = { 1, 0, 0, 0, 24, 1 }, empty = { 1, 0, 0, 0, 0, 0 };
    uint8_t out[24];
    (void)state;
    assert_int_equal(smbd_encode_data_hdr(&full, out, 23), -1);
    assert_int_equal(smbd_encode_data_hdr(&empty, out, 19), -1);
}

static void data_hdr_encode_rejects_payload_without_offset_24(void **state)
{
    struct smbd_data_hdr zero = { 1, 0, 0, 0, 0, 1 }, far = { 1, 0, 0, 0, 32, 1 };
    uint8_t out[64];
    (void)state;
    assert_int_equal(smbd_encode_data_hdr(&zero, out, sizeof(out)), -1);
    assert_int_equal(smbd_encode_data_hdr(&far, out, sizeof(out)), -1);
}

static void data_hdr_encode_rejects_offset_on_empty_message(void **state)
{
    struct smbd_data_hdr h = { 1, 0, 0, 0, 24, 0 };
    uint8_t out[24];
    (void)state;
    assert_int_equal(smbd_encode_data_hdr(&h, out, sizeof(out)), -1);
}

/* --- Data Transfer decode --- */

static void data_hdr_decodes_fields(void **state)
{
    uint8_t b[24 + 5];
    struct smbd_data_hdr h;
    const char *why = NULL;
    (void)state;
    memset(b, 0, sizeof(b));
    put_data_hdr(b, SMBD_FLAG_RESPONSE_REQUESTED, 0x11223344, 24, 5);
    assert_int_equal(smbd_decode_data_hdr(b, sizeof(b), &h, &why), 0);
    assert_int_equal(h.credits_requested, 0x0201);
    assert_int_equal(h.credits_granted, 0x0403);
    assert_int_equal(h.flags, SMBD_FLAG_RESPONSE_REQUESTED);
    assert_int_equal(h.remaining_data_length, 0x11223344);
    assert_int_equal(h.data_offset, 24);
    assert_int_equal(h.data_length, 5);
}

static void data_hdr_decodes_bare_20_byte_empty_message(void **state)
{
    uint8_t b[20];
    struct smbd_data_hdr h;
    const char *why = NULL;
    (void)state;
    put_data_hdr(b, 0, 0, 0, 0);
    assert_int_equal(smbd_decode_data_hdr(b, sizeof(b), &h, &why), 0);
    assert_int_equal(h.data_offset, 0);
    assert_int_equal(h.data_length, 0);
}

static void data_hdr_decode_rejects_19_bytes(void **state)
{
    uint8_t b[20];
    (void)state;
    put_data_hdr(b, 0, 0, 0, 0);
    expect_data_reject(b, 19, "shorter than 20");
}

static void data_hdr_decode_rejects_unknown_flag(void **state)
{
    uint8_t b[20];
    (void)state;
    put_data_hdr(b, 0x0002, 0, 0, 0);
    expect_data_reject(b, sizeof(b), "Flags");
}

static void data_hdr_decode_rejects_high_flag_beside_known_one(void **state)
{
    uint8_t b[20];
    (void)state;
    put_data_hdr(b, 0x8001, 0, 0, 0);
    expect_data_reject(b, sizeof(b), "Flags");
}

static void data_hdr_decode_rejects_unaligned_offset(void **state)
{
    uint8_t b[64];
    (void)state;
    memset(b, 0, sizeof(b));
    put_data_hdr(b, 0, 0, 28, 4);
    expect_data_reject(b, sizeof(b), "aligned");
}

static void data_hdr_decode_rejects_offset_without_payload(void **state)
{
    uint8_t b[24];
    (void)state;
    memset(b, 0, sizeof(b));
    put_data_hdr(b, 0, 0, 24, 0);
    expect_data_reject(b, sizeof(b), "DataOffset != 0");
}

static void data_hdr_decode_rejects_payload_at_offset_zero(void **state)
{
    uint8_t b[24];
    (void)state;
    memset(b, 0, sizeof(b));
    put_data_hdr(b, 0, 0, 0, 4);
    expect_data_reject(b, sizeof(b), "overlaps the header");
}

static void data_hdr_decode_rejects_payload_at_offset_16(void **state)
{
    uint8_t b[24];
    (void)state;
    memset(b, 0, sizeof(b));
    put_data_hdr(b, 0, 0, 16, 4);
    expect_data_reject(b, sizeof(b), "overlaps the header");
}

static void data_hdr_decode_rejects_payload_past_end(void **state)
{
    uint8_t b[24 + 100];
    (void)state;
    memset(b, 0, sizeof(b));
    put_data_hdr(b, 0, 0, 24, 101);
    expect_data_reject(b, sizeof(b), "beyond the message");
}

/* DataOffset + DataLength must not wrap around 32 bits into a small number. */
static void data_hdr_decode_rejects_offset_length_wraparound(void **state)
{
    uint8_t b[64];
    (void)state;
    memset(b, 0, sizeof(b));
    put_data_hdr(b, 0, 0, 0xFFFFFFF8u, 0x10);
    expect_data_reject(b, sizeof(b), "beyond the message");
}

static void data_hdr_decode_accepts_payload_ending_at_message_end(void **state)
{
    uint8_t b[24 + 100];
    struct smbd_data_hdr h;
    const char *why = NULL;
    (void)state;
    memset(b, 0, sizeof(b));
    put_data_hdr(b, 0, 0, 24, 100);
    assert_int_equal(smbd_decode_data_hdr(b, sizeof(b), &h, &why), 0);
    assert_int_equal(h.data_length, 100);
}

/* Any 8-byte-aligned DataOffset past the header is valid (2.2.3 "MAY"). */
static void data_hdr_decode_accepts_larger_aligned_offset(void **state)
{
    uint8_t b[40 + 8];
    struct smbd_data_hdr h;
    const char *why = NULL;
    (void)state;
    memset(b, 0, sizeof(b));
    put_data_hdr(b, 0, 0, 40, 8);
    assert_int_equal(smbd_decode_data_hdr(b, sizeof(b), &h, &why), 0);
    assert_int_equal(h.data_offset, 40);
}

static void data_hdr_decode_ignores_reserved_and_padding(void **state)
{
    uint8_t b[24 + 4];
    struct smbd_data_hdr h;
    const char *why = NULL;
    (void)state;
    memset(b, 0, sizeof(b));
    put_data_hdr(b, 0, 0, 24, 4);
    b[6] = 0xFF, b[7] = 0xFF;                       /* Reserved */
    memset(b + 20, 0xFF, 4);                        /* Padding */
    assert_int_equal(smbd_decode_data_hdr(b, sizeof(b), &h, &why), 0);
    assert_int_equal(h.flags, 0);
    assert_int_equal(h.data_length, 4);
}

/* CreditsRequested >= 1 and the MaxFragmentSize bound need Connection state: they are
 * the state machine's checks (3.1.5.8), so the codec passes such values through. */
static void data_hdr_decode_leaves_credit_and_size_rules_to_state_machine(void **state)
{
    uint8_t b[20];
    struct smbd_data_hdr h;
    const char *why = NULL;
    (void)state;
    put_data_hdr(b, 0, 0xFFFFFFFFu, 0, 0);
    b[0] = 0, b[1] = 0;                              /* CreditsRequested 0 */
    assert_int_equal(smbd_decode_data_hdr(b, sizeof(b), &h, &why), 0);
    assert_int_equal(h.credits_requested, 0);
    assert_int_equal(h.remaining_data_length, 0xFFFFFFFFu);
}

static void data_hdr_round_trips(void **state)
{
    struct smbd_data_hdr in = { 255, 17, SMBD_FLAG_RESPONSE_REQUESTED, 123456, 24, 1340 }, out;
    uint8_t b[24 + 1340];
    const char *why = NULL;
    (void)state;
    memset(b, 0x5A, sizeof(b));
    assert_int_equal(smbd_encode_data_hdr(&in, b, sizeof(b)), 24);
    assert_int_equal(smbd_decode_data_hdr(b, sizeof(b), &out, &why), 0);
    assert_hdr_equal(&in, &out);
}

/* --- Buffer Descriptor V1 (2.2.3.1) --- */

static void buffer_desc_encodes_little_endian_bytes(void **state)
{
    const uint8_t want[16] = { 0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01,
                               0x0C, 0x0B, 0x0A, 0x09, 0x10, 0x0F, 0x0E, 0x0D };
    uint8_t out[16];
    (void)state;
    assert_int_equal(smbd_encode_buffer_desc(0x0102030405060708ull, 0x090A0B0C, 0x0D0E0F10,
                                             out, sizeof(out)), 16);
    assert_memory_equal(out, want, 16);
}

static void buffer_desc_encode_rejects_short_buffer(void **state)
{
    uint8_t out[15];
    (void)state;
    assert_int_equal(smbd_encode_buffer_desc(1, 2, 3, out, sizeof(out)), -1);
}

static void buffer_desc_decode_rejects_15_bytes(void **state)
{
    uint8_t b[16] = { 0 };
    uint64_t off;
    uint32_t tok, len;
    (void)state;
    assert_int_equal(smbd_decode_buffer_desc(b, 15, &off, &tok, &len), -EPROTO);
}

static void buffer_desc_round_trips_full_64_bit_offset(void **state)
{
    uint8_t b[16];
    uint64_t off;
    uint32_t tok, len;
    (void)state;
    assert_int_equal(smbd_encode_buffer_desc(0xFEDCBA9876543210ull, 0xDEADBEEF, 0x80000001,
                                             b, sizeof(b)), 16);
    assert_int_equal(smbd_decode_buffer_desc(b, sizeof(b), &off, &tok, &len), 0);
    assert_true(off == 0xFEDCBA9876543210ull);
    assert_int_equal(tok, 0xDEADBEEF);
    assert_int_equal(len, 0x80000001);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(negotiate_req_encodes_little_endian_bytes),
        cmocka_unit_test(negotiate_req_encode_rejects_short_buffer),
        cmocka_unit_test(negotiate_req_decodes_fields),
        cmocka_unit_test(negotiate_req_decode_rejects_19_bytes),
        cmocka_unit_test(negotiate_req_decode_ignores_reserved_and_trailing_bytes),
        cmocka_unit_test(negotiate_req_decode_passes_inverted_version_range),
        cmocka_unit_test(negotiate_req_round_trips),
        cmocka_unit_test(negotiate_resp_encodes_little_endian_bytes),
        cmocka_unit_test(negotiate_resp_encode_rejects_short_buffer),
        cmocka_unit_test(negotiate_resp_decodes_fields),
        cmocka_unit_test(negotiate_resp_decode_rejects_31_bytes),
        cmocka_unit_test(negotiate_resp_decode_ignores_reserved),
        cmocka_unit_test(negotiate_resp_round_trips),
        cmocka_unit_test(data_hdr_encodes_24_bytes_with_zero_padding),
        cmocka_unit_test(data_hdr_encodes_empty_message_as_20_bytes),
        cmocka_unit_test(data_hdr_encode_rejects_short_buffer),
        cmocka_unit_test(data_hdr_encode_rejects_payload_without_offset_24),
        cmocka_unit_test(data_hdr_encode_rejects_offset_on_empty_message),
        cmocka_unit_test(data_hdr_decodes_fields),
        cmocka_unit_test(data_hdr_decodes_bare_20_byte_empty_message),
        cmocka_unit_test(data_hdr_decode_rejects_19_bytes),
        cmocka_unit_test(data_hdr_decode_rejects_unknown_flag),
        cmocka_unit_test(data_hdr_decode_rejects_high_flag_beside_known_one),
        cmocka_unit_test(data_hdr_decode_rejects_unaligned_offset),
        cmocka_unit_test(data_hdr_decode_rejects_offset_without_payload),
        cmocka_unit_test(data_hdr_decode_rejects_payload_at_offset_zero),
        cmocka_unit_test(data_hdr_decode_rejects_payload_at_offset_16),
        cmocka_unit_test(data_hdr_decode_rejects_payload_past_end),
        cmocka_unit_test(data_hdr_decode_rejects_offset_length_wraparound),
        cmocka_unit_test(data_hdr_decode_accepts_payload_ending_at_message_end),
        cmocka_unit_test(data_hdr_decode_accepts_larger_aligned_offset),
        cmocka_unit_test(data_hdr_decode_ignores_reserved_and_padding),
        cmocka_unit_test(data_hdr_decode_leaves_credit_and_size_rules_to_state_machine),
        cmocka_unit_test(data_hdr_round_trips),
        cmocka_unit_test(buffer_desc_encodes_little_endian_bytes),
        cmocka_unit_test(buffer_desc_encode_rejects_short_buffer),
        cmocka_unit_test(buffer_desc_decode_rejects_15_bytes),
        cmocka_unit_test(buffer_desc_round_trips_full_64_bit_offset),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
