/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/test_soft_mpa.c — MPA request/reply/reject frames and IRD/ORD
 * negotiation of the soft-iWARP provider (RFC 5044 7.1, RFC 6581, MS-SMBD 6), on
 * byte buffers. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "soft/soft_mpa.h"

#include <errno.h>
#include <string.h>

static uint8_t req[SD_SOFT_MPA_FRAME_MAX], rep[SD_SOFT_MPA_FRAME_MAX];

static size_t frame(uint8_t *out, const char *key, uint8_t flags, uint8_t rev,
                    const void *pd, uint16_t pd_len)
{
    memcpy(out, key, MPA_KEY_LEN);
    out[16] = flags;
    out[17] = rev;
    sd_iw_put16(out + 18, pd_len);
    memcpy(out + MPA_RR_HDR_LEN, pd, pd_len);
    return MPA_RR_HDR_LEN + pd_len;
}

static void test_request_layout(void **state)
{
    (void)state;
    struct sd_cm_params p = {.ird = 16, .ord = 8, .smbd_ird_ord_header = 1,
                             .private_data = "pd", .private_data_len = 2};
    int n = sd_soft_mpa_build_request(&p, 0, req, sizeof(req));
    assert_int_equal(n, 20 + 4 + 8 + 2);
    assert_memory_equal(req, "MPA ID Req Frame", 16);
    assert_int_equal(req[16], MPA_FLAG_ENHANCED);           /* no markers, no CRC */
    assert_int_equal(req[17], MPA_REVISION_2);
    assert_int_equal(sd_iw_get16(req + 18), 14);
    assert_int_equal(sd_iw_get16(req + 20), 16);            /* RFC 6581 IRD, no P2P */
    assert_int_equal(sd_iw_get16(req + 22), 8);             /* ORD, no RTR bits */
    static const uint8_t hdr[8] = {0, 0, 0, 16, 0, 0, 0, 8}; /* MS-SMBD 6.1, big-endian */
    assert_memory_equal(req + 24, hdr, 8);
    assert_memory_equal(req + 32, "pd", 2);
    assert_int_equal(sd_soft_mpa_build_request(&p, 1, req, sizeof(req)), n);
    assert_int_equal(req[16], MPA_FLAG_ENHANCED | MPA_FLAG_CRC);
    p.smbd_ird_ord_header = 0;
    assert_int_equal(sd_soft_mpa_build_request(&p, 0, req, sizeof(req)), 20 + 4 + 2);
    p.private_data_len = SD_MAX_PRIVATE_DATA + 1;
    assert_int_equal(sd_soft_mpa_build_request(&p, 0, req, sizeof(req)), -EINVAL);
}

static void test_respond_and_check_round_trip(void **state)
{
    (void)state;
    struct sd_cm_params a = {.ird = 16, .ord = 8, .smbd_ird_ord_header = 1,
                             .private_data = "hello", .private_data_len = 5};
    struct sd_cm_params b = {.ird = 4, .ord = 2, .smbd_ird_ord_header = 1,
                             .private_data = "world!", .private_data_len = 6};
    int n = sd_soft_mpa_build_request(&a, 0, req, sizeof(req));
    size_t rn;
    struct sd_soft_mpa_result rb, ra;
    assert_int_equal(sd_soft_mpa_respond(req, (size_t)n, &b, 0, rep, &rn, &rb), 0);
    assert_int_equal(rb.crc, 0);
    assert_int_equal(rb.revision, 2);
    assert_int_equal(rb.ird, 4);     /* min(our IRD 4, peer ORD 8) */
    assert_int_equal(rb.ord, 2);     /* min(our ORD 2, peer IRD 16) */
    assert_int_equal(rb.legacy_le, 0);
    assert_int_equal(rb.app_pd_len, 5);
    assert_memory_equal(rb.app_pd, "hello", 5);
    assert_memory_equal(rep, "MPA ID Rep Frame", 16);
    assert_int_equal(rep[16], MPA_FLAG_ENHANCED);
    assert_int_equal(sd_iw_get16(rep + 18), 4 + 8 + 6);
    assert_int_equal(sd_iw_get16(rep + 20), 4);             /* our IRD, no P2P */
    assert_int_equal(sd_iw_get16(rep + 22), 2);
    assert_int_equal(sd_iw_get32(rep + 24), 2);             /* MS-SMBD 6.2 reply IRD */
    assert_int_equal(sd_iw_get32(rep + 28), 4);             /* reply ORD */
    assert_int_equal(sd_soft_mpa_check_reply(rep, rn, &a, 0, &ra), 0);
    assert_int_equal(ra.ird, 2);
    assert_int_equal(ra.ord, 4);
    assert_int_equal(ra.app_pd_len, 6);
    assert_memory_equal(ra.app_pd, "world!", 6);
    /* Without the Appendix A header the RFC 6581 words alone decide. */
    a.smbd_ird_ord_header = b.smbd_ird_ord_header = 0;
    n = sd_soft_mpa_build_request(&a, 0, req, sizeof(req));
    assert_int_equal(sd_soft_mpa_respond(req, (size_t)n, &b, 0, rep, &rn, &rb), 0);
    assert_int_equal(rb.ird, 4);
    assert_int_equal(rb.ord, 2);
    assert_int_equal(rb.app_pd_len, 5);
    assert_int_equal(sd_soft_mpa_check_reply(rep, rn, &a, 0, &ra), 0);
    assert_int_equal(ra.ord, 4);     /* min(our ORD 8, responder IRD 4) */
    assert_int_equal(ra.ird, 2);     /* the responder's ORD */
}

