/* transport/bridge/bridge_chan.c — the READ/WRITE channel at a bridge (see
 * bridge_chan.h): buffers, registrations and RDMA operations around the decisions of
 * transport/channel/. Every buffer is one struct chan_buf, named to the engine by its
 * address (the cookie of RDMA operations) and to the channel tables by the same. */
#include "bridge_chan.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf_pool.h"
#include "chan_client.h"
#include "chan_client_build.h"
#include "chan_server.h"
#include "chan_server_build.h"
#include "log.h"
#include "sd_clock.h"
#include "sd_pinned.h"
#include "smb2_wire.h"

/* Descriptors one client-role I/O may need: the I/O is at most MaxReadWriteSize, which
 * the engine registers as one element (3.1.4.3); a few more cost nothing. */
#define CHAN_CLIENT_DESCS 4
/* How long an I/O waits for registered memory with no channel I/O in flight: idle extra
 * send buffers are given back within SMBD_POOL_SHRINK_MS (1 s). */
#define BRIDGE_CHAN_PIN_GRACE_MS 3000u

struct chan_buf {
    uint8_t *mem;                    /* the I/O's bytes, inside alloc */
    uint32_t len;
    uint8_t *alloc;                  /* from buf_pool, or a stream message's buffer */
    int taken;                       /* alloc is the buffer of the stream message */
    size_t cap;                      /* bytes of alloc, charged to the budgets */
    struct smbd_registration *reg;   /* client role: the peer's access to mem */
    uint8_t head[SMB2_RW_REQ_FIXED]; /* server WRITE: the inline request's header + body */
    size_t head_len;
    struct chan_buf *prev, *next;    /* server role: in the RDMA list until rdma_done */
};

/* A client's channel WRITE whose RDMA Read waits for buffer memory (server role). */
struct chan_pending {
    uint64_t message_id;
    uint32_t size;
    uint8_t head[SMB2_RW_REQ_FIXED];
    size_t head_len;
    struct chan_pending *next;
};

struct bridge_chan {
    enum bridge_chan_role role;
    struct bridge_chan_host host;
    struct chan_client cc;
    struct chan_server cs;
    uint32_t invalidated;            /* token of a Send with Invalidate not yet matched */
    int inline_reported;             /* client role: host.inline_io was called */
    struct chan_buf *rdma;           /* server role: buffers an RDMA Read/Write still uses */
    struct chan_pending *pending, **pending_tail; /* server WRITEs waiting for memory */
    struct chan_answer *held_answer; /* server role: an answer waiting for memory */
    uint64_t mem_used;               /* bytes of this connection's buffers */
    uint64_t pin_wait_since;         /* an I/O waits for registered memory since (ms), 0:
                                        none waits */
    struct bridge_chan_stats stats;
};

/* Buffer bytes of every connection of the process (the engine may run one loop per
 * thread: atomic). */
static _Atomic uint64_t process_mem_used;

/* Whether len more bytes fit the connection's and the process's budgets. The
 * connection's counts its buffers and the bytes its stream has not taken yet (channel
 * data moved there stays in memory until the program or backend reads it). A
 * connection holding nothing may exceed its own (one I/O always proceeds), not the
 * process's unless the process holds nothing either: memory that others hold is freed
 * as their I/O completes, whatever this connection does. */
static int budget_allows(const struct bridge_chan *ch, uint64_t len)
{
    uint64_t process = atomic_load(&process_mem_used);
    uint64_t held = ch->mem_used + (ch->host.stream_backlog ? ch->host.stream_backlog(ch->host.ctx)
                                                              : 0);

    if (held > 0 && held + len > ch->host.mem_limit)
        return 0;
    return process == 0 || process + len <= ch->host.mem_limit_total;
}

/* Whether a registration (or an RDMA operation's) failed for want of registered memory:
 * the budget said no (-ENOMEM), or the kernel did (-ENOMEM, -EPERM, -EAGAIN). */
static int refused_for_memory(int rc)
{
    return rc == -ENOMEM || rc == -EPERM || rc == -EAGAIN;
}

/* Registered memory for a len-byte channel buffer cannot be had now (RLIMIT_MEMLOCK, or
 * the kernel refused it: rc). The I/O waits (BRIDGE_CHAN_WAIT, offered again) while
 * memory may still come free: this connection's or another's channel I/O holds some, or
 * for a grace time in which idle send buffers are given back. With nothing to wait for,
 * the connection ends naming the cause (-1): never a message the peer must reject. */
