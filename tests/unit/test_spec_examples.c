/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/test_spec_examples.c — MS-SMBD section 4 (Protocol Examples) byte for byte:
 * the messages through the codec (transport/smbd/smbd_wire.c), and the 64 KiB fragment
 * sequence of 4.3 as the engine (transport/smbd/smbd_conn*.c) actually sends it. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "smbd_wire.h"
#include "th_conn.h"

/* MS-SMBD 4.2/4.4/4.5: CreditsRequested 10, CreditsGranted 1, unfragmented, 500 bytes. */
static const uint8_t data_500_hdr[24] = {
    0x0A, 0x00, 0x01, 0x00,  0x00, 0x00, 0x00, 0x00,  /* credits 10/1, Flags, Reserved */
    0x00, 0x00, 0x00, 0x00,                            /* RemainingDataLength 0 */
    0x18, 0x00, 0x00, 0x00,                            /* DataOffset 24 */
    0xF4, 0x01, 0x00, 0x00,                            /* DataLength 500 */
    0x00, 0x00, 0x00, 0x00,                            /* Padding */
};

/* Builds a Data Transfer message: header from the codec, then the payload. */
static size_t build_data(uint8_t *out, size_t out_len, uint16_t cr, uint16_t cg,
                         uint32_t remaining, const uint8_t *payload, uint32_t len)
{
    struct smbd_data_hdr h = { cr, cg, 0, remaining, len ? SMBD_DATA_OFFSET : 0, len };
    int n = smbd_encode_data_hdr(&h, out, out_len);
    assert_true(n > 0);
    assert_true((size_t)n + len <= out_len);
    memcpy(out + n, payload, len);
    return (size_t)n + len;
}

/* Decodes a Data Transfer message and returns its payload. */
static const uint8_t *payload_of(const uint8_t *msg, size_t len, struct smbd_data_hdr *h)
{
    const char *why = NULL;
    assert_int_equal(smbd_decode_data_hdr(msg, len, h, &why), 0);
    return msg + h->data_offset;
}

/* 4.1 step 1: 1.0 only, 10 credits, 1 KiB send and receive, 128 KiB reassembly. */
static void ex_4_1_negotiate_request_bytes(void **state)
{
    const struct smbd_negotiate_req req = { SMBD_VERSION_1_0, SMBD_VERSION_1_0, 10,
                                            0x400, 0x400, 0x20000 };
    const uint8_t want[20] = {
        0x00, 0x01, 0x00, 0x01,  0x00, 0x00, 0x0A, 0x00,
        0x00, 0x04, 0x00, 0x00,  0x00, 0x04, 0x00, 0x00,  0x00, 0x00, 0x02, 0x00,
    };
    uint8_t out[20];
    struct smbd_negotiate_req back;
    const char *why = NULL;
    (void)state;
    assert_int_equal(smbd_encode_negotiate_req(&req, out, sizeof(out)), 20);
    assert_memory_equal(out, want, 20);
    assert_int_equal(smbd_decode_negotiate_req(want, 20, &back, &why), 0);
    assert_int_equal(back.credits_requested, 10);
    assert_int_equal(back.max_fragmented_size, 128 * 1024);
}

/* 4.1 step 2: version 1.0, 10 credits granted and requested, 1 MiB RDMA size. */
static void ex_4_1_negotiate_response_bytes(void **state)
{
    const struct smbd_negotiate_resp resp = {
        SMBD_VERSION_1_0, SMBD_VERSION_1_0, SMBD_VERSION_1_0, 10, 10, SMBD_STATUS_SUCCESS,
        0x100000, 0x400, 0x400, 0x20000 };
    const uint8_t want[32] = {
        0x00, 0x01, 0x00, 0x01,  0x00, 0x01, 0x00, 0x00,  0x0A, 0x00, 0x0A, 0x00,
        0x00, 0x00, 0x00, 0x00,  0x00, 0x00, 0x10, 0x00,  0x00, 0x04, 0x00, 0x00,
        0x00, 0x04, 0x00, 0x00,  0x00, 0x00, 0x02, 0x00,
    };
    uint8_t out[32];
    struct smbd_negotiate_resp back;
    const char *why = NULL;
    (void)state;
    assert_int_equal(smbd_encode_negotiate_resp(&resp, out, sizeof(out)), 32);
    assert_memory_equal(out, want, 32);
    assert_int_equal(smbd_decode_negotiate_resp(want, 32, &back, &why), 0);
    assert_int_equal(back.negotiated_version, 0x0100);
    assert_int_equal(back.credits_granted, 10);
    assert_int_equal(back.max_read_write_size, 1024 * 1024);
}

