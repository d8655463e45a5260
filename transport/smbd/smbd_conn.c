/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/smbd/smbd_conn.c — MS-SMBD connection lifecycle: configuration, creation,
 * start, completion dispatch, termination and queries (MS-SMBD 3.1.1.1, 3.1.4.1,
 * 3.1.4.7, 3.1.7). The protocol rules live in the smbd_conn_*.c files beside it. */
#include "smbd_conn_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "smbd_memplan.h"

void smbd_config_default(struct smbd_config *cfg, enum smbd_role role)
{
    /* MS-SMBD Appendix B <2>, <7>: Windows' initial values. */
    cfg->receive_credit_max = 255;
    cfg->send_credit_target = 255;
    cfg->max_send_size = 1364;
    cfg->max_receive_size = 8192;
    /* An 8 MiB SMB2 READ response arrives inline when the peer does not use RDMA
     * Write; 64 KiB on top covers its SMB2 headers, a transform header and compound
     * padding. Windows offers 1 MiB. A value above receive credits x MaxReceiveSize
     * (2 MiB here) is safe only because every fragment is copied out of its receive
     * buffer at once and the buffer reposted (smbd_conn_recv.c), so credits never wait
     * on reassembly. */
    cfg->max_fragmented_recv_size = 8u * 1024 * 1024 + 64u * 1024;
    cfg->max_read_write_size = 8u * 1024 * 1024; /* Appendix B <6> */
    cfg->keepalive_interval_ms = 120000;         /* Appendix B <1> */
    cfg->keepalive_timeout_ms = 5000;            /* Appendix B <3> */
    /* 3.1.4.1: 120 s for the initiator; 3.1.7.2: 5 s for the listener. */
    cfg->negotiate_timeout_ms = role == SMBD_ROLE_PASSIVE ? 5000 : 120000;
}

const char *smbd_config_check(const struct smbd_config *cfg)
{
    /* A peer holding its last credit can send only when it may grant one back
     * (3.1.5.1); keeping both directions moving without credit-only messages
     * bouncing back and forth needs three (smbd_credits.c). */
    if (cfg->receive_credit_max < SMBD_MIN_PEER_CREDITS)
        return "receive_credit_max (must be >= 3)";
    if (cfg->send_credit_target < 1)
        return "send_credit_target (must be >= 1)";
    if (cfg->max_send_size < SMBD_MIN_RECEIVE_SIZE || cfg->max_send_size > SMBD_MAX_MESSAGE_SIZE)
        return "max_send_size (must be 128..1048576)";
    if (cfg->max_receive_size < SMBD_MIN_RECEIVE_SIZE || cfg->max_receive_size > SMBD_MAX_MESSAGE_SIZE)
        return "max_receive_size (must be 128..1048576)";
    if (cfg->max_fragmented_recv_size < SMBD_MIN_FRAGMENTED_SIZE)
        return "max_fragmented_recv_size (must be >= 131072)";
    if (cfg->max_read_write_size == 0)
        return "max_read_write_size (must be > 0)";
    if (cfg->keepalive_interval_ms > 0 && cfg->keepalive_timeout_ms == 0)
        return "keepalive_timeout_ms (must be > 0)";
    if (cfg->negotiate_timeout_ms == 0)
        return "negotiate_timeout_ms (must be > 0)";
    return NULL;
}

struct smbd_conn *smbd_conn_new(enum smbd_role role, const struct smbd_config *cfg,
                                const struct sd_provider_ops *ops, struct sd_qp *qp,
                                const struct smbd_upper *upper, void *ctx)
{
    const char *bad = smbd_config_check(cfg);
    struct smbd_conn *c;

    if (bad) {
        sd_error("smbd: invalid configuration: %s", bad);
        return NULL;
    }
    if (role == SMBD_ROLE_ESTABLISHED || !ops || !qp || !upper ||
        (!upper->deliver && !upper->deliver_fragment)) {
        sd_error("smbd: connection needs role ACTIVE or PASSIVE, a provider and a deliver "
                 "or deliver_fragment upcall");
        return NULL;
    }
    c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    /* 3.1.4.1 / 3.1.7.2: initial values of the abstract data model. */
    c->role = role;
    c->cfg = *cfg;
    c->ops = ops;
    c->qp = qp;
    c->upper = *upper;
    c->ctx = ctx;
    c->neg.max_send_size = cfg->max_send_size;
    c->neg.max_receive_size = cfg->max_receive_size;
    c->neg.max_fragmented_recv_size = cfg->max_fragmented_recv_size;
    c->neg.max_read_write_size = role == SMBD_ROLE_ACTIVE ? 0 : cfg->max_read_write_size;
    c->neg.send_credit_target = cfg->send_credit_target;
    c->neg.receive_credit_max = cfg->receive_credit_max;
    c->keepalive = SMBD_KA_NONE;
    c->state = SMBD_ST_NEW;
    c->negotiate_deadline = UINT64_MAX;
    c->idle_deadline = UINT64_MAX;
    return c;
}

