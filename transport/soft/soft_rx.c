/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/soft/soft_rx.c — receive side: posting receives, parsing the byte stream
 * into FPDUs (split or coalesced, RFC 5044 4), checking every DDP/RDMAP header before
 * a byte is placed (RFC 5041 5, RFC 5040 5-6), copying payload out of the stream buffer
 * into posted receives, registered memory or Read sinks, queueing inbound Read Requests,
 * and answering violations with a Terminate. */
#include "soft_qp.h"
#include "log.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#define RX_BUDGET (16u << 20)  /* bytes per progress call, so transmit gets its turn */

/* Payload bytes a Terminate carries after its DDP header: control and at most the
 * offending DDP segment length and headers (RFC 5040 4.8). */
#define TERM_PAYLOAD_MAX (RDMAP_TERM_MAX_LEN - DDP_UNTAGGED_HDR_LEN)

int sd_soft_post_recv(struct sd_qp *qp, uint64_t wr_id, const struct sd_sge *sge)
{
    if (!sd_soft_qp_up(qp))
        return -ENOTCONN;
    if (sd_soft_mem_check_local(&qp->mem, sge, SD_ACCESS_LOCAL_WRITE) != 0) {
        sd_warn("soft-iWARP: receive buffer is outside a writable registration");
        return -EINVAL;
    }
    struct sd_soft_rwr *r = sd_soft_ring_push(&qp->rq);
    if (!r)
        return -ENOMEM;
    *r = (struct sd_soft_rwr){.wr_id = wr_id, .addr = sge->addr, .length = sge->length};
    return 0;
}

static void term(struct sd_qp *qp, uint8_t layer, uint8_t etype, uint8_t ecode)
{
    sd_soft_qp_terminate(qp, layer, etype, ecode, SD_WC_FATAL, SD_SOFT_BLAME_NONE);
}

/* RFC 5040 7.1 / RFC 5041 7.2: the Terminate for a failed tagged access. */
static void term_tagged(struct sd_qp *qp, enum sd_soft_mem_check c, int read_req)
{
    if (c == SD_SOFT_MEM_RIGHTS)
        term(qp, TERM_LAYER_RDMAP, RDMAP_ETYPE_REMOTE_PROT, RDMAP_ECODE_ACCESS_RIGHTS);
    else if (read_req)
        term(qp, TERM_LAYER_RDMAP, RDMAP_ETYPE_REMOTE_PROT,
             c == SD_SOFT_MEM_BOUNDS ? RDMAP_ECODE_BASE_BOUNDS : RDMAP_ECODE_INVALID_STAG);
    else
        term(qp, TERM_LAYER_DDP, DDP_ETYPE_TAGGED,
             c == SD_SOFT_MEM_BOUNDS ? DDP_ECODE_T_BASE_BOUNDS : DDP_ECODE_T_INVALID_STAG);
}

static void term_untagged(struct sd_qp *qp, uint8_t ecode)
{
    term(qp, TERM_LAYER_DDP, DDP_ETYPE_UNTAGGED, ecode);
}

/* Checks the header just parsed and decides where its payload goes (rx->dst; NULL
 * for none). Returns 0, or -1 after terminating the connection. */
