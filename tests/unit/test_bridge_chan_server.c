/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/test_bridge_chan_server.c — the channel's server role (the relay,
 * transport/bridge/bridge_chan_server.c) between two engines on the fake provider's
 * linked queue pairs: the test is the SMB Direct client (it registers its buffers and
 * sends channel requests naming them) and the backend (a recording host). A channel
 * WRITE's data is RDMA-read from the client's buffer and reaches the backend as an
 * inline WRITE with exactly those bytes (MS-SMBD 3.1.4.6, MS-SMB2 2.2.21); a channel
 * READ reaches it inline and its answer's data is RDMA-written into the client's buffer
 * before the response, which carries none (DataLength 0, DataRemaining the bytes,
 * MS-SMB2 2.2.20, 3.3.5.12), a large answer's data from the stream buffer it arrived in;
 * WRITEs beyond the connection's or the process's budget wait
 * and proceed in order as earlier ones free their buffers; RDMA_V1_INVALIDATE makes the
 * response a Send with Invalidate of the first descriptor's token from dialect 3.0.2
 * (MS-SMBD 3.1.4.2, MS-SMB2 2.2.19); a compound request holding a channel READ or WRITE
 * ends the connection (the relay cannot rewrite a member of a chain). */
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
#include "sd_clock.h"
#include "smb2_wire.h"
#include "smbd_bridge.h"
#include "smbd_wire.h"
#include "th_conn.h"
#include "th_smb2.h"

#define MAX_MSGS 8
#define MAX_DESCS 4

/* The host: what the relay wrote to the backend, and how it failed. */
struct backend {
    uint8_t *msg[MAX_MSGS];
    size_t len[MAX_MSGS];
    int n;
    int failed, err;
    char why[400];
    uint8_t *stream_buf;     /* the pool buffer the next message offered lies in (NULL:
                                none), which the channel may take over */
    size_t stream_cap;
    int taken;
};

struct rig {
    struct th_end c, r;      /* c: the SMB Direct client (the test), r: the relay */
    struct backend be;
    struct bridge_chan *ch;  /* the relay's channel, over r */
};

/* One I/O's buffer at the client, registered for the relay. */
struct cio {
    uint8_t *buf;
    uint32_t len;
    struct smbd_registration *reg;
    struct smbd_buffer_desc d[MAX_DESCS];
    size_t nd;
};

static int be_to_stream(void *ctx, const struct iovec *iov, int iovcnt, uint8_t *alloc,
                        size_t cap)
{
    struct backend *be = ctx;
    size_t len = 0, off = 0;

    (void)alloc, (void)cap; /* copied: the relay keeps its buffer */
    assert_true(be->n < MAX_MSGS);
    for (int i = 0; i < iovcnt; i++)
        len += iov[i].iov_len;
    be->msg[be->n] = malloc(len);
    assert_non_null(be->msg[be->n]);
    for (int i = 0; i < iovcnt; off += iov[i].iov_len, i++)
        memcpy(be->msg[be->n] + off, iov[i].iov_base, iov[i].iov_len);
    be->len[be->n++] = len;
    return 0;
}

static int be_take(void *ctx, uint8_t **mem, size_t *cap)
{
    struct backend *be = ctx;

    if (!be->stream_buf)
        return -EINVAL;
    *mem = be->stream_buf;
    *cap = be->stream_cap;
    be->stream_buf = NULL;
    be->taken++;
    return 0;
}

static void be_fail(void *ctx, int err, const char *why)
{
    struct backend *be = ctx;

    be->failed++;
    be->err = err;
    snprintf(be->why, sizeof(be->why), "%s", why);
}

/* The relay's engine reports an RDMA completion: the bridge hands it to the channel. */
static void relay_rdma_done(struct th_end *e, uint64_t cookie, int status)
{
    bridge_chan_rdma_done(((struct rig *)e->user)->ch, cookie, status);
}

/* A linked pair, the relay's channel with these budgets, the backend's NEGOTIATE
 * response at dialect seen. */
