/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/fake_provider.c — the in-memory RDMA provider of fake_provider.h. */
#include "fake_provider.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define FAKE_MAX_SGE 4

/* A growable FIFO of fixed-size elements; capacity is a power of two. */
struct fake_ring {
    uint8_t *buf;
    size_t esz, cap, head, count;
};

static void ring_init(struct fake_ring *r, size_t esz)
{
    memset(r, 0, sizeof(*r));
    r->esz = esz;
}

static void *ring_at(const struct fake_ring *r, size_t i)
{
    return r->buf + ((r->head + i) & (r->cap - 1)) * r->esz;
}

static void ring_push(struct fake_ring *r, const void *e)
{
    if (r->count == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 64;
        uint8_t *nb = malloc(cap * r->esz);

        if (!nb)
            abort(); /* test infrastructure: out of memory is fatal */
        for (size_t i = 0; i < r->count; i++)
            memcpy(nb + i * r->esz, ring_at(r, i), r->esz);
        free(r->buf);
        r->buf = nb;
        r->cap = cap;
        r->head = 0;
    }
    memcpy(ring_at(r, r->count), e, r->esz);
    r->count++;
}

static int ring_pop(struct fake_ring *r, void *e)
{
    if (!r->count)
        return 0;
    if (e)
        memcpy(e, ring_at(r, 0), r->esz);
    r->head = (r->head + 1) & (r->cap - 1);
    r->count--;
    return 1;
}

enum fake_op { FAKE_SEND, FAKE_WRITE, FAKE_READ };

struct fake_seg {
    uint8_t *addr;
    uint32_t len;
    uint32_t lkey;
};

struct fake_req {
    enum fake_op op;
    uint64_t wr_id;
    struct fake_seg sge[FAKE_MAX_SGE];
    int nsge;
    uint32_t len;
    uint32_t rkey;        /* WRITE/READ: remote STag; SEND: STag to invalidate */
    uint64_t raddr;
    int signaled;
};

struct fake_recv {
    uint64_t wr_id;
    struct fake_seg sge;
};

struct fake_region {
    uint8_t *base;
    size_t len;
    uint64_t addr;
    uint32_t lkey, rkey;
    int access;
    int live, remote_valid;
};

struct sd_qp {
    struct sd_qp *peer;
    int paired, connected, lost_pending, lost_reported;
    int auto_deliver, random_cq, record;
    uint64_t rng;
    struct fake_ring recvs, wire, scq, rcq;
    struct fake_region *regions;
    size_t nregions, last_region; /* last_region: lookup cache */
    uint32_t next_key;
    struct fake_sent *sent;
    size_t nsent, sent_cap;
    int disconnects;
    int fail_send, fail_recv, fail_reg;
};

static uint64_t rng_next(struct sd_qp *qp)
{
    uint64_t x = qp->rng;

    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    qp->rng = x;
    return x * UINT64_C(2685821657736338717);
}

static struct sd_qp *qp_alloc(uint64_t seed)
{
    struct sd_qp *qp = calloc(1, sizeof(*qp));

    if (!qp)
        abort();
    qp->rng = seed * 2 + 1;
    qp->connected = 1;
    qp->random_cq = 1;
    qp->next_key = 0x100;
    ring_init(&qp->recvs, sizeof(struct fake_recv));
    ring_init(&qp->wire, sizeof(struct fake_req));
    ring_init(&qp->scq, sizeof(struct sd_wc));
    ring_init(&qp->rcq, sizeof(struct sd_wc));
    return qp;
}

void fake_pair_new(struct sd_qp **a, struct sd_qp **b, uint64_t seed)
{
    *a = qp_alloc(seed);
    *b = qp_alloc(seed ^ UINT64_C(0x9e3779b97f4a7c15));
    (*a)->peer = *b;
    (*b)->peer = *a;
    (*a)->paired = (*b)->paired = 1;
    (*b)->next_key = 0x80000100; /* distinct STags on each side catch mix-ups */
}

struct sd_qp *fake_qp_new(uint64_t seed)
{
    struct sd_qp *qp = qp_alloc(seed);

    qp->record = 1;
    return qp;
}

/* ---- memory regions ---- */