static int rx_accept_hdr(struct sd_qp *qp)
{
    struct sd_soft_rx *rx = &qp->rx;
    const struct sd_iw_hdr *h = &rx->hdr;
    uint32_t len = rx->payload_len;
    rx->dst = NULL;
    if (h->ddp_version != DDP_VERSION) {
        term(qp, TERM_LAYER_DDP, h->tagged ? DDP_ETYPE_TAGGED : DDP_ETYPE_UNTAGGED,
             h->tagged ? DDP_ECODE_T_VERSION : DDP_ECODE_U_VERSION);
        return -1;
    }
    if (h->rdmap_version != RDMAP_VERSION) {
        term(qp, TERM_LAYER_RDMAP, RDMAP_ETYPE_REMOTE_OP, RDMAP_ECODE_VERSION);
        return -1;
    }
    int want_tagged = h->opcode == RDMAP_WRITE || h->opcode == RDMAP_READ_RESP;
    if (h->opcode > RDMAP_TERMINATE || h->tagged != want_tagged) {
        term(qp, TERM_LAYER_RDMAP, RDMAP_ETYPE_REMOTE_OP, RDMAP_ECODE_OPCODE);
        return -1;
    }
    if (!h->tagged) {
        /* RFC 5041 5.3: queue number, MSN and MO of every untagged segment. */
        uint32_t qn = h->opcode == RDMAP_READ_REQ   ? RDMAP_QN_READ
                      : h->opcode == RDMAP_TERMINATE ? RDMAP_QN_TERMINATE
                                                     : RDMAP_QN_SEND;
        if (h->qn != qn) {
            term_untagged(qp, DDP_ECODE_U_INVALID_QN);
            return -1;
        }
        if (qn != RDMAP_QN_TERMINATE && h->msn != rx->msn[qn]) {
            term_untagged(qp, DDP_ECODE_U_INVALID_MSN);
            return -1;
        }
        uint32_t mo = qn == RDMAP_QN_SEND ? rx->send_mo : 0;
        if (h->mo != mo || (qn != RDMAP_QN_SEND && !h->last)) {
            term_untagged(qp, DDP_ECODE_U_INVALID_MO);
            return -1;
        }
    }
    switch (h->opcode) {
    case RDMAP_WRITE: {
        if (len == 0)           /* zero-length Write (e.g. an RFC 6581 RTR): no access */
            return 0;
        enum sd_soft_mem_check c =
            sd_soft_mem_check(&qp->mem, h->stag, h->to, len, SD_ACCESS_REMOTE_WRITE, &rx->dst);
        if (c != SD_SOFT_MEM_OK) {
            sd_warn("soft-iWARP: peer RDMA Write of %u bytes to STag 0x%08x offset 0x%llx refused",
                    len, h->stag, (unsigned long long)h->to);
            term_tagged(qp, c, 0);
            return -1;
        }
        return 0;
    }
    case RDMAP_READ_RESP: {
        if (!qp->orq.count) {
            term(qp, TERM_LAYER_RDMAP, RDMAP_ETYPE_REMOTE_OP, RDMAP_ECODE_OPCODE);
            return -1;
        }
        struct sd_soft_orq *o = sd_soft_ring_at(&qp->orq, 0);
        if (h->stag != o->sink_stag) {
            term(qp, TERM_LAYER_DDP, DDP_ETYPE_TAGGED, DDP_ECODE_T_INVALID_STAG);
            return -1;
        }
        if (h->to != o->sink_to + o->received || len > o->length - o->received) {
            term(qp, TERM_LAYER_DDP, DDP_ETYPE_TAGGED, DDP_ECODE_T_BASE_BOUNDS);
            return -1;
        }
        rx->dst = o->dst + o->received;
        return 0;
    }
    case RDMAP_READ_REQ: {
        if (len != 0) {
            term_untagged(qp, DDP_ECODE_U_TOO_LONG);
            return -1;
        }
        if (qp->irq.count >= qp->ird) {            /* RFC 5040 6.1: beyond our IRD */
            sd_warn("soft-iWARP: peer exceeded the negotiated IRD %u", qp->ird);
            term(qp, TERM_LAYER_RDMAP, RDMAP_ETYPE_REMOTE_OP, RDMAP_ECODE_CATASTROPHIC_STREAM);
            return -1;
        }
        if (h->rr_size == 0)    /* zero-length Read (e.g. an RFC 6581 RTR): no access */
            return 0;
        uint8_t *src;
        enum sd_soft_mem_check c = sd_soft_mem_check(&qp->mem, h->rr_src_stag, h->rr_src_to,
                                                     h->rr_size, SD_ACCESS_REMOTE_READ, &src);
        if (c != SD_SOFT_MEM_OK) {
            sd_warn("soft-iWARP: peer RDMA Read of %u bytes from STag 0x%08x offset 0x%llx refused",
                    h->rr_size, h->rr_src_stag, (unsigned long long)h->rr_src_to);
            term_tagged(qp, c, 1);
            return -1;
        }
        return 0;
    }
    case RDMAP_TERMINATE:
        if (len < RDMAP_TERM_CTRL_LEN || len > TERM_PAYLOAD_MAX) {
            sd_warn("soft-iWARP: malformed Terminate from peer (%u bytes)", len);
            sd_soft_qp_fail(qp, SD_WC_REMOTE_OP, SD_SOFT_BLAME_SEND);
            return -1;
        }
        return 0;
    default: {                  /* the Send family */
        if (!qp->rq.count) {
            sd_warn("soft-iWARP: peer sent a message but no receive is posted");
            term_untagged(qp, DDP_ECODE_U_NO_BUFFER);
            return -1;
        }
        struct sd_soft_rwr *r = sd_soft_ring_at(&qp->rq, 0);
        if (len > r->length - rx->send_mo) {
            sd_warn("soft-iWARP: peer message larger than the posted receive (%u bytes)",
                    r->length);
            sd_soft_qp_terminate(qp, TERM_LAYER_DDP, DDP_ETYPE_UNTAGGED, DDP_ECODE_U_TOO_LONG,
                                 SD_WC_LOCAL_LENGTH, SD_SOFT_BLAME_RECV);
            return -1;
        }
        rx->dst = r->addr + rx->send_mo;
        return 0;
    }
    }
}