static void rig_open(struct rig *g, uint64_t mem_limit, uint64_t mem_limit_total, uint16_t dialect)
{
    uint8_t m[160];

    memset(g, 0, sizeof(*g));
    bridge_pool_ref();
    th_pair_establish(&g->c, &g->r, NULL, NULL, 5);
    assert_int_equal(g->c.established + g->r.established, 2);
    g->r.user = g;
    g->r.on_rdma_done = relay_rdma_done;
    const struct bridge_chan_host host = { .conn = g->r.conn, .ctx = &g->be,
                                           .to_stream = be_to_stream, .fail = be_fail,
                                           .take_message = be_take,
                                           .mem_limit = mem_limit,
                                           .mem_limit_total = mem_limit_total,
                                           .pin_grace_ms = SMBD_BRIDGE_PIN_GRACE_MS };
    g->ch = bridge_chan_new(BRIDGE_CHAN_SERVER, 0, &host);
    assert_non_null(g->ch);
    assert_int_equal(bridge_chan_from_stream(g->ch, m, th_smb2_negotiate_resp(m, dialect), 0), 0);
}

static void rig_close(struct rig *g)
{
    bridge_chan_free(g->ch);
    th_end_free(&g->c);
    th_end_free(&g->r);
    for (int i = 0; i < g->be.n; i++)
        free(g->be.msg[i]);
    bridge_pool_unref();
}

static void settle(struct rig *g)
{
    th_settle(&g->c, &g->r, 1);
}

/* settle with the relay's requests executed one at a time, the client taking each
 * one's completions before the next runs: what it sees follows the relay's order. */
static void settle_stepwise(struct rig *g)
{
    int moved;

    do {
        moved = fake_deliver(g->c.qp, 1 << 30) + fake_deliver(g->r.qp, 1);
        moved += th_poll(&g->c, 1, 1 << 30) + th_poll(&g->r, 1, 1 << 30);
    } while (moved);
}

/* A client buffer of len bytes: pattern bytes from seed the relay may read (a WRITE's
 * data), or zeros it may write (a READ's sink). */
static void cio_open(struct rig *g, struct cio *io, uint32_t len, int access, uint8_t seed)
{
    io->buf = malloc(len);
    assert_non_null(io->buf);
    io->len = len;
    for (uint32_t i = 0; i < len; i++)
        io->buf[i] = access == SMBD_REG_PEER_READ ? (uint8_t)(seed + i * 7) : 0;
    assert_int_equal(smbd_conn_register_buffer(g->c.conn, io->buf, len, access, &io->reg, io->d,
                                               MAX_DESCS, &io->nd), 0);
}

static void cio_close(struct rig *g, struct cio *io)
{
    smbd_conn_deregister_buffer(g->c.conn, io->reg);
    free(io->buf);
}

static int is_pattern(const uint8_t *b, uint32_t len, uint8_t seed)
{
    for (uint32_t i = 0; i < len; i++)
        if (b[i] != (uint8_t)(seed + i * 7))
            return 0;
    return 1;
}

/* The channel READ or WRITE (command) of io's bytes, MessageId id, naming io's buffer
 * (MS-SMB2 2.2.19 Length / 2.2.21 RemainingBytes, the descriptors right after the fixed
 * part). Returns its length. */
static size_t channel_req(uint8_t *m, uint16_t command, uint64_t id, uint32_t channel,
                          const struct cio *io)
{
    const struct th_hdr h = { .command = command, .message_id = id };
    struct th_rw rw = { .channel = channel, .info_offset = TH_RW_FIXED,
                        .info_length = (uint16_t)(io->nd * SMBD_BUFFER_DESC_SIZE) };

    if (command == SMB2_READ) {
        rw.length = io->len;
        th_smb2_read_req(m, &h, &rw);
    } else {
        rw.remaining = io->len;
        th_smb2_write_req(m, &h, &rw);
    }
    for (size_t i = 0; i < io->nd; i++)
        th_smb2_desc(m + TH_RW_FIXED + i * SMBD_BUFFER_DESC_SIZE, io->d[i].offset, io->d[i].token,
                     io->d[i].length);
    return TH_RW_FIXED + io->nd * SMBD_BUFFER_DESC_SIZE;
}