void smbd_conn_free(struct smbd_conn *c)
{
    if (!c)
        return;
    smbd_rdma_free_all(c);
    smbd_send_pool_free(c);
    smbd_recv_pool_free(c);
    smbd_pin_release_reserve(c);
    free(c->reasm_buf);
    free(c);
}

int smbd_conn_start(struct smbd_conn *c, uint64_t now_ms)
{
    int err;

    if (c->state != SMBD_ST_NEW)
        return -EALREADY;
    smbd_enter_state(c, SMBD_ST_RUNNING);
    c->negotiate_deadline = now_ms + c->cfg.negotiate_timeout_ms; /* 3.1.2.1 */
    err = smbd_send_pool_init(c);
    if (!err)
        err = smbd_recv_pool_init(c); /* 3.1.4.1 / 3.1.7.2: post receives */
    /* A server's receives keep what they drew of the reserve; the one send buffer, and a
     * client's one receive, give it back when freed (smbd_send_pool_rebase,
     * smbd_recv_pool_resize). */
    if (!err && c->role != SMBD_ROLE_ACTIVE) {
        smbd_pin_settle_reserve(c, c->recv_drawn);
        c->recv_drawn = 0;
    }
    if (!err && c->role == SMBD_ROLE_ACTIVE)
        err = smbd_send_negotiate_request(c); /* 3.1.5.2 */
    if (err) {
        smbd_terminate(c, err, "cannot start the connection: %s (MS-SMBD 3.1.4.1/3.1.7.2)",
                       strerror(-err));
        return err;
    }
    return 0;
}

static void drop_send_queue(struct smbd_conn *c)
{
    smbd_fifo_release(c, &c->send_queue);
    c->queued_bytes = 0;
    c->send_ready_armed = 0;
}

void smbd_provider_disconnect(struct smbd_conn *c)
{
    c->provider_requests++;
    c->ops->disconnect(c->qp);
}

static void terminate(struct smbd_conn *c, enum smbd_state to, int err, const char *fmt,
                      va_list ap)
{
    char reason[256];
    int was_disconnecting = c->state == SMBD_ST_DRAINING || c->state == SMBD_ST_DISCONNECTING;

    if (smbd_is_terminated(c))
        return;
    /* A refused change (a bug, logged) still ends the connection. */
    if (smbd_enter_state(c, to) != 0 && smbd_enter_state(c, SMBD_ST_TERMINATED) != 0)
        return;
    vsnprintf(reason, sizeof(reason), fmt, ap);
    if (err && c->state != SMBD_ST_PEER_CLOSED)
        sd_warn("smbd: connection terminated (%s): %s", strerror(-err), reason);
    else
        sd_info("smbd: connection closed: %s", reason);
    c->negotiate_deadline = UINT64_MAX;
    c->idle_deadline = UINT64_MAX;
    drop_send_queue(c);
    /* A failure Negotiate Response is flushed first (3.1.5.3), then disconnected. */
    if (!was_disconnecting && c->state != SMBD_ST_REFUSING)
        smbd_provider_disconnect(c);
    if (c->upper.terminated)
        c->upper.terminated(c->ctx, err, reason);
}

void smbd_terminate(struct smbd_conn *c, int err, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    terminate(c, SMBD_ST_TERMINATED, err, fmt, ap);
    va_end(ap);
}

void smbd_terminate_as(struct smbd_conn *c, enum smbd_state to, int err, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    terminate(c, to, err, fmt, ap);
    va_end(ap);
}

void smbd_become_established(struct smbd_conn *c, uint64_t now_ms)
{
    int err;

    c->role = SMBD_ROLE_ESTABLISHED;
    c->negotiate_deadline = UINT64_MAX;
    if ((err = smbd_send_pool_rebase(c)) != 0) {
        smbd_terminate(c, err, "cannot register send buffers of %u bytes: %s",
                       (unsigned)c->neg.max_send_size, strerror(-err));
        return;
    }
    smbd_pin_return_unplanned(c);
    smbd_idle_timer_restart(c, now_ms);
    if (c->upper.established)
        c->upper.established(c->ctx);
    smbd_send_pump(c, now_ms);
}