static enum sd_wc_status status_of_terminate(const struct sd_iw_term *t)
{
    if ((t->layer == TERM_LAYER_RDMAP && t->etype == RDMAP_ETYPE_REMOTE_PROT) ||
        (t->layer == TERM_LAYER_DDP && t->etype == DDP_ETYPE_TAGGED))
        return SD_WC_REMOTE_ACCESS;
    return SD_WC_REMOTE_OP;
}

/* The FPDU arrived whole and intact: apply its effect. */
static void rx_commit(struct sd_qp *qp)
{
    struct sd_soft_rx *rx = &qp->rx;
    const struct sd_iw_hdr *h = &rx->hdr;
    switch (h->opcode) {
    case RDMAP_WRITE:
        return;
    case RDMAP_READ_RESP: {
        struct sd_soft_orq *o = sd_soft_ring_at(&qp->orq, 0);
        o->received += rx->payload_len;
        if (!h->last)
            return;
        if (o->received != o->length) {
            sd_warn("soft-iWARP: Read Response ended after %u of %u bytes", o->received,
                    o->length);
            term(qp, TERM_LAYER_RDMAP, RDMAP_ETYPE_REMOTE_OP, RDMAP_ECODE_CATASTROPHIC_STREAM);
            return;
        }
        sd_soft_cq_push(qp, o->wr_id, SD_WC_RDMA_READ, SD_WC_SUCCESS, o->length);
        sd_soft_ring_pop(&qp->orq);
        return;
    }
    case RDMAP_READ_REQ: {
        struct sd_soft_irq *q = sd_soft_ring_push(&qp->irq);
        if (!q) {
            sd_error("soft-iWARP: out of memory queueing an inbound RDMA Read");
            sd_soft_qp_fail(qp, SD_WC_FATAL, SD_SOFT_BLAME_NONE);
            return;
        }
        *q = (struct sd_soft_irq){.src_stag = h->rr_src_stag, .src_to = h->rr_src_to,
                                  .length = h->rr_size, .sink_stag = h->rr_sink_stag,
                                  .sink_to = h->rr_sink_to};
        rx->msn[RDMAP_QN_READ]++;
        return;
    }
    case RDMAP_TERMINATE: {
        struct sd_iw_term t;
        sd_iw_term_decode(rx->dst, &t);
        sd_warn("soft-iWARP: peer terminated the connection: %s", sd_iw_term_str(&t));
        sd_soft_qp_fail(qp, status_of_terminate(&t), SD_SOFT_BLAME_SEND);
        return;
    }
    default: {
        rx->send_mo += rx->payload_len;
        if (!h->last)
            return;
        struct sd_soft_rwr r = *(struct sd_soft_rwr *)sd_soft_ring_at(&qp->rq, 0);
        int inv = h->opcode == RDMAP_SEND_INV || h->opcode == RDMAP_SEND_SE_INV;
        if (inv && sd_soft_mem_invalidate(&qp->mem, h->inv_stag) != 0) {   /* RFC 5040 5.3 */
            sd_warn("soft-iWARP: peer asked to invalidate STag 0x%08x, which is not valid",
                    h->inv_stag);
            term(qp, TERM_LAYER_RDMAP, RDMAP_ETYPE_REMOTE_PROT, RDMAP_ECODE_CANNOT_INVALIDATE);
            return;
        }
        sd_soft_ring_pop(&qp->rq);
        struct sd_wc *wc = sd_soft_cq_push(qp, r.wr_id, SD_WC_RECV, SD_WC_SUCCESS, rx->send_mo);
        if (wc && inv) {
            wc->with_invalidate = 1;
            wc->invalidated_rkey = h->inv_stag;
        }
        rx->msn[RDMAP_QN_SEND]++;
        rx->send_mo = 0;
        return;
    }
    }
}