/* The backend's i-th message is the inline WRITE of MessageId id with len pattern bytes
 * from seed: Channel NONE and no channel information (MS-SMB2 2.2.21), the other fields
 * as the client sent them. */
static void expect_inline_write(const struct backend *be, int i, uint64_t id, uint32_t len,
                                uint8_t seed)
{
    const uint8_t *w = be->msg[i];

    assert_true(i < be->n);
    assert_int_equal(be->len[i], TH_RW_FIXED + len);
    assert_int_equal(sd_le16(w + 12), SMB2_WRITE);
    assert_int_equal(sd_le64(w + 24), id);
    assert_int_equal(sd_le16(w + 66), TH_RW_FIXED); /* DataOffset */
    assert_int_equal(sd_le32(w + 68), len);         /* Length */
    assert_int_equal(sd_le32(w + 96), SMB2_CHANNEL_NONE);
    assert_int_equal(sd_le32(w + 100), 0);          /* RemainingBytes */
    assert_int_equal(sd_le16(w + 104), 0);          /* WriteChannelInfoOffset */
    assert_int_equal(sd_le16(w + 106), 0);          /* WriteChannelInfoLength */
    assert_int_equal(sd_le32(w + 108), 1);          /* Flags, kept */
    assert_int_equal(sd_le64(w + 72), 0x0102030405060708ull); /* Offset, kept */
    assert_true(is_pattern(w + TH_RW_FIXED, len, seed));
}

static void test_channel_write_data_is_rdma_read_and_goes_inline_to_the_backend(void **state)
{
    struct rig g;
    struct cio io;
    struct bridge_chan_stats st;
    uint8_t m[TH_RW_FIXED + MAX_DESCS * 16], resp[80];
    size_t delivered;
    const uint32_t len = 200001;

    (void)state;
    rig_open(&g, UINT64_MAX, UINT64_MAX, 0x0311);
    cio_open(&g, &io, len, SMBD_REG_PEER_READ, 3);
    assert_int_equal(bridge_chan_from_peer(g.ch, m, channel_req(m, SMB2_WRITE, 5,
                                                                SMB2_CHANNEL_RDMA_V1, &io), 0), 1);
    assert_int_equal(g.be.n, 0); /* the data first */
    delivered = g.c.delivered;
    settle(&g);
    assert_int_equal(g.be.failed, 0);
    assert_int_equal(g.be.n, 1);
    expect_inline_write(&g.be, 0, 5, len, 3);
    assert_int_equal(g.c.delivered, delivered); /* nothing to the client yet */
    bridge_chan_get_stats(g.ch, sd_now_ms(), &st);
    assert_int_equal(st.rdma_reads, 1);
    assert_int_equal(st.rdma_read_bytes, len);
    /* RDMA_V1: the backend's answer goes to the client unchanged (the bridge sends it) */
    const struct th_hdr h = { .command = SMB2_WRITE, .message_id = 5 };
    assert_int_equal(bridge_chan_from_stream(g.ch, resp, th_smb2_write_resp(resp, &h, len), 2), 0);
    cio_close(&g, &io);
    rig_close(&g);
}

/* The client's READ sink holds the data when the response arrives (the Send follows the
 * RDMA Write on the connection). */
static void check_sink_at_response(struct th_end *e, const uint8_t *data, size_t len)
{
    const struct cio *io = e->user;

    (void)data, (void)len;
    assert_true(is_pattern(io->buf, io->len, 9));
}

/* A backend's answer to a channel READ with its data (pattern 9), of len bytes.
 * Fills resp, which has room for 80 + len bytes; returns the answer's length. */
static size_t read_answer(uint8_t *resp, uint64_t id, uint32_t len)
{
    const struct th_hdr h = { .command = SMB2_READ, .message_id = id };

    th_smb2_read_resp(resp, &h, 80, len, 0);
    for (uint32_t i = 0; i < len; i++)
        resp[80 + i] = (uint8_t)(9 + i * 7);
    return 80 + len;
}

/* A channel READ of io's bytes, MessageId id, into io; the backend answers in resp (room
 * for 80 + io->len bytes) with pattern bytes from 9; the response reaches the client (its
 * last delivery). */
