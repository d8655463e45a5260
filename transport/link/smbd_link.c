/* transport/link/smbd_link.c — an SMB Direct connection bound to its provider connection:
 * dial (RDMA connect + ACTIVE negotiate), accept (provider accept + PASSIVE negotiate,
 * blocking or on a caller's loop), and the glue that lets an sd_loop drive it (provider
 * fd watch, progress + completion polling, the engine's timers). The blocking calls run
 * the same asynchronous negotiation on a private loop, bounded by opts->timeout_ms. */
#include "smbd_link.h"
#include "smbd_link_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "sd_addr.h"
#include "sd_pinned.h"
#include "smbd_memplan.h"

#define LINK_WC_BATCH    32
#define LINK_PUMP_ROUNDS 4

struct smbd_link {
    const struct sd_provider_ops *ops;
    struct sd_qp *qp;
    struct smbd_conn *conn;
    struct sd_cm_result cm;
    uint32_t io_limit;            /* smbd_link_io_limit */
    uint64_t pinned_queues;       /* charged for the device's queues, given back at free */

    int bound;                    /* an owner's upcalls are installed (smbd_link_set_upper) */
    int term_err;                 /* why the negotiation ended (link_terminated) */
    char reason[200];

    struct sd_loop *loop;         /* driving loop, NULL when detached */
    int watched;                  /* events the provider fd is watched for, -1: none */
    int64_t timer_id;
    uint64_t timer_at;            /* UINT64_MAX: no engine timer armed */
    int64_t prepare_id;           /* the loop's prepare hook (link_prepare_cb) */
    uint64_t requests_seen;       /* smbd_conn_provider_requests at the last pump */
    void (*after)(void *ctx);
    void *after_ctx;

    /* asynchronous negotiation */
    uint64_t deadline;
    int64_t deadline_timer;
    smbd_link_done_cb done;
    void *done_ctx;
};

/* ---- the link's own upcalls, while nobody is bound (negotiation) ---- */

static void link_drop_fragment(void *ctx, const uint8_t *data, size_t len, uint32_t remaining,
                               int first)
{
    (void)ctx, (void)data, (void)remaining, (void)first;
    sd_debug("smbd link: %zu-byte fragment with no reader dropped", len);
}

static void link_terminated(void *ctx, int err, const char *reason)
{
    struct smbd_link *k = ctx;

    k->term_err = err;
    snprintf(k->reason, sizeof(k->reason), "%s", reason ? reason : "connection ended");
}

static const struct smbd_upper link_upper = {
    .deliver_fragment = link_drop_fragment,
    .terminated = link_terminated,
};

/* ---- construction ---- */

/* What a connection of o may register where that pins memory (RLIMIT_MEMLOCK): its
 * configuration (credits, and MaxReadWriteSize offered by the passive side) and the
 * reserve for one I/O. */
struct link_plan {
    struct smbd_config cfg;
    uint32_t io_limit;            /* UINT32_MAX: no limit binds */
    uint64_t charged;             /* charged to the process for the connection: its
                                     permanent buffers and one I/O (the engine's reserve) */
    uint64_t queues;              /* ... of which the device's queues (kept by the link) */
};

static uint64_t kib(uint64_t bytes) { return (bytes + 1023) / 1024; }

uint32_t smbd_link_planned_io(const struct smbd_link_opts *o, enum smbd_role role)
{
    uint32_t want = o->io_size ? o->io_size : o->cfg.max_read_write_size;

    /* A server shares the limit among its clients: under one it offers each the I/O size
     * Windows' and Linux' clients use by default instead of taking all the room. */
    return role == SMBD_ROLE_PASSIVE && want > SMBD_MEMPLAN_IO_FIRST ? SMBD_MEMPLAN_IO_FIRST
                                                                      : want;
}

/* Fits a connection of o into what the process may still pin (smbd_memplan.h) and
 * charges that at once, so connections set up side by side cannot count the same room;
 * logs what had to shrink. 0, or -ENOMEM with the reason in why (nothing fits). */
