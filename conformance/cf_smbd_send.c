/* SPDX-License-Identifier: BSD-3-Clause */
/* conformance/cf_smbd_send.c — the raw SMB Direct client session's sending (cf_smbd.h):
 * its send slots, the Negotiate exchange, Data Transfer messages fragmented from a case's
 * bytes, the receive credits granted to the server and keepalives. */
#include "cf_smbd_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sd_clock.h"

static int send_slot(struct cf_smbd *s)
{
    for (int i = 0; i < CF_SMBD_SEND_SLOTS; i++)
        if (!(s->send_busy & (1u << i)))
            return i;
    return -1;
}

static int post_slot(struct cf_smbd *s, int slot, size_t len)
{
    struct sd_sge sge = { s->send_mem + (size_t)slot * s->send_slot_size, (uint32_t)len,
                          &s->send_mr };
    int rc = s->ops->post_send(s->qp, WR_SEND | (uint32_t)slot, &sge, 1, 0, 1);

    if (rc < 0)
        return cf_smbd_fail(s, rc, "post_send failed: %s", strerror(-rc));
    s->send_busy |= 1u << slot;
    s->ops->progress(s->qp);
    return 0;
}

/* One Data Transfer message (MS-SMBD 2.2.3) granting grant receive credits (3.1.5.9);
 * data_len 0 makes an empty one. */
static int post_data(struct cf_smbd *s, int slot, const uint8_t *data, uint32_t data_len,
                     uint32_t remaining, uint16_t grant, uint16_t flags)
{
    uint8_t *out = s->send_mem + (size_t)slot * s->send_slot_size;
    struct smbd_data_hdr h = { .credits_requested = s->t->credits,
                               .credits_granted = grant,
                               .flags = flags,
                               .remaining_data_length = remaining,
                               .data_offset = data_len ? SMBD_DATA_OFFSET : 0,
                               .data_length = data_len };
    int n = smbd_encode_data_hdr(&h, out, s->send_slot_size), rc;

    if (n < 0)
        return cf_smbd_fail(s, -EINVAL, "cannot encode a Data Transfer header");
    size_t total = (size_t)n + data_len;

    if (data_len)
        memcpy(out + n, data, data_len);
    if (s->pad_to > total && s->pad_to <= s->send_slot_size) { /* 2.2.3: ignored by the peer */
        memset(out + total, 0xA5, s->pad_to - total);
        total = s->pad_to;
    }
    rc = post_slot(s, slot, total);
    if (rc == 0) {
        s->peer_credits += grant;
        s->send_credits--;
    }
    return rc;
}

/* Every receive the peer holds no credit for yet, unless a case holds them back. */
static uint16_t grantable(const struct cf_smbd *s)
{
    return s->hold_credits ? 0 : (uint16_t)(s->recv_posted - s->peer_credits);
}

void cf_smbd_maybe_grant(struct cf_smbd *s)
{
    int slot;

    if (!s->negotiated || s->lost || s->send_credits == 0 || (slot = send_slot(s)) < 0)
        return;
    if (s->ack_due || (s->peer_credits <= s->recv_posted / 4 && grantable(s) > 0))
        if (post_data(s, slot, NULL, 0, 0, grantable(s), 0) == 0)
            s->ack_due = 0;
}

void cf_smbd_default_negotiate(const struct cf_target *t, struct smbd_negotiate_req *req)
{
    *req = (struct smbd_negotiate_req){ .min_version = SMBD_VERSION_1_0,
                                        .max_version = SMBD_VERSION_1_0,
                                        .credits_requested = t->credits,
                                        .preferred_send_size = t->max_send_size,
                                        .max_receive_size = t->max_receive_size,
                                        .max_fragmented_size = t->max_fragmented_size };
}

int cf_smbd_send_raw(struct cf_smbd *s, const void *buf, size_t len)
{
    uint64_t deadline = sd_now_ms() + (uint64_t)s->t->timeout_ms;
    int slot;

    if (len > s->send_slot_size)
        return cf_smbd_fail(s, -EMSGSIZE, "a %zu-byte raw message exceeds the send slot", len);
    while ((slot = send_slot(s)) < 0) {
        if (s->lost)
            return -ENOTCONN;
        if (cf_smbd_pump(s, deadline) == -ETIMEDOUT)
            return cf_smbd_fail(s, -ETIMEDOUT, "no send completed in %d ms", s->t->timeout_ms);
    }
    memcpy(s->send_mem + (size_t)slot * s->send_slot_size, buf, len);
    return post_slot(s, slot, len);
}