static void channel_read_into(struct rig *g, struct cio *io, uint64_t id, uint32_t channel,
                              uint8_t *resp)
{
    uint8_t m[TH_RW_FIXED + MAX_DESCS * 16];
    const uint8_t *r;
    size_t delivered;
    int k = g->be.n;

    assert_int_equal(bridge_chan_from_peer(g->ch, m, channel_req(m, SMB2_READ, id, channel, io), 0),
                     1);
    assert_int_equal(g->be.n, k + 1); /* inline, at once: Channel NONE, no channel information */
    r = g->be.msg[k];
    assert_int_equal(g->be.len[k], TH_RW_FIXED + 1);
    assert_int_equal(sd_le64(r + 24), id);
    assert_int_equal(sd_le32(r + 68), io->len); /* Length */
    assert_int_equal(sd_le32(r + 100), SMB2_CHANNEL_NONE);
    assert_int_equal(sd_le32(r + 104), 0);      /* RemainingBytes */
    assert_int_equal(sd_le16(r + 108), 0);      /* ReadChannelInfoOffset */
    assert_int_equal(sd_le16(r + 110), 0);      /* ReadChannelInfoLength */
    assert_int_equal(bridge_chan_from_stream(g->ch, resp, read_answer(resp, id, io->len), 2),
                     1); /* answered */
    delivered = g->c.delivered;
    g->c.user = io;
    g->c.on_deliver = check_sink_at_response;
    settle_stepwise(g);
    g->c.on_deliver = NULL;
    assert_int_equal(g->be.failed, 0);
    assert_int_equal(g->c.delivered, delivered + 1);
}

/* The same with the answer in memory of the test's own (never taken over). */
static void channel_read(struct rig *g, struct cio *io, uint64_t id, uint32_t channel)
{
    uint8_t *resp = malloc(80 + io->len);

    assert_non_null(resp);
    channel_read_into(g, io, id, channel, resp);
    free(resp);
}

static void test_channel_read_data_is_rdma_written_and_the_response_carries_none(void **state)
{
    struct rig g;
    struct cio io;
    struct bridge_chan_stats st;
    const uint8_t *r;

    (void)state;
    rig_open(&g, UINT64_MAX, UINT64_MAX, 0x0311);
    cio_open(&g, &io, 100003, SMBD_REG_PEER_WRITE, 0);
    channel_read(&g, &io, 7, SMB2_CHANNEL_RDMA_V1);
    assert_true(is_pattern(io.buf, io.len, 9));
    /* MS-SMB2 2.2.20, 3.3.5.12: DataLength 0, DataRemaining the bytes written by RDMA;
     * DataOffset where Buffer would start (0x50), no Buffer byte */
    r = g.c.last;
    assert_int_equal(g.c.last_len, 80);
    assert_int_equal(sd_le16(r + 12), SMB2_READ);
    assert_int_equal(sd_le64(r + 24), 7);
    assert_int_equal(sd_le16(r + 64), 17);
    assert_int_equal(r[66], 0x50);
    assert_int_equal(sd_le32(r + 68), 0);
    assert_int_equal(sd_le32(r + 72), io.len);
    assert_int_equal(g.c.ninvalidated, 0); /* RDMA_V1: no Send with Invalidate */
    bridge_chan_get_stats(g.ch, sd_now_ms(), &st);
    assert_int_equal(st.rdma_writes, 1);
    assert_int_equal(st.rdma_write_bytes, io.len);
    assert_int_equal(st.in_place_bytes, 0); /* under BRIDGE_POOL_MIN: copied */
    cio_close(&g, &io);
    rig_close(&g);
}

/* A large answer's data is RDMA-written from the stream buffer it arrived in (taken over,
 * not copied), which goes back to the pool once the Write is done. */
