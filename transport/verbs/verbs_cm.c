/* transport/verbs/verbs_cm.c — connection management over librdmacm: resolve and
 * connect (active), listen and accept (passive), each bounded by a timeout, with
 * rdma_conn_param responder resources / initiator depth and, on iWARP devices when
 * asked, the MS-SMBD Appendix A IRD/ORD header in the private data. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "sd_clock.h"
#include "sd_irdord.h"
#include "verbs_priv.h"

/* A non-blocking accept (timeout 0) still waits this long for ESTABLISHED after
 * rdma_accept: the request was complete, only the kernel's handshake end remains. */
#define VERBS_ESTABLISH_MS 1000

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

/* Waits for event `want`; any other event is the failure it stands for. */
static int expect_cm_event(struct rdma_event_channel *ch, long long deadline_ms,
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
        return -ECONNREFUSED;
    case RDMA_CM_EVENT_UNREACHABLE:
        return ev->status == -ETIMEDOUT ? -ETIMEDOUT : -EHOSTUNREACH;
    case RDMA_CM_EVENT_DEVICE_REMOVAL:
        return -ENODEV;
    default:
        return -ECONNABORTED;
    }
}

/* Limits the depths to what the device and rdma_conn_param (8 bits) can carry. */
static void clamp_to_device(struct ibv_context *ctx, uint32_t *ird, uint32_t *ord)
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
static void clamp_to_peer(const struct rdma_conn_param *peer, uint32_t *ird, uint32_t *ord)
{
    if (peer->responder_resources && peer->responder_resources < *ird)
        *ird = peer->responder_resources;
    if (peer->initiator_depth && peer->initiator_depth < *ord)
        *ord = peer->initiator_depth;
}

static int check_params(const struct sd_cm_params *p)
{
    if (!p || p->ird == 0 || p->ord == 0 || p->private_data_len > SD_MAX_PRIVATE_DATA ||
        (p->private_data_len && !p->private_data))
        return -EINVAL;
    return 0;
}

/* Our private data: [Appendix A header] + the application's bytes. Returns its length. */
static uint8_t build_private_data(uint8_t *buf, const struct sd_cm_params *p, int with_header,
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

static void copy_addr(struct sockaddr_storage *dst, const struct sockaddr *src)
{
    memset(dst, 0, sizeof(*dst));
    if (src && src->sa_family == AF_INET)
        memcpy(dst, src, sizeof(struct sockaddr_in));
    else if (src && src->sa_family == AF_INET6)
        memcpy(dst, src, sizeof(struct sockaddr_in6));
}

/* Fills result; the peer's private data goes after skip bytes (its header). */
static void fill_result(struct sd_cm_result *r, struct rdma_cm_id *id, uint32_t ird,
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
    copy_addr(&r->local, rdma_get_local_addr(id));
    copy_addr(&r->peer, rdma_get_peer_addr(id));
}

static void fill_conn_param(struct rdma_conn_param *cp, uint32_t ird, uint32_t ord,
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
        clamp_to_peer(&ev->conn, ird, ord);
        return 0;
    }
    if (ev->private_data_len < SD_IRDORD_HDR_LEN) {
        /* ksmbd answers with the header only when the connector's header disagreed
         * with its MPA IRD/ORD (its "legacy iWARP" case): the CM/MPA values stand. */
        clamp_to_peer(&ev->conn, ird, ord);
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

    rc = check_params(params);
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
        rc = expect_cm_event(ch, deadline, RDMA_CM_EVENT_ADDR_RESOLVED, &ev);
    if (!rc && rdma_resolve_route(id, remaining_ms(deadline) + 1))
        rc = -errno;
    if (!rc)
        rc = expect_cm_event(ch, deadline, RDMA_CM_EVENT_ROUTE_RESOLVED, &ev);
    if (!rc)
        qp = sd_verbs_qp_new(ch, id, &rc);
    if (rc)
        goto fail;
    clamp_to_device(id->verbs, &ird, &ord);
    with_header = params->smbd_ird_ord_header && qp->iwarp;
    /* MS-SMBD 6.1: the connector's header carries its own IRD and ORD. */
    fill_conn_param(&cp, ird, ord, pd, build_private_data(pd, params, with_header, ird, ord));
    if (rdma_connect(id, &cp))
        rc = -errno;
    if (!rc)
        rc = expect_cm_event(ch, deadline, RDMA_CM_EVENT_ESTABLISHED, &ev);
    if (!rc)
        rc = connected_depths(qp, params, &ev, &ird, &ord, &legacy_le, &hdr_len);
    if (rc)
        goto fail;
    qp->connected = 1;
    fill_result(result, id, ird, ord, &ev, hdr_len, legacy_le);
    sd_info("verbs: connected over %s (%s), IRD %u ORD %u", id->verbs->device->name,
            qp->iwarp ? "iWARP" : "IB/RoCE", ird, ord);
    *err = 0;
    return qp;

fail:
    if (rc != -ENODEV)
        sd_warn("verbs: RDMA connect failed: %s", strerror(-rc));
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
    copy_addr(addr, bound);
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
        clamp_to_peer(&req->conn, ird, ord);
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

    rc = l ? check_params(params) : -EINVAL;
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
        rc = params->admit(rdma_get_peer_addr(child), params->admit_arg);
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
    clamp_to_device(child->verbs, &ird, &ord);
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
    fill_conn_param(&cp, ird, ord, pd,
                    build_private_data(pd, params, with_header, reply_ird, reply_ord));
    if (rdma_accept(child, &cp))
        rc = -errno;
    if (!rc)
        rc = expect_cm_event(ch, timeout_ms == 0 ? (long long)sd_now_ms() + VERBS_ESTABLISH_MS
                                                 : deadline, RDMA_CM_EVENT_ESTABLISHED, &ev);
    if (rc) {
        /* The hook's work is on the qp: the failure surfaces as connection loss. */
        sd_warn("verbs: accepting an RDMA connection failed: %s", strerror(-rc));
        sd_verbs_qp_set_lost(qp, SD_WC_FATAL, "accept failed");
        *err = 0;
        return qp;
    }
    qp->connected = 1;
    fill_result(result, child, ird, ord, &req, with_header ? SD_IRDORD_HDR_LEN : 0, legacy_le);
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
