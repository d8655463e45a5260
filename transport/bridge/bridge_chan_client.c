/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/bridge/bridge_chan_client.c — the channel's client role (the shim): the
 * program's large READs and WRITEs leave with Buffer Descriptor V1 lists of registered
 * buffers the server RDMA-writes and RDMA-reads (MS-SMBD 3.1.4.3, MS-SMB2 2.2.19,
 * 2.2.21), and a channel READ's response is rebuilt inline for the program once its
 * buffer is deregistered (see bridge_chan.h). */
#include "bridge_chan_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "chan_client.h"
#include "chan_client_build.h"

/* Descriptors one client-role I/O may need: the I/O is at most MaxReadWriteSize, which
 * the engine registers as one element (3.1.4.3); a few more cost nothing. */
#define CHAN_CLIENT_DESCS 4

struct bridge_chan_client {
    struct bridge_chan ch;           /* first: what bridge_chan.c hands around */
    struct chan_client cc;
    uint32_t invalidated;            /* token of a Send with Invalidate not yet matched */
    int inline_reported;             /* host.inline_io was called */
};

static struct bridge_chan_client *client_of(struct bridge_chan *ch)
{
    return (struct bridge_chan_client *)ch;
}

/* A READ or WRITE the plan moves over the channel: register, rewrite, send, track. 1,
 * BRIDGE_CHAN_WAIT (no buffer or registered memory now: the request stays in the stream
 * and is offered again) or -1. A large WRITE is registered where it lies in the stream
 * before its buffer is taken over, so a refused registration leaves it there. */
static int client_send(struct bridge_chan_client *c, const uint8_t *msg, size_t len,
                       const struct chan_client_plan *plan, uint64_t now_ms)
{
    struct bridge_chan *ch = &c->ch;
    struct smbd_buffer_desc descs[CHAN_CLIENT_DESCS];
    uint8_t out[CHAN_REQUEST_SIZE(CHAN_CLIENT_DESCS)];
    int is_write = plan->kind == CHAN_WRITE;
    int in_place = is_write && bridge_chan_takes_message(ch, plan->length);
    struct smbd_registration *reg;
    struct bridge_chan_buf *b = NULL;
    uint8_t *mem = (uint8_t *)(uintptr_t)plan->data;
    size_t nd = 0;
    int n, rc;

    if (!bridge_chan_budget_allows(ch, plan->length)) /* the request waits in the stream */
        return bridge_chan_mem_wait(ch, BRIDGE_CHAN_Q_STREAM, now_ms);
    if (!smbd_conn_can_register(ch->host.conn, plan->length))
        return bridge_chan_pin_wait(ch, BRIDGE_CHAN_Q_STREAM, plan->length, 0, now_ms);
    if (!in_place) {
        if (!(b = bridge_chan_buf_new_charged(ch, plan->length)))
            return bridge_chan_fail(ch, -ENOMEM, "RDMA channel: out of memory for an I/O buffer");
        if (is_write)
            memcpy(b->mem, plan->data, plan->length);
        mem = b->mem;
    }
    rc = smbd_conn_register_buffer(ch->host.conn, mem, plan->length,
                                   is_write ? SMBD_REG_PEER_READ : SMBD_REG_PEER_WRITE, &reg,
                                   descs, CHAN_CLIENT_DESCS, &nd);
    if (rc < 0) {
        bridge_chan_buf_free(ch, b);
        if (bridge_chan_refused_for_memory(rc))
            return bridge_chan_pin_wait(ch, BRIDGE_CHAN_Q_STREAM, plan->length, rc, now_ms);
        return bridge_chan_fail(ch, rc, "RDMA channel: registering an I/O buffer failed");
    }
    bridge_chan_mem_got(ch, BRIDGE_CHAN_Q_STREAM, now_ms);
    if (in_place && !(b = bridge_chan_buf_take_message(ch, plan->data, plan->length))) {
        smbd_conn_deregister_buffer(ch->host.conn, reg);
        return bridge_chan_fail(ch, -ENOMEM, "RDMA channel: cannot take over a WRITE's buffer");
    }
    b->reg = reg;
    n = is_write ? chan_build_write_request(msg, len, plan, descs, nd, out, sizeof(out))
                 : chan_build_read_request(msg, len, plan, descs, nd, out, sizeof(out));
    /* MS-SMB2 3.2.4.1.1: the request that leaves is signed; the program's signature of
     * the original (its MessageId's nonce under AES-GMAC) never leaves the process. */
    if (n >= 0 && plan->signed_io && smb2_sign(&plan->key, SMB2_SIGN_FROM_CLIENT, out, (size_t)n))
        n = -1;
    if (n < 0 || (rc = chan_client_track(&c->cc, plan, descs, nd, b)) < 0) {
        bridge_chan_buf_free(ch, b);
        return bridge_chan_fail(ch, n < 0 ? -EPROTO : rc,
                                "RDMA channel: cannot rewrite an SMB2 request");
    }
    rc = smbd_conn_send(ch->host.conn, &(struct iovec){ out, (size_t)n }, 1, now_ms);
    if (rc < 0)
        return bridge_chan_fail(ch, rc, "SMB Direct send of a channel request failed");
    if (is_write) {
        ch->stats.rdma_reads++;
        ch->stats.rdma_read_bytes += plan->length;
        ch->stats.in_place_bytes += in_place ? plan->length : 0;
    } else {
        ch->stats.rdma_writes++;
    }
    ch->stats.rdma_signed += plan->signed_io != 0;
    return 1;
}

