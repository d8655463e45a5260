/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/verbs/verbs_cm.c — connection management over librdmacm, active side:
 * resolve the address and the route, then connect, bounded by one deadline, with
 * rdma_conn_param responder resources / initiator depth and, on iWARP devices when
 * asked, the MS-SMBD Appendix A IRD/ORD header in the private data; plus what the
 * passive side (verbs_listen.c) shares with it: CM ids and events, the depths clamped
 * to the device and the peer, the private data, the connection's result. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>

#include "log.h"
#include "sd_clock.h"
#include "sd_irdord.h"
#include "verbs_priv.h"

static int remaining_ms(long long deadline_ms)
{
    long long left = deadline_ms - (long long)sd_now_ms();

    return left <= 0 ? 0 : left > 0x7fffffff ? 0x7fffffff : (int)left;
}

int sd_verbs_channel_nonblock(int fd)
{
    int fl = fcntl(fd, F_GETFL);

    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
        return -errno;
    return 0;
}

int sd_verbs_wait_cm_event(struct rdma_event_channel *ch, long long deadline_ms,
                           struct sd_verbs_cm_event *ev)
{
    struct rdma_cm_event *e;

    for (;;) {
        struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
        int n;

        if (rdma_get_cm_event(ch, &e) == 0)
            break;
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            return -errno;
        n = poll(&pfd, 1, remaining_ms(deadline_ms));
        if (n < 0 && errno != EINTR)
            return -errno;
        if (n == 0)
            return -ETIMEDOUT;
    }
    /* Copy what we need: private data is only valid until the event is acked. */
    memset(ev, 0, sizeof(*ev));
    ev->type = e->event;
    ev->status = e->status;
    ev->id = e->id;
    ev->conn = e->param.conn;
    if (e->param.conn.private_data && e->param.conn.private_data_len) {
        ev->private_data_len = e->param.conn.private_data_len;
        memcpy(ev->private_data, e->param.conn.private_data, ev->private_data_len);
    }
    ev->conn.private_data = NULL;
    rdma_ack_cm_event(e);
    return 0;
}

/* A REJECTED event's status is the reject reason on InfiniBand and RoCE (IBA 12.6.7.2):
 * consumer-defined, what rdma_reject sends, is the server's own refusal (provider.h:
 * connect's -EACCES); another (invalid service ID: nothing listens) is a connection
 * refused. On iWARP it is the connection reply's -errno, the same for an MPA reject
 * and a TCP reset (siw, hardware), so there every reject is a connection refused. */
#define VERBS_REJ_CONSUMER_DEFINED 28

static int rejected_err(int status)
{
    return status == VERBS_REJ_CONSUMER_DEFINED ? -EACCES : -ECONNREFUSED;
}

int sd_verbs_expect_cm_event(struct rdma_event_channel *ch, long long deadline_ms,
                             enum rdma_cm_event_type want, struct sd_verbs_cm_event *ev)
{
    int rc = sd_verbs_wait_cm_event(ch, deadline_ms, ev);

    if (rc)
        return rc;
    if (ev->type == want)
        return 0;
    sd_info("verbs: expected %s, got %s (status %d)", rdma_event_str(want),
            rdma_event_str(ev->type), ev->status);
    switch (ev->type) {
    case RDMA_CM_EVENT_ADDR_ERROR:
        return ev->status < 0 ? ev->status : -EHOSTUNREACH;
    case RDMA_CM_EVENT_ROUTE_ERROR:
        return ev->status < 0 ? ev->status : -ENETUNREACH;
    case RDMA_CM_EVENT_REJECTED:
        return rejected_err(ev->status);
    case RDMA_CM_EVENT_UNREACHABLE:
        return ev->status == -ETIMEDOUT ? -ETIMEDOUT : -EHOSTUNREACH;
    case RDMA_CM_EVENT_DEVICE_REMOVAL:
        return -ENODEV;
    default:
        return -ECONNABORTED;
    }
}

void sd_verbs_clamp_to_device(struct ibv_context *ctx, uint32_t *ird, uint32_t *ord)
{
    struct ibv_device_attr attr;
    uint32_t max_ird = 255, max_ord = 255;

    if (ibv_query_device(ctx, &attr) == 0) {
        if ((uint32_t)attr.max_qp_rd_atom < max_ird)
            max_ird = (uint32_t)attr.max_qp_rd_atom;
        if ((uint32_t)attr.max_qp_init_rd_atom < max_ord)
            max_ord = (uint32_t)attr.max_qp_init_rd_atom;
    }
    if (*ird > max_ird)
        *ird = max_ird;
    if (*ord > max_ord)
        *ord = max_ord;
}