static int pin_wait(struct bridge_chan *ch, uint32_t len, int rc, uint64_t now)
{
    char why[400];

    if (!ch->pin_wait_since)
        ch->pin_wait_since = now ? now : 1;
    if (atomic_load(&process_mem_used) > 0 || smbd_conn_reserve_in_use(ch->host.conn) ||
        now < ch->pin_wait_since + BRIDGE_CHAN_PIN_GRACE_MS)
        return BRIDGE_CHAN_WAIT;
    snprintf(why, sizeof(why), "RDMA channel: no registered memory for a %u-byte I/O buffer "
             "(%s) with no other I/O in flight for %u ms: the process has %llu bytes "
             "registered, RLIMIT_MEMLOCK allows %llu; raise RLIMIT_MEMLOCK (ulimit -l, "
             "LimitMEMLOCK=, /etc/security/limits.d)", len, strerror(rc ? -rc : ENOMEM),
             BRIDGE_CHAN_PIN_GRACE_MS, (unsigned long long)sd_pinned_used(),
             (unsigned long long)sd_pinned_limit());
    ch->host.fail(ch->host.ctx, rc ? rc : -ENOMEM, why);
    return -1;
}

static void charge(struct bridge_chan *ch, const struct chan_buf *b)
{
    ch->mem_used += b->cap;
    atomic_fetch_add(&process_mem_used, b->cap);
    if (ch->mem_used > ch->stats.mem_peak)
        ch->stats.mem_peak = ch->mem_used;
}

/* A buffer of len bytes charged to the budgets (NULL when out of memory). */
static struct chan_buf *buf_new_charged(struct bridge_chan *ch, uint32_t len)
{
    struct chan_buf *b = calloc(1, sizeof(*b));

    if (!b)
        return NULL;
    if (!(b->alloc = buf_pool_get(len, &b->cap))) {
        free(b);
        return NULL;
    }
    b->mem = b->alloc;
    b->len = len;
    charge(ch, b);
    return b;
}

/* The stream message being offered, whose len bytes at data are an I/O's, taken over as
 * that I/O's buffer (no copy: the message stays where it is until the buffer is freed).
 * Charged to the budgets; NULL when it cannot be taken. */
static struct chan_buf *buf_take_message(struct bridge_chan *ch, const uint8_t *data, uint32_t len)
{
    struct chan_buf *b = calloc(1, sizeof(*b));

    if (!b)
        return NULL;
    if (ch->host.take_message(ch->host.ctx, &b->alloc, &b->cap) < 0) {
        free(b);
        return NULL;
    }
    b->mem = (uint8_t *)(uintptr_t)data;
    b->len = len;
    b->taken = 1;
    charge(ch, b);
    return b;
}

/* Whether an I/O of len bytes is taken with its stream message rather than copied. */
static int takes_message(const struct bridge_chan *ch, uint32_t len)
{
    return len >= BUF_POOL_MIN && ch->host.take_message;
}

/* A buffer for len bytes of the stream message being offered that start at data: for
 * a large I/O the message's own memory (buf_take_message), else a copy. Charged to the
 * budgets; NULL when out of memory. */
static struct chan_buf *buf_from_stream(struct bridge_chan *ch, const uint8_t *data, uint32_t len)
{
    struct chan_buf *b;

    if (takes_message(ch, len))
        return buf_take_message(ch, data, len);
    if ((b = buf_new_charged(ch, len)))
        memcpy(b->mem, data, len);
    return b;
}

/* buf_new_charged when the budgets have room: NULL with *busy 1 when they have none
 * now, NULL with *busy 0 when out of memory. */
static struct chan_buf *buf_new(struct bridge_chan *ch, uint32_t len, int *busy)
{
    *busy = !budget_allows(ch, len);
    return *busy ? NULL : buf_new_charged(ch, len);
}

/* MS-SMBD 3.1.4.4: remote access ends before the memory is reused or freed. */
static void buf_free(struct bridge_chan *ch, struct chan_buf *b)
{
    if (!b)
        return;
    if (b->reg)
        smbd_conn_deregister_buffer(ch->host.conn, b->reg);
    ch->mem_used -= b->cap;
    atomic_fetch_sub(&process_mem_used, b->cap);
    buf_pool_put(b->alloc, b->cap);
    free(b);
}

