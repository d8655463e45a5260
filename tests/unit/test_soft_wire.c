/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/test_soft_wire.c — soft-iWARP wire level: CRC32c vectors, DDP/RDMAP
 * header and Terminate codec, and a connection fed raw FPDU bytes over a socketpair
 * (split and coalesced FPDUs, CRC, segmentation, responder gating, Read Requests,
 * and hostile input answered with the right Terminate). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "log.h"
#include "soft/iwarp_wire.h"
#include "soft/soft_qp.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* ---- CRC32c ---- */

static void test_crc32c_known_vectors(void **state)
{
    (void)state;
    uint8_t buf[48];
    assert_int_equal(sd_crc32c("123456789", 9), 0xe3069283u);
    memset(buf, 0, 32);                           /* RFC 3720 B.4 */
    assert_int_equal(sd_crc32c(buf, 32), 0x8a9136aau);
    memset(buf, 0xff, 32);
    assert_int_equal(sd_crc32c(buf, 32), 0x62a8ab43u);
    for (int i = 0; i < 32; i++)
        buf[i] = (uint8_t)i;
    assert_int_equal(sd_crc32c(buf, 32), 0x46dd794eu);
    for (int i = 0; i < 32; i++)
        buf[i] = (uint8_t)(31 - i);
    assert_int_equal(sd_crc32c(buf, 32), 0x113fdb5cu);
    /* The table path agrees with the dispatched (SSE4.2 when available) path on
     * every length and alignment, and incremental updates compose. */
    uint8_t big[1000];
    for (size_t i = 0; i < sizeof(big); i++)
        big[i] = (uint8_t)(i * 7 + 3);
    for (size_t off = 0; off < 9; off++)
        for (size_t len = 0; len < 300; len += 13)
            assert_int_equal(sd_crc32c_update(SD_CRC32C_INIT, big + off, len),
                             sd_crc32c_update_table(SD_CRC32C_INIT, big + off, len));
    uint32_t s = sd_crc32c_update(SD_CRC32C_INIT, big, 333);
    s = sd_crc32c_update(s, big + 333, sizeof(big) - 333);
    assert_int_equal(~s, sd_crc32c(big, sizeof(big)));
    uint8_t le[4];
    sd_iw_put_crc(le, 0xe3069283u);               /* MPA stores it little-endian */
    assert_int_equal(le[0], 0x83);
    assert_int_equal(le[3], 0xe3);
    assert_int_equal(sd_iw_get_crc(le), 0xe3069283u);
}

/* ---- header codec ---- */

static void test_tagged_header_codec(void **state)
{
    (void)state;
    struct sd_iw_hdr h = {.tagged = 1, .last = 1, .ddp_version = 1, .rdmap_version = 1,
                          .opcode = RDMAP_WRITE, .stag = 0x12345678, .to = 0x1122334455667788ull};
    uint8_t b[RDMAP_READ_REQ_HDR_LEN];
    assert_int_equal(sd_iw_hdr_encode(&h, b), DDP_TAGGED_HDR_LEN);
    static const uint8_t want[] = {0xc1, 0x40, 0x12, 0x34, 0x56, 0x78, 0x11, 0x22,
                                   0x33, 0x44, 0x55, 0x66, 0x77, 0x88};
    assert_memory_equal(b, want, sizeof(want));
    assert_int_equal(sd_iw_hdr_len(b), DDP_TAGGED_HDR_LEN);
    struct sd_iw_hdr d;
    sd_iw_hdr_decode(b, &d);
    assert_memory_equal(&d, &h, sizeof(h));
    h.opcode = RDMAP_READ_RESP;
    h.last = 0;
    sd_iw_hdr_encode(&h, b);
    assert_int_equal(b[0], 0x81);
    assert_int_equal(b[1], 0x42);
}