/* rdma_cm reports the peer's depths from our point of view: responder_resources is
 * the most we may serve (the peer's ORD), initiator_depth the most we may issue. */
void sd_verbs_clamp_to_peer(const struct rdma_conn_param *peer, uint32_t *ird, uint32_t *ord)
{
    if (peer->responder_resources && peer->responder_resources < *ird)
        *ird = peer->responder_resources;
    if (peer->initiator_depth && peer->initiator_depth < *ord)
        *ord = peer->initiator_depth;
}

int sd_verbs_check_params(const struct sd_cm_params *p)
{
    if (!p || p->ird == 0 || p->ord == 0 || p->private_data_len > SD_MAX_PRIVATE_DATA ||
        (p->private_data_len && !p->private_data))
        return -EINVAL;
    return 0;
}

uint8_t sd_verbs_private_data(uint8_t *buf, const struct sd_cm_params *p, int with_header,
                              uint32_t hdr_ird, uint32_t hdr_ord)
{
    size_t n = 0;

    if (with_header) {
        sd_irdord_encode(buf, hdr_ird, hdr_ord);
        n = SD_IRDORD_HDR_LEN;
    }
    if (p->private_data_len)
        memcpy(buf + n, p->private_data, p->private_data_len);
    return (uint8_t)(n + p->private_data_len);
}

void sd_verbs_copy_addr(struct sockaddr_storage *dst, const struct sockaddr *src)
{
    memset(dst, 0, sizeof(*dst));
    if (src && src->sa_family == AF_INET)
        memcpy(dst, src, sizeof(struct sockaddr_in));
    else if (src && src->sa_family == AF_INET6)
        memcpy(dst, src, sizeof(struct sockaddr_in6));
}

void sd_verbs_fill_result(struct sd_cm_result *r, struct rdma_cm_id *id, uint32_t ird,
                          uint32_t ord, const struct sd_verbs_cm_event *ev, size_t skip,
                          int legacy_le)
{
    size_t len = ev->private_data_len > skip ? ev->private_data_len - skip : 0;

    memset(r, 0, sizeof(*r));
    r->ird = ird;
    r->ord = ord;
    if (len > SD_MAX_PRIVATE_DATA)
        len = SD_MAX_PRIVATE_DATA;
    memcpy(r->peer_private_data, ev->private_data + skip, len);
    r->peer_private_data_len = (uint16_t)len;
    r->peer_legacy_le_header = legacy_le;
    sd_verbs_copy_addr(&r->local, rdma_get_local_addr(id));
    sd_verbs_copy_addr(&r->peer, rdma_get_peer_addr(id));
}

void sd_verbs_fill_conn_param(struct rdma_conn_param *cp, uint32_t ird, uint32_t ord,
                              const uint8_t *pd, uint8_t pd_len)
{
    memset(cp, 0, sizeof(*cp));
    cp->responder_resources = (uint8_t)ird;
    cp->initiator_depth = (uint8_t)ord;
    cp->retry_count = SD_VERBS_CM_RETRY;
    cp->rnr_retry_count = SD_VERBS_RNR_RETRY;
    cp->private_data = pd_len ? pd : NULL;
    cp->private_data_len = pd_len;
}

int sd_verbs_new_cm_id(struct rdma_event_channel **ch, struct rdma_cm_id **id)
{
    int rc;

    *id = NULL;
    *ch = rdma_create_event_channel();
    if (!*ch) {
        rc = errno ? errno : ENODEV;
        sd_error("verbs: cannot open the RDMA connection manager: %s", strerror(rc));
        return -rc;
    }
    rc = sd_verbs_channel_nonblock((*ch)->fd);
    if (!rc && rdma_create_id(*ch, id, NULL, RDMA_PS_TCP))
        rc = -errno;
    if (rc) {
        rdma_destroy_event_channel(*ch);
        *ch = NULL;
    }
    return rc;
}

/* The active side after the CM reported ESTABLISHED: the negotiated depths. Sets
 * *hdr_len to the bytes of the peer's private data that were its Appendix A header. */