static void test_crc_used_when_either_side_asks(void **state)
{
    (void)state;
    struct sd_cm_params p = {.ird = 1, .ord = 1};
    for (int ask_a = 0; ask_a < 2; ask_a++)
        for (int ask_b = 0; ask_b < 2; ask_b++) {
            int n = sd_soft_mpa_build_request(&p, ask_a, req, sizeof(req));
            size_t rn;
            struct sd_soft_mpa_result rb, ra;
            assert_int_equal(sd_soft_mpa_respond(req, (size_t)n, &p, ask_b, rep, &rn, &rb), 0);
            assert_int_equal(rb.crc, ask_a || ask_b);
            assert_int_equal(!!(rep[16] & MPA_FLAG_CRC), ask_a || ask_b);
            assert_int_equal(sd_soft_mpa_check_reply(rep, rn, &p, ask_a, &ra), 0);
            assert_int_equal(ra.crc, ask_a || ask_b);
        }
}

static void test_legacy_little_endian_header(void **state)
{
    (void)state;
    uint8_t pd[4 + 8];
    sd_iw_put16(pd, 32);
    sd_iw_put16(pd + 2, 1);
    static const uint8_t le[8] = {32, 0, 0, 0, 1, 0, 0, 0};
    memcpy(pd + 4, le, 8);
    size_t n = frame(req, MPA_KEY_REQ, MPA_FLAG_ENHANCED, 2, pd, sizeof(pd));
    struct sd_cm_params b = {.ird = 8, .ord = 8, .smbd_ird_ord_header = 1};
    size_t rn;
    struct sd_soft_mpa_result rb;
    assert_int_equal(sd_soft_mpa_respond(req, n, &b, 0, rep, &rn, &rb), 0);
    assert_int_equal(rb.legacy_le, 1);
    assert_int_equal(rb.ird, 1);     /* min(our IRD 8, peer ORD 1) */
    assert_int_equal(rb.ord, 8);     /* min(our ORD 8, peer IRD 32) */
    assert_int_equal(sd_iw_get32(rep + 24), 8);             /* reply big-endian */
    assert_int_equal(sd_iw_get32(rep + 28), 1);
    /* A connector accepts a little-endian reply header too. */
    struct sd_cm_params a = {.ird = 32, .ord = 1, .smbd_ird_ord_header = 1};
    sd_iw_put16(pd, 8);
    sd_iw_put16(pd + 2, 8);
    static const uint8_t le_rep[8] = {8, 0, 0, 0, 1, 0, 0, 0};
    memcpy(pd + 4, le_rep, 8);
    n = frame(rep, MPA_KEY_REP, MPA_FLAG_ENHANCED, 2, pd, sizeof(pd));
    struct sd_soft_mpa_result ra;
    assert_int_equal(sd_soft_mpa_check_reply(rep, n, &a, 0, &ra), 0);
    assert_int_equal(ra.legacy_le, 1);
    assert_int_equal(ra.ird, 8);
    assert_int_equal(ra.ord, 1);
}

