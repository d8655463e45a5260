/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/link/smbd_link_int.h — private to transport/link/: the link object and what
 * its files share. smbd_link.c builds a link (the memory plan, the engine on the provider
 * connection) and runs the negotiation; smbd_link_pump.c lets an sd_loop drive it;
 * smbd_link_dial.c and smbd_link_accept.c are the active and the passive side. */
#ifndef SMBDIRECT_SMBD_LINK_INT_H
#define SMBDIRECT_SMBD_LINK_INT_H

#include "smbd_link.h"

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

/* What a connection of o may register where that pins memory (RLIMIT_MEMLOCK): its
 * configuration (credits, and MaxReadWriteSize offered by the passive side) and the
 * reserve for one I/O. */
struct smbd_link_plan {
    struct smbd_config cfg;
    uint32_t io_limit;            /* UINT32_MAX: no limit binds */
    uint64_t charged;             /* charged to the process for the connection: its
                                     permanent buffers and one I/O (the engine's reserve) */
    uint64_t queues;              /* ... of which the device's queues (kept by the link) */
};

/* Fits a connection of o into what the process may still pin (smbd_memplan.h) and
 * charges that at once, so connections set up side by side cannot count the same room;
 * logs what had to shrink. 0, or -ENOMEM with the reason in why (nothing fits). */
int smbd_link_plan_charge(const struct smbd_link_opts *o, enum smbd_role role,
                          struct smbd_link_plan *lp, char *why, size_t whylen);
/* NULL, or what is wrong with o. */
const char *smbd_link_opts_check(const struct smbd_link_opts *o);
/* A link with a started engine of role on qp, charged as lp (given back on failure);
 * NULL and *err when that fails (qp is then still the caller's). */
struct smbd_link *smbd_link_new(const struct smbd_link_opts *o, const struct smbd_link_plan *lp,
                                enum smbd_role role, struct sd_qp *qp,
                                const struct sd_cm_result *cm, int *err);

/* Runs k's negotiation on loop until deadline: done(ctx, ...) runs once, on the loop, with
 * k established (detached again, the callee's) or freed. 0, or -errno with k detached and
 * still the caller's. */
int smbd_link_negotiate_start(struct sd_loop *loop, struct smbd_link *k, uint64_t deadline,
                              smbd_link_done_cb done, void *ctx);
/* The same on a private loop, waiting: 0 and *out, or -errno with k freed and the failure
 * logged naming peer (and copied to why, may be NULL). */
int smbd_link_negotiate_blocking(struct smbd_link *k, uint64_t deadline, const char *peer,
                                 struct smbd_link **out, char *why, size_t whylen);
/* Logs reason and copies it to why (may be NULL): a failure before any negotiation. */
void smbd_link_fail_early(const char *reason, char *why, size_t whylen);

#endif
