/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/test_bridge_chan.c — the bridge's READ/WRITE channel (transport/bridge/
 * bridge_chan_client.c), client role, over an engine on the fake provider with a recording
 * host: a large WRITE's data is registered in the stream buffer it arrived in (taken
 * over, not copied) and the request leaves rewritten; a small one is copied and its
 * buffer left to the stream; a refused registration (RLIMIT_MEMLOCK) leaves the WRITE in
 * the stream, untaken and unsent, to be offered again: it waits while earlier I/O holds
 * registered memory, and with nothing in flight the connection ends after a grace time,
 * never a message sent inline that the peer must reject. Server role (the relay; its
 * data paths in test_bridge_chan_server.c): a signed channel READ or WRITE ends the
 * connection with the reason the relay logs, and nothing reaches the backend; an
 * encrypted one (TRANSFORM header) goes on unchanged. Client role in a signed session
 * whose key the host knows: the rewritten READ leaves signed with it, the server's
 * signed channel response becomes an inline one the key verifies, data included, and
 * a response altered after signing ends the connection with nothing handed on. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bridge_chan.h"
#include "bridge_pool.h"
#include "sd_bytes.h"
#include "smb2_sign.h"
#include "smb2_wire.h"
#include "th_conn.h"
#include "th_smb2.h"

#define MIB (1024u * 1024u)
#define OFF 64u /* where the test's stream buffer holds the message */
#define GRACE_MS 40u /* host.pin_grace_ms: a refused registration's wait with nothing in
                        flight */

struct host_rec {
    uint8_t *stream_buf;   /* the "framer" buffer holding the offered message */
    size_t stream_cap;
    int taken, failed;
    char why[400];
    int written;           /* messages handed to the stream; the last one in out */
    uint8_t out[TH_RW_FIXED + 65536];
    size_t out_len;
};

static int rec_to_stream(void *ctx, const struct iovec *iov, int iovcnt, uint8_t *alloc,
                         size_t cap)
{
    struct host_rec *h = ctx;

    (void)alloc, (void)cap;
    h->written++;
    h->out_len = 0;
    for (int i = 0; i < iovcnt; i++) {
        assert_true(h->out_len + iov[i].iov_len <= sizeof(h->out));
        memcpy(h->out + h->out_len, iov[i].iov_base, iov[i].iov_len);
        h->out_len += iov[i].iov_len;
    }
    return 0;
}

#define session_key th_smb2_key

static void rec_fail(void *ctx, int err, const char *why)
{
    struct host_rec *h = ctx;

    (void)err;
    h->failed++;
    snprintf(h->why, sizeof(h->why), "%s", why);
}

static int rec_take(void *ctx, uint8_t **mem, size_t *cap)
{
    struct host_rec *h = ctx;

    *mem = h->stream_buf;
    *cap = h->stream_cap;
    h->taken++;
    return 0;
}

struct rig {
    struct th_end e;
    struct host_rec h;
    struct bridge_chan *ch;
    uint8_t *msg;
    size_t len;
};

/* An established engine at 3.1.1 (MaxReadWriteSize 1 MiB) and a channel of role: the
 * client's (the shim's, threshold 4096) learns the dialect from the peer's NEGOTIATE
 * response, the server's (the relay's) from the backend's. */
static void rig_open_keyed(struct rig *r, enum bridge_chan_role role, int keyed)
{
    int client = role == BRIDGE_CHAN_CLIENT;
    uint8_t m[160];
    size_t n;

    memset(r, 0, sizeof(*r));
    bridge_pool_ref();
    th_end_init(&r->e, SMBD_ROLE_ACTIVE, NULL, fake_qp_new(7));
    th_active_establish(&r->e, m, th_negotiate_resp(m, 0x100, 10, 255, 0, MIB, 1364, 8192, MIB));
    const struct bridge_chan_host host = { .conn = r->e.conn, .ctx = &r->h,
                                           .remote_invalidation = client,
                                           .to_stream = rec_to_stream, .fail = rec_fail,
                                           .take_message = client ? rec_take : NULL,
                                           .signing_key = keyed ? th_smb2_key_of : NULL,
                                           .mem_limit = UINT64_MAX, .mem_limit_total = UINT64_MAX,
                                           .pin_grace_ms = GRACE_MS };
    r->ch = bridge_chan_new(role, client ? 4096 : 0, &host);
    assert_non_null(r->ch);
    n = th_smb2_negotiate_resp(m, 0x0311);
    assert_int_equal(client ? bridge_chan_from_peer(r->ch, m, n, 0)
                            : bridge_chan_from_stream(r->ch, m, n, 0), 0);
}