static void test_zero_ird_or_ord_rejected(void **state)
{
    (void)state;
    struct sd_cm_params a = {.ird = 0, .ord = 4, .smbd_ird_ord_header = 1};
    struct sd_cm_params b = {.ird = 4, .ord = 4, .smbd_ird_ord_header = 1};
    int n = sd_soft_mpa_build_request(&a, 0, req, sizeof(req));
    size_t rn;
    struct sd_soft_mpa_result r;
    assert_int_equal(sd_soft_mpa_respond(req, (size_t)n, &b, 0, rep, &rn, &r), -ECONNREFUSED);
    assert_int_equal(rn, MPA_RR_HDR_LEN);
    assert_memory_equal(rep, MPA_KEY_REP, 16);
    assert_true(rep[16] & MPA_FLAG_REJECT);
    /* the connector sees the server's refusal (provider.h: connect's -EACCES) */
    assert_int_equal(sd_soft_mpa_check_reply(rep, rn, &a, 0, &r), -EACCES);
    /* Our own ORD of zero makes the reply IRD zero: rejected as well. */
    a.ird = 4;
    b.ord = 0;
    n = sd_soft_mpa_build_request(&a, 0, req, sizeof(req));
    assert_int_equal(sd_soft_mpa_respond(req, (size_t)n, &b, 0, rep, &rn, &r), -ECONNREFUSED);
    /* A reply header carrying a zero is refused by the connector. */
    uint8_t pd[12] = {0, 4, 0, 4, 0, 0, 0, 0, 0, 0, 0, 4};
    size_t m = frame(rep, MPA_KEY_REP, MPA_FLAG_ENHANCED, 2, pd, sizeof(pd));
    assert_int_equal(sd_soft_mpa_check_reply(rep, m, &a, 0, &r), -ECONNREFUSED);
}

static void test_revision1_and_markers(void **state)
{
    (void)state;
    struct sd_cm_params b = {.ird = 4, .ord = 4};
    size_t n = frame(req, MPA_KEY_REQ, 0, 1, "pd", 2), rn;
    struct sd_soft_mpa_result r;
    assert_int_equal(sd_soft_mpa_respond(req, n, &b, 0, rep, &rn, &r), 0);
    assert_int_equal(rep[17], 1);
    assert_int_equal(rep[16], 0);
    assert_int_equal(r.app_pd_len, 2);
    assert_int_equal(r.ird, 4);
    n = frame(req, MPA_KEY_REQ, MPA_FLAG_MARKERS, 1, "", 0);
    assert_int_equal(sd_soft_mpa_respond(req, n, &b, 0, rep, &rn, &r), -ECONNREFUSED);
    assert_true(rep[16] & MPA_FLAG_REJECT);
    assert_false(rep[16] & MPA_FLAG_MARKERS);                /* never markers */
    n = frame(req, MPA_KEY_REQ, 0, 3, "", 0);
    assert_int_equal(sd_soft_mpa_respond(req, n, &b, 0, rep, &rn, &r), -ECONNREFUSED);
    /* A connector accepts a revision 1 reply and refuses one with markers. */
    n = frame(rep, MPA_KEY_REP, 0, 1, "x", 1);
    assert_int_equal(sd_soft_mpa_check_reply(rep, n, &b, 0, &r), 0);
    assert_int_equal(r.app_pd_len, 1);
    n = frame(rep, MPA_KEY_REP, MPA_FLAG_MARKERS, 2, "", 0);
    assert_int_equal(sd_soft_mpa_check_reply(rep, n, &b, 0, &r), -EPROTO);
}

