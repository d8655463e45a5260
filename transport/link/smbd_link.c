/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/link/smbd_link.c — the link object: the connect-time memory plan (what a
 * connection may pin under RLIMIT_MEMLOCK), a started engine on a provider connection,
 * the link's own upcalls while nobody owns it, and the MS-SMBD negotiation run on a loop
 * (the relay's) or, for the blocking calls, on a private one bounded by opts->timeout_ms.
 * The two sides that make a provider connection: smbd_link_dial.c, smbd_link_accept.c. */
#include "smbd_link_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "sd_pinned.h"
#include "smbd_memplan.h"

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

static uint64_t kib(uint64_t bytes) { return (bytes + 1023) / 1024; }

uint32_t smbd_link_planned_io(const struct smbd_link_opts *o, enum smbd_role role)
{
    uint32_t want = o->io_size ? o->io_size : o->cfg.max_read_write_size;

    /* A server shares the limit among its clients: under one it offers each the I/O size
     * Windows' and Linux' clients use by default instead of taking all the room. */
    return role == SMBD_ROLE_PASSIVE && want > SMBD_MEMPLAN_IO_FIRST ? SMBD_MEMPLAN_IO_FIRST
                                                                      : want;
}

int smbd_link_plan_charge(const struct smbd_link_opts *o, enum smbd_role role,
                          struct smbd_link_plan *lp, char *why, size_t whylen)
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
        sd_info("RLIMIT_MEMLOCK is %llu KiB: room for at least %llu I/Os of %u KiB at a time "
                "on this connection; %llu KiB gives full speed", (unsigned long long)kib(limit),
                (unsigned long long)((room - p.fixed) / p.reserve), (unsigned)(p.io / 1024),
                (unsigned long long)kib(p.full));
    return 0;
}

const char *smbd_link_opts_check(const struct smbd_link_opts *o)
{
    if (!o->provider)
        return "no RDMA provider given";
    if (o->ird == 0 || o->ord == 0)
        return "IRD and ORD must be > 0";
    if (o->timeout_ms <= 0)
        return "timeout must be > 0";
    return smbd_config_check(&o->cfg);
}

struct smbd_link *smbd_link_new(const struct smbd_link_opts *o, const struct smbd_link_plan *lp,
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
    smbd_conn_adopt_reserve(k->conn, lp->charged - lp->queues,
                            lp->charged ? smbd_memplan_buffers_cost(&lp->cfg) : 0);
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

int smbd_link_negotiate_start(struct sd_loop *loop, struct smbd_link *k, uint64_t deadline,
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

int smbd_link_negotiate_blocking(struct smbd_link *k, uint64_t deadline, const char *peer,
                                 struct smbd_link **out, char *why, size_t whylen)
{
    struct blocking_result r = { 0 };
    struct sd_loop *loop = sd_loop_new();
    int err = loop ? smbd_link_negotiate_start(loop, k, deadline, blocking_done, &r) : -ENOMEM;

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

void smbd_link_fail_early(const char *reason, char *why, size_t whylen)
{
    sd_warn("%s", reason);
    if (why)
        snprintf(why, whylen, "%s", reason);
}

