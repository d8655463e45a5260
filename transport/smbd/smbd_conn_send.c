/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/smbd/smbd_conn_send.c — the send side: upper-layer messages cut into Data
 * Transfer fragments (MS-SMBD 3.1.4.2, 3.1.5.4) queued in FIFO order, and the
 * SendQueue drained as send credits allow (3.1.5.1). Each fragment is copied once,
 * from the caller's buffers into a registered send buffer that is posted as is; or,
 * for a message whose memory the caller hands over (smbd_conn_send_owned), posted with
 * its header from the send buffer and its payload from where it lies. */
#include "smbd_conn_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

int smbd_post_slot(struct smbd_conn *c, struct smbd_send_slot *s, uint32_t len, int signaled)
{
    struct sd_sge sge[2] = { { .addr = s->buf, .length = len, .mr = &s->chunk->mr } };
    int nsge = 1;

    if (s->ext) { /* the header from the slot, the payload from where the caller has it */
        sge[0].length = len - s->data_len;
        sge[1] = (struct sd_sge){ .addr = (uint8_t *)(uintptr_t)s->ext, .length = s->data_len,
                                  .mr = &s->owned->mr };
        nsge = 2;
    }
    s->seq = ++c->send_seq;
    if (signaled)
        c->signaled_seq = s->seq;
    smbd_fifo_push(&c->in_flight, s); /* reclaimed by a later completion or CONN_LOST */
    c->provider_requests++;
    return c->ops->post_send(c->qp, (uint64_t)SMBD_WR_SEND << SMBD_WR_KIND_SHIFT | s->seq,
                             sge, nsge, s->invalidate, signaled);
}

void smbd_on_send_done(struct smbd_conn *c, const struct sd_wc *wc)
{
    uint64_t seq = wc->wr_id & SMBD_WR_INDEX_MASK;

    /* Sends complete in order: this one releases every earlier unsignaled send. */
    while (c->in_flight.head && c->in_flight.head->seq <= seq)
        smbd_slot_put(c, smbd_fifo_pop(&c->in_flight));
    /* 3.1.5.3: graceful termination once the refusal went out; or every message we
     * sent has left (smbd_conn_disconnect waited for it). */
    if (c->state == SMBD_ST_REFUSING ||
        (c->state == SMBD_ST_DRAINING && !c->in_flight.head)) {
        smbd_enter_state(c, c->state == SMBD_ST_REFUSING ? SMBD_ST_TERMINATED
                                                          : SMBD_ST_DISCONNECTING);
        smbd_provider_disconnect(c);
        return;
    }
    /* FLUSHED: the connection is gone; SD_WC_CONN_LOST follows with the cause. */
    if (wc->status != SD_WC_SUCCESS && wc->status != SD_WC_FLUSHED && smbd_is_live(c))
        smbd_terminate(c, -ECONNRESET, "a send failed: %s",
                       sd_wc_status_str(wc->status));
}