static void test_large_read_answer_is_rdma_written_from_where_it_lay(void **state)
{
    const uint32_t len = 1u << 20;
    struct rig g;
    struct cio io;
    struct bridge_chan_stats st;

    (void)state;
    rig_open(&g, UINT64_MAX, UINT64_MAX, 0x0311);
    cio_open(&g, &io, len, SMBD_REG_PEER_WRITE, 0);
    g.be.stream_buf = bridge_pool_get(80 + len, &g.be.stream_cap);
    assert_non_null(g.be.stream_buf);
    channel_read_into(&g, &io, 7, SMB2_CHANNEL_RDMA_V1, g.be.stream_buf);
    assert_int_equal(g.be.taken, 1);
    assert_true(is_pattern(io.buf, io.len, 9));
    bridge_chan_get_stats(g.ch, sd_now_ms(), &st);
    assert_int_equal(st.rdma_write_bytes, len);
    assert_int_equal(st.in_place_bytes, len);
    assert_int_equal(st.mem_held, 0); /* the buffer is back in the pool */
    cio_close(&g, &io);
    rig_close(&g);
}

/* Three channel WRITEs at once under a budget with room for one buffer: one RDMA Read
 * is posted, the others wait and start in arrival order as each completes; all three
 * reach the backend, in order, intact, never two buffers held at once. */
static void budget_serialises_writes(uint64_t mem_limit, uint64_t mem_limit_total)
{
    enum { N = 3, LEN = 300000 };
    struct rig g;
    struct cio io[N];
    struct bridge_chan_stats st;
    uint8_t m[TH_RW_FIXED + MAX_DESCS * 16];

    rig_open(&g, mem_limit, mem_limit_total, 0x0311);
    for (int i = 0; i < N; i++) {
        cio_open(&g, &io[i], LEN, SMBD_REG_PEER_READ, (uint8_t)(20 * i + 1));
        assert_int_equal(bridge_chan_from_peer(g.ch, m, channel_req(m, SMB2_WRITE, 10 + (uint64_t)i,
                                                                    SMB2_CHANNEL_RDMA_V1, &io[i]),
                                               0), 1);
    }
    assert_int_equal(fake_wire_pending(g.r.qp), 1); /* one RDMA Read, two WRITEs wait */
    assert_int_equal(bridge_chan_retry(g.ch), 1);   /* ... and say so */
    bridge_chan_get_stats(g.ch, sd_now_ms(), &st);  /* one wait so far: WRITE 2's, now */
    assert_int_equal(st.mem_waits, 1);
    assert_int_equal(st.mem_waiting, 1);
    assert_true(st.mem_held >= LEN && st.mem_held < 2 * LEN); /* one buffer, as allocated */
    settle(&g);
    assert_int_equal(g.be.failed, 0);
    assert_int_equal(g.be.n, N);
    for (int i = 0; i < N; i++)
        expect_inline_write(&g.be, i, 10 + (uint64_t)i, LEN, (uint8_t)(20 * i + 1));
    bridge_chan_get_stats(g.ch, sd_now_ms(), &st);
    assert_int_equal(st.rdma_reads, N);
    assert_true(st.mem_peak >= LEN && st.mem_peak < 2 * LEN);
    assert_int_equal(st.mem_waits, N - 1); /* WRITE 2's and WRITE 3's, each counted once */
    assert_int_equal(st.mem_waiting, 0);
    assert_int_equal(bridge_chan_retry(g.ch), 0);
    for (int i = 0; i < N; i++)
        cio_close(&g, &io[i]);
    rig_close(&g);
}

static void test_writes_beyond_the_connections_budget_wait_and_proceed_in_order(void **state)
{
    (void)state;
    budget_serialises_writes(300000, UINT64_MAX);
}

static void test_writes_beyond_the_process_budget_wait_and_proceed_in_order(void **state)
{
    (void)state;
    budget_serialises_writes(UINT64_MAX, 300000);
}

/* A READ's answer held back first by the connection's budget, then by a refused
 * registration, is one wait: it ends when the RDMA Write of its data starts. */