/* host.to_stream of a message whose last iovec lies in b, offering b's memory: when
 * the bridge takes it over, b no longer owns it (buf_free then only uncharges). */
static int to_stream_buf(struct bridge_chan *ch, const struct iovec *iov, int iovcnt,
                         struct chan_buf *b)
{
    int rc = ch->host.to_stream(ch->host.ctx, iov, iovcnt, b->alloc, b->cap);

    if (rc == 1)
        b->alloc = NULL;
    return rc;
}

static int chan_fail(struct bridge_chan *ch, int err, const char *why)
{
    ch->host.fail(ch->host.ctx, err, why);
    return -1;
}

struct bridge_chan *bridge_chan_new(enum bridge_chan_role role, uint32_t threshold,
                                    const struct bridge_chan_host *host)
{
    struct bridge_chan *ch = calloc(1, sizeof(*ch));
    struct smbd_params p;

    if (!ch)
        return NULL;
    ch->role = role;
    ch->host = *host;
    if (smbd_conn_query(host->conn, &p) < 0)
        p.neg.max_read_write_size = 0; /* not established: the channel stays unused */
    chan_client_init(&ch->cc, role == BRIDGE_CHAN_CLIENT ? threshold : 0,
                     p.neg.max_read_write_size);
    ch->cc.remote_invalidation = host->remote_invalidation;
    chan_server_init(&ch->cs, p.neg.max_read_write_size);
    ch->pending_tail = &ch->pending;
    return ch;
}

static void rdma_list_add(struct bridge_chan *ch, struct chan_buf *b)
{
    b->next = ch->rdma;
    if (ch->rdma)
        ch->rdma->prev = b;
    ch->rdma = b;
}

static void rdma_list_del(struct bridge_chan *ch, struct chan_buf *b)
{
    if (b->prev)
        b->prev->next = b->next;
    else
        ch->rdma = b->next;
    if (b->next)
        b->next->prev = b->prev;
}

static void answer_free(struct bridge_chan *ch, struct chan_answer *a);

/* Frees what the tables released (their final response came, or teardown). */
static void free_released(struct bridge_chan *ch, struct chan_table *t)
{
    struct chan_released r;

    while (chan_table_take_released(t, &r))
        buf_free(ch, r.cookie);
}

void bridge_chan_free(struct bridge_chan *ch)
{
    if (!ch)
        return;
    if (ch->held_answer)
        answer_free(ch, ch->held_answer);
    chan_table_release_all(&ch->cc.ios);
    free_released(ch, &ch->cc.ios);
    chan_client_fini(&ch->cc);
    while (ch->pending) {
        struct chan_pending *w = ch->pending;

        ch->pending = w->next;
        free(w);
    }
    /* Buffers of RDMA operations still posted: the bridge frees its link right after,
     * which flushes them (their rdma_done never comes). */
    while (ch->rdma) {
        struct chan_buf *b = ch->rdma;

        rdma_list_del(ch, b);
        buf_free(ch, b);
    }
    chan_table_release_all(&ch->cs.ios);
    free_released(ch, &ch->cs.ios);
    chan_server_fini(&ch->cs);
    free(ch);
}

int bridge_chan_busy(const struct bridge_chan *ch)
{
    return chan_table_outstanding(&ch->cc.ios) > 0;
}

void bridge_chan_get_stats(const struct bridge_chan *ch, struct bridge_chan_stats *out)
{
    *out = ch->stats;
}

void bridge_chan_invalidated(struct bridge_chan *ch, uint32_t token)
{
    ch->invalidated = token;
}

/* ---- client role (the shim) ---- */

/* A READ or WRITE the plan moves over the channel: register, rewrite, send, track. 1,
 * BRIDGE_CHAN_WAIT (no buffer or registered memory now: the request stays in the stream
 * and is offered again) or -1. A large WRITE is registered where it lies in the stream
 * before its buffer is taken over, so a refused registration leaves it there. */