/* 4.1 step 3: the first Data Transfer grants 10 and requests 10 credits and carries the
 * upper layer's first message (here a 0x0B4-byte stand-in; the spec leaves it "xxx"). */
static void ex_4_1_first_data_transfer_bytes(void **state)
{
    uint8_t payload[0xB4], out[24 + sizeof(payload)];
    const uint8_t want_hdr[24] = {
        0x0A, 0x00, 0x0A, 0x00,  0x00, 0x00, 0x00, 0x00,  0x00, 0x00, 0x00, 0x00,
        0x18, 0x00, 0x00, 0x00,  0xB4, 0x00, 0x00, 0x00,  0x00, 0x00, 0x00, 0x00,
    };
    struct smbd_data_hdr h;
    (void)state;
    for (size_t i = 0; i < sizeof(payload); i++)
        payload[i] = (uint8_t)(0xFE - i);
    assert_int_equal(build_data(out, sizeof(out), 10, 10, 0, payload, sizeof(payload)),
                     sizeof(out));
    assert_memory_equal(out, want_hdr, 24);
    assert_memory_equal(payload_of(out, sizeof(out), &h), payload, sizeof(payload));
    assert_int_equal(h.credits_granted, 10);
}

/* 4.2: 500 bytes in one unfragmented Data Transfer, 524 bytes on the wire. */
static void ex_4_2_transmit_500_bytes(void **state)
{
    uint8_t payload[500], out[600];
    struct smbd_data_hdr h;
    (void)state;
    for (size_t i = 0; i < sizeof(payload); i++)
        payload[i] = (uint8_t)(i * 7);
    assert_int_equal(build_data(out, sizeof(out), 10, 1, 0, payload, 500), 524);
    assert_memory_equal(out, data_500_hdr, 24);
    assert_memory_equal(payload_of(out, 524, &h), payload, 500);
    assert_int_equal(h.remaining_data_length, 0);
}

/* 4.3: 64 KiB over a peer MaxReceiveSize of 1 KiB. Each fragment carries at most
 * 1024 - 24 = 1000 bytes (3.1.5.4), so the sequence is 65 fragments of 1000 bytes with
 * RemainingDataLength 64536 ("63 KiB remaining"), 63536 ("62 KiB"), ..., 536, and a
 * final 536-byte fragment (0x218) with RemainingDataLength 0: 66 messages. (The
 * spec's narrative says the sequence needs 65 credits; its own numbers give 66.) */
#define EX43_TOTAL  65536u
#define EX43_MAX    1024u
#define EX43_CHUNK  (EX43_MAX - SMBD_DATA_OFFSET)

static void ex_4_3_first_fragment_bytes(void **state)
{
    uint8_t payload[EX43_CHUNK], out[EX43_MAX];
    const uint8_t want_hdr[24] = {
        0x0A, 0x00, 0x01, 0x00,  0x00, 0x00, 0x00, 0x00,
        0x18, 0xFC, 0x00, 0x00,                            /* 64536 remaining */
        0x18, 0x00, 0x00, 0x00,  0xE8, 0x03, 0x00, 0x00,   /* offset 24, length 1000 */
        0x00, 0x00, 0x00, 0x00,
    };
    (void)state;
    memset(payload, 0x5C, sizeof(payload));
    assert_int_equal(build_data(out, sizeof(out), 10, 1, EX43_TOTAL - EX43_CHUNK, payload,
                                EX43_CHUNK), EX43_MAX);
    assert_memory_equal(out, want_hdr, 24);
}

static void ex_4_3_last_fragment_is_536_bytes_with_nothing_remaining(void **state)
{
    uint8_t payload[536], out[EX43_MAX];
    const uint8_t want_hdr[24] = {
        0x0A, 0x00, 0x01, 0x00,  0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00,                            /* final fragment */
        0x18, 0x00, 0x00, 0x00,  0x18, 0x02, 0x00, 0x00,   /* offset 24, length 536 */
        0x00, 0x00, 0x00, 0x00,
    };
    (void)state;
    memset(payload, 0x5D, sizeof(payload));
    assert_int_equal(build_data(out, sizeof(out), 10, 1, 0, payload, 536), 560);
    assert_memory_equal(out, want_hdr, 24);
}

