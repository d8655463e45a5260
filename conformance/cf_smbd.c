/* SPDX-License-Identifier: BSD-3-Clause */
/* conformance/cf_smbd.c — the raw SMB Direct client session of the conformance cases
 * (see cf_smbd.h): provider connect, receives and credits, Negotiate, Data Transfer
 * fragmentation and reassembly, completions polled from the provider's fd. */
#include "cf_smbd.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sd_clock.h"

#define WR_RECV (1ull << 32)
#define WR_SEND (2ull << 32)
#define WR_KIND(id) ((id) & ~0xffffffffull)
#define WR_INDEX(id) ((uint32_t)(id))

/* The smallest send slot: room for raw requests with trailing bytes, and for a message
 * one byte over a peer's MaxReceiveSize of up to 16383 bytes. */
#define MIN_SLOT 16384u

static int fail(struct cf_smbd *s, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(struct cf_smbd *s, int err, const char *fmt, ...)
{
    va_list ap;

    if (!s->why[0]) {
        va_start(ap, fmt);
        vsnprintf(s->why, sizeof(s->why), fmt, ap);
        va_end(ap);
    }
    return err;
}

static int post_recv(struct cf_smbd *s, uint32_t i)
{
    struct sd_sge sge = { s->recv_mem + (size_t)i * s->t->max_receive_size,
                          s->t->max_receive_size, &s->recv_mr };
    int rc = s->ops->post_recv(s->qp, WR_RECV | i, &sge);

    if (rc == 0)
        s->recv_posted++;
    return rc;
}

int cf_smbd_connect(struct cf_smbd *s, const struct cf_target *t)
{
    struct sd_cm_params cp = { .ird = t->ird, .ord = t->ord,
                               .smbd_ird_ord_header = t->smbd_ird_ord_header,
                               .want_crc = t->want_crc };
    size_t rbytes = (size_t)t->credits * t->max_receive_size;
    int err = 0;

    memset(s, 0, sizeof(*s));
    s->t = t;
    s->ops = t->provider;
    s->nrecv = t->credits;
    s->send_slot_size = t->max_send_size > MIN_SLOT ? t->max_send_size : MIN_SLOT;
    s->recv_mem = calloc(1, rbytes ? rbytes : 1);
    s->send_mem = calloc(CF_SMBD_SEND_SLOTS, s->send_slot_size);
    if (!s->recv_mem || !s->send_mem)
        return fail(s, -ENOMEM, "out of memory");
    s->qp = s->ops->connect((const struct sockaddr *)&t->addr, t->addrlen, &cp, t->timeout_ms,
                            &s->cm, &err);
    if (!s->qp)
        return fail(s, err ? err : -EIO, "RDMA connect (%s) failed: %s", s->ops->name,
                    sd_cm_strerror(err ? err : -EIO));
    err = s->ops->reg_mr(s->qp, s->recv_mem, rbytes, SD_ACCESS_LOCAL_WRITE, &s->recv_mr);
    if (err == 0)
        err = s->ops->reg_mr(s->qp, s->send_mem, (size_t)CF_SMBD_SEND_SLOTS * s->send_slot_size,
                             SD_ACCESS_LOCAL_WRITE, &s->send_mr);
    for (uint32_t i = 0; err == 0 && i < s->nrecv; i++)
        err = post_recv(s, i);
    if (err)
        return fail(s, err, "posting receives failed: %s", strerror(-err));
    return 0;
}

void cf_smbd_close(struct cf_smbd *s)
{
    struct cf_msg *m;

    if (s->qp) {
        if (!s->lost)
            s->ops->disconnect(s->qp);
        if (s->recv_mr.base)
            s->ops->dereg_mr(s->qp, &s->recv_mr);
        if (s->send_mr.base)
            s->ops->dereg_mr(s->qp, &s->send_mr);
        s->ops->destroy(s->qp);
        s->qp = NULL;
    }
    while ((m = s->head)) {
        s->head = m->next;
        free(m);
    }
    free(s->taken);
    free(s->rx);
    free(s->recv_mem);
    free(s->send_mem);
    s->taken = NULL;
    s->rx = s->recv_mem = s->send_mem = NULL;
}

/* ---- completions ---- */

static void queue_msg(struct cf_smbd *s)
{
    struct cf_msg *m = malloc(sizeof(*m) + s->rx_len);

    if (!m) {
        s->bad = 1;
        fail(s, -ENOMEM, "out of memory");
        return;
    }
    m->next = NULL;
    m->len = s->rx_len;
    m->invalidate = s->rx_invalidate;
    m->inv_rkey = s->rx_inv_rkey;
    m->first = s->rx_first;
    m->frags = s->rx_frags;
    memcpy(m->data, s->rx, s->rx_len);
    if (s->tail)
        s->tail->next = m;
    else
        s->head = m;
    s->tail = m;
    s->rx_len = 0;
    s->rx_frags = 0;
    s->rx_invalidate = 0;
}

/* A Data Transfer message (MS-SMBD 3.1.5.8): credits, then its payload reassembled. */
static void on_data(struct cf_smbd *s, const uint8_t *buf, uint32_t len, const struct sd_wc *wc)
{
    struct smbd_data_hdr h;
    const char *why;

    if (smbd_decode_data_hdr(buf, len, &h, &why) != 0) {
        s->bad = 1;
        fail(s, -EPROTO, "the server's Data Transfer message does not decode: %s", why);
        return;
    }
    s->send_credits += h.credits_granted;
    s->zero_requested += h.credits_requested == 0;
    s->empty_grants += h.data_length == 0 && h.credits_granted > 0;
    if (h.flags & SMBD_FLAG_RESPONSE_REQUESTED) {
        s->ack_due = !s->hold_acks;
        s->keepalives++;
        s->keepalive_ms = sd_now_ms();
    }
    if (wc->with_invalidate) {
        s->rx_invalidate = 1;
        s->rx_inv_rkey = wc->invalidated_rkey;
    }
    if (h.data_length == 0 && s->rx_len == 0)
        return; /* credits or keepalive only */
    if (s->rx_len + h.data_length + h.remaining_data_length > s->t->max_fragmented_size) {
        s->bad = 1;
        fail(s, -EPROTO, "the server's message exceeds our MaxFragmentedSize %u",
             s->t->max_fragmented_size);
        return;
    }
    if (s->rx_len + h.data_length > s->rx_cap) {
        size_t cap = s->rx_len + h.data_length + h.remaining_data_length;
        uint8_t *p = realloc(s->rx, cap);

        if (!p) {
            s->bad = 1;
            fail(s, -ENOMEM, "out of memory");
            return;
        }
        s->rx = p;
        s->rx_cap = cap;
    }
    if (s->rx_frags++ == 0)
        s->rx_first = h;
    memcpy(s->rx + s->rx_len, buf + h.data_offset, h.data_length);
    s->rx_len += h.data_length;
    if (h.remaining_data_length == 0)
        queue_msg(s);
}

static void on_completion(struct cf_smbd *s, const struct sd_wc *wc)
{
    uint32_t i = WR_INDEX(wc->wr_id);

    if (wc->opcode == SD_WC_CONN_LOST) {
        s->lost = 1;
        return;
    }
    if (wc->status != SD_WC_SUCCESS) {
        if (s->first_error == SD_WC_SUCCESS && wc->status != SD_WC_FLUSHED)
            s->first_error = wc->status;
        if (WR_KIND(wc->wr_id) == WR_SEND)
            s->send_busy &= ~(1u << i);
        else if (WR_KIND(wc->wr_id) == WR_RECV)
            s->recv_posted--;
        return;
    }
    if (WR_KIND(wc->wr_id) == WR_SEND) {
        s->send_busy &= ~(1u << i);
        return;
    }
    if (WR_KIND(wc->wr_id) != WR_RECV || i >= s->nrecv)
        return;
    s->recv_posted--;
    s->recv_count++;
    if (s->peer_credits)
        s->peer_credits--;
    else if (s->negotiated)
        s->over_credit++;
    if (!s->negotiated) {
        s->neg_raw_len = wc->byte_len < sizeof(s->neg_raw) ? wc->byte_len : sizeof(s->neg_raw);
        memcpy(s->neg_raw, s->recv_mem + (size_t)i * s->t->max_receive_size, s->neg_raw_len);
        s->neg_set = 1;
    } else {
        on_data(s, s->recv_mem + (size_t)i * s->t->max_receive_size, wc->byte_len, wc);
    }
    if (!s->lost && post_recv(s, i) != 0)
        fail(s, -EIO, "reposting a receive failed");
}

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
        return fail(s, rc, "post_send failed: %s", strerror(-rc));
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
        return fail(s, -EINVAL, "cannot encode a Data Transfer header");
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

/* Keeps the peer able to send: an empty message when it asked for one (keepalive,
 * 3.1.5.8) or holds few of our credits (3.1.5.9). */
static void maybe_grant(struct cf_smbd *s)
{
    int slot;

    if (!s->negotiated || s->lost || s->send_credits == 0 || (slot = send_slot(s)) < 0)
        return;
    if (s->ack_due || (s->peer_credits <= s->recv_posted / 4 && grantable(s) > 0))
        if (post_data(s, slot, NULL, 0, 0, grantable(s), 0) == 0)
            s->ack_due = 0;
}

/* Handles what is complete; when nothing was, waits for the provider's fd until
 * deadline, then handles that. Returns completions handled, or -ETIMEDOUT. */
static int pump(struct cf_smbd *s, uint64_t deadline)
{
    struct sd_wc wc[16];
    int n, total = 0, waited = 0;

    for (;;) {
        s->ops->progress(s->qp);
        while ((n = s->ops->poll_cq(s->qp, wc, 16)) > 0) {
            for (int i = 0; i < n; i++)
                on_completion(s, &wc[i]);
            total += n;
        }
        maybe_grant(s);
        if (total || s->lost || waited)
            return total ? total : (s->lost ? 0 : -ETIMEDOUT);
        struct pollfd p = { s->ops->fd(s->qp), (short)s->ops->poll_events(s->qp), 0 };
        int ms = sd_ms_until(deadline);

        if (poll(&p, 1, ms) <= 0 && sd_ms_until(deadline) == 0)
            waited = 1;
    }
}

/* ---- negotiate and messages ---- */

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
        return fail(s, -EMSGSIZE, "a %zu-byte raw message exceeds the send slot", len);
    while ((slot = send_slot(s)) < 0) {
        if (s->lost)
            return -ENOTCONN;
        if (pump(s, deadline) == -ETIMEDOUT)
            return fail(s, -ETIMEDOUT, "no send completed in %d ms", s->t->timeout_ms);
    }
    memcpy(s->send_mem + (size_t)slot * s->send_slot_size, buf, len);
    return post_slot(s, slot, len);
}

