/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/bridge/bridge_chan_server.c — the channel's server role (the relay): a
 * client's channel WRITE has its data RDMA-read (MS-SMBD 3.1.4.6) and goes inline to
 * the backend; a channel READ goes inline and the backend's data is RDMA-written into
 * the client's buffers (3.1.4.5) before the rewritten response, sent with Send with
 * Invalidate when the client asked for it (MS-SMB2 2.2.19 RDMA_V1_INVALIDATE, MS-SMBD
 * 3.1.4.2). See bridge_chan.h. */
#include "bridge_chan_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <utlist.h>

#include "chan_server.h"
#include "chan_server_build.h"
#include "sd_clock.h"

/* A client's channel WRITE whose RDMA Read waits for buffer memory. */
struct chan_pending {
    uint64_t message_id;
    uint32_t size;
    uint8_t head[SMB2_RW_REQ_FIXED];
    size_t head_len;
    struct chan_pending *prev, *next; /* in the server's pending list (utlist DL) */
};

/* The answer to a channel READ (or to an I/O the client asked to have invalidated),
 * carried out in order: the data RDMA-written into the client's buffers, then the
 * response sent (the Send follows the Writes on the connection, so the client sees the
 * data placed first), with Send with Invalidate when asked. */
struct chan_answer {
    struct bridge_chan_buf *b;       /* the data, until its RDMA Write is posted */
    struct smbd_buffer_desc *descs;  /* ... into the client's buffers */
    size_t ndescs;
    uint8_t *resp;                   /* the response to send */
    size_t resp_len;
    uint32_t token;                  /* 0, or the STag to invalidate with the Send */
};

struct bridge_chan_server {
    struct bridge_chan ch;           /* first: what bridge_chan.c hands around */
    struct chan_server cs;
    struct bridge_chan_buf *rdma;    /* buffers an RDMA Read/Write still uses (utlist DL) */
    struct chan_pending *pending;    /* WRITEs waiting for memory, oldest first (utlist DL) */
    struct chan_answer *held_answer; /* an answer waiting for memory */
};

static struct bridge_chan_server *server_of(struct bridge_chan *ch)
{
    return (struct bridge_chan_server *)ch;
}

/* Starts the RDMA Reads of waiting channel WRITEs, in arrival order, while the budgets
 * and the registered memory have room (a WRITE waits at the head until they do). 0, or
 * -1 when the bridge was failed. */
static int server_start_writes(struct bridge_chan_server *s)
{
    struct bridge_chan *ch = &s->ch;
    uint64_t now = sd_now_ms();

    while (s->pending) {
        struct chan_pending *w = s->pending;
        const struct chan_io *io = chan_table_find(&s->cs.ios, w->message_id);
        struct bridge_chan_buf *b = NULL;
        int busy, rc;

        if (io && !smbd_conn_can_register(ch->host.conn, w->size))
            return bridge_chan_pin_wait(ch, BRIDGE_CHAN_Q_WRITES, w->size, 0, now) < 0 ? -1 : 0;
        if (io && !(b = bridge_chan_buf_new(ch, w->size, &busy))) {
            if (busy) {
                bridge_chan_mem_wait(ch, BRIDGE_CHAN_Q_WRITES, now);
                return 0;
            }
            return bridge_chan_fail(ch, -ENOMEM, "RDMA channel: out of memory for an I/O buffer");
        }
        if (!io) { /* cannot happen: its response needs the inline WRITE first */
            DL_DELETE(s->pending, w);
            free(w);
            continue;
        }
        rc = smbd_conn_rdma_read(ch->host.conn, (uint64_t)(uintptr_t)b, b->mem, b->len,
                                 io->descs, io->ndescs, 0);
        if (rc < 0) {
            bridge_chan_buf_free(ch, b);
            if (bridge_chan_refused_for_memory(rc))
                return bridge_chan_pin_wait(ch, BRIDGE_CHAN_Q_WRITES, w->size, rc, now) < 0 ? -1
                                                                                         : 0;
            return bridge_chan_fail(ch, rc, "RDMA Read of a channel WRITE's data could not start");
        }
        bridge_chan_mem_got(ch, BRIDGE_CHAN_Q_WRITES, now);
        memcpy(b->head, w->head, w->head_len);
        b->head_len = w->head_len;
        DL_DELETE(s->pending, w);
        free(w);
        DL_APPEND(s->rdma, b);
    }
    return 0;
}