/* The whole sequence: each fragment fits in 1 KiB, RemainingDataLength counts down by
 * the bytes sent, and the payloads concatenate to the original 64 KiB. */
static void ex_4_3_fragment_sequence_reassembles_64_kib(void **state)
{
    static uint8_t message[EX43_TOTAL], rebuilt[EX43_TOTAL];
    uint8_t frag[EX43_MAX];
    uint32_t sent = 0, got = 0, count = 0;
    struct smbd_data_hdr h;
    (void)state;
    for (size_t i = 0; i < EX43_TOTAL; i++)
        message[i] = (uint8_t)(i ^ (i >> 8));
    while (sent < EX43_TOTAL) {
        uint32_t len = EX43_TOTAL - sent < EX43_CHUNK ? EX43_TOTAL - sent : EX43_CHUNK;
        uint32_t remaining = EX43_TOTAL - sent - len;
        size_t n = build_data(frag, sizeof(frag), 10, 1, remaining, message + sent, len);
        const uint8_t *p;

        assert_true(n <= EX43_MAX);
        p = payload_of(frag, n, &h);
        assert_int_equal(h.remaining_data_length, remaining);
        if (count == 0)
            assert_int_equal(h.data_length + h.remaining_data_length, EX43_TOTAL);
        memcpy(rebuilt + got, p, h.data_length);
        got += h.data_length;
        sent += len;
        count++;
    }
    assert_int_equal(count, 66);
    assert_int_equal(h.data_length, 536);
    assert_int_equal(h.remaining_data_length, 0);
    assert_memory_equal(rebuilt, message, EX43_TOTAL);
}

/* 4.3 through the engine: an initiator whose peer negotiated MaxReceiveSize 1 KiB and
 * 10 credits sends one 64 KiB message; the peer grants credits as they run out. The
 * Data Transfers carrying data must be exactly the sequence above. */
static void ex_4_3_engine_sends_the_fragment_sequence(void **state)
{
    static uint8_t message[EX43_TOTAL], rebuilt[EX43_TOTAL];
    struct iovec iov = { message, EX43_TOTAL };
    struct smbd_config cfg;
    struct th_end e;
    uint8_t in[64];
    uint32_t frags = 0, got = 0;
    (void)state;

    for (size_t i = 0; i < EX43_TOTAL; i++)
        message[i] = (uint8_t)(i * 13 + (i >> 9));
    smbd_config_default(&cfg, SMBD_ROLE_ACTIVE);
    cfg.send_credit_target = 10;
    th_end_init(&e, SMBD_ROLE_ACTIVE, &cfg, fake_qp_new(43));
    assert_int_equal(smbd_conn_start(e.conn, 0), 0);
    th_poll(&e, 0, 1000);
    /* 4.1 step 2: the peer's response (PreferredSendSize must not exceed our 8192). */
    assert_int_equal(fake_inject(e.qp, in, th_negotiate_resp(in, SMBD_VERSION_1_0, 10, 10, 0,
                                                             0x100000, 0x400, 0x400, 0x20000),
                                 0), 0);
    th_poll(&e, 0, 1000);
    assert_true(smbd_conn_is_established(e.conn));
    fake_sent_clear(e.qp);

    assert_int_equal(smbd_conn_send(e.conn, &iov, 1, 0), 0);
    for (int round = 0; round < 200 && got < EX43_TOTAL; round++) {
        th_poll(&e, 0, 1000);
        for (size_t i = 0; i < fake_sent_count(e.qp); i++) {
            const struct fake_sent *m = fake_sent_get(e.qp, i);
            struct smbd_data_hdr h;
            const uint8_t *p = payload_of(m->data, m->len, &h);

            assert_true(m->len <= EX43_MAX);
            assert_int_equal(h.credits_requested, 10);
            if (h.data_length == 0)
                continue; /* a credit-only message */
            frags++;
            assert_int_equal(h.data_offset, 24);
            assert_int_equal(h.data_length, frags < 66 ? 1000 : 536);
            assert_int_equal(h.remaining_data_length, EX43_TOTAL - got - h.data_length);
            memcpy(rebuilt + got, p, h.data_length);
            got += h.data_length;
        }
        fake_sent_clear(e.qp);
        /* The peer returns credits: an empty Data Transfer granting 10. */
        if (got < EX43_TOTAL)
            assert_int_equal(fake_inject(e.qp, in, th_data_msg(in, 10, 10, 0, 0, 0, 0, NULL, 0),
                                         0), 0);
    }
    assert_int_equal(frags, 66);
    assert_int_equal(got, EX43_TOTAL);
    assert_memory_equal(rebuilt, message, EX43_TOTAL);
    assert_int_equal(e.terminated_calls, 0);
    th_end_free(&e);
}