/* The server wrote res->bytes into b: deregister, then hand the program the inline READ
 * response it expects (MS-SMB2 2.2.20) with the data, signed with the session's key
 * when the READ was signed (the server's signature, checked, covered only what it sent). */
static int client_read_done(struct bridge_chan *ch, const uint8_t *resp, size_t len,
                            struct bridge_chan_buf *b, const struct chan_client_result *res)
{
    uint8_t head[SMB2_READ_RESP_FIXED];
    uint32_t bytes = res->bytes;
    int n = chan_build_read_response(resp, len, bytes, head, sizeof(head));
    struct iovec iov[2] = { { head, (size_t)n }, { b->mem, bytes } };

    smbd_conn_deregister_buffer(ch->host.conn, b->reg);
    b->reg = NULL;
    if (n >= 0 && res->signed_io &&
        smb2_sign_parts(&res->key, SMB2_SIGN_FROM_SERVER, head, (size_t)n, b->mem, bytes))
        n = -1;
    if (n < 0)
        return bridge_chan_fail(ch, -EPROTO, "RDMA channel: cannot rebuild an SMB2 READ response");
    ch->stats.rdma_write_bytes += bytes;
    return bridge_chan_to_stream_buf(ch, iov, 2, b) < 0 ? -1 : 1;
}

/* Tells the host, once, that READ/WRITE go inline from now on. */
static void report_inline(struct bridge_chan_client *c)
{
    if (c->inline_reported || !chan_client_inline_only(&c->cc))
        return;
    c->inline_reported = 1;
    if (c->ch.host.inline_io)
        c->ch.host.inline_io(c->ch.host.ctx);
}

static int client_from_stream(struct bridge_chan *ch, const uint8_t *msg, size_t len,
                              uint64_t now_ms)
{
    struct bridge_chan_client *c = client_of(ch);
    struct chan_client_plan plan;
    int rc = chan_client_plan_request(&c->cc, msg, len, &plan);

    report_inline(c);
    if (rc != CHAN_PASS) {
        rc = client_send(c, msg, len, &plan, now_ms);
        report_inline(c);
    }
    smb2_sign_key_wipe(&plan.key); /* a signed request that passes has it too */
    return rc;
}

static int client_from_peer(struct bridge_chan *ch, const uint8_t *msg, size_t len,
                            int first_only)
{
    struct bridge_chan_client *c = client_of(ch);
    struct chan_client_result res;
    struct chan_released r;
    int rc = 0;

    (void)first_only; /* a response's headers are in its first fragment */
    chan_client_on_response(&c->cc, msg, len, c->invalidated, &res);
    c->invalidated = 0;
    report_inline(c);
    if (res.action == CHAN_CLIENT_ERROR)
        rc = bridge_chan_fail(ch, -EPROTO, res.why);
    while (chan_table_take_released(&c->cc.ios, &r)) {
        if (rc == 0 && res.action == CHAN_CLIENT_READ_DONE && r.cookie == res.cookie)
            rc = client_read_done(ch, msg, len, r.cookie, &res);
        bridge_chan_buf_free(ch, r.cookie);
    }
    smb2_sign_key_wipe(&res.key);
    return rc;
}

static int client_busy(const struct bridge_chan *ch)
{
    return chan_table_outstanding(&((const struct bridge_chan_client *)ch)->cc.ios) > 0;
}

static void client_invalidated(struct bridge_chan *ch, uint32_t token)
{
    client_of(ch)->invalidated = token;
}

static void client_free(struct bridge_chan *ch)
{
    struct bridge_chan_client *c = client_of(ch);

    chan_table_release_all(&c->cc.ios);
    bridge_chan_free_released(ch, &c->cc.ios);
    chan_client_fini(&c->cc);
    free(c);
}

static const struct bridge_chan_ops client_ops = {
    .from_stream = client_from_stream,
    .from_peer = client_from_peer,
    .busy = client_busy,
    .invalidated = client_invalidated,
    .free = client_free,
};

struct bridge_chan *bridge_chan_client_new(uint32_t threshold, uint32_t max_io,
                                           const struct bridge_chan_host *host)
{
    struct bridge_chan_client *c = calloc(1, sizeof(*c));

    if (!c)
        return NULL;
    c->ch.ops = &client_ops;
    c->ch.host = *host;
    chan_client_init(&c->cc, threshold, max_io);
    c->cc.remote_invalidation = host->remote_invalidation;
    c->cc.signing_key = host->signing_key;
    c->cc.key_arg = host->ctx;
    return &c->ch;
}