static struct fake_region *region_by_lkey(struct sd_qp *qp, uint32_t lkey)
{
    if (qp->last_region < qp->nregions) {
        struct fake_region *r = &qp->regions[qp->last_region];

        if (r->live && r->lkey == lkey)
            return r;
    }
    for (size_t i = 0; i < qp->nregions; i++) {
        if (qp->regions[i].live && qp->regions[i].lkey == lkey) {
            qp->last_region = i;
            return &qp->regions[i];
        }
    }
    return NULL;
}

static struct fake_region *region_by_rkey(struct sd_qp *qp, uint32_t rkey)
{
    for (size_t i = 0; i < qp->nregions; i++)
        if (qp->regions[i].live && qp->regions[i].rkey == rkey && rkey)
            return &qp->regions[i];
    return NULL;
}

static int fake_reg_mr(struct sd_qp *qp, void *base, size_t length, int access, struct sd_mr *mr)
{
    struct fake_region *r = NULL;

    if (qp->fail_reg)
        return qp->fail_reg;
    if (!base || !length)
        return -EINVAL;
    for (size_t i = 0; i < qp->nregions && !r; i++)
        if (!qp->regions[i].live)
            r = &qp->regions[i];
    if (!r) {
        struct fake_region *nr = realloc(qp->regions, (qp->nregions + 1) * sizeof(*nr));

        if (!nr)
            return -ENOMEM;
        qp->regions = nr;
        r = &qp->regions[qp->nregions++];
    }
    r->base = base;
    r->len = length;
    r->addr = (uint64_t)(uintptr_t)base;
    r->lkey = qp->next_key++;
    r->rkey = (access & (SD_ACCESS_REMOTE_READ | SD_ACCESS_REMOTE_WRITE)) ? qp->next_key++ : 0;
    r->access = access;
    r->live = 1;
    r->remote_valid = 1;
    *mr = (struct sd_mr){ .base = base, .length = length, .lkey = r->lkey, .rkey = r->rkey,
                          .addr = r->addr, .access = access, .priv = NULL };
    return 0;
}

static int fake_dereg_mr(struct sd_qp *qp, struct sd_mr *mr)
{
    struct fake_region *r = region_by_lkey(qp, mr->lkey);

    if (!r)
        return -EINVAL;
    r->live = 0;
    return 0;
}

/* The local segment lies inside a live registration of qp with the rights needed. */
static int seg_ok(struct sd_qp *qp, const struct fake_seg *s, int need_write)
{
    struct fake_region *r = region_by_lkey(qp, s->lkey);

    return r && s->addr >= r->base && s->len <= r->len &&
           (size_t)(s->addr - r->base) <= r->len - s->len &&
           (!need_write || (r->access & SD_ACCESS_LOCAL_WRITE));
}

static int sge_import(struct sd_qp *qp, struct fake_seg *out, const struct sd_sge *in,
                      int need_write)
{
    out->addr = in->addr;
    out->len = in->length;
    out->lkey = in->mr ? in->mr->lkey : 0;
    return seg_ok(qp, out, need_write) ? 0 : -EINVAL;
}

/* ---- completions and connection loss ---- */

static void complete(struct sd_qp *qp, uint64_t wr_id, enum sd_wc_opcode op,
                     enum sd_wc_status st, uint32_t len, uint32_t inval)
{
    struct sd_wc wc = { .wr_id = wr_id, .opcode = op, .status = st, .byte_len = len,
                        .with_invalidate = inval != 0, .invalidated_rkey = inval };

    ring_push(op == SD_WC_RECV ? &qp->rcq : &qp->scq, &wc);
}

static enum sd_wc_opcode req_opcode(const struct fake_req *r)
{
    return r->op == FAKE_SEND ? SD_WC_SEND : r->op == FAKE_WRITE ? SD_WC_RDMA_WRITE
                                                                 : SD_WC_RDMA_READ;
}

/* Flushes everything outstanding on one side and schedules its CONN_LOST. */
static void lose_one(struct sd_qp *qp)
{
    struct fake_recv rv;
    struct fake_req rq;

    if (!qp->connected)
        return;
    qp->connected = 0;
    while (ring_pop(&qp->wire, &rq))
        complete(qp, rq.wr_id, req_opcode(&rq), SD_WC_FLUSHED, 0, 0);
    while (ring_pop(&qp->recvs, &rv))
        complete(qp, rv.wr_id, SD_WC_RECV, SD_WC_FLUSHED, 0, 0);
    qp->lost_pending = 1;
}