static void test_untagged_header_codec(void **state)
{
    (void)state;
    struct sd_iw_hdr h = {.last = 1, .ddp_version = 1, .rdmap_version = 1,
                          .opcode = RDMAP_SEND_INV, .inv_stag = 0xabcdef01, .qn = 0,
                          .msn = 7, .mo = 0x10000};
    uint8_t b[RDMAP_READ_REQ_HDR_LEN];
    assert_int_equal(sd_iw_hdr_encode(&h, b), DDP_UNTAGGED_HDR_LEN);
    static const uint8_t want[] = {0x41, 0x44, 0xab, 0xcd, 0xef, 0x01, 0, 0, 0, 0,
                                   0, 0, 0, 7, 0, 1, 0, 0};
    assert_memory_equal(b, want, sizeof(want));
    struct sd_iw_hdr d;
    sd_iw_hdr_decode(b, &d);
    assert_memory_equal(&d, &h, sizeof(h));

    struct sd_iw_hdr rr = {.last = 1, .ddp_version = 1, .rdmap_version = 1,
                           .opcode = RDMAP_READ_REQ, .qn = 1, .msn = 1,
                           .rr_sink_stag = 0x100, .rr_sink_to = 0x7000, .rr_size = 0x100000,
                           .rr_src_stag = 0x200, .rr_src_to = 0x9000};
    assert_int_equal(sd_iw_hdr_encode(&rr, b), RDMAP_READ_REQ_HDR_LEN);
    assert_int_equal(sd_iw_hdr_len(b), RDMAP_READ_REQ_HDR_LEN);
    assert_int_equal(b[1], 0x41);
    assert_int_equal(sd_iw_get32(b + 18), 0x100);
    assert_int_equal(sd_iw_get64(b + 22), 0x7000);
    assert_int_equal(sd_iw_get32(b + 30), 0x100000);
    assert_int_equal(sd_iw_get32(b + 34), 0x200);
    assert_int_equal(sd_iw_get64(b + 38), 0x9000);
    sd_iw_hdr_decode(b, &d);
    assert_memory_equal(&d, &rr, sizeof(rr));
}

static void test_terminate_control_codec(void **state)
{
    (void)state;
    struct sd_iw_term t = {.layer = TERM_LAYER_DDP, .etype = DDP_ETYPE_TAGGED,
                           .ecode = DDP_ECODE_T_BASE_BOUNDS, .hdrct = TERM_HDRCT_M | TERM_HDRCT_D};
    uint8_t b[4];
    sd_iw_term_encode(&t, b);
    static const uint8_t want[] = {0x11, 0x01, 0xc0, 0x00};
    assert_memory_equal(b, want, 4);
    struct sd_iw_term d;
    sd_iw_term_decode(b, &d);
    assert_memory_equal(&d, &t, sizeof(t));
    assert_string_equal(sd_iw_term_str(&d), "DDP tagged buffer error, code 0x01");
    assert_int_equal(sd_iw_mpa_pad(18), 0);
    assert_int_equal(sd_iw_mpa_pad(19), 3);
    assert_int_equal(sd_iw_mpa_pad(21), 1);
}

/* ---- a connection fed raw bytes ---- */

struct rig {
    int peer;             /* the test's end of the socketpair */
    struct sd_qp *qp;
    int crc;
};

static struct rig rig_open(int responder, int crc, uint32_t ird)
{
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
    struct rig r = {.peer = sv[1], .crc = crc};
    r.qp = sd_soft_qp_create(sv[0], responder, crc, ird, 4);
    assert_non_null(r.qp);
    return r;
}

static void rig_close(struct rig *r)
{
    sd_soft_provider.destroy(r->qp);
    close(r->peer);
}

/* Frames a DDP/RDMAP header plus payload as an FPDU; returns its length. */
static size_t fpdu(const struct rig *r, const struct sd_iw_hdr *h, const void *payload,
                   size_t plen, uint8_t *out)
{
    size_t hl = sd_iw_hdr_encode(h, out + 2);
    if (plen)
        memcpy(out + 2 + hl, payload, plen);
    size_t ulpdu = hl + plen, pad = sd_iw_mpa_pad((uint32_t)ulpdu);
    sd_iw_put16(out, (uint16_t)ulpdu);
    memset(out + 2 + ulpdu, 0, pad);
    size_t n = 2 + ulpdu + pad;
    sd_iw_put_crc(out + n, r->crc ? sd_crc32c(out, n) : 0);
    return n + 4;
}

static void put(const struct rig *r, const uint8_t *p, size_t n)
{
    assert_int_equal(send(r->peer, p, n, 0), (ssize_t)n);
}

static void progress(struct rig *r)
{
    assert_int_equal(sd_soft_provider.progress(r->qp), 0);
}

static int poll_one(struct rig *r, struct sd_wc *wc)
{
    progress(r);
    return sd_soft_provider.poll_cq(r->qp, wc, 1);
}

/* Reads what the provider wrote to the peer end (after progressing it). */
static size_t take(struct rig *r, uint8_t *out, size_t cap)
{
    size_t n = 0;
    for (int tries = 0; tries < 50; tries++) {
        progress(r);
        ssize_t k = recv(r->peer, out + n, cap - n, MSG_DONTWAIT);
        if (k > 0)
            n += (size_t)k;
        else if (n)
            break;
        else
            usleep(1000);
    }
    return n;
}

