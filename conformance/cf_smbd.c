/* SPDX-License-Identifier: BSD-3-Clause */
/* conformance/cf_smbd.c — the raw SMB Direct client session of the conformance cases
 * (see cf_smbd.h): provider connect and close, receives and the credits they carry, Data
 * Transfer reassembly, completions polled from the provider's fd, and the waits on them;
 * its sending is cf_smbd_send.c's. */
#include "cf_smbd_int.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sd_clock.h"

/* The smallest send slot: room for raw requests with trailing bytes, and for a message
 * one byte over a peer's MaxReceiveSize of up to 16383 bytes. */
#define MIN_SLOT 16384u

int cf_smbd_fail(struct cf_smbd *s, int err, const char *fmt, ...)
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
        return cf_smbd_fail(s, -ENOMEM, "out of memory");
    s->qp = s->ops->connect((const struct sockaddr *)&t->addr, t->addrlen, &cp, t->timeout_ms,
                            &s->cm, &err);
    if (!s->qp)
        return cf_smbd_fail(s, err ? err : -EIO, "RDMA connect (%s) failed: %s", s->ops->name,
                            sd_cm_strerror(err ? err : -EIO));
    err = s->ops->reg_mr(s->qp, s->recv_mem, rbytes, SD_ACCESS_LOCAL_WRITE, &s->recv_mr);
    if (err == 0)
        err = s->ops->reg_mr(s->qp, s->send_mem, (size_t)CF_SMBD_SEND_SLOTS * s->send_slot_size,
                             SD_ACCESS_LOCAL_WRITE, &s->send_mr);
    for (uint32_t i = 0; err == 0 && i < s->nrecv; i++)
        err = post_recv(s, i);
    if (err)
        return cf_smbd_fail(s, err, "posting receives failed: %s", strerror(-err));
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
        cf_smbd_fail(s, -ENOMEM, "out of memory");
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
        cf_smbd_fail(s, -EPROTO, "the server's Data Transfer message does not decode: %s", why);
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
        cf_smbd_fail(s, -EPROTO, "the server's message exceeds our MaxFragmentedSize %u",
                     s->t->max_fragmented_size);
        return;
    }
    if (s->rx_len + h.data_length > s->rx_cap) {
        size_t cap = s->rx_len + h.data_length + h.remaining_data_length;
        uint8_t *p = realloc(s->rx, cap);

        if (!p) {
            s->bad = 1;
            cf_smbd_fail(s, -ENOMEM, "out of memory");
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
        cf_smbd_fail(s, -EIO, "reposting a receive failed");
}

int cf_smbd_pump(struct cf_smbd *s, uint64_t deadline)
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
        cf_smbd_maybe_grant(s);
        if (total || s->lost || waited)
            return total ? total : (s->lost ? 0 : -ETIMEDOUT);
        struct pollfd p = { s->ops->fd(s->qp), (short)s->ops->poll_events(s->qp), 0 };
        int ms = sd_ms_until(deadline);

        if (poll(&p, 1, ms) <= 0 && sd_ms_until(deadline) == 0)
            waited = 1;
    }
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
        if (cf_smbd_pump(s, deadline) == -ETIMEDOUT)
            return -ETIMEDOUT;
    }
    s->taken = s->head;
    s->head = s->head->next;
    if (!s->head)
        s->tail = NULL;
    *msg = s->taken;
    return 0;
}

int cf_smbd_wait_count(struct cf_smbd *s, const uint32_t *counter, uint32_t value,
                       int timeout_ms)
{
    uint64_t deadline = sd_now_ms() + (uint64_t)timeout_ms;

    while (*counter < value) {
        if (s->lost)
            return -ENOTCONN;
        if (cf_smbd_pump(s, deadline) == -ETIMEDOUT)
            return -ETIMEDOUT;
    }
    return 0;
}

int cf_smbd_wait_lost(struct cf_smbd *s, int timeout_ms)
{
    uint64_t deadline = sd_now_ms() + (uint64_t)timeout_ms;

    while (!s->lost)
        if (cf_smbd_pump(s, deadline) == -ETIMEDOUT)
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
