/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/smbd/smbd_conn_recv.c — the receive side: the pool of posted receive
 * buffers, routing of received messages by role (MS-SMBD 3.1.5.5), and Data
 * Transfer processing with every MUST-verify rule, credit bookkeeping and
 * reassembly (3.1.5.8). Each fragment is copied out of its receive buffer at once
 * (into the reassembly buffer, or by the upper layer's deliver_fragment) and the
 * buffer reposted, so a large message never starves receive credits. */
#include "smbd_conn_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "sd_pinned.h"
#include "smbd_memplan.h"

static uint32_t recv_stride(const struct smbd_conn *c)
{
    return smbd_stride_for(c->recv_buf_size);
}

static int post_recv(struct smbd_conn *c, uint32_t idx)
{
    struct sd_sge sge = {
        .addr = c->recv_mem + (size_t)idx * recv_stride(c),
        .length = c->recv_buf_size,
        .mr = &c->recv_mr,
    };
    int err;

    c->provider_requests++;
    err = c->ops->post_recv(c->qp, (uint64_t)SMBD_WR_RECV << SMBD_WR_KIND_SHIFT | idx, &sge);

    if (!err) {
        c->recv_posted_flag[idx] = 1;
        c->recv_posted++;
    }
    return err;
}

/* Registers and posts count receives of size bytes each. */
static int pool_make(struct smbd_conn *c, uint32_t count, uint32_t size)
{
    size_t bytes;
    int err;

    c->recv_buf_size = size;
    bytes = (size_t)count * recv_stride(c);
    c->recv_mem = aligned_alloc(64, bytes);
    c->recv_posted_flag = calloc(count, 1);
    if (!c->recv_mem || !c->recv_posted_flag)
        return -ENOMEM;
    err = smbd_reg(c, c->recv_mem, bytes, SD_ACCESS_LOCAL_WRITE, 1, &c->recv_mr, &c->recv_drawn);
    if (err)
        return err;
    c->recv_count = count;
    for (uint32_t i = 0; i < count; i++) {
        err = post_recv(c, i);
        if (err)
            return err;
    }
    return 0;
}

/* 3.1.4.1 / 3.1.7.2: receives are posted before negotiating. A server posts its whole
 * pool (ReceiveCreditMax buffers of its MaxReceiveSize) at once, so later grants never
 * allocate. A client posts one, for the Negotiate Response: the peer may send nothing
 * else before our first message grants it credits (3.1.5.7), and the response's
 * PreferredSendSize tells how large the pool's buffers need to be
 * (smbd_recv_pool_resize). */
int smbd_recv_pool_init(struct smbd_conn *c)
{
    return pool_make(c, c->role == SMBD_ROLE_ACTIVE ? 1 : c->neg.receive_credit_max,
                     c->cfg.max_receive_size);
}

int smbd_recv_pool_resize(struct smbd_conn *c)
{
    int err;

    smbd_recv_pool_free(c); /* its one receive was the Negotiate Response's */
    err = pool_make(c, c->neg.receive_credit_max, c->neg.max_receive_size);
    if (err)
        return err;
    smbd_pin_settle_reserve(c, c->recv_drawn);
    c->recv_drawn = 0;
    return 0;
}

void smbd_recv_pool_free(struct smbd_conn *c)
{
    if (c->recv_count)
        smbd_dereg(c, &c->recv_mr, c->recv_drawn);
    free(c->recv_mem);
    free(c->recv_posted_flag);
    c->recv_mem = NULL;
    c->recv_posted_flag = NULL;
    c->recv_count = 0;
}

/* 3.1.5.8: the invalidated token goes up before the data it came with. */
static void report_invalidated(struct smbd_conn *c)
{
    if (c->invalidated_set) {
        c->invalidated_set = 0;
        if (c->upper.invalidated)
            c->upper.invalidated(c->ctx, c->invalidated_token);
    }
}

static void deliver(struct smbd_conn *c, const uint8_t *data, size_t len)
{
    report_invalidated(c);
    if (len == 0)
        return;
    c->stats.msgs_delivered++;
    c->stats.bytes_delivered += len;
    c->upper.deliver(c->ctx, data, len);
}

/* Streaming delivery of one checked fragment (see smbd_upper.deliver_fragment). */
static void deliver_fragment(struct smbd_conn *c, const uint8_t *data, uint32_t len,
                             uint32_t remaining, int first)
{
    report_invalidated(c);
    if (remaining == 0)
        c->stats.msgs_delivered++;
    c->stats.bytes_delivered += len;
    c->upper.deliver_fragment(c->ctx, data, len, remaining, first);
}

/* The first fragment of a fragmented message: Connection.FragmentReassemblyRemaining
 * is tracked in both delivery modes, the bytes are buffered only for deliver. */
static int reassembly_start(struct smbd_conn *c, const uint8_t *data, uint32_t len,
                            uint32_t remaining)
{
    size_t total = (size_t)len + remaining;

    c->reasm_remaining = remaining;
    c->reasm_active = 1;
    if (c->upper.deliver_fragment) {
        /* An empty first fragment (3.1.5.8 allows it): the upper layer's first
         * fragment is the first one with bytes. */
        c->reasm_first_pending = len == 0;
        if (len > 0)
            deliver_fragment(c, data, len, remaining, 1);
        return 0;
    }
    if (c->reasm_cap < total) {
        free(c->reasm_buf);
        c->reasm_cap = 0;
        c->reasm_buf = malloc(total);
        if (!c->reasm_buf)
            return -ENOMEM;
        c->reasm_cap = total;
    }
    memcpy(c->reasm_buf, data, len);
    c->reasm_len = len;
    return 0;
}

/* Checks a continuation fragment against the bytes still expected; 0, or -1 after
 * terminating the connection (nothing of the fragment is delivered then). */
static int continuation_check(struct smbd_conn *c, uint32_t len, uint32_t remaining)
{
    if (len > c->reasm_remaining) {
        smbd_terminate(c, -EPROTO, "fragment of %u bytes exceeds the %u bytes announced by "
                       "RemainingDataLength (MS-SMBD 3.1.5.8)", (unsigned)len,
                       (unsigned)c->reasm_remaining);
        return -1;
    }
    if (remaining == 0 && c->reasm_remaining - len > 0) {
        smbd_terminate(c, -EPROTO, "fragmented message ended with %u bytes still missing "
                       "(MS-SMBD 3.1.5.8)", (unsigned)(c->reasm_remaining - len));
        return -1;
    }
    if (remaining != c->reasm_remaining - len) {
        smbd_terminate(c, -EPROTO, "RemainingDataLength %u contradicts the %u bytes still "
                       "expected (MS-SMBD 3.1.5.4)", (unsigned)remaining,
                       (unsigned)(c->reasm_remaining - len));
        return -1;
    }
    return 0;
}

static void reassembly_add(struct smbd_conn *c, const uint8_t *data, uint32_t len,
                           uint32_t remaining)
{
    if (continuation_check(c, len, remaining) < 0)
        return;
    c->reasm_remaining = remaining;
    c->reasm_active = remaining > 0;
    if (c->upper.deliver_fragment) {
        if (len > 0) { /* an empty fragment changes nothing for the upper layer */
            deliver_fragment(c, data, len, remaining, c->reasm_first_pending);
            c->reasm_first_pending = 0;
        }
        return;
    }
    memcpy(c->reasm_buf + c->reasm_len, data, len);
    c->reasm_len += len;
    if (remaining > 0)
        return;
    deliver(c, c->reasm_buf, c->reasm_len);
    if (c->reasm_cap > SMBD_REASSEMBLY_KEEP) { /* shrink back after a large message */
        free(c->reasm_buf);
        c->reasm_buf = NULL;
        c->reasm_cap = 0;
    }
}

/* 3.1.5.8 checks that need connection state (the codec checked the structure). */
static const char *data_transfer_violation(const struct smbd_conn *c,
                                           const struct smbd_data_hdr *h)
{
    if (h->credits_requested == 0)
        return "Data Transfer with CreditsRequested 0 (MS-SMBD 3.1.5.8)";
    if ((uint64_t)h->data_length + h->remaining_data_length > c->neg.max_fragmented_recv_size)
        return "DataLength + RemainingDataLength exceed MaxFragmentedRecvSize (MS-SMBD 3.1.5.8)";
    if (c->receive_credits == 0)
        return "a Data Transfer arrived while the peer held no send credit (MS-SMBD 3.1.5.1)";
    if (c->send_credits + h->credits_granted > UINT16_MAX)
        return "the peer granted more than 65535 send credits (MS-SMBD 2.2.3)";
    return NULL;
}

static void recv_data_transfer(struct smbd_conn *c, const struct sd_wc *wc, const uint8_t *buf,
                               uint64_t now_ms)
{
    struct smbd_data_hdr h;
    const char *why;
    const uint8_t *data;

    /* 3.1.5.5: any message restarts the idle timer and answers our keepalive. */
    smbd_idle_timer_restart(c, now_ms);
    c->keepalive = SMBD_KA_NONE;
    if (smbd_decode_data_hdr(buf, wc->byte_len, &h, &why) ||
        (why = data_transfer_violation(c, &h)) != NULL) {
        smbd_terminate(c, -EPROTO, "%s", why);
        return;
    }
    c->stats.fragments_received++;
    c->receive_credits--;
    c->receive_credit_target = h.credits_requested;
    if (h.flags & SMBD_FLAG_RESPONSE_REQUESTED) {
        /* Answer promptly; the answer itself does not ask for one in return. */
        c->send_immediate = 1;
        c->stats.keepalives_received++;
    }
    c->send_credits += h.credits_granted;
    c->stats.credits_received += h.credits_granted;
    if (wc->with_invalidate) {
        c->invalidated_token = wc->invalidated_rkey;
        c->invalidated_set = 1;
    }
    data = buf + h.data_offset;
    if (h.data_length == 0 && h.remaining_data_length == 0) {
        /* Credit or keepalive message: not part of any fragment sequence. */
        if (!c->reasm_active)
            report_invalidated(c);
        return;
    }
    /* An empty fragment with RemainingDataLength is part of a message (3.1.5.8 appends
     * its zero bytes and FragmentReassemblyRemaining stays): it may start one, or sit
     * between two fragments with the same RemainingDataLength as the one before. */
    if (c->reasm_active) {
        reassembly_add(c, data, h.data_length, h.remaining_data_length);
    } else if (h.remaining_data_length == 0) {
        /* unfragmented: straight from the buffer */
        if (c->upper.deliver_fragment)
            deliver_fragment(c, data, h.data_length, 0, 1);
        else
            deliver(c, data, h.data_length);
    } else if (reassembly_start(c, data, h.data_length, h.remaining_data_length)) {
        smbd_terminate(c, -ENOMEM, "no memory to reassemble a %llu-byte message",
                       (unsigned long long)h.data_length + h.remaining_data_length);
    }
}

void smbd_on_recv(struct smbd_conn *c, const struct sd_wc *wc, uint64_t now_ms)
{
    uint64_t idx = wc->wr_id & SMBD_WR_INDEX_MASK;
    const uint8_t *buf;

    if (idx >= c->recv_count || !c->recv_posted_flag[idx]) {
        sd_warn("smbd: ignoring a completion for receive %llu that is not posted",
                (unsigned long long)idx);
        return;
    }
    c->recv_posted_flag[idx] = 0;
    c->recv_posted--;
    if (wc->status == SD_WC_FLUSHED)
        return; /* the connection is gone; SD_WC_CONN_LOST follows with the cause */
    if (wc->status == SD_WC_LOCAL_LENGTH) {
        if (smbd_is_live(c))
            smbd_terminate(c, -EPROTO, "the peer sent a message larger than the %u-byte "
                           "receive it was granted: MaxReceiveSize exceeded (MS-SMBD 3.1.5.4)",
                           (unsigned)recv_stride(c));
        return;
    }
    if (wc->status != SD_WC_SUCCESS) {
        if (smbd_is_live(c))
            smbd_terminate(c, -ECONNRESET, "a receive failed: %s",
                           sd_wc_status_str(wc->status));
        return;
    }
    if (!smbd_is_live(c))
        return;
    buf = c->recv_mem + idx * recv_stride(c);
    switch (c->role) { /* 3.1.5.5 */
    case SMBD_ROLE_PASSIVE: smbd_recv_negotiate_request(c, buf, wc->byte_len, now_ms); break;
    case SMBD_ROLE_ACTIVE: smbd_recv_negotiate_response(c, buf, wc->byte_len, now_ms); break;
    case SMBD_ROLE_ESTABLISHED: recv_data_transfer(c, wc, buf, now_ms); break;
    }
    /* (a client's Negotiate Response made a new pool, its receives posted) */
    if (smbd_is_live(c) && idx < c->recv_count && !c->recv_posted_flag[idx]) {
        int err = post_recv(c, (uint32_t)idx);

        /* -ENOTCONN: the provider has lost the connection; its SD_WC_CONN_LOST
         * completion follows and terminates with the real cause (3.1.7.1). */
        if (err && err != -ENOTCONN)
            smbd_terminate(c, -ECONNRESET, "reposting a receive failed: %d", err);
    }
}