static int link_plan(const struct smbd_link_opts *o, enum smbd_role role, struct link_plan *lp,
                     char *why, size_t whylen)
{
    uint32_t want = smbd_link_planned_io(o, role);
    uint64_t limit = sd_pinned_limit(), room, pinned;
    struct smbd_memplan p;
    enum smbd_memplan_fit fit;

    lp->cfg = o->cfg;
    lp->io_limit = UINT32_MAX;
    lp->charged = lp->queues = 0;
    if (!o->provider->pins_memory || limit == UINT64_MAX)
        return 0;
    do {
        room = sd_pinned_room();
        pinned = sd_pinned_used();
        fit = smbd_memplan_make(&o->cfg, want, room, &p);
    } while (fit != SMBD_MEMPLAN_REFUSED && sd_pinned_charge(p.fixed + p.reserve) < 0);
    if (fit == SMBD_MEMPLAN_REFUSED) {
        snprintf(why, whylen, "RLIMIT_MEMLOCK is %llu KiB and the process has %llu KiB "
                 "registered already: an SMB Direct connection on %s needs at least %llu KiB more "
                 "(%llu KiB for full speed); raise RLIMIT_MEMLOCK (ulimit -l, LimitMEMLOCK= in "
                 "a systemd unit, /etc/security/limits.d)", (unsigned long long)kib(limit),
                 (unsigned long long)kib(pinned), o->provider->name,
                 (unsigned long long)kib(p.need_min), (unsigned long long)kib(p.full));
        return -ENOMEM;
    }
    if (p.credits < lp->cfg.receive_credit_max)
        lp->cfg.receive_credit_max = p.credits;
    if (p.credits < lp->cfg.send_credit_target)
        lp->cfg.send_credit_target = p.credits;
    if (role == SMBD_ROLE_PASSIVE && p.io < lp->cfg.max_read_write_size)
        lp->cfg.max_read_write_size = p.io; /* offered: no client I/O needs more */
    lp->io_limit = p.io;
    lp->charged = p.fixed + p.reserve;
    lp->queues = SMBD_MEMPLAN_QUEUES;
    if (fit == SMBD_MEMPLAN_SHRUNK)
        sd_warn("RLIMIT_MEMLOCK is %llu KiB (%llu KiB registered by the process already): this "
                "SMB Direct connection uses %u credits (of %u) and I/Os of at most %u KiB (of "
                "%u); %llu KiB or more gives full speed (ulimit -l, LimitMEMLOCK=, "
                "/etc/security/limits.d)", (unsigned long long)kib(limit),
                (unsigned long long)kib(pinned), lp->cfg.receive_credit_max,
                o->cfg.receive_credit_max, (unsigned)(p.io / 1024), (unsigned)(want / 1024),
                (unsigned long long)kib(p.full));
    else if (room < p.full)
        sd_info("RLIMIT_MEMLOCK is %llu KiB: room for %llu I/Os of %u KiB at a time on this "
                "connection; %llu KiB gives full speed", (unsigned long long)kib(limit),
                (unsigned long long)((room - p.fixed) / p.reserve), (unsigned)(p.io / 1024),
                (unsigned long long)kib(p.full));
    return 0;
}

static const char *opts_check(const struct smbd_link_opts *o)
{
    if (!o->provider)
        return "no RDMA provider given";
    if (o->ird == 0 || o->ord == 0)
        return "IRD and ORD must be > 0";
    if (o->timeout_ms <= 0)
        return "timeout must be > 0";
    return smbd_config_check(&o->cfg);
}

static struct smbd_link *link_new(const struct smbd_link_opts *o, const struct link_plan *lp,
                                  enum smbd_role role, struct sd_qp *qp,
                                  const struct sd_cm_result *cm, int *err)
{
    struct smbd_link *k = calloc(1, sizeof(*k));

    if (!k) {
        sd_pinned_release(lp->charged);
        *err = -ENOMEM;
        return NULL;
    }
    k->ops = o->provider;
    k->qp = qp;
    k->cm = *cm;
    k->io_limit = lp->io_limit;
    k->watched = -1;
    k->timer_at = UINT64_MAX;
    k->conn = smbd_conn_new(role, &lp->cfg, o->provider, qp, &link_upper, k);
    if (!k->conn) {
        sd_pinned_release(lp->charged);
        free(k);
        *err = -ENOMEM;
        return NULL;
    }
    /* the engine's buffers and I/O draw from the charge; the queues' part stays here */
    smbd_conn_adopt_reserve(k->conn, lp->charged - lp->queues);
    k->pinned_queues = lp->queues;
    *err = smbd_conn_start(k->conn, sd_now_ms());
    if (*err < 0) {
        smbd_conn_free(k->conn);
        sd_pinned_release(k->pinned_queues);
        free(k);
        return NULL;
    }
    return k;
}