static struct sd_iw_hdr send_hdr(uint32_t msn, uint32_t mo, int last)
{
    return (struct sd_iw_hdr){.last = (uint8_t)last, .ddp_version = 1, .rdmap_version = 1,
                              .opcode = RDMAP_SEND, .qn = 0, .msn = msn, .mo = mo};
}

struct region {
    uint8_t mem[8192];
    struct sd_mr mr;
};

static void region_reg(struct rig *r, struct region *g, int access)
{
    assert_int_equal(sd_soft_provider.reg_mr(r->qp, g->mem, sizeof(g->mem), access, &g->mr), 0);
}

static void post_recv(struct rig *r, struct region *g, uint64_t id, size_t off, size_t len)
{
    struct sd_sge s = {.addr = g->mem + off, .length = (uint32_t)len, .mr = &g->mr};
    assert_int_equal(sd_soft_provider.post_recv(r->qp, id, &s), 0);
}

/* g registered on r with n receives of 1 KiB posted in it, ids 0..n-1. */
static void post_recvs(struct rig *r, struct region *g, int n)
{
    region_reg(r, g, SD_ACCESS_LOCAL_WRITE);
    for (int i = 0; i < n; i++)
        post_recv(r, g, (uint64_t)i, (size_t)i * 1024, 1024);
}

static void test_rx_split_and_coalesced_fpdus(void **state)
{
    (void)state;
    for (int crc = 0; crc < 2; crc++) {
        struct rig r = rig_open(0, crc, 4);
        static struct region g;
        post_recvs(&r, &g, 3);
        uint8_t wire[4096];
        /* message 1 in two segments, fed one byte at a time */
        struct sd_iw_hdr h1 = send_hdr(1, 0, 0), h2 = send_hdr(1, 5, 1);
        size_t n = fpdu(&r, &h1, "hello", 5, wire);
        n += fpdu(&r, &h2, " world", 6, wire + n);
        struct sd_wc wc;
        for (size_t i = 0; i < n; i++) {
            assert_int_equal(poll_one(&r, &wc), 0);
            put(&r, wire + i, 1);
        }
        assert_int_equal(poll_one(&r, &wc), 1);
        assert_int_equal(wc.wr_id, 0);
        assert_int_equal(wc.byte_len, 11);
        assert_memory_equal(g.mem, "hello world", 11);
        /* messages 2 and 3 coalesced in one write */
        struct sd_iw_hdr h3 = send_hdr(2, 0, 1), h4 = send_hdr(3, 0, 1);
        n = fpdu(&r, &h3, "abc", 3, wire);
        n += fpdu(&r, &h4, "", 0, wire + n);
        put(&r, wire, n);
        assert_int_equal(poll_one(&r, &wc), 1);
        assert_int_equal(wc.wr_id, 1);
        assert_int_equal(wc.byte_len, 3);
        assert_int_equal(poll_one(&r, &wc), 1);
        assert_int_equal(wc.wr_id, 2);
        assert_int_equal(wc.byte_len, 0);
        assert_memory_equal(g.mem + 1024, "abc", 3);
        rig_close(&r);
    }
}

/* Writes n bytes to the qp's socket, progressing the qp whenever the socket is full. */
static void feed(struct rig *r, const uint8_t *p, size_t n)
{
    while (n) {
        ssize_t k = send(r->peer, p, n, 0);
        if (k < 0) {
            assert_true(errno == EAGAIN || errno == EWOULDBLOCK);
            progress(r);
            continue;
        }
        p += k;
        n -= (size_t)k;
    }
}

/* Large payloads (FPDUs as loopback's MSS makes them) streaming in, cut anywhere and
 * with a small Send between two bursts, land whole in registered memory and the
 * posted receives; CRC on and off. */
