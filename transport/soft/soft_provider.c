/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/soft/soft_provider.c — the soft-iWARP provider's operations table and the
 * life cycle of a connection: creation over a negotiated socket, event-loop
 * integration (fd, poll_events, progress), failure with flushed completions and a
 * Terminate (RFC 5040 5.3), orderly disconnect and destruction. */
#include "soft_qp.h"
#include "soft_cm.h"
#include "log.h"
#include "sd_clock.h"
#include "sd_libc.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#define DESTROY_DRAIN_MS 200   /* bounded wait for a pending Terminate at destroy */

struct sd_qp *sd_soft_qp_create(int fd, int responder, int crc, uint32_t ird, uint32_t ord)
{
    struct sd_qp *qp = calloc(1, sizeof(*qp));
    if (!qp)
        return NULL;
    qp->rx.buf = malloc(SD_SOFT_RX_BUF);
    if (!qp->rx.buf) {
        free(qp);
        return NULL;
    }
    qp->fd = fd;
    qp->state = SD_SOFT_QP_RTS;
    qp->crc = crc;
    qp->ird = ird;
    qp->ord = ord;
    qp->tx_gated = responder;
    sd_soft_ring_init(&qp->sq, sizeof(struct sd_soft_swr));
    sd_soft_ring_init(&qp->rq, sizeof(struct sd_soft_rwr));
    sd_soft_ring_init(&qp->orq, sizeof(struct sd_soft_orq));
    sd_soft_ring_init(&qp->irq, sizeof(struct sd_soft_irq));
    sd_soft_ring_init(&qp->cq, sizeof(struct sd_wc));
    for (int q = 0; q < RDMAP_QN_COUNT; q++)
        qp->rx.msn[q] = qp->tx_msn[q] = 1;          /* RFC 5041 5.1: MSN starts at 1 */
    /* RFC 5044 5 (MULPDU): one FPDU per TCP segment, as siw does. */
    int mss = 0;
    socklen_t sl = sizeof(mss);
    if (sd_libc()->getsockopt(fd, IPPROTO_TCP, TCP_MAXSEG, &mss, &sl) != 0 || mss <= 0)
        mss = MPA_MAX_ULPDU;
    qp->max_fpdu = mss < SD_SOFT_MIN_FPDU ? SD_SOFT_MIN_FPDU : (uint32_t)mss;
    sd_debug("soft-iWARP: connection up: crc %d, ird %u, ord %u, max FPDU %u", crc, ird, ord,
             qp->max_fpdu);
    return qp;
}

static int is_error(enum sd_wc_status s) { return s != SD_WC_SUCCESS && s != SD_WC_FLUSHED; }

/* Completes one outstanding request during a failure: the first one blamed gets the
 * cause, every other one SD_WC_FLUSHED. */
static void flush_one(struct sd_qp *qp, uint64_t wr_id, enum sd_wc_opcode op)
{
    enum sd_wc_status s = SD_WC_FLUSHED;
    if (qp->blame_pending) {
        s = qp->fail_cause;
        qp->blame_pending = 0;
    }
    sd_soft_cq_push(qp, wr_id, op, s, 0);
}