static int connected_depths(const struct sd_qp *qp, const struct sd_cm_params *params,
                            const struct sd_verbs_cm_event *ev, uint32_t *ird, uint32_t *ord,
                            int *legacy_le, size_t *hdr_len)
{
    uint32_t hird, hord;

    *legacy_le = 0;
    *hdr_len = 0;
    if (!(params->smbd_ird_ord_header && qp->iwarp)) {
        sd_verbs_clamp_to_peer(&ev->conn, ird, ord);
        return 0;
    }
    if (ev->private_data_len < SD_IRDORD_HDR_LEN) {
        /* ksmbd answers with the header only when the connector's header disagreed
         * with its MPA IRD/ORD (its "legacy iWARP" case): the CM/MPA values stand. */
        sd_verbs_clamp_to_peer(&ev->conn, ird, ord);
        sd_info("verbs: the peer's reply has no MS-SMBD IRD/ORD header (6.1); using the "
                "RDMA CM values IRD %u ORD %u", *ird, *ord);
        return 0;
    }
    if (sd_irdord_decode(ev->private_data, ev->private_data_len, &hird, &hord, legacy_le)) {
        sd_error("verbs: the peer's reply carries an invalid MS-SMBD IRD/ORD header (6.1)");
        return -EPROTO;
    }
    /* MS-SMBD 6.2: the connector uses the values the acceptor sent (never more
     * than it offered). */
    *ird = hird < *ird ? hird : *ird;
    *ord = hord < *ord ? hord : *ord;
    *hdr_len = SD_IRDORD_HDR_LEN;
    return 0;
}

struct sd_qp *sd_verbs_connect(const struct sockaddr *addr, socklen_t addrlen,
                               const struct sd_cm_params *params, int timeout_ms,
                               struct sd_cm_result *result, int *err)
{
    long long deadline = (long long)sd_now_ms() + (timeout_ms > 0 ? timeout_ms : 0);
    struct rdma_event_channel *ch = NULL;
    struct rdma_cm_id *id = NULL;
    struct sd_qp *qp = NULL;
    struct sd_verbs_cm_event ev;
    struct rdma_conn_param cp;
    uint8_t pd[SD_IRDORD_HDR_LEN + SD_MAX_PRIVATE_DATA];
    uint32_t ird, ord;
    size_t hdr_len = 0;
    int rc, legacy_le, with_header;

    rc = sd_verbs_check_params(params);
    if (!rc && (!addr || addrlen < sizeof(struct sockaddr_in)))
        rc = -EINVAL;
    if (!rc)
        rc = sd_verbs_require_device("RDMA connect");
    if (!rc)
        rc = sd_verbs_new_cm_id(&ch, &id);
    if (rc)
        goto fail;
    ird = params->ird;
    ord = params->ord;
    if (rdma_resolve_addr(id, NULL, (struct sockaddr *)addr, remaining_ms(deadline) + 1))
        rc = -errno;
    if (!rc)
        rc = sd_verbs_expect_cm_event(ch, deadline, RDMA_CM_EVENT_ADDR_RESOLVED, &ev);
    if (!rc && rdma_resolve_route(id, remaining_ms(deadline) + 1))
        rc = -errno;
    if (!rc)
        rc = sd_verbs_expect_cm_event(ch, deadline, RDMA_CM_EVENT_ROUTE_RESOLVED, &ev);
    if (!rc)
        qp = sd_verbs_qp_new(ch, id, &rc);
    if (rc)
        goto fail;
    sd_verbs_clamp_to_device(id->verbs, &ird, &ord);
    with_header = params->smbd_ird_ord_header && qp->iwarp;
    /* MS-SMBD 6.1: the connector's header carries its own IRD and ORD. */
    sd_verbs_fill_conn_param(&cp, ird, ord, pd,
                             sd_verbs_private_data(pd, params, with_header, ird, ord));
    if (rdma_connect(id, &cp))
        rc = -errno;
    if (!rc)
        rc = sd_verbs_expect_cm_event(ch, deadline, RDMA_CM_EVENT_ESTABLISHED, &ev);
    if (!rc)
        rc = connected_depths(qp, params, &ev, &ird, &ord, &legacy_le, &hdr_len);
    if (rc)
        goto fail;
    sd_verbs_qp_enter(qp, SD_VERBS_QP_CONNECTED);
    sd_verbs_fill_result(result, id, ird, ord, &ev, hdr_len, legacy_le);
    sd_info("verbs: connected over %s (%s), IRD %u ORD %u", id->verbs->device->name,
            qp->iwarp ? "iWARP" : "IB/RoCE", ird, ord);
    *err = 0;
    return qp;

fail:
    if (rc != -ENODEV)
        sd_warn("verbs: RDMA connect failed: %s", sd_cm_strerror(rc));
    if (qp) {
        sd_verbs_destroy(qp);
    } else {
        if (id)
            rdma_destroy_id(id);
        if (ch)
            rdma_destroy_event_channel(ch);
    }
    *err = rc;
    return NULL;
}