static void test_rx_large_payloads_cut_anywhere(void **state)
{
    enum { FRAG = 32000, NFRAG = 64, BURST = 32 };
    static uint8_t mem[FRAG * NFRAG], want[FRAG * NFRAG], wire[FRAG + 64];
    (void)state;
    for (size_t i = 0; i < sizeof(want); i++)
        want[i] = (uint8_t)((i * 2654435761u) >> 13);
    for (int crc = 0; crc < 2; crc++) {
        struct rig r = rig_open(0, crc, 4);
        static struct region g;
        struct sd_mr mr;
        struct sd_wc wc;
        post_recvs(&r, &g, NFRAG / BURST);
        memset(mem, 0, sizeof(mem));
        assert_int_equal(sd_soft_provider.reg_mr(r.qp, mem, sizeof(mem),
                                                 SD_ACCESS_LOCAL_WRITE | SD_ACCESS_REMOTE_WRITE,
                                                 &mr), 0);
        for (uint32_t i = 0; i < NFRAG; i++) {
            struct sd_iw_hdr h = {.tagged = 1, .last = 1, .ddp_version = 1, .rdmap_version = 1,
                                  .opcode = RDMAP_WRITE, .stag = mr.rkey,
                                  .to = mr.addr + (uint64_t)i * FRAG};
            size_t n = fpdu(&r, &h, want + (size_t)i * FRAG, FRAG, wire), cut = i * 7919u % n;
            feed(&r, wire, cut);
            progress(&r);
            feed(&r, wire + cut, n - cut);
            if (i % BURST == BURST - 1) {
                struct sd_iw_hdr s = send_hdr(i / BURST + 1, 0, 1);
                feed(&r, wire, fpdu(&r, &s, "between", 7, wire));
            }
        }
        for (int k = 0; k < NFRAG / BURST; k++) {
            for (int tries = 0; poll_one(&r, &wc) == 0; tries++)
                assert_true(tries < 1000);
            assert_int_equal(wc.wr_id, (uint64_t)k);
            assert_int_equal(wc.byte_len, 7);
            assert_memory_equal(g.mem + k * 1024, "between", 7);
        }
        assert_memory_equal(mem, want, sizeof(mem));
        assert_int_equal(sd_soft_provider.dereg_mr(r.qp, &mr), 0);
        rig_close(&r);
    }
}

/* An owner that reports readiness (ops->readable): once a recv found the socket
 * drained, progress() leaves it alone until the next report; then the bytes that came
 * meanwhile are read. One that never reports gets a read on every progress(). */
static void test_readable_hint_skips_recv_on_a_drained_socket(void **state)
{
    (void)state;
    struct rig r = rig_open(0, 0, 4);
    static struct region g;
    post_recvs(&r, &g, 2);
    uint8_t wire[256];
    struct sd_iw_hdr h1 = send_hdr(1, 0, 1), h2 = send_hdr(2, 0, 1);
    struct sd_wc wc;
    sd_soft_provider.readable(r.qp);
    put(&r, wire, fpdu(&r, &h1, "one", 3, wire));
    assert_int_equal(poll_one(&r, &wc), 1); /* read: the socket was reported readable */
    assert_int_equal(wc.byte_len, 3);
    put(&r, wire, fpdu(&r, &h2, "two", 3, wire));
    assert_int_equal(poll_one(&r, &wc), 0); /* drained since the last report: no recv */
    sd_soft_provider.readable(r.qp);
    assert_int_equal(poll_one(&r, &wc), 1);
    assert_int_equal(wc.wr_id, 1);
    assert_memory_equal(g.mem + 1024, "two", 3);
    rig_close(&r);
}

/* Feeds one bad FPDU; expects a Terminate with layer/type/code back, then CONN_LOST. */
static void expect_terminate(struct rig *r, const uint8_t *bad, size_t n, uint8_t layer,
                             uint8_t etype, uint8_t ecode)
{
    put(r, bad, n);
    uint8_t out[512];
    size_t got = take(r, out, sizeof(out));
    assert_true(got >= 2 + DDP_UNTAGGED_HDR_LEN + RDMAP_TERM_CTRL_LEN + 4);
    uint16_t ulpdu = sd_iw_get16(out);
    assert_int_equal(got, 2 + ulpdu + sd_iw_mpa_pad(ulpdu) + 4);
    struct sd_iw_hdr h;
    sd_iw_hdr_decode(out + 2, &h);
    assert_int_equal(h.opcode, RDMAP_TERMINATE);
    assert_int_equal(h.qn, RDMAP_QN_TERMINATE);
    assert_true(h.last);
    struct sd_iw_term t;
    sd_iw_term_decode(out + 2 + DDP_UNTAGGED_HDR_LEN, &t);
    assert_int_equal(t.layer, layer);
    assert_int_equal(t.etype, etype);
    assert_int_equal(t.ecode, ecode);
    if (r->crc)
        assert_int_equal(sd_iw_get_crc(out + got - 4), sd_crc32c(out, got - 4));
    struct sd_wc wc;
    int lost = 0;
    while (poll_one(r, &wc) == 1)
        lost |= wc.opcode == SD_WC_CONN_LOST;
    assert_true(lost);
    char c;
    assert_int_equal(recv(r->peer, &c, 1, MSG_DONTWAIT), 0);   /* then the stream ends */
}

