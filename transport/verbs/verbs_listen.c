/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/verbs/verbs_listen.c — connection management over librdmacm, passive side:
 * a listening CM id on its own event channel, and accept: the next connect request,
 * the admit hook, the depths and the Appendix A reply header (MS-SMBD 6.2), the queue
 * pair built and the caller's pre_accept hook run before rdma_accept, each on a
 * channel of the connection's own, bounded by a timeout. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "sd_clock.h"
#include "sd_irdord.h"
#include "verbs_priv.h"

/* A non-blocking accept (timeout 0) still waits this long for ESTABLISHED after
 * rdma_accept: the request was complete, only the kernel's handshake end remains. */
#define VERBS_ESTABLISH_MS 1000

struct sd_listener *sd_verbs_listen(const struct sockaddr *addr, socklen_t addrlen,
                                    const struct sd_listen_params *lp, int *err)
{
    struct sd_listener *l;
    int rc;

    if (!addr || addrlen < sizeof(struct sockaddr_in) || !lp) {
        *err = -EINVAL;
        return NULL;
    }
    rc = sd_verbs_require_device("RDMA listen");
    if (rc) {
        *err = rc;
        return NULL;
    }
    l = calloc(1, sizeof(*l));
    if (!l) {
        *err = -ENOMEM;
        return NULL;
    }
    rc = sd_verbs_new_cm_id(&l->cm_channel, &l->id);
    if (!rc && rdma_bind_addr(l->id, (struct sockaddr *)addr))
        rc = -errno;
    if (!rc && rdma_listen(l->id, lp->backlog > 0 ? lp->backlog : 16))
        rc = -errno;
    if (rc) {
        sd_error("verbs: cannot listen for RDMA connections: %s", strerror(-rc));
        sd_verbs_listener_close(l);
        *err = rc;
        return NULL;
    }
    *err = 0;
    return l;
}

int sd_verbs_listener_fd(struct sd_listener *l) { return l->cm_channel->fd; }

int sd_verbs_listener_addr(struct sd_listener *l, struct sockaddr_storage *addr, socklen_t *len)
{
    const struct sockaddr *bound = rdma_get_local_addr(l->id);
    socklen_t need;

    if (bound->sa_family == AF_INET)
        need = sizeof(struct sockaddr_in);
    else if (bound->sa_family == AF_INET6)
        need = sizeof(struct sockaddr_in6);
    else
        return -EAFNOSUPPORT;
    if (*len < need)
        return -EINVAL;
    sd_verbs_copy_addr(addr, bound);
    *len = need;
    return 0;
}

void sd_verbs_listener_close(struct sd_listener *l)
{
    if (!l)
        return;
    if (l->id)
        rdma_destroy_id(l->id);
    if (l->cm_channel)
        rdma_destroy_event_channel(l->cm_channel);
    free(l);
}

/* The passive side's depths and reply header from the connect request. */
static int accept_depths(int with_header,
                         const struct sd_verbs_cm_event *req, uint32_t *ird, uint32_t *ord,
                         uint32_t *reply_ird, uint32_t *reply_ord, int *legacy_le)
{
    uint32_t peer_ird, peer_ord;

    *legacy_le = 0;
    if (!with_header) {
        sd_verbs_clamp_to_peer(&req->conn, ird, ord);
        return 0;
    }
    if (sd_irdord_decode(req->private_data, req->private_data_len, &peer_ird, &peer_ord,
                         legacy_le)) {
        sd_warn("verbs: rejecting a connection without a valid MS-SMBD IRD/ORD header (6.1)");
        return -EPROTO;
    }
    if (sd_irdord_accept(*ird, *ord, peer_ird, peer_ord, reply_ird, reply_ord, ird, ord)) {
        sd_warn("verbs: rejecting a connection whose IRD/ORD would be zero (MS-SMBD 6.2)");
        return -ECONNREFUSED;
    }
    return 0;
}

/* Waits for the next connect request on the listener. */
static int next_request(struct sd_listener *l, long long deadline, struct sd_verbs_cm_event *ev)
{
    for (;;) {
        int rc = sd_verbs_wait_cm_event(l->cm_channel, deadline, ev);

        if (rc)
            return rc;
        if (ev->type == RDMA_CM_EVENT_CONNECT_REQUEST)
            return 0;
        if (ev->type == RDMA_CM_EVENT_DEVICE_REMOVAL)
            return -ENODEV;
        sd_debug("verbs: listener ignores %s", rdma_event_str(ev->type));
    }
}