struct smbd_conn *smbd_link_engine(struct smbd_link *k) { return k->conn; }
const struct smbd_conn *smbd_link_conn(const struct smbd_link *k) { return k->conn; }
uint32_t smbd_link_io_limit(const struct smbd_link *k) { return k->io_limit; }
const struct sd_cm_result *smbd_link_cm(const struct smbd_link *k) { return &k->cm; }
const struct sd_provider_ops *smbd_link_provider(const struct smbd_link *k) { return k->ops; }

void smbd_link_set_upper(struct smbd_link *k, const struct smbd_upper *up, void *ctx)
{
    k->bound = up != NULL;
    smbd_conn_set_upper(k->conn, up ? up : &link_upper, up ? ctx : k);
}

void smbd_link_free(struct smbd_link *k)
{
    if (!k)
        return;
    smbd_link_detach(k);
    smbd_link_set_upper(k, NULL, NULL);
    if (!smbd_conn_is_terminated(k->conn))
        smbd_conn_disconnect(k->conn);
    smbd_conn_free(k->conn);
    k->ops->destroy(k->qp);
    sd_pinned_release(k->pinned_queues);
    free(k);
}

/* ---- loop driving ---- */

/* Feeds the provider's completions to the engine; returns how many. While nobody is
 * bound they are taken one at a time and left in the provider once established (see
 * smbd_link_set_upper). */
static int link_drain(struct smbd_link *k, uint64_t now)
{
    struct sd_wc wc[LINK_WC_BATCH];
    int total = 0, n;

    for (;;) {
        if (!k->bound && smbd_conn_is_established(k->conn))
            break;
        n = k->ops->poll_cq(k->qp, wc, k->bound ? LINK_WC_BATCH : 1);
        if (n <= 0)
            break;
        for (int i = 0; i < n; i++)
            smbd_conn_on_completion(k->conn, &wc[i], now);
        total += n;
    }
    return total;
}

/* progress + completions, again while completions came (the engine's reactions, such
 * as reposted receives and credit grants, then leave in the same turn), bounded. */
static void link_pump(struct smbd_link *k)
{
    uint64_t now = sd_now_ms();

    for (int round = 0; round < LINK_PUMP_ROUNDS; round++) {
        int rc = k->ops->progress(k->qp);

        if (rc < 0) /* the loss itself arrives as completions (provider.h) */
            sd_debug("smbd link: provider progress: %s", strerror(-rc));
        if (link_drain(k, now) == 0)
            break;
    }
    k->requests_seen = smbd_conn_provider_requests(k->conn);
}

static void link_fd_cb(void *ctx, int revents);
static void link_timer_cb(void *ctx, uint64_t now);

static void link_rearm(struct smbd_link *k)
{
    int terminated = smbd_conn_is_terminated(k->conn);
    int fd = k->ops->fd(k->qp), ev = terminated ? -1 : k->ops->poll_events(k->qp), rc = 0;
    uint64_t next = terminated ? UINT64_MAX : smbd_conn_next_timer(k->conn);

    if (!k->loop)
        return;
    if (ev != k->watched) {
        if (ev < 0)
            rc = sd_loop_del_fd(k->loop, fd);
        else if (k->watched < 0)
            rc = sd_loop_add_fd(k->loop, fd, ev, link_fd_cb, k);
        else
            rc = sd_loop_mod_fd(k->loop, fd, ev);
        if (rc < 0)
            sd_error("smbd link: cannot watch provider fd %d: %s", fd, strerror(-rc));
        k->watched = ev;
    }
    if (next != k->timer_at) {
        if (k->timer_id > 0)
            sd_loop_cancel_timer(k->loop, k->timer_id);
        k->timer_id = 0;
        if (next != UINT64_MAX) {
            k->timer_id = sd_loop_add_timer(k->loop, next, link_timer_cb, k);
            if (k->timer_id < 0)
                sd_error("smbd link: cannot arm timer: %s", strerror((int)-k->timer_id));
        }
        k->timer_at = next;
    }
}