/* A fresh rig (no CRC, IRD 4) fed the Send h carrying "x", with a receive posted in g
 * first when posted; expects the Terminate layer/etype/ecode back. */
static void expect_send_terminates(struct region *g, const struct sd_iw_hdr *h, int posted,
                                   uint8_t layer, uint8_t etype, uint8_t ecode)
{
    uint8_t wire[256];
    struct rig r = rig_open(0, 0, 4);

    if (posted) {
        region_reg(&r, g, SD_ACCESS_LOCAL_WRITE);
        post_recv(&r, g, 1, 0, 64);
    }
    expect_terminate(&r, wire, fpdu(&r, h, "x", 1, wire), layer, etype, ecode);
    rig_close(&r);
}

static void test_rx_hostile_headers_terminate(void **state)
{
    (void)state;
    uint8_t wire[256];
    struct sd_iw_hdr h;
    struct region *g = calloc(1, sizeof(*g));
    struct rig r;

    h = send_hdr(1, 0, 1);                             /* bad DDP version */
    h.ddp_version = 2;
    expect_send_terminates(g, &h, 1, TERM_LAYER_DDP, DDP_ETYPE_UNTAGGED, DDP_ECODE_U_VERSION);

    h = send_hdr(1, 0, 1);                             /* bad RDMAP version */
    h.rdmap_version = 0;
    expect_send_terminates(g, &h, 0, TERM_LAYER_RDMAP, RDMAP_ETYPE_REMOTE_OP,
                           RDMAP_ECODE_VERSION);

    h = send_hdr(1, 0, 1);                             /* unknown opcode */
    h.opcode = 9;
    expect_send_terminates(g, &h, 0, TERM_LAYER_RDMAP, RDMAP_ETYPE_REMOTE_OP,
                           RDMAP_ECODE_OPCODE);

    h = send_hdr(5, 0, 1);                             /* wrong MSN */
    expect_send_terminates(g, &h, 1, TERM_LAYER_DDP, DDP_ETYPE_UNTAGGED,
                           DDP_ECODE_U_INVALID_MSN);

    h = send_hdr(1, 0, 1);                             /* wrong queue number */
    h.qn = 3;
    expect_send_terminates(g, &h, 0, TERM_LAYER_DDP, DDP_ETYPE_UNTAGGED,
                           DDP_ECODE_U_INVALID_QN);

    h = send_hdr(1, 8, 1);                             /* wrong message offset */
    expect_send_terminates(g, &h, 1, TERM_LAYER_DDP, DDP_ETYPE_UNTAGGED,
                           DDP_ECODE_U_INVALID_MO);

    r = rig_open(0, 0, 4);                             /* Write to an unknown STag */
    memset(g->mem, 0, sizeof(g->mem));
    region_reg(&r, g, SD_ACCESS_LOCAL_WRITE | SD_ACCESS_REMOTE_WRITE);
    h = (struct sd_iw_hdr){.tagged = 1, .last = 1, .ddp_version = 1, .rdmap_version = 1,
                           .opcode = RDMAP_WRITE, .stag = g->mr.rkey + 1, .to = g->mr.addr};
    expect_terminate(&r, wire, fpdu(&r, &h, "zz", 2, wire), TERM_LAYER_DDP, DDP_ETYPE_TAGGED,
                     DDP_ECODE_T_INVALID_STAG);
    assert_int_equal(g->mem[0], 0);
    rig_close(&r);

    r = rig_open(0, 0, 4);                             /* Write wrapping the offset */
    region_reg(&r, g, SD_ACCESS_LOCAL_WRITE | SD_ACCESS_REMOTE_WRITE);
    h.stag = g->mr.rkey;
    h.to = UINT64_MAX;
    expect_terminate(&r, wire, fpdu(&r, &h, "zz", 2, wire), TERM_LAYER_DDP, DDP_ETYPE_TAGGED,
                     DDP_ECODE_T_BASE_BOUNDS);
    rig_close(&r);

    r = rig_open(0, 0, 4);                             /* Read Response nobody asked for */
    h = (struct sd_iw_hdr){.tagged = 1, .last = 1, .ddp_version = 1, .rdmap_version = 1,
                           .opcode = RDMAP_READ_RESP, .stag = 0x100, .to = 0};
    expect_terminate(&r, wire, fpdu(&r, &h, "zz", 2, wire), TERM_LAYER_RDMAP,
                     RDMAP_ETYPE_REMOTE_OP, RDMAP_ECODE_OPCODE);
    rig_close(&r);

    r = rig_open(0, 0, 4);                             /* ULPDU shorter than its header */
    static const uint8_t shortf[] = {0x00, 0x04, 0x41, 0x43, 0, 0, 0, 0, 0, 0};
    expect_terminate(&r, shortf, sizeof(shortf), TERM_LAYER_LLP, 0, LLP_ECODE_FPDU_START);
    rig_close(&r);

    r = rig_open(0, 1, 4);                             /* CRC mismatch */
    region_reg(&r, g, SD_ACCESS_LOCAL_WRITE);
    post_recv(&r, g, 1, 0, 64);
    h = send_hdr(1, 0, 1);
    size_t n = fpdu(&r, &h, "abcd", 4, wire);
    wire[n - 1] ^= 1;
    expect_terminate(&r, wire, n, TERM_LAYER_LLP, 0, LLP_ECODE_CRC);
    rig_close(&r);

    r = rig_open(0, 0, 4);                             /* invalidating an unknown STag */
    region_reg(&r, g, SD_ACCESS_LOCAL_WRITE);
    post_recv(&r, g, 1, 0, 64);
    h = send_hdr(1, 0, 1);
    h.opcode = RDMAP_SEND_INV;
    h.inv_stag = g->mr.lkey;                           /* exists, but not remotely usable */
    expect_terminate(&r, wire, fpdu(&r, &h, "x", 1, wire), TERM_LAYER_RDMAP,
                     RDMAP_ETYPE_REMOTE_PROT, RDMAP_ECODE_CANNOT_INVALIDATE);
    rig_close(&r);

    r = rig_open(0, 0, 1);                             /* more Read Requests than IRD 1 */
    region_reg(&r, g, SD_ACCESS_REMOTE_READ);
    struct sd_iw_hdr rr = {.last = 1, .ddp_version = 1, .rdmap_version = 1,
                           .opcode = RDMAP_READ_REQ, .qn = 1, .msn = 1, .rr_sink_stag = 7,
                           .rr_size = 4, .rr_src_stag = g->mr.rkey, .rr_src_to = g->mr.addr};
    n = fpdu(&r, &rr, NULL, 0, wire);
    rr.msn = 2;
    n += fpdu(&r, &rr, NULL, 0, wire + n);
    expect_terminate(&r, wire, n, TERM_LAYER_RDMAP, RDMAP_ETYPE_REMOTE_OP,
                     RDMAP_ECODE_CATASTROPHIC_STREAM);
    rig_close(&r);
    free(g);
}