static int client_send(struct bridge_chan *ch, const uint8_t *msg, size_t len,
                       const struct chan_client_plan *plan, uint64_t now_ms)
{
    struct smbd_buffer_desc descs[CHAN_CLIENT_DESCS];
    uint8_t out[CHAN_REQUEST_SIZE(CHAN_CLIENT_DESCS)];
    int is_write = plan->kind == CHAN_WRITE, in_place = is_write && takes_message(ch, plan->length);
    struct smbd_registration *reg;
    struct chan_buf *b = NULL;
    uint8_t *mem = (uint8_t *)(uintptr_t)plan->data;
    size_t nd = 0;
    int n, rc;

    if (!budget_allows(ch, plan->length))
        return BRIDGE_CHAN_WAIT; /* the program's request waits in the stream */
    if (!smbd_conn_can_register(ch->host.conn, plan->length))
        return pin_wait(ch, plan->length, 0, now_ms);
    if (!in_place) {
        if (!(b = buf_new_charged(ch, plan->length)))
            return chan_fail(ch, -ENOMEM, "RDMA channel: out of memory for an I/O buffer");
        if (is_write)
            memcpy(b->mem, plan->data, plan->length);
        mem = b->mem;
    }
    rc = smbd_conn_register_buffer(ch->host.conn, mem, plan->length,
                                   is_write ? SMBD_REG_PEER_READ : SMBD_REG_PEER_WRITE, &reg,
                                   descs, CHAN_CLIENT_DESCS, &nd);
    if (rc < 0) {
        buf_free(ch, b);
        if (refused_for_memory(rc))
            return pin_wait(ch, plan->length, rc, now_ms);
        return chan_fail(ch, rc, "RDMA channel: registering an I/O buffer failed");
    }
    ch->pin_wait_since = 0;
    if (in_place && !(b = buf_take_message(ch, plan->data, plan->length))) {
        smbd_conn_deregister_buffer(ch->host.conn, reg);
        return chan_fail(ch, -ENOMEM, "RDMA channel: cannot take over a WRITE's buffer");
    }
    b->reg = reg;
    n = is_write ? chan_build_write_request(msg, len, plan, descs, nd, out, sizeof(out))
                 : chan_build_read_request(msg, len, plan, descs, nd, out, sizeof(out));
    if (n < 0 || (rc = chan_client_track(&ch->cc, plan, descs, nd, b)) < 0) {
        buf_free(ch, b);
        return chan_fail(ch, n < 0 ? -EPROTO : rc, "RDMA channel: cannot rewrite an SMB2 request");
    }
    rc = smbd_conn_send(ch->host.conn, &(struct iovec){ out, (size_t)n }, 1, now_ms);
    if (rc < 0)
        return chan_fail(ch, rc, "SMB Direct send of a channel request failed");
    if (is_write) {
        ch->stats.rdma_reads++;
        ch->stats.rdma_read_bytes += plan->length;
    } else {
        ch->stats.rdma_writes++;
    }
    return 1;
}

/* The server wrote bytes into b: deregister, then hand the program the inline READ
 * response it expects (MS-SMB2 2.2.20) with the data. */
static int client_read_done(struct bridge_chan *ch, const uint8_t *resp, size_t len,
                            struct chan_buf *b, uint32_t bytes)
{
    uint8_t head[SMB2_READ_RESP_FIXED];
    int n = chan_build_read_response(resp, len, bytes, head, sizeof(head));
    struct iovec iov[2] = { { head, (size_t)n }, { b->mem, bytes } };

    smbd_conn_deregister_buffer(ch->host.conn, b->reg);
    b->reg = NULL;
    if (n < 0)
        return chan_fail(ch, -EPROTO, "RDMA channel: cannot rebuild an SMB2 READ response");
    ch->stats.rdma_write_bytes += bytes;
    return to_stream_buf(ch, iov, 2, b) < 0 ? -1 : 1;
}

/* Tells the host, once, that READ/WRITE go inline from now on. */
static void report_inline(struct bridge_chan *ch)
{
    if (ch->inline_reported || !chan_client_inline_only(&ch->cc))
        return;
    ch->inline_reported = 1;
    if (ch->host.inline_io)
        ch->host.inline_io(ch->host.ctx);
}