/* Parses what the buffer holds; stops when it needs more bytes or the connection
 * failed. */
static void rx_parse(struct sd_qp *qp)
{
    struct sd_soft_rx *rx = &qp->rx;
    while (sd_soft_qp_up(qp)) {
        size_t avail = rx->end - rx->start;
        const uint8_t *p = rx->buf + rx->start;
        if (rx->state == SD_SOFT_RX_HDR) {
            if (avail < MPA_LEN_SIZE + 2)
                break;
            rx->ulpdu_len = sd_iw_get16(p);
            rx->hdr_len = (uint32_t)sd_iw_hdr_len(p + MPA_LEN_SIZE);
            if (rx->ulpdu_len < rx->hdr_len) {
                sd_warn("soft-iWARP: FPDU of %u bytes cannot hold its %u-byte header",
                        rx->ulpdu_len, rx->hdr_len);
                sd_soft_qp_terminate(qp, TERM_LAYER_LLP, 0, LLP_ECODE_FPDU_START, SD_WC_FATAL,
                                     SD_SOFT_BLAME_NONE);
                break;
            }
            if (avail < MPA_LEN_SIZE + rx->hdr_len)
                break;
            memcpy(rx->raw, p, MPA_LEN_SIZE + rx->hdr_len);
            sd_iw_hdr_decode(p + MPA_LEN_SIZE, &rx->hdr);
            rx->payload_len = rx->ulpdu_len - rx->hdr_len;
            rx->payload_done = 0;
            rx->trailer_len = sd_iw_mpa_pad(rx->ulpdu_len) + MPA_CRC_SIZE;
            if (qp->crc)
                rx->crc = sd_crc32c_update(SD_CRC32C_INIT, p, MPA_LEN_SIZE + rx->hdr_len);
            rx->start += MPA_LEN_SIZE + rx->hdr_len;
            if (rx_accept_hdr(qp) != 0)
                break;
            if (rx->hdr.opcode == RDMAP_TERMINATE)
                rx->dst = rx->raw + MPA_LEN_SIZE + rx->hdr_len;   /* kept for the commit */
            qp->tx_gated = 0;     /* the peer's first FPDU opens our transmit side */
            rx->state = SD_SOFT_RX_PAYLOAD;
        } else if (rx->state == SD_SOFT_RX_PAYLOAD) {
            size_t n = rx->payload_len - rx->payload_done;
            if (n > avail)
                n = avail;
            if (n) {
                memcpy(rx->dst + rx->payload_done, p, n);
                if (qp->crc)
                    rx->crc = sd_crc32c_update(rx->crc, p, n);
                rx->start += n;
                rx->payload_done += (uint32_t)n;
            }
            if (rx->payload_done < rx->payload_len)
                break;
            rx->state = SD_SOFT_RX_TRAILER;
        } else {
            if (avail < rx->trailer_len)
                break;
            uint32_t pad = rx->trailer_len - MPA_CRC_SIZE;
            if (qp->crc) {
                uint32_t crc = ~sd_crc32c_update(rx->crc, p, pad);
                if (crc != sd_iw_get_crc(p + pad)) {                   /* RFC 5044 8 */
                    sd_warn("soft-iWARP: MPA CRC error (got 0x%08x, computed 0x%08x)",
                            sd_iw_get_crc(p + pad), crc);
                    sd_soft_qp_terminate(qp, TERM_LAYER_LLP, 0, LLP_ECODE_CRC, SD_WC_FATAL,
                                         SD_SOFT_BLAME_NONE);
                    break;
                }
            }
            rx->start += rx->trailer_len;
            rx->state = SD_SOFT_RX_HDR;
            rx_commit(qp);
        }
    }
    if (rx->start == rx->end)
        rx->start = rx->end = 0;
}