/* Builds and posts the first message of the SendQueue; 0 when credits stop us. */
static int send_head(struct smbd_conn *c, uint64_t now_ms)
{
    struct smbd_send_slot *s = c->send_queue.head;
    struct smbd_data_hdr h;
    uint16_t granted;
    uint32_t len;
    int signaled, err;

    if (c->send_credits == 0 || c->state == SMBD_ST_PROVIDER_GONE)
        return 0;
    granted = smbd_credits_take_grant(c); /* 3.1.5.9 */
    if (c->send_credits == 1 && granted == 0)
        return 0; /* the last credit only goes with a grant (3.1.5.1) */
    smbd_fifo_pop(&c->send_queue);
    c->send_credits--;
    h.credits_requested = c->neg.send_credit_target;
    h.credits_granted = granted;
    h.flags = 0;
    if (c->keepalive == SMBD_KA_PENDING) {
        h.flags = SMBD_FLAG_RESPONSE_REQUESTED;
        c->keepalive = SMBD_KA_SENT;
        c->idle_deadline = now_ms + c->cfg.keepalive_timeout_ms; /* Appendix B <3> */
        c->stats.keepalives_sent++;
    }
    h.remaining_data_length = s->remaining;
    h.data_offset = s->data_len ? SMBD_DATA_OFFSET : 0;
    h.data_length = s->data_len;
    len = (uint32_t)smbd_encode_data_hdr(&h, s->buf, c->send_buf_size) + s->data_len;
    c->queued_bytes -= s->data_len;
    c->stats.fragments_sent++;
    /* Completions release buffers in order, so one in SMBD_SIGNAL_EVERY suffices,
     * unless the pool runs short, or a burst ends (nothing queued after the last
     * fragment of a message): its last send is signaled so that an extra chunk can
     * be freed and an orderly disconnect can wait for it. */
    signaled = ++c->unsignaled_run >= SMBD_SIGNAL_EVERY || c->slots_free < SMBD_SIGNAL_EVERY ||
               (!c->send_queue.head && s->remaining == 0);
    if (signaled)
        c->unsignaled_run = 0;
    err = smbd_post_slot(c, s, len, signaled);
    if (err == -ENOTCONN) {
        /* The provider lost the connection: its SD_WC_CONN_LOST follows with the cause
         * (the peer's orderly close, or the error) and terminates (3.1.7.1); the slot
         * waits in in_flight to be reclaimed then. */
        smbd_enter_state(c, SMBD_ST_PROVIDER_GONE);
        return 0;
    }
    if (err) {
        smbd_terminate(c, -ECONNRESET, "posting a send failed: %d", err);
        return 0;
    }
    c->send_immediate = 0;
    return 1;
}

/* 3.1.5.1: drain the SendQueue; with nothing queued, construct an empty message
 * when the peer asked for a response (SendImmediate), our keepalive is due, or the
 * peer is running short of credits (3.1.5.8). */
void smbd_send_pump(struct smbd_conn *c, uint64_t now_ms)
{
    if (!smbd_is_live(c) || c->role != SMBD_ROLE_ESTABLISHED)
        return;
    for (;;) {
        if (!c->send_queue.head) {
            struct smbd_send_slot *s;

            if (c->send_credits == 0 || (!c->send_immediate && c->keepalive != SMBD_KA_PENDING &&
                                         !smbd_credits_refill_due(c)))
                break;
            s = smbd_slot_get(c, now_ms);
            if (!s && c->in_flight.head)
                break; /* at the memory limit: the next send completion frees one */
            if (!s) {
                smbd_terminate(c, -ENOMEM, "no memory for a send buffer");
                return;
            }
            s->data_len = 0;
            s->remaining = 0;
            smbd_fifo_push(&c->send_queue, s);
        }
        if (!send_head(c, now_ms))
            break;
    }
    if (c->send_ready_armed && c->queued_bytes < c->low_water && smbd_is_live(c)) {
        c->send_ready_armed = 0;
        if (c->upper.send_ready)
            c->upper.send_ready(c->ctx);
    }
}

/* Copies the next n bytes of the iovec walk (*vi, *vo) to dst. */
static void iov_take(const struct iovec *iov, int *vi, size_t *vo, uint8_t *dst, size_t n)
{
    while (n > 0) {
        size_t avail = iov[*vi].iov_len - *vo, k = avail < n ? avail : n;

        memcpy(dst, (const uint8_t *)iov[*vi].iov_base + *vo, k);
        dst += k;
        n -= k;
        *vo += k;
        if (*vo == iov[*vi].iov_len) {
            (*vi)++;
            *vo = 0;
        }
    }
}

/* 3.1.4.2 / 3.1.5.4: the message in fragments; a token to invalidate rides on exactly
 * one of them, the first, so the peer learns it before the message is delivered. With
 * owned, the message is one range of owned's memory and its fragments are posted from
 * there (each slot holding a reference), else copied into the slots. */
static int conn_send(struct smbd_conn *c, const struct iovec *iov, int iovcnt, uint32_t invalidate,
                     struct smbd_owned_msg *owned, uint64_t now_ms)
{
    size_t total = 0, left, frag;
    uint32_t nfrag;
    int vi = 0, err;
    size_t vo = 0;