/* A client's channel request (whole): READ goes inline to the backend at once; WRITE
 * first has its data RDMA-read (as soon as the budgets have room for its buffer), and
 * goes inline when that completes. A first fragment only is left to the bridge
 * (bridge_chan_wants_whole asked for the whole of a channel request). */
static int server_from_peer(struct bridge_chan *ch, const uint8_t *msg, size_t len,
                            int first_only)
{
    struct bridge_chan_server *s = server_of(ch);
    struct chan_server_plan plan;
    const struct chan_io *io;
    uint8_t head[SMB2_RW_REQ_FIXED + 1];
    struct chan_pending *w = NULL;
    int rc, n;

    if (first_only)
        return 0;
    if ((rc = chan_server_plan_request(&s->cs, msg, len, &plan)) < 0) {
        char why[200];

        snprintf(why, sizeof(why), "RDMA channel request refused: %s", plan.why);
        return bridge_chan_fail(ch, -EPROTO, why);
    }
    if (plan.kind == CHAN_PASS)
        return 0;
    if (plan.kind == CHAN_WRITE && !(w = calloc(1, sizeof(*w))))
        return bridge_chan_fail(ch, -ENOMEM, "RDMA channel: out of memory for a WRITE request");
    rc = chan_server_track(&s->cs, &plan, NULL, &io);
    if (rc < 0) {
        free(w);
        return bridge_chan_fail(ch, rc == -EEXIST ? -EPROTO : rc,
                                rc == -EEXIST ? "RDMA channel: a second request with an "
                                                "outstanding MessageId"
                                              : "RDMA channel: out of memory for a request's "
                                                "descriptors");
    }
    if (plan.kind == CHAN_READ) {
        n = chan_build_inline_read(msg, len, &plan, head, sizeof(head));
        return ch->host.to_stream(ch->host.ctx, &(struct iovec){ head, (size_t)n }, 1, NULL, 0) < 0
                   ? -1 : 1;
    }
    w->message_id = plan.message_id;
    w->size = plan.size;
    w->head_len = (size_t)chan_build_inline_write(msg, len, &plan, w->head, sizeof(w->head));
    DL_APPEND(s->pending, w);
    return server_start_writes(s) < 0 ? -1 : 1;
}

static void answer_free(struct bridge_chan *ch, struct chan_answer *a)
{
    bridge_chan_buf_free(ch, a->b);
    free(a->descs);
    free(a->resp);
    free(a);
}

/* Carries a out as far as memory allows: 1 when done (a freed), BRIDGE_CHAN_WAIT when
 * its RDMA Write's registration or its response's send buffers must wait (a kept, part
 * done), -1 when the bridge was failed (a freed). */
static int answer_go(struct bridge_chan_server *s, struct chan_answer *a, uint64_t now)
{
    struct bridge_chan *ch = &s->ch;
    struct iovec iov = { a->resp, a->resp_len };
    uint32_t len;
    int rc;

    if (a->b) {
        len = a->b->len;
        rc = smbd_conn_rdma_write(ch->host.conn, (uint64_t)(uintptr_t)a->b, a->b->mem, len,
                                  a->descs, a->ndescs, 0);
        if (bridge_chan_refused_for_memory(rc)) {
            if ((rc = bridge_chan_pin_wait(ch, BRIDGE_CHAN_Q_STREAM, len, rc, now)) ==
                BRIDGE_CHAN_WAIT)
                return rc;
            answer_free(ch, a);
            return -1;
        }
        if (rc < 0) {
            answer_free(ch, a);
            return bridge_chan_fail(ch, rc, "RDMA Write of a channel READ's data could not start");
        }
        bridge_chan_mem_got(ch, BRIDGE_CHAN_Q_STREAM, now);
        DL_APPEND(s->rdma, a->b);
        ch->stats.rdma_writes++;
        ch->stats.rdma_write_bytes += len;
        ch->stats.in_place_bytes += a->b->taken ? len : 0;
        a->b = NULL;
    }
    rc = a->token ? smbd_conn_send_invalidate(ch->host.conn, &iov, 1, a->token, now)
                  : smbd_conn_send(ch->host.conn, &iov, 1, now);
    if (rc == -EAGAIN)
        return BRIDGE_CHAN_WAIT; /* send buffers come back as earlier Sends complete */
    answer_free(ch, a);
    return rc < 0 ? bridge_chan_fail(ch, rc, "SMB Direct send of a channel response failed") : 1;
}