static void test_malformed_frames(void **state)
{
    (void)state;
    struct sd_cm_params b = {.ird = 4, .ord = 4};
    size_t n = frame(req, "MPA ID Bad Frame", 0, 2, "", 0), rn;
    struct sd_soft_mpa_result r;
    assert_int_equal(sd_soft_mpa_respond(req, n, &b, 0, rep, &rn, &r), -EPROTO);
    assert_int_equal(sd_soft_mpa_parse_hdr(req, 0), -EPROTO);
    frame(req, MPA_KEY_REQ, 0, 2, "", 0);
    sd_iw_put16(req + 18, MPA_MAX_PRIVATE_DATA + 1);
    assert_int_equal(sd_soft_mpa_parse_hdr(req, 0), -EPROTO);
    sd_iw_put16(req + 18, MPA_MAX_PRIVATE_DATA);
    assert_int_equal(sd_soft_mpa_parse_hdr(req, 0), MPA_MAX_PRIVATE_DATA);
    assert_int_equal(sd_soft_mpa_parse_hdr(req, 1), -EPROTO); /* request key, not reply */
    /* Enhanced without its four bytes of IRD/ORD. */
    n = frame(req, MPA_KEY_REQ, MPA_FLAG_ENHANCED, 2, "ab", 2);
    assert_int_equal(sd_soft_mpa_respond(req, n, &b, 0, rep, &rn, &r), -ECONNREFUSED);
    n = frame(rep, MPA_KEY_REP, MPA_FLAG_ENHANCED, 2, "ab", 2);
    assert_int_equal(sd_soft_mpa_check_reply(rep, n, &b, 0, &r), -EPROTO);
    /* Length in the header disagreeing with the frame. */
    n = frame(req, MPA_KEY_REQ, 0, 2, "abcd", 4);
    assert_int_equal(sd_soft_mpa_respond(req, n - 1, &b, 0, rep, &rn, &r), -EPROTO);
    /* Application private data beyond what the interface carries. */
    uint8_t big[MPA_MAX_PRIVATE_DATA] = {0};
    n = frame(req, MPA_KEY_REQ, 0, 1, big, SD_MAX_PRIVATE_DATA + 1);
    assert_int_equal(sd_soft_mpa_respond(req, n, &b, 0, rep, &rn, &r), -ECONNREFUSED);
}

static void test_peer_to_peer_rtr_choice(void **state)
{
    (void)state;
    struct sd_cm_params b = {.ird = 4, .ord = 4};
    uint8_t pd[4];
    size_t rn;
    struct sd_soft_mpa_result r;
    /* siw's default offer (Write and Read RTR): a zero-length Write is picked. */
    sd_iw_put16(pd, MPA_V2_PEER_TO_PEER | 4);
    sd_iw_put16(pd + 2, MPA_V2_WRITE_RTR | MPA_V2_READ_RTR | 4);
    size_t n = frame(req, MPA_KEY_REQ, MPA_FLAG_ENHANCED, 2, pd, 4);
    assert_int_equal(sd_soft_mpa_respond(req, n, &b, 0, rep, &rn, &r), 0);
    assert_int_equal(sd_iw_get16(rep + 20), MPA_V2_PEER_TO_PEER | 4);
    assert_int_equal(sd_iw_get16(rep + 22), MPA_V2_WRITE_RTR | 4);
    /* Only Read RTR offered: picked, and our IRD admits that one zero-length Read. */
    sd_iw_put16(pd, MPA_V2_PEER_TO_PEER | 4);
    sd_iw_put16(pd + 2, MPA_V2_READ_RTR | 0);
    n = frame(req, MPA_KEY_REQ, MPA_FLAG_ENHANCED, 2, pd, 4);
    assert_int_equal(sd_soft_mpa_respond(req, n, &b, 0, rep, &rn, &r), 0);
    assert_int_equal(sd_iw_get16(rep + 22), MPA_V2_READ_RTR | 4);
    assert_int_equal(r.ird, 1);
    assert_int_equal(sd_iw_get16(rep + 20), MPA_V2_PEER_TO_PEER | 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_request_layout),
        cmocka_unit_test(test_respond_and_check_round_trip),
        cmocka_unit_test(test_crc_used_when_either_side_asks),
        cmocka_unit_test(test_legacy_little_endian_header),
        cmocka_unit_test(test_zero_ird_or_ord_rejected),
        cmocka_unit_test(test_revision1_and_markers),
        cmocka_unit_test(test_malformed_frames),
        cmocka_unit_test(test_peer_to_peer_rtr_choice),
    };
    return cmocka_run_group_tests_name("soft-iWARP MPA", tests, NULL, NULL);
}