    if (!smbd_conn_is_established(c))
        return -ENOTCONN;
    /* 3.1.4.2: longer than the peer can reassemble is a local error only. */
    for (int i = 0; i < iovcnt; i++) {
        if (iov[i].iov_len > c->neg.max_fragmented_send_size - total)
            return -EMSGSIZE;
        total += iov[i].iov_len;
    }
    frag = c->neg.max_send_size - SMBD_DATA_OFFSET; /* 3.1.5.4: DataOffset 24 */
    nfrag = total ? (uint32_t)((total + frag - 1) / frag) : 1;
    err = smbd_send_pool_reserve(c, nfrag, now_ms);
    /* Send buffers that are queued or posted come back as their Sends complete, and the
     * reserve as the registration holding it goes. */
    if (err == -ENOMEM && (c->in_flight.head || c->send_queue.head || smbd_conn_reserve_in_use(c)))
        return -EAGAIN;
    if (err)
        return err;
    left = total;
    c->queued_bytes += total;
    for (uint32_t i = 0; i < nfrag; i++) {
        struct smbd_send_slot *s = smbd_slot_get(c, now_ms);
        size_t n = left < frag ? left : frag;

        if (owned) {
            s->ext = (const uint8_t *)iov[0].iov_base + (total - left);
            s->owned = owned;
            owned->refs++;
        } else {
            iov_take(iov, &vi, &vo, s->buf + SMBD_DATA_OFFSET, n);
        }
        left -= n;
        s->data_len = (uint32_t)n;
        s->remaining = (uint32_t)left; /* 3.1.5.4: bytes not yet sent after this one */
        if (i == 0)
            s->invalidate = invalidate;
        smbd_fifo_push(&c->send_queue, s);
        /* Nothing queued ahead: post while the fragment is still in the cache. */
        if (c->send_queue.head == s && !send_head(c, now_ms) && !smbd_is_live(c))
            return 0;
    }
    c->stats.msgs_sent++;
    c->stats.bytes_sent += total;
    if (owned)
        c->stats.bytes_sent_owned += total;
    if (c->low_water && c->queued_bytes >= c->low_water)
        c->send_ready_armed = 1;
    smbd_send_pump(c, now_ms);
    return 0;
}

int smbd_conn_send(struct smbd_conn *c, const struct iovec *iov, int iovcnt, uint64_t now_ms)
{
    return conn_send(c, iov, iovcnt, 0, NULL, now_ms);
}

int smbd_conn_send_invalidate(struct smbd_conn *c, const struct iovec *iov, int iovcnt,
                              uint32_t token, uint64_t now_ms)
{
    if (token == 0)
        return -EINVAL;
    return conn_send(c, iov, iovcnt, token, NULL, now_ms);
}

int smbd_conn_send_owned(struct smbd_conn *c, const uint8_t *data, size_t len, uint8_t *alloc,
                         size_t cap, void (*release)(uint8_t *alloc, size_t cap), uint64_t now_ms)
{
    struct iovec iov = { (void *)(uintptr_t)data, len };
    struct smbd_owned_msg *m;
    size_t drawn;
    int err;

    if (!smbd_conn_is_established(c))
        return -ENOTCONN;
    if (len == 0 || data < alloc || len > cap || (size_t)(data - alloc) > cap - len)
        return -EINVAL;
    if (!(m = calloc(1, sizeof(*m))))
        return -ENOMEM;
    /* Local reads only (3.1.4.3), of the message's bytes only: on verbs that pins no more
     * than what the Sends read, not the rest of the allocation. */
    err = smbd_reg(c, (void *)(uintptr_t)data, len, 0, 0, &m->mr, &drawn);
    if (err) {
        free(m);
        return err;
    }
    m->alloc = alloc;
    m->cap = cap;
    m->release = release;
    m->refs = 1;
    err = conn_send(c, &iov, 1, 0, m, now_ms);
    if (err) { /* nothing queued: the memory stays the caller's */
        smbd_dereg(c, &m->mr, 0);
        free(m);
        return err;
    }
    smbd_owned_put(c, m); /* the fragments hold it now */
    return 0;
}