static void test_rx_garbage_never_crashes(void **state)
{
    (void)state;
    enum sd_log_level saved = sd_log_get_level();
    sd_log_set_level(SD_LOG_OFF);       /* 200 Terminates' worth of warnings */
    uint32_t seed = 1;
    for (int round = 0; round < 200; round++) {
        struct rig r = rig_open(round & 1, round & 2, 4);
        static struct region g;
        region_reg(&r, &g, SD_ACCESS_LOCAL_WRITE | SD_ACCESS_REMOTE_WRITE | SD_ACCESS_REMOTE_READ);
        post_recv(&r, &g, 1, 0, 128);
        uint8_t junk[300];
        for (size_t i = 0; i < sizeof(junk); i++) {
            seed = seed * 1103515245u + 12345u;
            junk[i] = (uint8_t)(seed >> 16);
        }
        put(&r, junk, sizeof(junk));
        struct sd_wc wc;
        int lost = 0;
        for (int k = 0; k < 10 && !lost; k++)
            while (poll_one(&r, &wc) == 1)
                lost |= wc.opcode == SD_WC_CONN_LOST;
        assert_true(lost);              /* junk always ends the connection */
        rig_close(&r);
    }
    sd_log_set_level(saved);
}

/* Parses FPDUs the provider wrote; checks framing and returns the reassembled
 * untagged payload and the number of FPDUs. */