static void rig_open_role(struct rig *r, enum bridge_chan_role role) { rig_open_keyed(r, role, 0); }
static void rig_open(struct rig *r) { rig_open_role(r, BRIDGE_CHAN_CLIENT); }

/* A plain WRITE of len data bytes, in a pool buffer at OFF as a framer would hold it. */
static void offer_write(struct rig *r, uint64_t id, uint32_t len)
{
    r->h.stream_buf = bridge_pool_get(OFF + TH_RW_FIXED + len, &r->h.stream_cap);
    assert_non_null(r->h.stream_buf);
    r->msg = r->h.stream_buf + OFF;
    r->len = th_smb2_plain_write(r->msg, id, len);
}

static void rig_close(struct rig *r)
{
    bridge_chan_free(r->ch);
    th_end_free(&r->e);
    bridge_pool_unref();
}

/* The channel's count of bytes moved from where they lay (the shim's end line shows it). */
static uint64_t in_place_bytes(const struct rig *r)
{
    struct bridge_chan_stats st;

    bridge_chan_get_stats(r->ch, 1, &st);
    return st.in_place_bytes;
}

static void test_large_write_is_registered_where_it_lies(void **state)
{
    struct rig r;
    int mrs;

    (void)state;
    rig_open(&r);
    offer_write(&r, 1, MIB);
    fake_sent_clear(r.e.qp);
    mrs = fake_mr_count(r.e.qp);
    assert_int_equal(bridge_chan_from_stream(r.ch, r.msg, r.len, 1), 1);
    assert_int_equal(r.h.taken, 1);          /* the stream's buffer, not a copy */
    assert_int_equal(r.h.failed, 0);
    assert_int_equal(fake_sent_count(r.e.qp), 1);
    assert_true(fake_sent_get(r.e.qp, 0)->len < 1024); /* the rewritten request only */
    assert_int_equal(fake_mr_count(r.e.qp), mrs + 1); /* the WRITE's data */
    assert_int_equal(in_place_bytes(&r), MIB);
    rig_close(&r);                            /* deregisters and gives the buffer back */
}

static void test_small_write_is_copied(void **state)
{
    struct rig r;

    (void)state;
    rig_open(&r);
    offer_write(&r, 1, 64 * 1024);
    assert_int_equal(bridge_chan_from_stream(r.ch, r.msg, r.len, 1), 1);
    assert_int_equal(r.h.taken, 0);
    assert_int_equal(in_place_bytes(&r), 0);
    bridge_pool_put(r.h.stream_buf, r.h.stream_cap); /* still the stream's */
    rig_close(&r);
}


static void test_refused_registration_with_nothing_in_flight_waits_then_ends(void **state)
{
    struct bridge_chan_stats st;
    struct rig r;
    size_t sent;

    (void)state;
    rig_open(&r);
    offer_write(&r, 1, MIB);
    sent = fake_sent_count(r.e.qp);
    fake_fail_reg_mr(r.e.qp, -ENOMEM);
    assert_int_equal(bridge_chan_from_stream(r.ch, r.msg, r.len, 1000), BRIDGE_CHAN_WAIT);
    assert_int_equal(bridge_chan_from_stream(r.ch, r.msg, r.len, 1000 + GRACE_MS - 1),
                     BRIDGE_CHAN_WAIT);
    assert_int_equal(r.h.taken + r.h.failed, 0); /* still the stream's, nothing ended */
    bridge_chan_get_stats(r.ch, 1000 + GRACE_MS - 1, &st); /* one wait, going on */
    assert_int_equal(st.mem_waits, 1);
    assert_int_equal(st.mem_waiting, 1);
    assert_int_equal(st.mem_wait_ms, GRACE_MS - 1);
    assert_int_equal(bridge_chan_from_stream(r.ch, r.msg, r.len, 1000 + GRACE_MS), -1);
    assert_int_equal(r.h.failed, 1);
    assert_non_null(strstr(r.h.why, "RLIMIT_MEMLOCK"));
    assert_non_null(strstr(r.h.why, "for 40 ms"));
    assert_int_equal(r.h.taken, 0);
    assert_int_equal(fake_sent_count(r.e.qp), sent); /* nothing went to the peer */
    fake_fail_reg_mr(r.e.qp, 0);
    bridge_pool_put(r.h.stream_buf, r.h.stream_cap);
    rig_close(&r);
}