static void lose_both(struct sd_qp *qp)
{
    lose_one(qp);
    if (qp->peer)
        lose_one(qp->peer);
}

/* ---- executing requests ---- */

static void gather(uint8_t *dst, const struct fake_req *r)
{
    for (int i = 0; i < r->nsge; i++) {
        memcpy(dst, r->sge[i].addr, r->sge[i].len);
        dst += r->sge[i].len;
    }
}

/* Lands a Send of len bytes (from req, or raw data) in qp's oldest receive. */
static int land_send(struct sd_qp *qp, const struct fake_req *req, const void *data,
                     uint32_t len, uint32_t inval)
{
    struct fake_recv rv;
    struct fake_region *ir = NULL;

    if (!ring_pop(&qp->recvs, &rv))
        return -ENOBUFS;
    if (len > rv.sge.len) {
        complete(qp, rv.wr_id, SD_WC_RECV, SD_WC_LOCAL_LENGTH, 0, 0);
        return -EMSGSIZE;
    }
    if (inval) {
        ir = region_by_rkey(qp, inval);
        if (!ir) {
            complete(qp, rv.wr_id, SD_WC_RECV, SD_WC_REMOTE_OP, 0, 0);
            return -EINVAL;
        }
        ir->remote_valid = 0;
    }
    if (req)
        gather(rv.sge.addr, req);
    else
        memcpy(rv.sge.addr, data, len);
    complete(qp, rv.wr_id, SD_WC_RECV, SD_WC_SUCCESS, len, inval);
    return 0;
}

static struct fake_region *remote_region(struct sd_qp *peer, const struct fake_req *r, int need)
{
    struct fake_region *rg = region_by_rkey(peer, r->rkey);

    if (!rg || !rg->remote_valid || !(rg->access & need) || r->raddr < rg->addr ||
        r->len > rg->len || r->raddr - rg->addr > rg->len - r->len)
        return NULL;
    return rg;
}

static void execute(struct sd_qp *qp, const struct fake_req *r)
{
    struct sd_qp *peer = qp->peer;
    struct fake_region *rg;
    int err = 0;

    if (!qp->paired) { /* the test is the peer */
        if (r->signaled || r->op != FAKE_SEND)
            complete(qp, r->wr_id, req_opcode(r), SD_WC_SUCCESS, r->len, 0);
        return;
    }
    switch (r->op) {
    case FAKE_SEND:
        err = land_send(peer, r, NULL, r->len, r->rkey);
        break;
    case FAKE_WRITE:
        rg = remote_region(peer, r, SD_ACCESS_REMOTE_WRITE);
        if (rg)
            gather(rg->base + (r->raddr - rg->addr), r);
        else
            err = -EACCES;
        break;
    case FAKE_READ:
        rg = remote_region(peer, r, SD_ACCESS_REMOTE_READ);
        if (rg)
            memcpy(r->sge[0].addr, rg->base + (r->raddr - rg->addr), r->len);
        else
            err = -EACCES;
        break;
    }
    if (err) {
        complete(qp, r->wr_id, req_opcode(r),
                 err == -EACCES ? SD_WC_REMOTE_ACCESS : SD_WC_REMOTE_OP, 0, 0);
        lose_both(qp);
        return;
    }
    if (r->signaled || r->op != FAKE_SEND)
        complete(qp, r->wr_id, req_opcode(r), SD_WC_SUCCESS, r->len, 0);
}

int fake_deliver(struct sd_qp *qp, int max)
{
    struct fake_req r;
    int n = 0;

    while (n < max && qp->connected && ring_pop(&qp->wire, &r)) {
        execute(qp, &r);
        n++;
    }
    return n;
}

static int submit(struct sd_qp *qp, struct fake_req *r)
{
    if (!qp->paired || qp->auto_deliver)
        execute(qp, r);
    else
        ring_push(&qp->wire, r);
    return 0;
}

/* ---- posting ---- */

static void record_send(struct sd_qp *qp, const struct fake_req *r)
{
    struct fake_sent *s;

    if (qp->nsent == qp->sent_cap) {
        size_t cap = qp->sent_cap ? qp->sent_cap * 2 : 16;
        struct fake_sent *ns = realloc(qp->sent, cap * sizeof(*ns));

        if (!ns)
            abort();
        qp->sent = ns;
        qp->sent_cap = cap;
    }
    s = &qp->sent[qp->nsent++];
    s->data = malloc(r->len ? r->len : 1);
    if (!s->data)
        abort();
    gather(s->data, r);
    s->len = r->len;
    s->invalidate_rkey = r->rkey;
    s->signaled = r->signaled;
}