static int client_from_peer(struct bridge_chan *ch, const uint8_t *msg, size_t len)
{
    struct chan_client_result res;
    struct chan_released r;
    int rc = 0;

    chan_client_on_response(&ch->cc, msg, len, ch->invalidated, &res);
    ch->invalidated = 0;
    report_inline(ch);
    if (res.action == CHAN_CLIENT_ERROR)
        rc = chan_fail(ch, -EPROTO, res.why);
    while (chan_table_take_released(&ch->cc.ios, &r)) {
        if (rc == 0 && res.action == CHAN_CLIENT_READ_DONE && r.cookie == res.cookie)
            rc = client_read_done(ch, msg, len, r.cookie, res.bytes);
        buf_free(ch, r.cookie);
    }
    return rc;
}

/* ---- server role (the relay) ---- */

/* Starts the RDMA Reads of waiting channel WRITEs, in arrival order, while the budgets
 * and the registered memory have room (a WRITE waits at the head until they do). 0, or
 * -1 when the bridge was failed. */
static int server_start_writes(struct bridge_chan *ch)
{
    uint64_t now = sd_now_ms();

    while (ch->pending) {
        struct chan_pending *w = ch->pending;
        const struct chan_io *io = chan_table_find(&ch->cs.ios, w->message_id);
        struct chan_buf *b = NULL;
        int busy, rc;

        if (io && !smbd_conn_can_register(ch->host.conn, w->size))
            return pin_wait(ch, w->size, 0, now) < 0 ? -1 : 0;
        if (io && !(b = buf_new(ch, w->size, &busy))) {
            if (busy)
                return 0;
            return chan_fail(ch, -ENOMEM, "RDMA channel: out of memory for an I/O buffer");
        }
        if (!io) { /* cannot happen: its response needs the inline WRITE first */
            if (!(ch->pending = w->next))
                ch->pending_tail = &ch->pending;
            free(w);
            continue;
        }
        rc = smbd_conn_rdma_read(ch->host.conn, (uint64_t)(uintptr_t)b, b->mem, b->len,
                                 io->descs, io->ndescs, 0);
        if (rc < 0) {
            buf_free(ch, b);
            if (refused_for_memory(rc))
                return pin_wait(ch, w->size, rc, now) < 0 ? -1 : 0;
            return chan_fail(ch, rc, "RDMA Read of a channel WRITE's data could not start");
        }
        ch->pin_wait_since = 0;
        memcpy(b->head, w->head, w->head_len);
        b->head_len = w->head_len;
        if (!(ch->pending = w->next))
            ch->pending_tail = &ch->pending;
        free(w);
        rdma_list_add(ch, b);
    }
    return 0;
}

/* A client's channel request (whole): READ goes inline to the backend at once; WRITE
 * first has its data RDMA-read (as soon as the budgets have room for its buffer), and
 * goes inline when that completes. */
static int server_from_peer(struct bridge_chan *ch, const uint8_t *msg, size_t len)
{
    struct chan_server_plan plan;
    const struct chan_io *io;
    uint8_t head[SMB2_RW_REQ_FIXED + 1];
    struct chan_pending *w = NULL;
    int rc = chan_server_plan_request(&ch->cs, msg, len, &plan), n;

    if (rc < 0) {
        char why[200];

        snprintf(why, sizeof(why), "RDMA channel request refused: %s", plan.why);
        return chan_fail(ch, -EPROTO, why);
    }
    if (plan.kind == CHAN_PASS)
        return 0;
    if (plan.kind == CHAN_WRITE && !(w = calloc(1, sizeof(*w))))
        return chan_fail(ch, -ENOMEM, "RDMA channel: out of memory for a WRITE request");
    rc = chan_server_track(&ch->cs, &plan, NULL, &io);
    if (rc < 0) {
        free(w);
        return chan_fail(ch, rc == -EEXIST ? -EPROTO : rc,
                         rc == -EEXIST ? "RDMA channel: a second request with an outstanding "
                                         "MessageId"
                                       : "RDMA channel: out of memory for a request's descriptors");
    }
    if (plan.kind == CHAN_READ) {
        n = chan_build_inline_read(msg, len, &plan, head, sizeof(head));
        return ch->host.to_stream(ch->host.ctx, &(struct iovec){ head, (size_t)n }, 1, NULL, 0) < 0
                   ? -1 : 1;
    }
    w->message_id = plan.message_id;
    w->size = plan.size;
    w->head_len = (size_t)chan_build_inline_write(msg, len, &plan, w->head, sizeof(w->head));
    *ch->pending_tail = w;
    ch->pending_tail = &w->next;
    return server_start_writes(ch) < 0 ? -1 : 1;
}