static void link_fd_cb(void *ctx, int revents)
{
    struct smbd_link *k = ctx;

    /* progress() finds out what happened, including errors */
    if ((revents & (SD_EV_IN | SD_EV_HUP | SD_EV_ERR)) && k->ops->readable)
        k->ops->readable(k->qp);
    link_pump(k);
    link_rearm(k);
    if (k->after)
        k->after(k->after_ctx); /* last: it may free the link */
}

static void link_timer_cb(void *ctx, uint64_t now)
{
    struct smbd_link *k = ctx;

    k->timer_id = 0;
    k->timer_at = UINT64_MAX;
    smbd_conn_on_timer(k->conn, now);
    link_pump(k);
    link_rearm(k);
    if (k->after)
        k->after(k->after_ctx);
}

/* Before the loop sleeps: when the engine asked its provider for something since the
 * last pump (sends and credits queued by the owner's calls, a disconnect), move it now
 * and let the owner react. Otherwise only the fd watch and timer are brought up to date
 * (an owner's call may have moved the engine's timer). */
static int link_prepare_cb(void *ctx)
{
    struct smbd_link *k = ctx;

    if (smbd_conn_provider_requests(k->conn) == k->requests_seen) {
        link_rearm(k);
        return 0;
    }
    link_pump(k);
    link_rearm(k);
    if (k->after)
        k->after(k->after_ctx); /* last: it may free the link */
    return 1;
}

int smbd_link_attach(struct smbd_link *k, struct sd_loop *loop, void (*after)(void *ctx),
                     void *ctx)
{
    if (k->loop)
        return -EBUSY;
    k->prepare_id = sd_loop_add_prepare(loop, link_prepare_cb, k);
    if (k->prepare_id < 0)
        return (int)k->prepare_id;
    k->loop = loop;
    k->after = after;
    k->after_ctx = ctx;
    link_pump(k);
    link_rearm(k);
    return 0;
}

void smbd_link_detach(struct smbd_link *k)
{
    if (!k->loop)
        return;
    if (k->watched >= 0)
        sd_loop_del_fd(k->loop, k->ops->fd(k->qp));
    if (k->timer_id > 0)
        sd_loop_cancel_timer(k->loop, k->timer_id);
    if (k->deadline_timer > 0)
        sd_loop_cancel_timer(k->loop, k->deadline_timer);
    sd_loop_del_prepare(k->loop, k->prepare_id);
    k->watched = -1;
    k->timer_id = k->deadline_timer = 0;
    k->timer_at = UINT64_MAX;
    k->loop = NULL;
    k->after = NULL;
}

/* ---- asynchronous negotiation ---- */

static void negotiate_check(void *ctx)
{
    struct smbd_link *k = ctx;
    smbd_link_done_cb done = k->done;
    void *done_ctx = k->done_ctx;
    char why[sizeof(k->reason) + 64];
    int err;

    if (smbd_conn_is_established(k->conn)) {
        smbd_link_detach(k);
        k->done = NULL;
        done(done_ctx, k, 0, "");
        return;
    }
    if (smbd_conn_is_terminated(k->conn)) {
        err = k->term_err ? k->term_err : -ECONNABORTED;
        snprintf(why, sizeof(why), "SMB Direct negotiate failed: %s", k->reason);
    } else if (sd_now_ms() >= k->deadline) {
        err = -ETIMEDOUT;
        snprintf(why, sizeof(why), "SMB Direct negotiate timed out");
    } else {
        return;
    }
    smbd_link_free(k);
    done(done_ctx, NULL, err, why);
}

static void negotiate_deadline_cb(void *ctx, uint64_t now)
{
    struct smbd_link *k = ctx;

    (void)now;
    k->deadline_timer = 0;
    negotiate_check(k);
}