int cf_smbd_wait_negotiate(struct cf_smbd *s, int timeout_ms)
{
    uint64_t deadline = sd_now_ms() + (uint64_t)timeout_ms;
    const char *why;

    while (!s->neg_set && !s->lost)
        if (pump(s, deadline) == -ETIMEDOUT)
            return fail(s, -ETIMEDOUT, "no Negotiate Response in %d ms", timeout_ms);
    if (!s->neg_set)
        return fail(s, -ENOTCONN, "the connection ended before a Negotiate Response");
    if (smbd_decode_negotiate_resp(s->neg_raw, s->neg_raw_len, &s->neg, &why) != 0)
        return fail(s, -EPROTO, "the Negotiate Response does not decode: %s", why);
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
        return fail(s, -EPROTO, "the Negotiate Response has Status 0x%08x", s->neg.status);
    /* MS-SMBD 3.1.5.3: send no more than the peer receives, nor than we offered. */
    s->max_send = s->neg.max_receive_size < req->preferred_send_size
                      ? s->neg.max_receive_size : req->preferred_send_size;
    if (s->max_send > s->send_slot_size)
        s->max_send = s->send_slot_size;
    if (s->max_send <= SMBD_DATA_OFFSET)
        return fail(s, -EPROTO, "the server's MaxReceiveSize %u leaves no room for data",
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
        if (pump(s, deadline) == -ETIMEDOUT)
            return fail(s, -ETIMEDOUT, "no send credit from the server in %d ms",
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
        return fail(s, -EINVAL, "not negotiated");
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
    int slot = s->negotiated ? wait_send(s, deadline) : fail(s, -EINVAL, "not negotiated");

    if (slot < 0)
        return slot;
    return post_data(s, slot, NULL, 0, 0, n < most ? n : most, 0) < 0 ? -EIO : 0;
}

int cf_smbd_recv_msg(struct cf_smbd *s, int timeout_ms, const struct cf_msg **msg)
{
    uint64_t deadline = sd_now_ms() + (uint64_t)timeout_ms;

    free(s->taken);
    s->taken = NULL;
    while (!s->head) {
        if (s->bad)
            return -EPROTO;
        if (s->lost)
            return -ENOTCONN;
        if (pump(s, deadline) == -ETIMEDOUT)
            return -ETIMEDOUT;
    }
    s->taken = s->head;
    s->head = s->head->next;
    if (!s->head)
        s->tail = NULL;
    *msg = s->taken;
    return 0;
}

int cf_smbd_keepalive(struct cf_smbd *s)
{
    uint64_t deadline = sd_now_ms() + (uint64_t)s->t->timeout_ms;
    int slot = s->negotiated ? wait_send(s, deadline) : fail(s, -EINVAL, "not negotiated");

    if (slot < 0)
        return slot;
    return post_data(s, slot, NULL, 0, 0, grantable(s), SMBD_FLAG_RESPONSE_REQUESTED) < 0
               ? -EIO : 0;
}

int cf_smbd_wait_count(struct cf_smbd *s, const uint32_t *counter, uint32_t value,
                       int timeout_ms)
{
    uint64_t deadline = sd_now_ms() + (uint64_t)timeout_ms;

    while (*counter < value) {
        if (s->lost)
            return -ENOTCONN;
        if (pump(s, deadline) == -ETIMEDOUT)
            return -ETIMEDOUT;
    }
    return 0;
}

int cf_smbd_wait_lost(struct cf_smbd *s, int timeout_ms)
{
    uint64_t deadline = sd_now_ms() + (uint64_t)timeout_ms;

    while (!s->lost)
        if (pump(s, deadline) == -ETIMEDOUT)
            return -ETIMEDOUT;
    return 0;
}

int cf_smbd_reg(struct cf_smbd *s, void *buf, size_t len, int access, struct sd_mr *mr)
{
    return s->ops->reg_mr(s->qp, buf, len, access, mr);
}

int cf_smbd_dereg(struct cf_smbd *s, struct sd_mr *mr)
{
    return s->ops->dereg_mr(s->qp, mr);
}