static void qp_fail(struct sd_qp *qp, enum sd_wc_status cause, enum sd_soft_blame blame,
                    const uint8_t *term, size_t term_len, int await_peer)
{
    if (!sd_soft_qp_up(qp))
        return;
    sd_soft_qp_enter(qp, await_peer ? SD_SOFT_QP_CLOSING : SD_SOFT_QP_ERROR);
    qp->fail_cause = cause;
    qp->blame_pending = blame == SD_SOFT_BLAME_SEND && is_error(cause);
    while (qp->orq.count) {
        flush_one(qp, ((struct sd_soft_orq *)sd_soft_ring_at(&qp->orq, 0))->wr_id, SD_WC_RDMA_READ);
        sd_soft_ring_pop(&qp->orq);
    }
    sd_soft_tx_abort(qp, term, term_len, flush_one);
    while (qp->sq.count) {
        const struct sd_soft_swr *w = sd_soft_ring_at(&qp->sq, 0);
        flush_one(qp, w->wr_id, w->opcode == RDMAP_WRITE      ? SD_WC_RDMA_WRITE
                                : w->opcode == RDMAP_READ_REQ ? SD_WC_RDMA_READ
                                                              : SD_WC_SEND);
        sd_soft_ring_pop(&qp->sq);
    }
    qp->blame_pending = blame == SD_SOFT_BLAME_RECV && is_error(cause);
    while (qp->rq.count) {
        flush_one(qp, ((struct sd_soft_rwr *)sd_soft_ring_at(&qp->rq, 0))->wr_id, SD_WC_RECV);
        sd_soft_ring_pop(&qp->rq);
    }
    qp->irq.count = 0;
    if (!await_peer)
        sd_soft_cq_push(qp, 0, SD_WC_CONN_LOST, cause, 0);   /* MS-SMBD 3.1.7.1 */
    if (!qp->tail)
        shutdown(qp->fd, SHUT_WR);
}

void sd_soft_qp_fail(struct sd_qp *qp, enum sd_wc_status cause, enum sd_soft_blame blame)
{
    qp_fail(qp, cause, blame, NULL, 0, 0);
}

void sd_soft_qp_peer_closed(struct sd_qp *qp, enum sd_wc_status cause)
{
    if (qp->state == SD_SOFT_QP_RTS)
        sd_soft_qp_fail(qp, cause, SD_SOFT_BLAME_NONE);
    else if (qp->state == SD_SOFT_QP_CLOSING)
        sd_soft_cq_push(qp, 0, SD_WC_CONN_LOST, qp->fail_cause, 0);
    sd_soft_qp_enter(qp, SD_SOFT_QP_CLOSED);
}

void sd_soft_qp_terminate(struct sd_qp *qp, uint8_t layer, uint8_t etype, uint8_t ecode,
                          enum sd_wc_status cause, enum sd_soft_blame blame)
{
    if (!sd_soft_qp_up(qp))
        return;
    struct sd_iw_term t = {.layer = layer, .etype = etype, .ecode = ecode};
    /* RFC 5040 4.8: copy the offending headers when their layout is known. */
    int known = !(layer == TERM_LAYER_LLP ||
                  (layer == TERM_LAYER_RDMAP && etype == RDMAP_ETYPE_CATASTROPHIC) ||
                  (layer == TERM_LAYER_RDMAP && (ecode == RDMAP_ECODE_VERSION ||
                                                 ecode == RDMAP_ECODE_OPCODE)) ||
                  (layer == TERM_LAYER_DDP && (ecode == DDP_ECODE_T_VERSION && etype == DDP_ETYPE_TAGGED)) ||
                  (layer == TERM_LAYER_DDP && (ecode == DDP_ECODE_U_VERSION && etype == DDP_ETYPE_UNTAGGED)));
    if (known) {
        t.hdrct = TERM_HDRCT_M | TERM_HDRCT_D;
        if (qp->rx.hdr.opcode == RDMAP_READ_REQ && layer == TERM_LAYER_RDMAP)
            t.hdrct |= TERM_HDRCT_R;
    }
    sd_warn("soft-iWARP: terminating the connection: %s", sd_iw_term_str(&t));
    uint8_t buf[SD_SOFT_TERM_FPDU_MAX];
    size_t n = sd_soft_tx_build_terminate(qp, &t, buf);
    qp_fail(qp, cause, blame, buf, n, 0);
}

static int soft_is_iwarp(const struct sockaddr *dst, socklen_t dstlen)
{
    (void)dst;
    (void)dstlen;
    return 1;
}

