/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/link/smbd_link_accept.c — the passive side (the relay): the provider's
 * accept, with the admit hook asked first and the PASSIVE engine started before the
 * connection is accepted, then the negotiation, blocking (smbd_link_accept) or on the
 * caller's loop (smbd_link_accept_start). */
#include "smbd_link_int.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "sd_addr.h"

/* The provider's pre_accept hook: start the PASSIVE engine (it posts its receives)
 * before the connection is accepted, so the peer's first Send always finds one. */
struct accept_hook {
    const struct smbd_link_opts *o;
    void *ctx;              /* the admit hook's */
    struct smbd_link *k;
};

static int link_admit(const struct sockaddr *local, const struct sockaddr *peer, void *arg)
{
    const struct accept_hook *h = arg;

    return h->o->admit(h->ctx, local, peer);
}

static int link_pre_accept(struct sd_qp *qp, void *arg)
{
    struct accept_hook *h = arg;
    struct sd_cm_result none;
    struct smbd_link_plan lp;
    char why[400];
    int err = smbd_link_plan_charge(h->o, SMBD_ROLE_PASSIVE, &lp, why, sizeof(why));

    if (err < 0) {
        sd_warn("SMB Direct connection refused: %s", why);
        return err;
    }
    memset(&none, 0, sizeof(none));
    h->k = smbd_link_new(h->o, &lp, SMBD_ROLE_PASSIVE, qp, &none, &err);
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
                                   .want_crc = o->want_crc,
                                   .private_data = o->private_data,
                                   .private_data_len = o->private_data_len,
                                   .pre_accept = link_pre_accept, .pre_accept_arg = &hook,
                                   .admit = o->admit ? link_admit : NULL,
                                   .admit_arg = &hook };
    struct sd_cm_result cm;
    const char *bad = smbd_link_opts_check(o);
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
        err = smbd_link_negotiate_start(loop, k, start + (uint64_t)o->timeout_ms, done, ctx);
        if (err < 0) {
            smbd_link_free(k);
            snprintf(reason, sizeof(reason), "cannot run the negotiation: %s", strerror(-err));
        }
    }
    if (err < 0 && why)
        snprintf(why, whylen, "%s", reason);
    return err;
}

int smbd_link_accept(struct sd_listener *l, const struct smbd_link_opts *o,
                     struct smbd_link **out, char *why, size_t whylen)
{
    uint64_t start = sd_now_ms();
    struct smbd_link *k;
    char reason[256], peer[SD_ADDR_STRLEN];
    int err = link_accept_new(l, o, o->timeout_ms, NULL, &k, reason, sizeof(reason));

    if (err < 0) {
        smbd_link_fail_early(reason, why, whylen);
        return err;
    }
    sd_addr_format((const struct sockaddr *)&k->cm.peer, peer, sizeof(peer));
    return smbd_link_negotiate_blocking(k, start + (uint64_t)o->timeout_ms, peer, out, why, whylen);
}