static void test_a_read_answer_held_by_budget_then_registration_is_one_wait(void **state)
{
    enum { LEN = 200000 };
    struct rig g;
    struct cio io[2];
    struct bridge_chan_stats st;
    uint8_t m[TH_RW_FIXED + MAX_DESCS * 16], *resp[2];

    (void)state;
    rig_open(&g, 300000, UINT64_MAX, 0x0311);
    for (int i = 0; i < 2; i++) {
        cio_open(&g, &io[i], LEN, SMBD_REG_PEER_WRITE, 0);
        assert_int_equal(bridge_chan_from_peer(g.ch, m, channel_req(m, SMB2_READ, 7 + (uint64_t)i,
                                                                    SMB2_CHANNEL_RDMA_V1, &io[i]),
                                               0), 1);
        assert_non_null(resp[i] = malloc(80 + LEN));
    }
    assert_int_equal(bridge_chan_from_stream(g.ch, resp[0], read_answer(resp[0], 7, LEN), 1000),
                     1); /* its RDMA Write in flight holds LEN of the budget */
    assert_int_equal(bridge_chan_from_stream(g.ch, resp[1], read_answer(resp[1], 8, LEN), 1001),
                     BRIDGE_CHAN_WAIT);
    settle(&g); /* READ 7 answered: its buffer is freed */
    fake_fail_reg_mr(g.r.qp, -ENOMEM);
    assert_int_equal(bridge_chan_from_stream(g.ch, resp[1], read_answer(resp[1], 8, LEN), 1005),
                     1); /* the answer's now, waiting for its registration */
    bridge_chan_get_stats(g.ch, 1006, &st);
    assert_int_equal(st.mem_waits, 1);
    assert_int_equal(st.mem_waiting, 1);
    fake_fail_reg_mr(g.r.qp, 0);
    assert_int_equal(bridge_chan_retry(g.ch), 0);
    settle(&g);
    assert_int_equal(g.be.failed, 0);
    assert_true(is_pattern(io[1].buf, LEN, 9));
    bridge_chan_get_stats(g.ch, sd_now_ms(), &st);
    assert_int_equal(st.mem_waits, 1);
    assert_int_equal(st.mem_waiting, 0);
    assert_int_equal(st.rdma_writes, 2);
    for (int i = 0; i < 2; i++) {
        free(resp[i]);
        cio_close(&g, &io[i]);
    }
    rig_close(&g);
}

static void test_invalidate_read_answers_with_send_with_invalidate(void **state)
{
    struct rig g;
    struct cio io;

    (void)state;
    rig_open(&g, UINT64_MAX, UINT64_MAX, 0x0311);
    cio_open(&g, &io, 70000, SMBD_REG_PEER_WRITE, 0);
    channel_read(&g, &io, 8, SMB2_CHANNEL_RDMA_V1_INVALIDATE);
    assert_int_equal(sd_le32(g.c.last + 72), io.len);
    assert_int_equal(g.c.ninvalidated, 1);
    assert_int_equal(g.c.invalidated[0], io.d[0].token);
    cio_close(&g, &io);
    rig_close(&g);
}

/* A WRITE's response carries no data: it goes to the client unchanged, as a Send with
 * Invalidate (the channel sends it instead of the bridge). */
static void test_invalidate_write_answers_with_send_with_invalidate(void **state)
{
    struct rig g;
    struct cio io;
    uint8_t m[TH_RW_FIXED + MAX_DESCS * 16], resp[80];
    const struct th_hdr h = { .command = SMB2_WRITE, .message_id = 6 };
    size_t n;

    (void)state;
    rig_open(&g, UINT64_MAX, UINT64_MAX, 0x0311);
    cio_open(&g, &io, 5000, SMBD_REG_PEER_READ, 4);
    assert_int_equal(bridge_chan_from_peer(g.ch, m, channel_req(m, SMB2_WRITE, 6,
                                                                SMB2_CHANNEL_RDMA_V1_INVALIDATE,
                                                                &io), 0), 1);
    settle(&g);
    expect_inline_write(&g.be, 0, 6, io.len, 4);
    n = th_smb2_write_resp(resp, &h, io.len);
    assert_int_equal(bridge_chan_from_stream(g.ch, resp, n, 2), 1);
    settle(&g);
    assert_int_equal(g.be.failed, 0);
    assert_int_equal(g.c.last_len, n);
    assert_memory_equal(g.c.last, resp, n);
    assert_int_equal(g.c.ninvalidated, 1);
    assert_int_equal(g.c.invalidated[0], io.d[0].token);
    cio_close(&g, &io);
    rig_close(&g);
}