/* The held answer, if any, carried on: 0 when none is left, BRIDGE_CHAN_WAIT while it
 * still waits, -1 when the bridge was failed. */
static int answer_retry(struct bridge_chan_server *s, uint64_t now)
{
    struct chan_answer *a = s->held_answer;
    int rc;

    if (!a)
        return 0;
    rc = answer_go(s, a, now);
    if (rc != BRIDGE_CHAN_WAIT)
        s->held_answer = NULL;
    return rc == 1 ? 0 : rc;
}

/* A backend response: a channel READ's data goes into the client's buffers by RDMA
 * Write, then the rewritten response; invalidation rides on the response. While an
 * answer waits for memory, what follows waits in the stream. */
static int server_from_stream(struct bridge_chan *ch, const uint8_t *msg, size_t len,
                              uint64_t now_ms)
{
    struct bridge_chan_server *s = server_of(ch);
    struct chan_server_result res;
    uint8_t head[SMB2_READ_RESP_FIXED];
    struct chan_answer *a;
    const struct chan_io *io;
    struct smb2_hdr h;
    int rc, n, read_answer = 0;

    if ((rc = answer_retry(s, now_ms)) != 0)
        return rc;
    /* The data of a channel READ's response is copied into a buffer the RDMA Write
     * reads (at most len bytes): without room for it the response waits in the stream. */
    if (smb2_hdr_decode(msg, len, &h) == 0 && (io = chan_table_find(&s->cs.ios, h.message_id)) &&
        io->kind == CHAN_READ && !smb2_hdr_is_interim(&h)) {
        if (!bridge_chan_budget_allows(ch, len))
            return bridge_chan_mem_wait(ch, BRIDGE_CHAN_Q_STREAM, now_ms);
        /* the RDMA Write registers the data: at most the response less its header and
         * body (an error response carries none) */
        if (len > SMB2_READ_RESP_FIXED &&
            !smbd_conn_can_register(ch->host.conn, len - SMB2_READ_RESP_FIXED))
            return bridge_chan_pin_wait(ch, BRIDGE_CHAN_Q_STREAM,
                                        (uint32_t)(len - SMB2_READ_RESP_FIXED), 0, now_ms);
        read_answer = 1;
    }
    chan_server_on_response(&s->cs, msg, len, &res);
    /* A wait for memory ends when the RDMA Write of the data starts (answer_go), or here
     * when there is none: a refused registration there is the same wait going on. */
    if (read_answer && !(res.action == CHAN_SERVER_WRITE_DATA && res.data_len > 0))
        bridge_chan_mem_got(ch, BRIDGE_CHAN_Q_STREAM, now_ms);
    rc = 0;
    if (res.action == CHAN_SERVER_ERROR)
        rc = bridge_chan_fail(ch, -EPROTO, res.why);
    /* A client that asked for RDMA_V1_INVALIDATE may rely on it: cifs.ko (3.0.2 and
     * later) never invalidates locally and fast-registers the same MR again for its next
     * I/O, which kernel siw refuses while the STag is still valid (QP fatal error). */
    else if (res.action == CHAN_SERVER_WRITE_DATA || res.invalidate) {
        const uint8_t *resp = msg;
        size_t resp_len = len;

        if (res.action == CHAN_SERVER_WRITE_DATA) {
            n = chan_build_channel_read_response(msg, len, res.data_len, head, sizeof(head));
            resp = head;
            resp_len = (size_t)n;
        }
        if (!(a = calloc(1, sizeof(*a))) || !(a->resp = malloc(resp_len)))
            rc = -ENOMEM;
        if (!rc && res.action == CHAN_SERVER_WRITE_DATA && res.data_len > 0 &&
            (!(a->descs = calloc(res.io->ndescs, sizeof(*a->descs))) ||
             /* room was checked above, unless the READ was inside a compound response */
             !(a->b = bridge_chan_buf_from_stream(ch, res.data, res.data_len))))
            rc = -ENOMEM;
        if (rc) {
            if (a)
                answer_free(ch, a);
            rc = bridge_chan_fail(ch, -ENOMEM, "RDMA channel: out of memory for a READ's answer");
        } else {
            memcpy(a->resp, resp, resp_len);
            a->resp_len = resp_len;
            a->token = res.invalidate ? res.token : 0;
            if (a->descs) {
                memcpy(a->descs, res.io->descs, res.io->ndescs * sizeof(*a->descs));
                a->ndescs = res.io->ndescs;
            }
            rc = answer_go(s, a, now_ms);
            if (rc == BRIDGE_CHAN_WAIT) {
                s->held_answer = a; /* the message is the answer's now */
                rc = 1;
            }
        }
    }
    bridge_chan_free_released(ch, &s->cs.ios);
    return rc;
}