static int fake_post_send(struct sd_qp *qp, uint64_t wr_id, const struct sd_sge *sge, int nsge,
                          uint32_t invalidate_rkey, int signaled)
{
    struct fake_req r = { .op = FAKE_SEND, .wr_id = wr_id, .nsge = nsge,
                          .rkey = invalidate_rkey, .signaled = signaled };

    if (qp->fail_send)
        return qp->fail_send;
    if (!qp->connected)
        return -ENOTCONN;
    if (nsge < 1 || nsge > FAKE_MAX_SGE)
        return -EINVAL;
    for (int i = 0; i < nsge; i++) {
        if (sge_import(qp, &r.sge[i], &sge[i], 0))
            return -EINVAL;
        r.len += sge[i].length;
    }
    if (qp->record)
        record_send(qp, &r);
    return submit(qp, &r);
}

static int fake_post_recv(struct sd_qp *qp, uint64_t wr_id, const struct sd_sge *sge)
{
    struct fake_recv rv = { .wr_id = wr_id };

    if (qp->fail_recv)
        return qp->fail_recv;
    if (!qp->connected)
        return -ENOTCONN;
    if (sge_import(qp, &rv.sge, sge, 1))
        return -EINVAL;
    ring_push(&qp->recvs, &rv);
    return 0;
}

static int post_rdma(struct sd_qp *qp, enum fake_op op, uint64_t wr_id,
                     const struct sd_sge *local, uint32_t rkey, uint64_t raddr)
{
    struct fake_req r = { .op = op, .wr_id = wr_id, .nsge = 1, .len = local->length,
                          .rkey = rkey, .raddr = raddr, .signaled = 1 };

    if (qp->fail_send)
        return qp->fail_send;
    if (!qp->connected)
        return -ENOTCONN;
    if (sge_import(qp, &r.sge[0], local, op == FAKE_READ))
        return -EINVAL;
    return submit(qp, &r);
}

static int fake_post_write(struct sd_qp *qp, uint64_t wr_id, const struct sd_sge *local,
                           uint32_t rkey, uint64_t raddr)
{
    return post_rdma(qp, FAKE_WRITE, wr_id, local, rkey, raddr);
}

static int fake_post_read(struct sd_qp *qp, uint64_t wr_id, const struct sd_sge *local,
                          uint32_t rkey, uint64_t raddr)
{
    return post_rdma(qp, FAKE_READ, wr_id, local, rkey, raddr);
}

static int fake_poll_cq(struct sd_qp *qp, struct sd_wc *wc, int max)
{
    int n = 0;

    while (n < max) {
        struct fake_ring *q;

        if (qp->scq.count && qp->rcq.count)
            q = qp->random_cq && (rng_next(qp) >> 63) ? &qp->rcq : &qp->scq;
        else if (qp->scq.count)
            q = &qp->scq;
        else if (qp->rcq.count)
            q = &qp->rcq;
        else
            break;
        ring_pop(q, &wc[n++]);
    }
    if (n < max && qp->lost_pending && !qp->lost_reported) {
        qp->lost_reported = 1;
        wc[n++] = (struct sd_wc){ .opcode = SD_WC_CONN_LOST, .status = SD_WC_SUCCESS };
    }
    return n;
}

static int fake_progress(struct sd_qp *qp)
{
    fake_deliver(qp, INT32_MAX);
    return 0;
}

static void fake_disconnect(struct sd_qp *qp)
{
    qp->disconnects++;
    lose_both(qp);
}

static void fake_destroy(struct sd_qp *qp)
{
    if (!qp)
        return;
    if (qp->peer)
        qp->peer->peer = NULL;
    fake_sent_clear(qp);
    free(qp->sent);
    free(qp->regions);
    free(qp->recvs.buf);
    free(qp->wire.buf);
    free(qp->scq.buf);
    free(qp->rcq.buf);
    free(qp);
}

static int fake_is_iwarp(const struct sockaddr *dst, socklen_t dstlen)
{
    (void)dst;
    (void)dstlen;
    return 1;
}