int cf_smbd_wait_negotiate(struct cf_smbd *s, int timeout_ms)
{
    uint64_t deadline = sd_now_ms() + (uint64_t)timeout_ms;
    const char *why;

    while (!s->neg_set && !s->lost)
        if (cf_smbd_pump(s, deadline) == -ETIMEDOUT)
            return cf_smbd_fail(s, -ETIMEDOUT, "no Negotiate Response in %d ms", timeout_ms);
    if (!s->neg_set)
        return cf_smbd_fail(s, -ENOTCONN, "the connection ended before a Negotiate Response");
    if (smbd_decode_negotiate_resp(s->neg_raw, s->neg_raw_len, &s->neg, &why) != 0)
        return cf_smbd_fail(s, -EPROTO, "the Negotiate Response does not decode: %s", why);
    return 0;
}

int cf_smbd_negotiate(struct cf_smbd *s, const struct smbd_negotiate_req *req)
{
    uint8_t out[SMBD_NEGOTIATE_REQ_SIZE];
    int rc;

    smbd_encode_negotiate_req(req, out, sizeof(out));
    rc = cf_smbd_send_raw(s, out, sizeof(out));
    if (rc == 0)
        rc = cf_smbd_wait_negotiate(s, s->t->timeout_ms);
    if (rc < 0)
        return rc;
    if (s->neg.status != SMBD_STATUS_SUCCESS)
        return cf_smbd_fail(s, -EPROTO, "the Negotiate Response has Status 0x%08x", s->neg.status);
    /* MS-SMBD 3.1.5.3: send no more than the peer receives, nor than we offered. */
    s->max_send = s->neg.max_receive_size < req->preferred_send_size
                      ? s->neg.max_receive_size : req->preferred_send_size;
    if (s->max_send > s->send_slot_size)
        s->max_send = s->send_slot_size;
    if (s->max_send <= SMBD_DATA_OFFSET)
        return cf_smbd_fail(s, -EPROTO, "the server's MaxReceiveSize %u leaves no room for data",
                            s->neg.max_receive_size);
    s->send_credits = s->neg.credits_granted;
    s->negotiated = 1;
    return 0;
}

/* A free send slot once a send credit is there too: its index, or a negative errno. */
static int wait_send(struct cf_smbd *s, uint64_t deadline)
{
    int slot;

    for (;;) {
        if (s->lost)
            return -ENOTCONN;
        if (s->bad)
            return -EPROTO;
        if (s->send_credits > 0 && (slot = send_slot(s)) >= 0)
            return slot;
        if (cf_smbd_pump(s, deadline) == -ETIMEDOUT)
            return cf_smbd_fail(s, -ETIMEDOUT, "no send credit from the server in %d ms",
                                s->t->timeout_ms);
    }
}

int cf_smbd_send_frags(struct cf_smbd *s, const void *msg, size_t len, size_t frag)
{
    const uint8_t *p = msg;
    size_t room = s->max_send - SMBD_DATA_OFFSET, off = 0;
    uint64_t deadline = sd_now_ms() + (uint64_t)s->t->timeout_ms;
    int slot;

    if (!s->negotiated)
        return cf_smbd_fail(s, -EINVAL, "not negotiated");
    size_t step = 0, cut;

    if (frag && frag < room)
        room = frag;
    do {
        cut = !frag && s->frag_plan ? s->frag_plan[step++ % s->frag_plan_n] : room;
        if (cut > room)
            cut = room;
        uint32_t n = (uint32_t)(len - off < cut ? len - off : cut);

        if ((slot = wait_send(s, deadline)) < 0)
            return slot;
        int rc = post_data(s, slot, p + off, n, (uint32_t)(len - off - n), grantable(s), 0);

        if (rc < 0)
            return rc; /* -ENOTCONN: the connection ended */
        off += n;
    } while (off < len);
    return 0;
}

int cf_smbd_send_msg(struct cf_smbd *s, const void *msg, size_t len)
{
    return cf_smbd_send_frags(s, msg, len, 0);
}

int cf_smbd_grant(struct cf_smbd *s, uint16_t n)
{
    uint64_t deadline = sd_now_ms() + (uint64_t)s->t->timeout_ms;
    uint16_t most = (uint16_t)(s->recv_posted - s->peer_credits);
    int slot = s->negotiated ? wait_send(s, deadline) : cf_smbd_fail(s, -EINVAL, "not negotiated");

    if (slot < 0)
        return slot;
    return post_data(s, slot, NULL, 0, 0, n < most ? n : most, 0) < 0 ? -EIO : 0;
}

int cf_smbd_keepalive(struct cf_smbd *s)
{
    uint64_t deadline = sd_now_ms() + (uint64_t)s->t->timeout_ms;
    int slot = s->negotiated ? wait_send(s, deadline) : cf_smbd_fail(s, -EINVAL, "not negotiated");

    if (slot < 0)
        return slot;
    return post_data(s, slot, NULL, 0, 0, grantable(s), SMBD_FLAG_RESPONSE_REQUESTED) < 0
               ? -EIO : 0;
}