/* The next read: as many bytes as buf has room for. *asked is the room offered. */
static ssize_t rx_read(struct sd_qp *qp, size_t *asked)
{
    struct sd_soft_rx *rx = &qp->rx;

    if (rx->start == rx->end) {
        rx->start = rx->end = 0;
    } else if (rx->end == SD_SOFT_RX_BUF) {
        memmove(rx->buf, rx->buf + rx->start, rx->end - rx->start);
        rx->end -= rx->start;
        rx->start = 0;
    }
    *asked = SD_SOFT_RX_BUF - rx->end;
    return recv(qp->fd, rx->buf + rx->end, *asked, MSG_DONTWAIT);
}

enum sd_soft_use sd_soft_rx_uses(const struct sd_qp *qp, const uint8_t *base, size_t len)
{
    const struct sd_soft_rx *rx = &qp->rx;

    if (rx->state == SD_SOFT_RX_PAYLOAD && rx->payload_done < rx->payload_len && rx->dst &&
        rx->dst >= base && rx->dst < base + len)
        return rx->hdr.opcode == RDMAP_WRITE ? SD_SOFT_USED_BY_PEER : SD_SOFT_USED_LOCALLY;
    for (size_t i = 0; i < qp->orq.count; i++) {
        const struct sd_soft_orq *o = sd_soft_ring_at(&qp->orq, i);

        if (sd_soft_overlaps(o->dst, o->length, base, len)) /* a zero-length Read places nothing */
            return SD_SOFT_USED_LOCALLY;
    }
    for (size_t i = 0; i < qp->rq.count; i++) {
        const struct sd_soft_rwr *w = sd_soft_ring_at(&qp->rq, i);

        if (sd_soft_overlaps(w->addr, w->length, base, len))
            return SD_SOFT_USED_LOCALLY;
    }
    return SD_SOFT_UNUSED;
}

void sd_soft_rx_progress(struct sd_qp *qp)
{
    size_t budget = RX_BUDGET;
    if (!qp->rx_hinted)
        qp->rx_drained = 0;                  /* no readiness reports: always try a recv */
    while (qp->state != SD_SOFT_QP_CLOSED) {
        rx_parse(qp);
        if (!sd_soft_qp_up(qp))
            qp->rx.start = qp->rx.end = 0;   /* after a failure input is discarded */
        if (!budget || qp->rx_drained)
            return;
        size_t asked;
        ssize_t n = rx_read(qp, &asked);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            qp->rx_drained = 1;
            return;
        }
        if (n <= 0) {
            int clean = n == 0 && qp->rx.state == SD_SOFT_RX_HDR && qp->rx.end == 0;
            if (sd_soft_qp_up(qp))
                sd_info("soft-iWARP: connection closed by peer%s%s", n ? ": " : "",
                        n ? strerror(errno) : (clean ? "" : " in the middle of an FPDU"));
            sd_soft_qp_peer_closed(qp, clean ? SD_WC_FLUSHED : SD_WC_FATAL);
            return;
        }
        budget = (size_t)n >= budget ? 0 : budget - (size_t)n;
        qp->rx.end += (size_t)n;
        if ((size_t)n < asked)
            qp->rx_drained = 1; /* the socket had no more: parse, and no recv for EAGAIN */
    }
}