static struct sd_qp *fake_connect(const struct sockaddr *addr, socklen_t addrlen,
                                  const struct sd_cm_params *params, int timeout_ms,
                                  struct sd_cm_result *result, int *err)
{
    (void)addr, (void)addrlen, (void)params, (void)timeout_ms, (void)result;
    *err = -EOPNOTSUPP;
    return NULL;
}

static struct sd_listener *fake_listen(const struct sockaddr *addr, socklen_t addrlen,
                                       const struct sd_listen_params *lp, int *err)
{
    (void)addr, (void)addrlen, (void)lp;
    *err = -EOPNOTSUPP;
    return NULL;
}

static int fake_fd(struct sd_qp *qp)
{
    (void)qp;
    return -1;
}

static int fake_poll_events(struct sd_qp *qp)
{
    (void)qp;
    return 0;
}

const struct sd_provider_ops fake_provider = {
    .name = "fake",
    .remote_invalidation = 1,
    .is_iwarp = fake_is_iwarp,
    .connect = fake_connect,
    .listen = fake_listen,
    .reg_mr = fake_reg_mr,
    .dereg_mr = fake_dereg_mr,
    .post_recv = fake_post_recv,
    .post_send = fake_post_send,
    .post_write = fake_post_write,
    .post_read = fake_post_read,
    .fd = fake_fd,
    .poll_events = fake_poll_events,
    .progress = fake_progress,
    .poll_cq = fake_poll_cq,
    .disconnect = fake_disconnect,
    .destroy = fake_destroy,
};

/* ---- test controls ---- */

int fake_inject(struct sd_qp *qp, const void *data, size_t len, uint32_t invalidate_rkey)
{
    int err;

    if (!qp->connected)
        return -ENOTCONN;
    err = land_send(qp, NULL, data, (uint32_t)len, invalidate_rkey);
    if (err)
        lose_both(qp);
    return err;
}

void fake_break(struct sd_qp *qp, enum sd_wc_status status)
{
    struct fake_recv rv;

    if (qp->connected && ring_pop(&qp->recvs, &rv))
        complete(qp, rv.wr_id, SD_WC_RECV, status, 0, 0);
    lose_both(qp);
}

int fake_wire_pending(const struct sd_qp *qp) { return (int)qp->wire.count; }
int fake_cq_pending(const struct sd_qp *qp) { return (int)(qp->scq.count + qp->rcq.count); }
void fake_set_auto_deliver(struct sd_qp *qp, int on) { qp->auto_deliver = on; }
void fake_set_random_cq(struct sd_qp *qp, int on) { qp->random_cq = on; }
void fake_set_record(struct sd_qp *qp, int on) { qp->record = on; }
size_t fake_sent_count(const struct sd_qp *qp) { return qp->nsent; }
const struct fake_sent *fake_sent_get(const struct sd_qp *qp, size_t i)
{
    return i < qp->nsent ? &qp->sent[i] : NULL;
}

void fake_sent_clear(struct sd_qp *qp)
{
    for (size_t i = 0; i < qp->nsent; i++)
        free(qp->sent[i].data);
    qp->nsent = 0;
}

int fake_posted_recvs(const struct sd_qp *qp) { return (int)qp->recvs.count; }
int fake_is_connected(const struct sd_qp *qp) { return qp->connected; }
int fake_disconnects(const struct sd_qp *qp) { return qp->disconnects; }
void fake_fail_post_send(struct sd_qp *qp, int err) { qp->fail_send = err; }
void fake_fail_post_recv(struct sd_qp *qp, int err) { qp->fail_recv = err; }
void fake_fail_reg_mr(struct sd_qp *qp, int err) { qp->fail_reg = err; }

int fake_mr_access(const struct sd_qp *qp, const void *base)
{
    for (size_t i = 0; i < qp->nregions; i++)
        if (qp->regions[i].live && qp->regions[i].base == base)
            return qp->regions[i].access;
    return -1;
}

int fake_mr_count(const struct sd_qp *qp)
{
    int n = 0;

    for (size_t i = 0; i < qp->nregions; i++)
        n += qp->regions[i].live;
    return n;
}

size_t fake_mr_bytes(const struct sd_qp *qp)
{
    size_t n = 0;

    for (size_t i = 0; i < qp->nregions; i++)
        if (qp->regions[i].live)
            n += qp->regions[i].len;
    return n;
}
