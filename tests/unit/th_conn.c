/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/th_conn.c — the engine test harness of th_conn.h. */
#include "sd_bytes.h"
#include "th_conn.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

static void th_established(void *ctx)
{
    ((struct th_end *)ctx)->established++;
}

static void th_deliver(void *ctx, const uint8_t *data, size_t len)
{
    struct th_end *e = ctx;

    e->delivered++;
    free(e->last);
    e->last = malloc(len ? len : 1);
    if (!e->last)
        abort();
    memcpy(e->last, data, len);
    e->last_len = len;
    if (e->on_deliver)
        e->on_deliver(e, data, len);
}

static void th_deliver_fragment(void *ctx, const uint8_t *data, size_t len, uint32_t remaining,
                                int first)
{
    struct th_end *e = ctx;
    uint8_t *grown = realloc(e->stream, e->stream_len + len + 1);

    if (!grown)
        abort();
    e->stream = grown;
    memcpy(e->stream + e->stream_len, data, len);
    e->stream_len += len;
    if (e->nfrags < 64)
        e->frags[e->nfrags] = (struct th_frag){ .len = len, .remaining = remaining, .first = first };
    e->nfrags++;
    if (remaining == 0)
        e->delivered++;
}

static void th_invalidated(void *ctx, uint32_t token)
{
    struct th_end *e = ctx;

    if (e->ninvalidated < 8)
        e->invalidated[e->ninvalidated] = token;
    e->ninvalidated++;
}

static void th_send_ready(void *ctx)
{
    ((struct th_end *)ctx)->send_ready_calls++;
}

static void th_rdma_done(void *ctx, uint64_t cookie, int status)
{
    struct th_end *e = ctx;

    e->rdma_done_calls++;
    e->rdma_cookie = cookie;
    e->rdma_status = status;
    if (e->on_rdma_done)
        e->on_rdma_done(e, cookie, status);
}

static void th_terminated(void *ctx, int err, const char *reason)
{
    struct th_end *e = ctx;

    e->terminated_calls++;
    e->term_err = err;
    snprintf(e->term_reason, sizeof(e->term_reason), "%s", reason);
}

static const struct smbd_upper th_upper = {
    .established = th_established,
    .deliver = th_deliver,
    .invalidated = th_invalidated,
    .send_ready = th_send_ready,
    .rdma_done = th_rdma_done,
    .terminated = th_terminated,
};

static const struct smbd_upper th_upper_streaming = {
    .established = th_established,
    .deliver_fragment = th_deliver_fragment,
    .invalidated = th_invalidated,
    .send_ready = th_send_ready,
    .rdma_done = th_rdma_done,
    .terminated = th_terminated,
};

static void end_init_ops(struct th_end *e, enum smbd_role role, const struct smbd_config *cfg,
                         struct sd_qp *qp, const struct smbd_upper *upper,
                         const struct sd_provider_ops *ops)
{
    struct smbd_config def;

    memset(e, 0, sizeof(*e));
    if (!cfg) {
        smbd_config_default(&def, role);
        cfg = &def;
    }
    e->qp = qp;
    e->conn = smbd_conn_new(role, cfg, ops, qp, upper, e);
    if (!e->conn)
        abort();
}

static void end_init(struct th_end *e, enum smbd_role role, const struct smbd_config *cfg,
                     struct sd_qp *qp, const struct smbd_upper *upper)
{
    end_init_ops(e, role, cfg, qp, upper, &fake_provider);
}

void th_end_init_ops(struct th_end *e, enum smbd_role role, const struct smbd_config *cfg,
                     struct sd_qp *qp, const struct sd_provider_ops *ops)
{
    end_init_ops(e, role, cfg, qp, &th_upper, ops);
}

void th_end_init(struct th_end *e, enum smbd_role role, const struct smbd_config *cfg,
                 struct sd_qp *qp)
{
    end_init(e, role, cfg, qp, &th_upper);
}

void th_end_init_streaming(struct th_end *e, enum smbd_role role, const struct smbd_config *cfg,
                           struct sd_qp *qp)
{
    end_init(e, role, cfg, qp, &th_upper_streaming);
}

void th_end_free(struct th_end *e)
{
    smbd_conn_free(e->conn);
    fake_provider.destroy(e->qp);
    free(e->last);
    free(e->stream);
    e->conn = NULL;
    e->qp = NULL;
    e->last = NULL;
    e->stream = NULL;
}