static size_t parse_sends(const struct rig *r, const uint8_t *w, size_t n, uint8_t *payload,
                          size_t max_fpdu, int *fpdus)
{
    size_t off = 0, got = 0;
    *fpdus = 0;
    while (off < n) {
        uint16_t ulpdu = sd_iw_get16(w + off);
        size_t total = 2 + ulpdu + sd_iw_mpa_pad(ulpdu) + 4;
        assert_true(off + total <= n);
        assert_true(total <= max_fpdu);
        struct sd_iw_hdr h;
        sd_iw_hdr_decode(w + off + 2, &h);
        assert_int_equal(h.opcode, RDMAP_SEND);
        assert_int_equal(h.msn, 1);
        assert_int_equal(h.mo, got);
        size_t plen = ulpdu - DDP_UNTAGGED_HDR_LEN;
        memcpy(payload + got, w + off + 2 + DDP_UNTAGGED_HDR_LEN, plen);
        got += plen;
        assert_int_equal(h.last, off + total == n);
        uint32_t crc = sd_iw_get_crc(w + off + total - 4);
        assert_int_equal(crc, r->crc ? sd_crc32c(w + off, total - 4) : 0);
        off += total;
        (*fpdus)++;
    }
    return got;
}

static void test_tx_segments_to_max_fpdu(void **state)
{
    (void)state;
    for (int crc = 0; crc < 2; crc++) {
        struct rig r = rig_open(0, crc, 4);
        r.qp->max_fpdu = 256;
        static struct region g;
        region_reg(&r, &g, 0);
        for (size_t i = 0; i < 5001; i++)
            g.mem[i] = (uint8_t)(i * 13);
        struct sd_sge s[2] = {{.addr = g.mem, .length = 3001, .mr = &g.mr},
                              {.addr = g.mem + 3001, .length = 2000, .mr = &g.mr}};
        assert_int_equal(sd_soft_provider.post_send(r.qp, 42, s, 2, 0, 1), 0);
        uint8_t w[8192], payload[8192];
        size_t n = take(&r, w, sizeof(w));
        int fpdus;
        assert_int_equal(parse_sends(&r, w, n, payload, 256, &fpdus), 5001);
        assert_int_equal(fpdus, (5001 + 231) / 232);  /* 256 - 2 - 18 - 4 = 232 per FPDU */
        assert_memory_equal(payload, g.mem, 5001);
        struct sd_wc wc;
        assert_int_equal(poll_one(&r, &wc), 1);
        assert_int_equal(wc.wr_id, 42);
        assert_int_equal(wc.status, SD_WC_SUCCESS);
        rig_close(&r);
    }
}

static void test_tx_responder_waits_for_first_fpdu(void **state)
{
    (void)state;
    struct rig r = rig_open(1, 0, 4);
    static struct region g;
    region_reg(&r, &g, SD_ACCESS_LOCAL_WRITE);
    struct sd_sge s = {.addr = g.mem, .length = 10, .mr = &g.mr};
    assert_int_equal(sd_soft_provider.post_send(r.qp, 1, &s, 1, 0, 1), 0);
    assert_int_equal(sd_soft_provider.poll_events(r.qp), SD_POLL_IN);
    uint8_t w[512];
    progress(&r);
    assert_int_equal(recv(r.peer, w, sizeof(w), MSG_DONTWAIT), -1);
    /* The initiator's first FPDU, a zero-length Write (an RFC 6581 RTR), opens it. */
    struct sd_iw_hdr rtr = {.tagged = 1, .last = 1, .ddp_version = 1, .rdmap_version = 1,
                            .opcode = RDMAP_WRITE};
    size_t n = fpdu(&r, &rtr, NULL, 0, w);
    put(&r, w, n);
    n = take(&r, w, sizeof(w));
    assert_int_equal(n, 2 + DDP_UNTAGGED_HDR_LEN + 10 + 2 /* pad */ + 4);
    rig_close(&r);
}

static void test_rx_read_request_served_from_registered_memory(void **state)
{
    (void)state;
    struct rig r = rig_open(0, 1, 4);
    r.qp->max_fpdu = 1024;
    static struct region g;
    region_reg(&r, &g, SD_ACCESS_REMOTE_READ);
    for (size_t i = 0; i < sizeof(g.mem); i++)
        g.mem[i] = (uint8_t)(i ^ 0x5a);
    struct sd_iw_hdr rr = {.last = 1, .ddp_version = 1, .rdmap_version = 1,
                           .opcode = RDMAP_READ_REQ, .qn = 1, .msn = 1, .rr_sink_stag = 0x777,
                           .rr_sink_to = 0x10000, .rr_size = 3000, .rr_src_stag = g.mr.rkey,
                           .rr_src_to = g.mr.addr + 100};
    uint8_t w[8192];
    put(&r, w, fpdu(&r, &rr, NULL, 0, w));
    size_t n = take(&r, w, sizeof(w)), off = 0, got = 0;
    while (off < n) {
        uint16_t ulpdu = sd_iw_get16(w + off);
        size_t total = 2 + ulpdu + sd_iw_mpa_pad(ulpdu) + 4;
        assert_true(total <= 1024);
        struct sd_iw_hdr h;
        sd_iw_hdr_decode(w + off + 2, &h);
        assert_int_equal(h.opcode, RDMAP_READ_RESP);
        assert_true(h.tagged);
        assert_int_equal(h.stag, 0x777);
        assert_int_equal(h.to, 0x10000 + got);
        size_t plen = ulpdu - DDP_TAGGED_HDR_LEN;
        assert_memory_equal(w + off + 2 + DDP_TAGGED_HDR_LEN, g.mem + 100 + got, plen);
        assert_int_equal(sd_iw_get_crc(w + off + total - 4), sd_crc32c(w + off, total - 4));
        got += plen;
        off += total;
        assert_int_equal(h.last, off == n);
    }
    assert_int_equal(got, 3000);
    rig_close(&r);
}