/* Remote invalidation exists from 3.0.2 (MS-SMB2 2.2.19): at 3.0 the request is served
 * without it. */
static void test_invalidate_at_dialect_3_0_is_served_without_it(void **state)
{
    struct rig g;
    struct cio io;

    (void)state;
    rig_open(&g, UINT64_MAX, UINT64_MAX, 0x0300);
    cio_open(&g, &io, 70000, SMBD_REG_PEER_WRITE, 0);
    channel_read(&g, &io, 8, SMB2_CHANNEL_RDMA_V1_INVALIDATE);
    assert_true(is_pattern(io.buf, io.len, 9));
    assert_int_equal(g.c.ninvalidated, 0);
    cio_close(&g, &io);
    rig_close(&g);
}

/* The relay cannot rewrite one member of a chain (nor re-sign it): a compound request
 * holding a channel READ or WRITE ends the connection, naming why, with nothing sent to
 * the backend or the client and no RDMA. A chain without one goes on unchanged. */
static void expect_compound_refused(struct rig *g, const uint8_t *m, size_t len)
{
    size_t delivered = g->c.delivered;

    assert_int_equal(bridge_chan_from_peer(g->ch, m, len, 0), -1);
    assert_int_equal(g->be.failed, 1);
    assert_int_equal(g->be.err, -EPROTO);
    assert_string_equal(g->be.why, "RDMA channel request refused: RDMA channel READ/WRITE "
                                   "inside a compound request");
    assert_int_equal(g->be.n, 0);
    assert_int_equal(fake_wire_pending(g->r.qp), 0);
    settle(g);
    assert_int_equal(g->c.delivered, delivered);
    g->be.failed = 0;
}

static void test_compound_with_a_channel_io_ends_the_connection(void **state)
{
    struct rig g;
    struct cio io;
    uint8_t m[120 + TH_RW_FIXED + MAX_DESCS * 16];
    size_t n;

    (void)state;
    rig_open(&g, UINT64_MAX, UINT64_MAX, 0x0311);
    cio_open(&g, &io, 5000, SMBD_REG_PEER_READ, 4);
    /* a plain READ, then (NextCommand 120, 8-byte aligned) a channel WRITE */
    th_smb2_plain_read(m, 1, 10);
    sd_put_le32(m + 20, 120);
    n = 120 + channel_req(m + 120, SMB2_WRITE, 2, SMB2_CHANNEL_RDMA_V1, &io);
    expect_compound_refused(&g, m, n);
    /* the channel WRITE first, a plain READ after it */
    assert_int_equal(io.nd, 1);
    channel_req(m, SMB2_WRITE, 3, SMB2_CHANNEL_RDMA_V1, &io);
    sd_put_le32(m + 20, 128);
    th_smb2_plain_read(m + 128, 4, 10);
    expect_compound_refused(&g, m, 128 + 113);
    /* two plain READs: not the channel's */
    th_smb2_plain_read(m, 5, 10);
    sd_put_le32(m + 20, 120);
    th_smb2_plain_read(m + 120, 6, 10);
    assert_int_equal(bridge_chan_from_peer(g.ch, m, 120 + 113, 0), 0);
    assert_int_equal(g.be.failed, 0);
    cio_close(&g, &io);
    rig_close(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_channel_write_data_is_rdma_read_and_goes_inline_to_the_backend),
        cmocka_unit_test(test_channel_read_data_is_rdma_written_and_the_response_carries_none),
        cmocka_unit_test(test_large_read_answer_is_rdma_written_from_where_it_lay),
        cmocka_unit_test(test_writes_beyond_the_connections_budget_wait_and_proceed_in_order),
        cmocka_unit_test(test_writes_beyond_the_process_budget_wait_and_proceed_in_order),
        cmocka_unit_test(test_a_read_answer_held_by_budget_then_registration_is_one_wait),
        cmocka_unit_test(test_invalidate_read_answers_with_send_with_invalidate),
        cmocka_unit_test(test_invalidate_write_answers_with_send_with_invalidate),
        cmocka_unit_test(test_invalidate_at_dialect_3_0_is_served_without_it),
        cmocka_unit_test(test_compound_with_a_channel_io_ends_the_connection),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