static int soft_listener_addr(struct sd_listener *l, struct sockaddr_storage *addr,
                              socklen_t *len)
{
    return sd_soft_listener_addr(l, (struct sockaddr *)addr, len);
}

static int soft_fd(struct sd_qp *qp) { return qp->fd; }

static int soft_poll_events(struct sd_qp *qp)
{
    if (sd_soft_qp_up(qp))
        return SD_POLL_IN | (sd_soft_tx_pending(qp) ? SD_POLL_OUT : 0);
    return (qp->state == SD_SOFT_QP_CLOSED ? 0 : SD_POLL_IN) | (qp->tail ? SD_POLL_OUT : 0);
}

static int soft_progress(struct sd_qp *qp)
{
    sd_soft_rx_progress(qp);
    sd_soft_tx_progress(qp);
    if (qp->tail)
        sd_soft_tx_drain_tail(qp);
    return 0;
}

static void soft_readable(struct sd_qp *qp)
{
    qp->rx_hinted = 1;
    qp->rx_drained = 0;
}

/* Our FIN follows every byte already written, but the socket may still hold some of
 * them unsent (a slow reader's window): a close now, with the peer's last credit
 * grants unread, would make the kernel reset the connection and drop them. So the
 * connection stays open, its input read and discarded, until the peer closes its side
 * too; only then is the disconnect complete (CONN_LOST), as rdma_disconnect's
 * DISCONNECTED event waits for the peer. The owner bounds the wait. */
static void soft_disconnect(struct sd_qp *qp)
{
    qp_fail(qp, SD_WC_SUCCESS, SD_SOFT_BLAME_NONE, NULL, 0, 1);
}

static void soft_destroy(struct sd_qp *qp)
{
    if (!qp)
        return;
    sd_soft_qp_fail(qp, SD_WC_FLUSHED, SD_SOFT_BLAME_NONE);
    uint64_t deadline = sd_now_ms() + DESTROY_DRAIN_MS;
    while (qp->tail && !sd_soft_tx_drain_tail(qp)) {
        struct pollfd p = {.fd = qp->fd, .events = POLLOUT};
        int left = sd_ms_until(deadline);
        if (left == 0 || poll(&p, 1, left) <= 0)
            break;
    }
    /* Input left unread would make close() reset the connection (RFC 1122 4.2.2.13). */
    while (qp->state != SD_SOFT_QP_CLOSED &&
           recv(qp->fd, qp->rx.buf, SD_SOFT_RX_BUF, MSG_DONTWAIT) > 0)
        ;
    free(qp->tail);
    close(qp->fd);
    sd_soft_ring_free(&qp->sq);
    sd_soft_ring_free(&qp->rq);
    sd_soft_ring_free(&qp->orq);
    sd_soft_ring_free(&qp->irq);
    sd_soft_ring_free(&qp->cq);
    sd_soft_mem_free(&qp->mem);
    free(qp->rx.buf);
    free(qp);
}

const struct sd_provider_ops sd_soft_provider = {
    .name = "soft",
    .remote_invalidation = 1,
    .fds_per_qp = 1,
    .is_iwarp = soft_is_iwarp,
    .connect = sd_soft_connect,
    .listen = sd_soft_listen,
    .listener_fd = sd_soft_listener_fd,
    .listener_addr = soft_listener_addr,
    .accept = sd_soft_accept,
    .listener_close = sd_soft_listener_close,
    .reg_mr = sd_soft_reg_mr,
    .dereg_mr = sd_soft_dereg_mr,
    .post_recv = sd_soft_post_recv,
    .post_send = sd_soft_post_send,
    .post_write = sd_soft_post_write,
    .post_read = sd_soft_post_read,
    .fd = soft_fd,
    .poll_events = soft_poll_events,
    .progress = soft_progress,
    .poll_cq = sd_soft_poll_cq,
    .readable = soft_readable,
    .disconnect = soft_disconnect,
    .destroy = soft_destroy,
};