/* Channel requests are rewritten whole: their descriptor lists may span fragments. */
static int server_wants_whole(const struct bridge_chan *ch, const uint8_t *msg, size_t len)
{
    struct smb2_hdr h;
    struct smb2_rw_req r;

    (void)ch;
    return smb2_hdr_decode(msg, len, &h) == 0 && !(h.flags & SMB2_FLAGS_SERVER_TO_REDIR) &&
           (h.command == SMB2_READ || h.command == SMB2_WRITE) &&
           smb2_rw_req_decode(msg, len, h.command, &r) == 0 && r.channel != SMB2_CHANNEL_NONE;
}

static void server_rdma_done(struct bridge_chan *ch, uint64_t cookie, int status)
{
    struct bridge_chan_server *s = server_of(ch);
    struct bridge_chan_buf *b = (struct bridge_chan_buf *)(uintptr_t)cookie;
    struct iovec iov[2];

    DL_DELETE(s->rdma, b);
    if (status < 0) {
        bridge_chan_buf_free(ch, b);
        bridge_chan_fail(ch, status, "RDMA channel: an RDMA Read or Write of SMB2 data failed");
        return;
    }
    if (b->head_len) { /* a WRITE's data arrived: the backend gets it inline */
        iov[0] = (struct iovec){ b->head, b->head_len };
        iov[1] = (struct iovec){ b->mem, b->len };
        ch->stats.rdma_reads++;
        ch->stats.rdma_read_bytes += b->len;
        bridge_chan_to_stream_buf(ch, iov, 2, b);
    }
    bridge_chan_buf_free(ch, b);
    server_start_writes(s); /* memory came free */
}

static int server_retry(struct bridge_chan *ch)
{
    struct bridge_chan_server *s = server_of(ch);

    if (answer_retry(s, sd_now_ms()) < 0)
        return 0;
    server_start_writes(s);
    return s->pending != NULL || s->held_answer != NULL;
}

static void server_free(struct bridge_chan *ch)
{
    struct bridge_chan_server *s = server_of(ch);
    struct chan_pending *w, *wtmp;
    struct bridge_chan_buf *b, *btmp;

    if (s->held_answer)
        answer_free(ch, s->held_answer);
    DL_FOREACH_SAFE(s->pending, w, wtmp) {
        DL_DELETE(s->pending, w);
        free(w);
    }
    /* Buffers of RDMA operations still posted: the bridge frees its link right after,
     * which flushes them (their rdma_done never comes). */
    DL_FOREACH_SAFE(s->rdma, b, btmp) {
        DL_DELETE(s->rdma, b);
        bridge_chan_buf_free(ch, b);
    }
    chan_table_release_all(&s->cs.ios);
    bridge_chan_free_released(ch, &s->cs.ios);
    chan_server_fini(&s->cs);
    free(s);
}

static const struct bridge_chan_ops server_ops = {
    .from_stream = server_from_stream,
    .from_peer = server_from_peer,
    .wants_whole = server_wants_whole,
    .retry = server_retry,
    .rdma_done = server_rdma_done,
    .free = server_free,
};

struct bridge_chan *bridge_chan_server_new(uint32_t max_io, const struct bridge_chan_host *host)
{
    struct bridge_chan_server *s = calloc(1, sizeof(*s));

    if (!s)
        return NULL;
    s->ch.ops = &server_ops;
    s->ch.host = *host;
    chan_server_init(&s->cs, max_io);
    return &s->ch;
}
