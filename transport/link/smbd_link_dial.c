/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/link/smbd_link_dial.c — the active side (the shim, the probe): plan and
 * charge the connection, the provider's connect, the ACTIVE engine, then the negotiation
 * on a private loop; all of it synchronous and bounded by opts->timeout_ms. */
#include "smbd_link_int.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "sd_addr.h"
#include "sd_pinned.h"

int smbd_link_dial(const struct sockaddr *dst, socklen_t dstlen, const struct smbd_link_opts *o,
                   struct smbd_link **out, char *why, size_t whylen)
{
    struct sd_cm_params params = { .ird = o->ird, .ord = o->ord,
                                   .smbd_ird_ord_header = o->smbd_ird_ord_header,
                                   .want_crc = o->want_crc,
                                   .private_data = o->private_data,
                                   .private_data_len = o->private_data_len };
    struct sd_cm_result cm;
    struct smbd_link *k;
    struct smbd_link_plan lp;
    struct sd_qp *qp;
    uint64_t start = sd_now_ms();
    char addr[SD_ADDR_STRLEN], reason[400];
    const char *bad = smbd_link_opts_check(o);
    int err = 0;

    sd_addr_format(dst, addr, sizeof(addr));
    if (bad) {
        snprintf(reason, sizeof(reason), "invalid link options: %s", bad);
        smbd_link_fail_early(reason, why, whylen);
        return -EINVAL;
    }
    /* Decided before connecting: a connection that cannot fit is never started. */
    if ((err = smbd_link_plan_charge(o, SMBD_ROLE_ACTIVE, &lp, reason, sizeof(reason))) < 0) {
        smbd_link_fail_early(reason, why, whylen);
        return err;
    }
    memset(&cm, 0, sizeof(cm));
    qp = o->provider->connect(dst, dstlen, &params, o->timeout_ms, &cm, &err);
    if (!qp) {
        sd_pinned_release(lp.charged);
        err = err < 0 ? err : -EIO;
        if (err == -EACCES) {
            snprintf(reason, sizeof(reason), "SMB Direct connection to %s %s", addr,
                     sd_cm_strerror(err));
            err = -ECONNREFUSED; /* to the program, as a TCP server's refusal */
        } else {
            snprintf(reason, sizeof(reason), "RDMA connect (%s) to %s failed: %s",
                     o->provider->name, addr, strerror(-err));
        }
        smbd_link_fail_early(reason, why, whylen);
        return err;
    }
    k = smbd_link_new(o, &lp, SMBD_ROLE_ACTIVE, qp, &cm, &err);
    if (!k) {
        o->provider->destroy(qp);
        snprintf(reason, sizeof(reason), "SMB Direct start to %s failed: %s", addr, strerror(-err));
        smbd_link_fail_early(reason, why, whylen);
        return err;
    }
    return smbd_link_negotiate_blocking(k, start + (uint64_t)o->timeout_ms, addr, out, why, whylen);
}