/* The descriptor (offset, token, length) encodes to want, travels at offset 112 of a
 * 500-byte upper-layer Write sent as in 4.2, and is read back from the payload. */
static void check_descriptor_example(uint64_t offset, uint32_t token, uint32_t length,
                                     const uint8_t want[16])
{
    uint8_t upper[500] = { 0 }, out[524];
    struct smbd_data_hdr h;
    uint64_t off;
    uint32_t tok, len;

    assert_int_equal(smbd_encode_buffer_desc(offset, token, length, upper + 112, 16), 16);
    assert_memory_equal(upper + 112, want, 16);
    assert_int_equal(build_data(out, sizeof(out), 10, 1, 0, upper, 500), 524);
    assert_memory_equal(out, data_500_hdr, 24);
    assert_int_equal(smbd_decode_buffer_desc(payload_of(out, 524, &h) + 112, 16, &off, &tok,
                                             &len), 0);
    assert_true(off == offset);
    assert_int_equal(tok, token);
    assert_int_equal(len, length);
}

/* 4.4: the 1 MiB source buffer's descriptor, embedded in a 500-byte upper-layer Write
 * sent as in 4.2, is read back from the received payload. The offset at which the
 * upper layer embeds it (112, an SMB2 WRITE's channel info) is this test's choice. */
static void ex_4_4_write_descriptor_bytes_and_transport(void **state)
{
    const uint8_t want[16] = {
        0x12, 0xE0, 0xCD, 0xAB, 0x00, 0x00, 0x00, 0x00,   /* Offset 0x00000000ABCDE012 */
        0x56, 0xBC, 0x00, 0x1A,                           /* Token 0x1A00BC56 */
        0x00, 0x00, 0x10, 0x00,                           /* Length 1 MiB */
    };
    (void)state;
    check_descriptor_example(0xABCDE012u, 0x1A00BC56u, 0x100000u, want);
}

/* 4.5: the 1 MiB sink buffer's descriptor. The spec prints the Offset with 15 hex
 * digits, 0x00000000DCBA024, i.e. the value 0x0DCBA024. */
static void ex_4_5_read_descriptor_bytes_and_transport(void **state)
{
    const uint8_t want[16] = {
        0x24, 0xA0, 0xCB, 0x0D, 0x00, 0x00, 0x00, 0x00,   /* Offset 0x0DCBA024 */
        0x57, 0xBC, 0x00, 0x1A,                           /* Token 0x1A00BC57 */
        0x00, 0x00, 0x10, 0x00,                           /* Length 1 MiB */
    };
    (void)state;
    check_descriptor_example(0x0DCBA024u, 0x1A00BC57u, 0x100000u, want);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ex_4_1_negotiate_request_bytes),
        cmocka_unit_test(ex_4_1_negotiate_response_bytes),
        cmocka_unit_test(ex_4_1_first_data_transfer_bytes),
        cmocka_unit_test(ex_4_2_transmit_500_bytes),
        cmocka_unit_test(ex_4_3_first_fragment_bytes),
        cmocka_unit_test(ex_4_3_last_fragment_is_536_bytes_with_nothing_remaining),
        cmocka_unit_test(ex_4_3_fragment_sequence_reassembles_64_kib),
        cmocka_unit_test(ex_4_3_engine_sends_the_fragment_sequence),
        cmocka_unit_test(ex_4_4_write_descriptor_bytes_and_transport),
        cmocka_unit_test(ex_4_5_read_descriptor_bytes_and_transport),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