static void on_conn_lost(struct smbd_conn *c, enum sd_wc_status cause)
{
    /* Unsignaled sends never complete on success: everything is back now. */
    smbd_fifo_release(c, &c->in_flight);
    if (c->state == SMBD_ST_DRAINING || c->state == SMBD_ST_DISCONNECTING) {
        smbd_terminate(c, 0, "local disconnect");
    } else if ((cause == SD_WC_FLUSHED || cause == SD_WC_SUCCESS) && c->reasm_active) {
        /* Not an ordinary end: the message it started can never be completed. */
        smbd_terminate(c, -ECONNRESET, "the peer closed the RDMA connection with %u bytes of "
                       "a fragmented message still to come (MS-SMBD 3.1.5.8, 3.1.7.1)",
                       (unsigned)c->reasm_remaining);
    } else if (cause == SD_WC_FLUSHED || cause == SD_WC_SUCCESS) {
        /* an ordinary end of an SMB Direct session */
        smbd_terminate_as(c, SMBD_ST_PEER_CLOSED, -ECONNRESET,
                          "the peer closed the RDMA connection (MS-SMBD 3.1.7.1)");
    } else {
        smbd_terminate(c, -ECONNRESET, "the RDMA connection was lost: %s (MS-SMBD 3.1.7.1)",
                       sd_wc_status_str(cause));
    }
}

void smbd_conn_on_completion(struct smbd_conn *c, const struct sd_wc *wc, uint64_t now_ms)
{
    if (wc->opcode == SD_WC_CONN_LOST) {
        on_conn_lost(c, wc->status);
        return;
    }
    switch (wc->wr_id >> SMBD_WR_KIND_SHIFT) {
    case SMBD_WR_RECV: smbd_on_recv(c, wc, now_ms); break;
    case SMBD_WR_SEND: smbd_on_send_done(c, wc); break;
    case SMBD_WR_RDMA: smbd_on_rdma_done(c, wc); break;
    default:
        sd_warn("smbd: ignoring a completion with unknown id 0x%llx",
                (unsigned long long)wc->wr_id);
        return;
    }
    if (smbd_is_live(c))
        smbd_send_pump(c, now_ms);
}

void smbd_conn_disconnect(struct smbd_conn *c)
{
    if (c->state != SMBD_ST_NEW && !smbd_is_live(c))
        return;
    c->negotiate_deadline = UINT64_MAX;
    c->idle_deadline = UINT64_MAX;
    drop_send_queue(c);
    /* Messages already posted are still on their way: a provider disconnect would
     * drop those not yet on the wire (soft-iWARP flushes its send queue), so wait
     * for the completion of the last one when it is signaled (a burst's last is). */
    if (c->in_flight.head && c->signaled_seq == c->in_flight.tail->seq) {
        smbd_enter_state(c, SMBD_ST_DRAINING);
        return;
    }
    smbd_enter_state(c, SMBD_ST_DISCONNECTING);
    smbd_provider_disconnect(c);
}

void smbd_conn_pause_receive(struct smbd_conn *c, int paused, uint64_t now_ms)
{
    c->recv_paused = paused != 0;
    if (!c->recv_paused && smbd_is_live(c))
        smbd_send_pump(c, now_ms);
}

void smbd_conn_set_send_low_water(struct smbd_conn *c, size_t bytes)
{
    c->low_water = bytes;
}

size_t smbd_conn_send_queued(const struct smbd_conn *c)
{
    return c->queued_bytes;
}

enum smbd_role smbd_conn_role(const struct smbd_conn *c)
{
    return c->role;
}

int smbd_conn_is_established(const struct smbd_conn *c)
{
    return c->role == SMBD_ROLE_ESTABLISHED && smbd_is_live(c);
}

int smbd_conn_is_terminated(const struct smbd_conn *c)
{
    return smbd_is_terminated(c);
}

int smbd_conn_peer_closed(const struct smbd_conn *c)
{
    return c->state == SMBD_ST_PEER_CLOSED;
}

int smbd_conn_query(const struct smbd_conn *c, struct smbd_params *out) /* 3.1.4.7 */
{
    if (c->role != SMBD_ROLE_ESTABLISHED)
        return -ENOTCONN;
    out->neg = c->neg;
    out->send_credits = (uint16_t)c->send_credits;
    out->receive_credits = (uint16_t)c->receive_credits;
    return 0;
}

void smbd_conn_set_upper(struct smbd_conn *c, const struct smbd_upper *upper, void *ctx)
{
    c->upper = *upper;
    c->ctx = ctx;
}

uint64_t smbd_conn_provider_requests(const struct smbd_conn *c)
{
    return c->provider_requests;
}

void smbd_conn_get_stats(const struct smbd_conn *c, struct smbd_stats *out)
{
    *out = c->stats;
}