static void test_refused_registration_waits_while_earlier_io_is_in_flight(void **state)
{
    struct bridge_chan_stats st;
    struct rig r;
    size_t sent;

    (void)state;
    rig_open(&r);
    offer_write(&r, 1, MIB);
    assert_int_equal(bridge_chan_from_stream(r.ch, r.msg, r.len, 1000), 1); /* in flight */
    offer_write(&r, 2, MIB);
    sent = fake_sent_count(r.e.qp);
    fake_fail_reg_mr(r.e.qp, -ENOMEM);
    /* long past the grace time: WRITE 1 holds memory that comes back with its answer */
    assert_int_equal(bridge_chan_from_stream(r.ch, r.msg, r.len, 1000 + 10 * GRACE_MS),
                     BRIDGE_CHAN_WAIT);
    assert_int_equal(r.h.taken, 1);
    assert_int_equal(r.h.failed, 0);
    assert_int_equal(fake_sent_count(r.e.qp), sent);
    fake_fail_reg_mr(r.e.qp, 0); /* memory came free: the same WRITE goes by the channel */
    assert_int_equal(bridge_chan_from_stream(r.ch, r.msg, r.len, 1000 + 10 * GRACE_MS + 2), 1);
    assert_int_equal(r.h.taken, 2);
    bridge_chan_get_stats(r.ch, 1000 + 10 * GRACE_MS + 50, &st); /* one wait, of 2 ms, over */
    assert_int_equal(st.mem_waits, 1);
    assert_int_equal(st.mem_wait_ms, 2);
    assert_int_equal(st.mem_waiting, 0);
    assert_int_equal(fake_sent_count(r.e.qp), sent + 1);
    assert_true(fake_sent_get(r.e.qp, sent)->len < 1024); /* the rewritten request */
    rig_close(&r); /* both WRITEs' buffers are the channel's: freed here */
}

static void rig_open_server(struct rig *r) { rig_open_role(r, BRIDGE_CHAN_SERVER); }

/* A READ of 64 KiB whose data the client asks to have RDMA-written to one buffer. */
static size_t channel_read_req(uint8_t *b, uint32_t flags)
{
    const struct th_hdr h = { .command = SMB2_READ, .flags = flags, .message_id = 9 };
    const struct th_rw rw = { .length = 65536, .channel = SMB2_CHANNEL_RDMA_V1, .info_offset = 112,
                              .info_length = 16 };

    th_smb2_read_req(b, &h, &rw);
    th_smb2_desc(b + 112, 0x1000, 77, 65536);
    return 128;
}

static void test_signed_channel_request_ends_the_connection_with_its_reason(void **state)
{
    struct rig r;
    uint8_t m[128];
    size_t n, sent;

    (void)state;
    rig_open_server(&r);
    sent = fake_sent_count(r.e.qp);
    n = channel_read_req(m, SMB2_FLAGS_SIGNED);
    assert_int_equal(bridge_chan_from_peer(r.ch, m, n, 0), -1);
    assert_int_equal(r.h.failed, 1);
    /* the relay's log: "relay: conn N closed: ... reason " followed by this */
    assert_string_equal(r.h.why, "RDMA channel request refused: signed RDMA channel "
                                 "READ/WRITE (cannot be re-signed)");
    assert_int_equal(fake_sent_count(r.e.qp), sent); /* no answer, no RDMA to the client */
    rig_close(&r);
}

static void test_encrypted_channel_request_goes_to_the_backend_unchanged(void **state)
{
    struct rig r;
    uint8_t m[52 + 128];

    (void)state;
    rig_open_server(&r);
    /* MS-SMB2 2.2.41: a TRANSFORM header (0xFD 'SMB', 52 bytes) and what it encrypts; the
     * relay cannot read past it, whatever the ciphertext holds */
    memset(m, 0, 52);
    memcpy(m, "\xfdSMB", 4);
    channel_read_req(m + 52, 0);
    assert_int_equal(bridge_chan_from_peer(r.ch, m, sizeof(m), 0), 0);
    assert_int_equal(r.h.failed, 0);
    rig_close(&r);
}

/* The SMB2 message the i-th Send carried (MS-SMBD 2.2.3: DataOffset at 12, DataLength
 * at 16). */
static const uint8_t *sent_smb2(const struct rig *r, size_t i, size_t *len)
{
    const struct fake_sent *f = fake_sent_get(r->e.qp, i);

    *len = sd_le32(f->data + 16);
    return f->data + sd_le32(f->data + 12);
}

/* The program's READ of 64 KiB, signed with the session's key, offered to the channel:
 * it leaves rewritten (Send i), signed again with the key. */