static void test_rx_read_source_revoked_mid_response(void **state)
{
    (void)state;
    struct rig r = rig_open(0, 0, 4);
    r.qp->max_fpdu = 256;
    enum { LEN = 1 << 20 };             /* far more than the socket buffer holds */
    uint8_t *mem = calloc(1, LEN);
    struct sd_mr mr;
    assert_int_equal(sd_soft_provider.reg_mr(r.qp, mem, LEN, SD_ACCESS_REMOTE_READ, &mr), 0);
    struct sd_iw_hdr rr = {.last = 1, .ddp_version = 1, .rdmap_version = 1,
                           .opcode = RDMAP_READ_REQ, .qn = 1, .msn = 1, .rr_sink_stag = 9,
                           .rr_size = LEN, .rr_src_stag = mr.rkey, .rr_src_to = mr.addr};
    uint8_t *w = malloc(2 * LEN);
    put(&r, w, fpdu(&r, &rr, NULL, 0, w));
    progress(&r);                       /* accepted; the first responses are written */
    assert_int_equal(sd_soft_provider.dereg_mr(r.qp, &mr), 0);
    memset(mem, 0x5a, LEN); /* as if freed and used again: none of this may leave */
    size_t n = take(&r, w, 2 * LEN), off = 0, data = 0;
    struct sd_iw_hdr h = {0};
    while (off < n) {
        uint16_t ulpdu = sd_iw_get16(w + off);
        sd_iw_hdr_decode(w + off + 2, &h);
        if (h.opcode == RDMAP_READ_RESP) {
            const uint8_t *pl = w + off + 2 + DDP_TAGGED_HDR_LEN;

            for (size_t i = 0; i < (size_t)(ulpdu - DDP_TAGGED_HDR_LEN); i++)
                if (pl[i] != 0)
                    fail_msg("a Read Response carries byte 0x%02x, read after the revocation",
                             pl[i]);
            data += ulpdu - DDP_TAGGED_HDR_LEN;
        }
        off += 2 + ulpdu + sd_iw_mpa_pad(ulpdu) + 4;
    }
    assert_int_equal(off, n);                          /* whole FPDUs only */
    assert_int_equal(h.opcode, RDMAP_TERMINATE);       /* the stream ends with a Terminate */
    assert_true(data > 0 && data < LEN);               /* cut short after the revocation */
    struct sd_wc wc;
    int lost = 0;
    while (poll_one(&r, &wc) == 1)
        lost |= wc.opcode == SD_WC_CONN_LOST;
    assert_true(lost);
    rig_close(&r);
    free(mem);
    free(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crc32c_known_vectors),
        cmocka_unit_test(test_tagged_header_codec),
        cmocka_unit_test(test_untagged_header_codec),
        cmocka_unit_test(test_terminate_control_codec),
        cmocka_unit_test(test_rx_split_and_coalesced_fpdus),
        cmocka_unit_test(test_rx_large_payloads_cut_anywhere),
        cmocka_unit_test(test_readable_hint_skips_recv_on_a_drained_socket),
        cmocka_unit_test(test_rx_hostile_headers_terminate),
        cmocka_unit_test(test_rx_garbage_never_crashes),
        cmocka_unit_test(test_tx_segments_to_max_fpdu),
        cmocka_unit_test(test_tx_responder_waits_for_first_fpdu),
        cmocka_unit_test(test_rx_read_request_served_from_registered_memory),
        cmocka_unit_test(test_rx_read_source_revoked_mid_response),
    };
    return cmocka_run_group_tests_name("soft-iWARP wire", tests, NULL, NULL);
}