int th_poll(struct th_end *e, uint64_t now_ms, int max)
{
    struct sd_wc wc[16];
    int total = 0, n;

    do {
        int want = max - total < 16 ? max - total : 16;

        n = fake_provider.poll_cq(e->qp, wc, want);
        for (int i = 0; i < n; i++)
            smbd_conn_on_completion(e->conn, &wc[i], now_ms);
        total += n;
    } while (n > 0 && total < max);
    return total;
}

int th_settle(struct th_end *a, struct th_end *b, uint64_t now_ms)
{
    int rounds = 0, moved;

    do {
        moved = fake_deliver(a->qp, 1 << 30) + fake_deliver(b->qp, 1 << 30);
        moved += th_poll(a, now_ms, 1 << 30) + th_poll(b, now_ms, 1 << 30);
        rounds++;
    } while (moved && rounds < 1000000);
    return rounds;
}

void th_pair_establish(struct th_end *a, struct th_end *b, const struct smbd_config *ca,
                       const struct smbd_config *cb, uint64_t seed)
{
    struct sd_qp *qa, *qb;

    fake_pair_new(&qa, &qb, seed);
    th_end_init(a, SMBD_ROLE_ACTIVE, ca, qa);
    th_end_init(b, SMBD_ROLE_PASSIVE, cb, qb);
    if (smbd_conn_start(b->conn, 0) || smbd_conn_start(a->conn, 0))
        abort();
    th_settle(a, b, 0);
}

void th_active_establish(struct th_end *e, const uint8_t *resp, size_t len)
{
    assert_int_equal(smbd_conn_start(e->conn, 0), 0);
    assert_int_equal(fake_inject(e->qp, resp, len, 0), 0);
    th_poll(e, 0, 1000);
    assert_int_equal(e->established, 1);
}

void th_expect_terminated(const struct th_end *e, int err, const char *rule)
{
    assert_int_equal(e->terminated_calls, 1);
    assert_int_equal(e->term_err, err);
    if (!strstr(e->term_reason, rule))
        fail_msg("reason '%s' does not name '%s'", e->term_reason, rule);
    assert_int_equal(fake_disconnects(e->qp), 1);
    assert_int_equal(e->delivered, 0);
}


size_t th_data_msg(uint8_t *out, uint16_t credits_req, uint16_t credits_granted,
                   uint16_t flags, uint32_t remaining, uint32_t offset, uint32_t length,
                   const void *payload, size_t payload_len)
{
    size_t end = 20;

    memset(out, 0, 24);
    sd_put_le16(out, credits_req);
    sd_put_le16(out + 2, credits_granted);
    sd_put_le16(out + 4, flags);
    sd_put_le32(out + 8, remaining);
    sd_put_le32(out + 12, offset);
    sd_put_le32(out + 16, length);
    if (payload_len) {
        memcpy(out + offset, payload, payload_len);
        end = offset + payload_len;
    }
    return end;
}

size_t th_negotiate_req(uint8_t *out, uint16_t min_v, uint16_t max_v, uint16_t credits,
                        uint32_t pref_send, uint32_t max_recv, uint32_t max_frag)
{
    memset(out, 0, 20);
    sd_put_le16(out, min_v);
    sd_put_le16(out + 2, max_v);
    sd_put_le16(out + 6, credits);
    sd_put_le32(out + 8, pref_send);
    sd_put_le32(out + 12, max_recv);
    sd_put_le32(out + 16, max_frag);
    return 20;
}

size_t th_negotiate_resp(uint8_t *out, uint16_t negotiated, uint16_t credits_req,
                         uint16_t credits_granted, uint32_t status, uint32_t max_rw,
                         uint32_t pref_send, uint32_t max_recv, uint32_t max_frag)
{
    memset(out, 0, 32);
    sd_put_le16(out, 0x0100);
    sd_put_le16(out + 2, 0x0100);
    sd_put_le16(out + 4, negotiated);
    sd_put_le16(out + 8, credits_req);
    sd_put_le16(out + 10, credits_granted);
    sd_put_le32(out + 12, status);
    sd_put_le32(out + 16, max_rw);
    sd_put_le32(out + 20, pref_send);
    sd_put_le32(out + 24, max_recv);
    sd_put_le32(out + 28, max_frag);
    return 32;
}