/* Server role: the answer to a channel READ (or to an I/O the client asked to have
 * invalidated), carried out in order: the data RDMA-written into the client's buffers,
 * then the response sent (the Send follows the Writes on the connection, so the client
 * sees the data placed first), with Send with Invalidate when asked. */
struct chan_answer {
    struct chan_buf *b;              /* the data, until its RDMA Write is posted */
    struct smbd_buffer_desc *descs;  /* ... into the client's buffers */
    size_t ndescs;
    uint8_t *resp;                   /* the response to send */
    size_t resp_len;
    uint32_t token;                  /* 0, or the STag to invalidate with the Send */
};

static void answer_free(struct bridge_chan *ch, struct chan_answer *a)
{
    buf_free(ch, a->b);
    free(a->descs);
    free(a->resp);
    free(a);
}

/* Carries a out as far as memory allows: 1 when done (a freed), BRIDGE_CHAN_WAIT when
 * its RDMA Write's registration or its response's send buffers must wait (a kept, part
 * done), -1 when the bridge was failed (a freed). */
static int answer_go(struct bridge_chan *ch, struct chan_answer *a, uint64_t now)
{
    struct iovec iov = { a->resp, a->resp_len };
    uint32_t len;
    int rc;

    if (a->b) {
        len = a->b->len;
        rc = smbd_conn_rdma_write(ch->host.conn, (uint64_t)(uintptr_t)a->b, a->b->mem, len,
                                  a->descs, a->ndescs, 0);
        if (refused_for_memory(rc)) {
            if ((rc = pin_wait(ch, len, rc, now)) == BRIDGE_CHAN_WAIT)
                return rc;
            answer_free(ch, a);
            return -1;
        }
        if (rc < 0) {
            answer_free(ch, a);
            return chan_fail(ch, rc, "RDMA Write of a channel READ's data could not start");
        }
        ch->pin_wait_since = 0;
        rdma_list_add(ch, a->b);
        ch->stats.rdma_writes++;
        ch->stats.rdma_write_bytes += len;
        a->b = NULL;
    }
    rc = a->token ? smbd_conn_send_invalidate(ch->host.conn, &iov, 1, a->token, now)
                  : smbd_conn_send(ch->host.conn, &iov, 1, now);
    if (rc == -EAGAIN)
        return BRIDGE_CHAN_WAIT; /* send buffers come back as earlier Sends complete */
    answer_free(ch, a);
    return rc < 0 ? chan_fail(ch, rc, "SMB Direct send of a channel response failed") : 1;
}

/* The held answer, if any, carried on: 0 when none is left, BRIDGE_CHAN_WAIT while it
 * still waits, -1 when the bridge was failed. */
static int answer_retry(struct bridge_chan *ch, uint64_t now)
{
    struct chan_answer *a = ch->held_answer;
    int rc;

    if (!a)
        return 0;
    rc = answer_go(ch, a, now);
    if (rc != BRIDGE_CHAN_WAIT)
        ch->held_answer = NULL;
    return rc == 1 ? 0 : rc;
}

/* A backend response: a channel READ's data goes into the client's buffers by RDMA
 * Write, then the rewritten response; invalidation rides on the response. While an
 * answer waits for memory, what follows waits in the stream. */