struct sd_qp *sd_verbs_accept(struct sd_listener *l, const struct sd_cm_params *params,
                              int timeout_ms, struct sd_cm_result *result, int *err)
{
    long long deadline = (long long)sd_now_ms() + (timeout_ms > 0 ? timeout_ms : 0);
    struct rdma_event_channel *ch = NULL;
    struct rdma_cm_id *child;
    struct sd_qp *qp = NULL;
    struct sd_verbs_cm_event req, ev;
    struct rdma_conn_param cp;
    uint8_t pd[SD_IRDORD_HDR_LEN + SD_MAX_PRIVATE_DATA];
    uint32_t ird, ord, reply_ird = 0, reply_ord = 0;
    int rc, legacy_le, with_header;

    rc = l ? sd_verbs_check_params(params) : -EINVAL;
    if (!rc)
        rc = next_request(l, deadline, &req);
    if (rc == -ETIMEDOUT && timeout_ms == 0)
        rc = -EAGAIN; /* provider.h: no request queued yet */
    if (rc) {
        *err = rc;
        return NULL;
    }
    child = req.id;
    if (params->admit) {
        rc = params->admit(rdma_get_local_addr(child), rdma_get_peer_addr(child),
                           params->admit_arg);
        if (rc) {
            rdma_reject(child, NULL, 0);
            rdma_destroy_id(child);
            *err = rc;
            return NULL;
        }
    }
    ird = params->ird;
    ord = params->ord;
    with_header = params->smbd_ird_ord_header &&
                  child->verbs->device->transport_type == IBV_TRANSPORT_IWARP;
    sd_verbs_clamp_to_device(child->verbs, &ird, &ord);
    rc = accept_depths(with_header, &req, &ird, &ord, &reply_ird, &reply_ord, &legacy_le);
    if (rc) {
        rdma_reject(child, NULL, 0);
        rdma_destroy_id(child);
        *err = rc;
        return NULL;
    }
    /* The connection gets its own event channel so the listener's stays its own. */
    ch = rdma_create_event_channel();
    if (!ch)
        rc = -(errno ? errno : ENOMEM);
    if (!rc)
        rc = sd_verbs_channel_nonblock(ch->fd);
    if (!rc && rdma_migrate_id(child, ch))
        rc = -errno;
    if (!rc)
        qp = sd_verbs_qp_new(ch, child, &rc);
    /* provider.h: the caller posts its receives before the peer can send. */
    if (!rc && params->pre_accept)
        rc = params->pre_accept(qp, params->pre_accept_arg);
    if (rc) {
        rdma_reject(child, NULL, 0);
        goto fail;
    }
    sd_verbs_fill_conn_param(&cp, ird, ord, pd,
                             sd_verbs_private_data(pd, params, with_header, reply_ird,
                                                   reply_ord));
    if (rdma_accept(child, &cp))
        rc = -errno;
    if (!rc) {
        long long until = timeout_ms == 0 ? (long long)sd_now_ms() + VERBS_ESTABLISH_MS
                                          : deadline;

        rc = sd_verbs_expect_cm_event(ch, until, RDMA_CM_EVENT_ESTABLISHED, &ev);
    }
    if (rc) {
        /* The hook's work is on the qp: the failure surfaces as connection loss. */
        sd_warn("verbs: accepting an RDMA connection failed: %s", strerror(-rc));
        sd_verbs_qp_set_lost(qp, SD_WC_FATAL, "accept failed");
        *err = 0;
        return qp;
    }
    sd_verbs_qp_enter(qp, SD_VERBS_QP_CONNECTED);
    sd_verbs_fill_result(result, child, ird, ord, &req, with_header ? SD_IRDORD_HDR_LEN : 0,
                         legacy_le);
    sd_info("verbs: accepted over %s (%s), IRD %u ORD %u%s", child->verbs->device->name,
            qp->iwarp ? "iWARP" : "IB/RoCE", ird, ord,
            legacy_le ? " (peer sent a legacy little-endian IRD/ORD header)" : "");
    *err = 0;
    return qp;

fail:
    sd_warn("verbs: accepting an RDMA connection failed: %s", strerror(-rc));
    if (qp) {
        sd_verbs_destroy(qp);
    } else {
        rdma_reject(child, NULL, 0);
        rdma_destroy_id(child);
        if (ch)
            rdma_destroy_event_channel(ch);
    }
    *err = rc;
    return NULL;
}