static void signed_read_leaves_signed(struct rig *r, uint64_t id)
{
    uint8_t m[TH_RW_FIXED + 1];
    size_t n = th_smb2_plain_read(m, id, 65536), sent = fake_sent_count(r->e.qp), out_len;
    const uint8_t *out;

    assert_int_equal(smb2_sign(&session_key, SMB2_SIGN_FROM_CLIENT, m, n), 0);
    assert_int_equal(bridge_chan_from_stream(r->ch, m, n, 1), 1);
    assert_int_equal(fake_sent_count(r->e.qp), sent + 1);
    out = sent_smb2(r, sent, &out_len);
    assert_int_equal(sd_le32(out + 64 + 36), SMB2_CHANNEL_RDMA_V1_INVALIDATE); /* Channel */
    assert_true(sd_le32(out + 16) & SMB2_FLAGS_SIGNED);
    assert_int_equal(smb2_sign_verify(&session_key, SMB2_SIGN_FROM_CLIENT, out, out_len), 0);
}

/* A keyed client rig whose signed READ id left signed; the server's signed answer in b. */
static size_t rig_with_signed_read(struct rig *r, uint64_t id, uint8_t b[80])
{
    rig_open_keyed(r, BRIDGE_CHAN_CLIENT, 1);
    signed_read_leaves_signed(r, id);
    return th_smb2_channel_read_resp(b, id, &session_key);
}

static void test_signed_read_is_signed_again_and_its_answer_checked(void **state)
{
    struct bridge_chan_stats st;
    struct rig r;
    uint8_t b[80];
    size_t n;

    (void)state;
    n = rig_with_signed_read(&r, 5, b);
    assert_int_equal(bridge_chan_from_peer(r.ch, b, n, 0), 1);
    assert_int_equal(r.h.failed, 0);
    assert_int_equal(r.h.written, 1);
    /* the inline response the program gets: 0x50 + the data, signed with the key */
    assert_int_equal(r.h.out_len, 0x50 + 65536);
    assert_int_equal(sd_le32(r.h.out + 64 + 4), 65536); /* DataLength */
    assert_int_equal(smb2_sign_verify(&session_key, SMB2_SIGN_FROM_SERVER, r.h.out,
                                      r.h.out_len), 0);
    bridge_chan_get_stats(r.ch, 1, &st);
    assert_int_equal(st.rdma_writes, 1);
    assert_int_equal(st.rdma_signed, 1);
    rig_close(&r);
}

static void test_signed_read_answer_altered_after_signing_ends_the_connection(void **state)
{
    struct rig r;
    uint8_t b[80];
    size_t n;

    (void)state;
    n = rig_with_signed_read(&r, 6, b);
    sd_put_le32(b + 64 + 8, 100); /* DataRemaining, after the server signed */
    assert_int_equal(bridge_chan_from_peer(r.ch, b, n, 0), -1);
    assert_int_equal(r.h.failed, 1);
    assert_non_null(strstr(r.h.why, "signature does not verify with the session's key"));
    assert_int_equal(r.h.written, 0); /* no data reached the program */
    rig_close(&r);
}

static void test_signed_read_without_a_key_stays_inline(void **state)
{
    struct rig r;
    uint8_t m[TH_RW_FIXED + 1];
    size_t n, sent;

    (void)state;
    rig_open(&r); /* no signing_key: a keyless relay */
    n = th_smb2_plain_read(m, 7, 65536);
    assert_int_equal(smb2_sign(&session_key, SMB2_SIGN_FROM_CLIENT, m, n), 0);
    sent = fake_sent_count(r.e.qp);
    assert_int_equal(bridge_chan_from_stream(r.ch, m, n, 1), 0); /* unchanged */
    assert_int_equal(fake_sent_count(r.e.qp), sent);
    rig_close(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_large_write_is_registered_where_it_lies),
        cmocka_unit_test(test_small_write_is_copied),
        cmocka_unit_test(test_refused_registration_with_nothing_in_flight_waits_then_ends),
        cmocka_unit_test(test_refused_registration_waits_while_earlier_io_is_in_flight),
        cmocka_unit_test(test_signed_channel_request_ends_the_connection_with_its_reason),
        cmocka_unit_test(test_encrypted_channel_request_goes_to_the_backend_unchanged),
        cmocka_unit_test(test_signed_read_is_signed_again_and_its_answer_checked),
        cmocka_unit_test(test_signed_read_answer_altered_after_signing_ends_the_connection),
        cmocka_unit_test(test_signed_read_without_a_key_stays_inline),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