static int negotiate_start(struct sd_loop *loop, struct smbd_link *k, uint64_t deadline,
                           smbd_link_done_cb done, void *ctx)
{
    int rc;

    k->deadline = deadline;
    k->done = done;
    k->done_ctx = ctx;
    rc = smbd_link_attach(k, loop, negotiate_check, k);
    if (rc == 0) {
        k->deadline_timer = sd_loop_add_timer(loop, deadline, negotiate_deadline_cb, k);
        rc = k->deadline_timer < 0 ? (int)k->deadline_timer : 0;
    }
    if (rc < 0) {
        smbd_link_detach(k);
        return rc;
    }
    /* The first poll may already have finished (or failed) it: report from the loop. */
    if (smbd_conn_is_established(k->conn) || smbd_conn_is_terminated(k->conn)) {
        sd_loop_cancel_timer(loop, k->deadline_timer);
        k->deadline_timer = sd_loop_add_timer(loop, 0, negotiate_deadline_cb, k);
    }
    return 0;
}

/* The provider's pre_accept hook: start the PASSIVE engine (it posts its receives)
 * before the connection is accepted, so the peer's first Send always finds one. */
struct accept_hook {
    const struct smbd_link_opts *o;
    void *ctx;              /* the admit hook's */
    struct smbd_link *k;
};

static int link_admit(const struct sockaddr *peer, void *arg)
{
    const struct accept_hook *h = arg;

    return h->o->admit(h->ctx, peer);
}

static int link_pre_accept(struct sd_qp *qp, void *arg)
{
    struct accept_hook *h = arg;
    struct sd_cm_result none;
    struct link_plan lp;
    char why[400];
    int err = link_plan(h->o, SMBD_ROLE_PASSIVE, &lp, why, sizeof(why));

    if (err < 0) {
        sd_warn("SMB Direct connection refused: %s", why);
        return err;
    }
    memset(&none, 0, sizeof(none));
    h->k = link_new(h->o, &lp, SMBD_ROLE_PASSIVE, qp, &none, &err);
    return h->k ? 0 : err;
}

/* Provider accept (bounded by accept_ms; 0: non-blocking, -EAGAIN when no connection
 * is complete yet) + a started PASSIVE engine. */
static int link_accept_new(struct sd_listener *l, const struct smbd_link_opts *o, int accept_ms,
                           void *ctx, struct smbd_link **out, char *why, size_t whylen)
{
    struct accept_hook hook = { .o = o, .ctx = ctx, .k = NULL };
    struct sd_cm_params params = { .ird = o->ird, .ord = o->ord,
                                   .smbd_ird_ord_header = o->smbd_ird_ord_header,
                                   .want_crc = o->want_crc, .pre_accept = link_pre_accept,
                                   .pre_accept_arg = &hook,
                                   .admit = o->admit ? link_admit : NULL,
                                   .admit_arg = &hook };
    struct sd_cm_result cm;
    const char *bad = opts_check(o);
    struct sd_qp *qp;
    int err = 0;

    if (bad) {
        snprintf(why, whylen, "invalid link options: %s", bad);
        return -EINVAL;
    }
    memset(&cm, 0, sizeof(cm));
    qp = o->provider->accept(l, &params, accept_ms, &cm, &err);
    if (!qp) {
        err = err < 0 ? err : -EIO;
        if (err == -EAGAIN)
            snprintf(why, whylen, "no connection is ready yet");
        else
            snprintf(why, whylen, "RDMA accept (%s) failed: %s", o->provider->name,
                     strerror(-err));
        return err;
    }
    hook.k->cm = cm; /* every provider runs the hook before returning a qp */
    *out = hook.k;
    return 0;
}

int smbd_link_accept_start(struct sd_loop *loop, struct sd_listener *l,
                           const struct smbd_link_opts *o, smbd_link_done_cb done, void *ctx,
                           char *why, size_t whylen)
{
    uint64_t start = sd_now_ms();
    struct smbd_link *k;
    char reason[256];
    int err = link_accept_new(l, o, 0, ctx, &k, reason, sizeof(reason));

    if (err == 0) {
        err = negotiate_start(loop, k, start + (uint64_t)o->timeout_ms, done, ctx);
        if (err < 0) {
            smbd_link_free(k);
            snprintf(reason, sizeof(reason), "cannot run the negotiation: %s", strerror(-err));
        }
    }
    if (err < 0 && why)
        snprintf(why, whylen, "%s", reason);
    return err;
}

/* ---- blocking wrappers: the asynchronous negotiation on a private loop ---- */

struct blocking_result {
    int finished, err;
    struct smbd_link *k;
    char why[256];
};