static int server_from_stream(struct bridge_chan *ch, const uint8_t *msg, size_t len,
                              uint64_t now_ms)
{
    struct chan_server_result res;
    uint8_t head[SMB2_READ_RESP_FIXED];
    struct chan_answer *a;
    const struct chan_io *io;
    struct smb2_hdr h;
    int rc, n;

    if ((rc = answer_retry(ch, now_ms)) != 0)
        return rc;
    /* The data of a channel READ's response is copied into a buffer the RDMA Write
     * reads (at most len bytes): without room for it the response waits in the stream. */
    if (smb2_hdr_decode(msg, len, &h) == 0 && (io = chan_table_find(&ch->cs.ios, h.message_id)) &&
        io->kind == CHAN_READ && !smb2_hdr_is_interim(&h)) {
        if (!budget_allows(ch, len))
            return BRIDGE_CHAN_WAIT;
        /* the RDMA Write registers the data: at most the response less its header and
         * body (an error response carries none) */
        if (len > SMB2_READ_RESP_FIXED &&
            !smbd_conn_can_register(ch->host.conn, len - SMB2_READ_RESP_FIXED))
            return pin_wait(ch, (uint32_t)(len - SMB2_READ_RESP_FIXED), 0, now_ms);
        ch->pin_wait_since = 0;
    }
    chan_server_on_response(&ch->cs, msg, len, &res);
    rc = 0;
    if (res.action == CHAN_SERVER_ERROR)
        rc = chan_fail(ch, -EPROTO, res.why);
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
             !(a->b = buf_from_stream(ch, res.data, res.data_len))))
            rc = -ENOMEM;
        if (rc) {
            if (a)
                answer_free(ch, a);
            rc = chan_fail(ch, -ENOMEM, "RDMA channel: out of memory for a READ's answer");
        } else {
            memcpy(a->resp, resp, resp_len);
            a->resp_len = resp_len;
            a->token = res.invalidate ? res.token : 0;
            if (a->descs) {
                memcpy(a->descs, res.io->descs, res.io->ndescs * sizeof(*a->descs));
                a->ndescs = res.io->ndescs;
            }
            rc = answer_go(ch, a, now_ms);
            if (rc == BRIDGE_CHAN_WAIT) {
                ch->held_answer = a; /* the message is the answer's now */
                rc = 1;
            }
        }
    }
    free_released(ch, &ch->cs.ios);
    return rc;
}

/* ---- dispatch ---- */

int bridge_chan_from_stream(struct bridge_chan *ch, const uint8_t *msg, size_t len,
                            uint64_t now_ms)
{
    struct chan_client_plan plan;
    int rc;

    if (ch->role == BRIDGE_CHAN_SERVER)
        return server_from_stream(ch, msg, len, now_ms);
    rc = chan_client_plan_request(&ch->cc, msg, len, &plan);
    report_inline(ch);
    if (rc == CHAN_PASS)
        return 0;
    rc = client_send(ch, msg, len, &plan, now_ms);
    report_inline(ch);
    return rc;
}

int bridge_chan_from_peer(struct bridge_chan *ch, const uint8_t *msg, size_t len,
                          int first_only)
{
    if (ch->role == BRIDGE_CHAN_CLIENT)
        return client_from_peer(ch, msg, len);
    return first_only ? 0 : server_from_peer(ch, msg, len);
}

int bridge_chan_wants_whole(const struct bridge_chan *ch, const uint8_t *msg, size_t len)
{
    struct smb2_hdr h;
    struct smb2_rw_req r;

    return ch->role == BRIDGE_CHAN_SERVER && smb2_hdr_decode(msg, len, &h) == 0 &&
           !(h.flags & SMB2_FLAGS_SERVER_TO_REDIR) &&
           (h.command == SMB2_READ || h.command == SMB2_WRITE) &&
           smb2_rw_req_decode(msg, len, h.command, &r) == 0 && r.channel != SMB2_CHANNEL_NONE;
}

void bridge_chan_rdma_done(struct bridge_chan *ch, uint64_t cookie, int status)
{
    struct chan_buf *b = (struct chan_buf *)(uintptr_t)cookie;
    struct iovec iov[2];

    rdma_list_del(ch, b);
    if (status < 0) {
        buf_free(ch, b);
        chan_fail(ch, status, "RDMA channel: an RDMA Read or Write of SMB2 data failed");
        return;
    }
    if (b->head_len) { /* a WRITE's data arrived: the backend gets it inline */
        iov[0] = (struct iovec){ b->head, b->head_len };
        iov[1] = (struct iovec){ b->mem, b->len };
        ch->stats.rdma_reads++;
        ch->stats.rdma_read_bytes += b->len;
        to_stream_buf(ch, iov, 2, b);
    }
    buf_free(ch, b);
    server_start_writes(ch); /* memory came free */
}

int bridge_chan_retry(struct bridge_chan *ch)
{
    if (answer_retry(ch, sd_now_ms()) < 0)
        return 0;
    server_start_writes(ch);
    return ch->pending != NULL || ch->held_answer != NULL;
}