static void blocking_done(void *ctx, struct smbd_link *k, int err, const char *why)
{
    struct blocking_result *r = ctx;

    r->finished = 1;
    r->k = k;
    r->err = err;
    snprintf(r->why, sizeof(r->why), "%s", why);
}

/* Negotiates k until deadline (its timer bounds the wait); 0 and *out, or -errno
 * with k freed. Logs failures naming peer. */
static int negotiate_blocking(struct smbd_link *k, uint64_t deadline, const char *peer,
                              struct smbd_link **out, char *why, size_t whylen)
{
    struct blocking_result r = { 0 };
    struct sd_loop *loop = sd_loop_new();
    int err = loop ? negotiate_start(loop, k, deadline, blocking_done, &r) : -ENOMEM;

    while (err == 0 && !r.finished) {
        err = sd_loop_run_once(loop, -1);
        err = err > 0 ? 0 : err;
    }
    if (!r.finished) { /* k was never handed back: free it here */
        smbd_link_detach(k);
        smbd_link_free(k);
        r.err = err;
        snprintf(r.why, sizeof(r.why), "cannot run the negotiation: %s", strerror(-err));
    }
    sd_loop_free(loop);
    if (r.err < 0) {
        sd_warn("%s (%s)", r.why, peer);
        if (why)
            snprintf(why, whylen, "%s (%s)", r.why, peer);
        return r.err;
    }
    *out = r.k;
    return 0;
}

static void fail_early(const char *reason, char *why, size_t whylen)
{
    sd_warn("%s", reason);
    if (why)
        snprintf(why, whylen, "%s", reason);
}

int smbd_link_accept(struct sd_listener *l, const struct smbd_link_opts *o,
                     struct smbd_link **out, char *why, size_t whylen)
{
    uint64_t start = sd_now_ms();
    struct smbd_link *k;
    char reason[256], peer[SD_ADDR_STRLEN];
    int err = link_accept_new(l, o, o->timeout_ms, NULL, &k, reason, sizeof(reason));

    if (err < 0) {
        fail_early(reason, why, whylen);
        return err;
    }
    sd_addr_format((const struct sockaddr *)&k->cm.peer, peer, sizeof(peer));
    return negotiate_blocking(k, start + (uint64_t)o->timeout_ms, peer, out, why, whylen);
}

int smbd_link_dial(const struct sockaddr *dst, socklen_t dstlen, const struct smbd_link_opts *o,
                   struct smbd_link **out, char *why, size_t whylen)
{
    struct sd_cm_params params = { .ird = o->ird, .ord = o->ord,
                                   .smbd_ird_ord_header = o->smbd_ird_ord_header,
                                   .want_crc = o->want_crc };
    struct sd_cm_result cm;
    struct smbd_link *k;
    struct link_plan lp;
    struct sd_qp *qp;
    uint64_t start = sd_now_ms();
    char addr[SD_ADDR_STRLEN], reason[400];
    const char *bad = opts_check(o);
    int err = 0;

    sd_addr_format(dst, addr, sizeof(addr));
    if (bad) {
        snprintf(reason, sizeof(reason), "invalid link options: %s", bad);
        fail_early(reason, why, whylen);
        return -EINVAL;
    }
    /* Decided before connecting: a connection that cannot fit is never started. */
    if ((err = link_plan(o, SMBD_ROLE_ACTIVE, &lp, reason, sizeof(reason))) < 0) {
        fail_early(reason, why, whylen);
        return err;
    }
    memset(&cm, 0, sizeof(cm));
    qp = o->provider->connect(dst, dstlen, &params, o->timeout_ms, &cm, &err);
    if (!qp) {
        sd_pinned_release(lp.charged);
        err = err < 0 ? err : -EIO;
        snprintf(reason, sizeof(reason), "RDMA connect (%s) to %s failed: %s", o->provider->name,
                 addr, strerror(-err));
        fail_early(reason, why, whylen);
        return err;
    }
    k = link_new(o, &lp, SMBD_ROLE_ACTIVE, qp, &cm, &err);
    if (!k) {
        o->provider->destroy(qp);
        snprintf(reason, sizeof(reason), "SMB Direct start to %s failed: %s", addr, strerror(-err));
        fail_early(reason, why, whylen);
        return err;
    }
    return negotiate_blocking(k, start + (uint64_t)o->timeout_ms, addr, out, why, whylen);
}
