/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/soft/soft_tx.c — transmit side: posting Sends, RDMA Writes and Read
 * Requests, answering inbound Read Requests, segmenting every message into FPDUs no
 * larger than the MSS allows (RFC 5044 5: MULPDU; RFC 5041 5: DDP segments) and
 * writing batches of them with one non-blocking sendmsg. Payload is gathered from
 * the caller's buffers, never copied, except when a failure cuts an FPDU in half. */
#include "soft_qp.h"
#include "log.h"
#include "sd_libc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#define TX_IOV_MAX 1024   /* IOV_MAX on Linux */

static enum sd_wc_opcode wc_opcode_of(uint8_t rdmap_opcode)
{
    switch (rdmap_opcode) {
    case RDMAP_WRITE: return SD_WC_RDMA_WRITE;
    case RDMAP_READ_REQ: return SD_WC_RDMA_READ;
    default: return SD_WC_SEND;
    }
}

static struct sd_soft_swr *sq_push(struct sd_qp *qp, const struct sd_sge *sge, int nsge,
                                   int access, int *err)
{
    *err = 0;
    if (!sd_soft_qp_up(qp)) {
        *err = -ENOTCONN;
        return NULL;
    }
    if (nsge < 0 || nsge > SD_SOFT_MAX_SGE || (nsge && !sge)) {
        *err = -EINVAL;
        return NULL;
    }
    uint64_t total = 0;
    for (int i = 0; i < nsge; i++) {
        if (sd_soft_mem_check_local(&qp->mem, &sge[i], access) != 0) {
            sd_warn("soft-iWARP: work request SGE %d is outside a valid registration", i);
            *err = -EINVAL;
            return NULL;
        }
        total += sge[i].length;
    }
    if (total > UINT32_MAX) {
        *err = -EMSGSIZE;
        return NULL;
    }
    struct sd_soft_swr *w = sd_soft_ring_push(&qp->sq);
    if (!w) {
        *err = -ENOMEM;
        return NULL;
    }
    *w = (struct sd_soft_swr){.nsge = (uint8_t)nsge, .length = (uint32_t)total, .signaled = 1};
    for (int i = 0; i < nsge; i++)
        w->sge[i] = (struct iovec){.iov_base = sge[i].addr, .iov_len = sge[i].length};
    return w;
}

int sd_soft_post_send(struct sd_qp *qp, uint64_t wr_id, const struct sd_sge *sge, int nsge,
                      uint32_t invalidate_rkey, int signaled)
{
    int err;
    struct sd_soft_swr *w = sq_push(qp, sge, nsge, 0, &err);
    if (!w)
        return err;
    w->wr_id = wr_id;
    w->opcode = invalidate_rkey ? RDMAP_SEND_INV : RDMAP_SEND;   /* RFC 5040 5.3 */
    w->rstag = invalidate_rkey;
    w->signaled = !!signaled;
    return 0;
}

int sd_soft_post_write(struct sd_qp *qp, uint64_t wr_id, const struct sd_sge *local,
                       uint32_t rkey, uint64_t raddr)
{
    int err;
    struct sd_soft_swr *w = sq_push(qp, local, 1, 0, &err);
    if (!w)
        return err;
    w->wr_id = wr_id;
    w->opcode = RDMAP_WRITE;
    w->rstag = rkey;
    w->raddr = raddr;
    return 0;
}

int sd_soft_post_read(struct sd_qp *qp, uint64_t wr_id, const struct sd_sge *local,
                      uint32_t rkey, uint64_t raddr)
{
    if (sd_soft_qp_up(qp) && qp->ord == 0) {
        sd_warn("soft-iWARP: RDMA Read posted but the connection's ORD is 0");
        return -EINVAL;
    }
    int err;
    struct sd_soft_swr *w = sq_push(qp, local, 1, SD_ACCESS_LOCAL_WRITE, &err);
    if (!w)
        return err;
    w->wr_id = wr_id;
    w->opcode = RDMAP_READ_REQ;
    w->rstag = rkey;
    w->raddr = raddr;
    w->lstag = local->mr->lkey;
    return 0;
}

/* Payload bytes per FPDU after a header of hdr_len: the FPDU fits max_fpdu and the
 * 16-bit ULPDU length; a multiple of 4 so only a message's last FPDU needs a pad. */
static uint32_t max_payload(const struct sd_qp *qp, size_t hdr_len)
{
    uint32_t room = qp->max_fpdu - MPA_LEN_SIZE - (uint32_t)hdr_len - MPA_CRC_SIZE;
    if (room > MPA_MAX_ULPDU - hdr_len)
        room = MPA_MAX_ULPDU - (uint32_t)hdr_len;
    return room & ~3u;
}

/* Whether the next message may be segmented now: inbound Reads are answered first;
 * a Read Request waits while ORD Reads are outstanding (RFC 5040 6.2). */
static int tx_ready(const struct sd_qp *qp)
{
    if (qp->tx_gated || !sd_soft_qp_up(qp))
        return 0;
    if (qp->txm.active || qp->irq.count)
        return 1;
    if (!qp->sq.count)
        return 0;
    const struct sd_soft_swr *w = sd_soft_ring_at(&qp->sq, 0);
    return w->opcode != RDMAP_READ_REQ || qp->orq.count < qp->ord;
}

enum sd_soft_use sd_soft_tx_uses(const struct sd_qp *qp, const uint8_t *base, size_t len,
                                 uint32_t stag)
{
    for (size_t i = 0; i < qp->irq.count; i++)
        if (((const struct sd_soft_irq *)sd_soft_ring_at(&qp->irq, i))->src_stag == stag)
            return SD_SOFT_USED_BY_PEER;
    for (unsigned i = 0; i < qp->slot_count; i++) {
        const struct sd_soft_fpdu *f = &qp->slot[(qp->slot_head + i) % SD_SOFT_TX_SLOTS];

        for (unsigned k = 0; k < f->niov; k++)
            if (sd_soft_overlaps(f->iov[k].iov_base, f->iov[k].iov_len, base, len))
                return SD_SOFT_USED_LOCALLY;
    }
    for (size_t i = 0; i < qp->sq.count; i++) {
        const struct sd_soft_swr *w = sd_soft_ring_at(&qp->sq, i);

        for (unsigned k = 0; k < w->nsge; k++)
            if (sd_soft_overlaps(w->sge[k].iov_base, w->sge[k].iov_len, base, len))
                return SD_SOFT_USED_LOCALLY;
    }
    return SD_SOFT_UNUSED;
}

int sd_soft_tx_pending(const struct sd_qp *qp)
{
    return qp->slot_count || tx_ready(qp);
}

static void fpdu_seal(const struct sd_qp *qp, struct sd_soft_fpdu *f, uint32_t ulpdu_len)
{
    sd_iw_put16(f->hdr, (uint16_t)ulpdu_len);
    uint32_t pad = sd_iw_mpa_pad(ulpdu_len);
    memset(f->trailer, 0, pad);
    uint32_t crc = 0;
    if (qp->crc) {                                   /* RFC 5044 4.4 */
        uint32_t s = sd_crc32c_update(SD_CRC32C_INIT, f->hdr, f->hdr_len);
        for (unsigned i = 0; i < f->niov; i++)
            s = sd_crc32c_update(s, f->iov[i].iov_base, f->iov[i].iov_len);
        crc = ~sd_crc32c_update(s, f->trailer, pad);
    }
    sd_iw_put_crc(f->trailer + pad, crc);
    f->trailer_len = (uint8_t)(pad + MPA_CRC_SIZE);
    f->len = MPA_LEN_SIZE + ulpdu_len + pad + MPA_CRC_SIZE;
}

/* Segments the next FPDU of the current message into slot f. Returns 0, or -1 after
 * failing the connection (out of memory, a Read source revoked). */
static int build_fpdu(struct sd_qp *qp, struct sd_soft_fpdu *f)
{
    struct sd_soft_txmsg *m = &qp->txm;
    if (!m->active)
        *m = (struct sd_soft_txmsg){.active = 1, .from_irq = qp->irq.count > 0};
    struct sd_iw_hdr h = {.ddp_version = DDP_VERSION, .rdmap_version = RDMAP_VERSION};
    struct sd_soft_irq *rr = NULL;
    struct sd_soft_swr *w = NULL;
    struct iovec one;
    const struct iovec *sg;
    uint32_t total;
    if (m->from_irq) {
        rr = sd_soft_ring_at(&qp->irq, 0);
        h.tagged = 1;                                  /* RFC 5040 4.5 */
        h.opcode = RDMAP_READ_RESP;
        h.stag = rr->sink_stag;
        h.to = rr->sink_to + m->done;
        total = rr->length;
        /* The source was checked when the Request arrived; check it again for every
         * FPDU, so a registration revoked meanwhile is never read (RFC 5040 6.4). */
        uint8_t *src = NULL;
        if (total && sd_soft_mem_check(&qp->mem, rr->src_stag, rr->src_to, total,
                                       SD_ACCESS_REMOTE_READ, &src) != SD_SOFT_MEM_OK) {
            sd_warn("soft-iWARP: STag 0x%08x was revoked while the peer was reading it",
                    rr->src_stag);
            sd_soft_qp_terminate(qp, TERM_LAYER_RDMAP, RDMAP_ETYPE_CATASTROPHIC,
                                 RDMAP_ECODE_UNSPECIFIED, SD_WC_FATAL, SD_SOFT_BLAME_NONE);
            return -1;
        }
        one = (struct iovec){.iov_base = src, .iov_len = total};
        sg = &one;
        /* resume m->done bytes into the source */
        m->sge = 0;
        m->sge_off = m->done;
    } else {
        w = sd_soft_ring_at(&qp->sq, 0);
        h.opcode = w->opcode;
        sg = w->sge;
        total = w->length;
        if (w->opcode == RDMAP_WRITE) {                /* RFC 5040 4.3 */
            h.tagged = 1;
            h.stag = w->rstag;
            h.to = w->raddr + m->done;
        } else if (w->opcode == RDMAP_READ_REQ) {      /* RFC 5040 4.4 */
            h.qn = RDMAP_QN_READ;
            h.msn = qp->tx_msn[RDMAP_QN_READ];
            h.rr_sink_stag = w->lstag;
            h.rr_sink_to = (uintptr_t)w->sge[0].iov_base;
            h.rr_size = w->length;
            h.rr_src_stag = w->rstag;
            h.rr_src_to = w->raddr;
            total = 0;                                 /* no payload of its own */
        } else {                                       /* RFC 5040 4.6-4.7 */
            h.qn = RDMAP_QN_SEND;
            h.msn = qp->tx_msn[RDMAP_QN_SEND];
            h.mo = m->done;
            h.inv_stag = w->rstag;
        }
    }
    uint32_t chunk = total - m->done;
    size_t hdr_len = h.tagged ? DDP_TAGGED_HDR_LEN
                              : (h.opcode == RDMAP_READ_REQ ? RDMAP_READ_REQ_HDR_LEN
                                                            : DDP_UNTAGGED_HDR_LEN);
    if (chunk > max_payload(qp, hdr_len))
        chunk = max_payload(qp, hdr_len);
    h.last = m->done + chunk == total;
    f->hdr_len = (uint8_t)(MPA_LEN_SIZE + sd_iw_hdr_encode(&h, f->hdr + MPA_LEN_SIZE));
    f->niov = 0;
    f->wc_opcode = -1;
    f->signaled = 0;
    for (uint32_t left = chunk; left;) {
        const struct iovec *s = &sg[m->sge];
        uint32_t n = (uint32_t)s->iov_len - m->sge_off;
        if (n > left)
            n = left;
        f->iov[f->niov++] = (struct iovec){.iov_base = (uint8_t *)s->iov_base + m->sge_off,
                                           .iov_len = n};
        left -= n;
        m->sge_off += n;
        if (m->sge_off == s->iov_len) {
            m->sge++;
            m->sge_off = 0;
        }
    }
    m->done += chunk;
    fpdu_seal(qp, f, (uint32_t)(f->hdr_len - MPA_LEN_SIZE) + chunk);
    if (!h.last)
        return 0;
    m->active = 0;
    if (rr) {
        sd_soft_ring_pop(&qp->irq);
        return 0;
    }
    if (w->opcode == RDMAP_READ_REQ) {
        struct sd_soft_orq *o = sd_soft_ring_push(&qp->orq);
        if (!o) {
            sd_error("soft-iWARP: out of memory tracking an RDMA Read");
            sd_soft_qp_fail(qp, SD_WC_FATAL, SD_SOFT_BLAME_SEND);
            return -1;
        }
        *o = (struct sd_soft_orq){.wr_id = w->wr_id, .dst = w->sge[0].iov_base,
                                  .length = w->length, .sink_stag = w->lstag,
                                  .sink_to = (uintptr_t)w->sge[0].iov_base};
        qp->tx_msn[RDMAP_QN_READ]++;
    } else {
        if (w->opcode != RDMAP_WRITE)
            qp->tx_msn[RDMAP_QN_SEND]++;
        f->wc_opcode = (int8_t)wc_opcode_of(w->opcode);
        f->signaled = w->signaled;
        f->wr_id = w->wr_id;
    }
    sd_soft_ring_pop(&qp->sq);
    return 0;
}

/* The pieces of FPDU f on the wire, skipping its first skip bytes; appends at most
 * room iovecs to out and returns how many, or -1 when they do not all fit. */
static int fpdu_pieces(const struct sd_soft_fpdu *f, size_t skip, struct iovec *out, int room)
{
    struct iovec all[SD_SOFT_MAX_SGE + 2];
    int n = 0, k = 0;
    all[n++] = (struct iovec){.iov_base = (void *)f->hdr, .iov_len = f->hdr_len};
    for (unsigned i = 0; i < f->niov; i++)
        all[n++] = f->iov[i];
    all[n++] = (struct iovec){.iov_base = (void *)f->trailer, .iov_len = f->trailer_len};
    for (int i = 0; i < n; i++) {
        if (skip >= all[i].iov_len) {
            skip -= all[i].iov_len;
            continue;
        }
        if (k == room)
            return -1;
        out[k++] = (struct iovec){.iov_base = (uint8_t *)all[i].iov_base + skip,
                                  .iov_len = all[i].iov_len - skip};
        skip = 0;
    }
    return k;
}

static void slot_done(struct sd_qp *qp)
{
    struct sd_soft_fpdu *f = &qp->slot[qp->slot_head];
    if (f->wc_opcode >= 0 && f->signaled)
        sd_soft_cq_push(qp, f->wr_id, (enum sd_wc_opcode)f->wc_opcode, SD_WC_SUCCESS, 0);
    qp->slot_head = (qp->slot_head + 1) % SD_SOFT_TX_SLOTS;
    qp->slot_count--;
    qp->slot_sent = 0;
}

/* Writes staged FPDUs. Returns 1 when all went out, 0 when the socket is full or
 * the connection failed. */
static int tx_write(struct sd_qp *qp)
{
    struct iovec iov[TX_IOV_MAX];
    int n = 0;
    for (unsigned i = 0; i < qp->slot_count; i++) {
        const struct sd_soft_fpdu *f = &qp->slot[(qp->slot_head + i) % SD_SOFT_TX_SLOTS];
        int k = fpdu_pieces(f, i == 0 ? qp->slot_sent : 0, iov + n, TX_IOV_MAX - n);
        if (k < 0)
            break;
        n += k;
    }
    struct msghdr msg = {.msg_iov = iov, .msg_iovlen = (size_t)n};
    ssize_t w;
    do
        w = sd_libc()->sendmsg(qp->fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    while (w < 0 && errno == EINTR);
    if (w < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK)
            return 0;
        sd_warn("soft-iWARP: send failed: %s", strerror(errno));
        sd_soft_qp_fail(qp, SD_WC_FATAL, SD_SOFT_BLAME_NONE);
        return 0;
    }
    size_t left = (size_t)w;
    while (left && qp->slot_count) {
        const struct sd_soft_fpdu *f = &qp->slot[qp->slot_head];
        size_t rest = f->len - qp->slot_sent;
        if (left < rest) {
            qp->slot_sent += left;
            break;
        }
        left -= rest;
        slot_done(qp);
    }
    return qp->slot_count == 0;
}

void sd_soft_tx_progress(struct sd_qp *qp)
{
    while (sd_soft_qp_up(qp)) {
        while (qp->slot_count < SD_SOFT_TX_SLOTS && tx_ready(qp)) {
            struct sd_soft_fpdu *f =
                &qp->slot[(qp->slot_head + qp->slot_count) % SD_SOFT_TX_SLOTS];
            if (build_fpdu(qp, f) != 0)
                return;
            qp->slot_count++;
        }
        if (!qp->slot_count || !tx_write(qp))
            return;
    }
}

size_t sd_soft_tx_build_terminate(const struct sd_qp *qp, const struct sd_iw_term *t,
                                  uint8_t out[SD_SOFT_TERM_FPDU_MAX])
{
    /* RFC 5040 4.8: untagged, QN 2, MSN 1 (one Terminate per stream), MO 0. */
    struct sd_iw_hdr h = {.last = 1, .ddp_version = DDP_VERSION, .rdmap_version = RDMAP_VERSION,
                          .opcode = RDMAP_TERMINATE, .qn = RDMAP_QN_TERMINATE, .msn = 1};
    uint8_t *u = out + MPA_LEN_SIZE;
    size_t n = sd_iw_hdr_encode(&h, u);
    sd_iw_term_encode(t, u + n);
    n += RDMAP_TERM_CTRL_LEN;
    if (t->hdrct & TERM_HDRCT_D) {
        const struct sd_soft_rx *rx = &qp->rx;
        size_t copy = (t->hdrct & TERM_HDRCT_R) ? rx->hdr_len
                      : rx->hdr.tagged          ? DDP_TAGGED_HDR_LEN
                                                : DDP_UNTAGGED_HDR_LEN;
        sd_iw_put16(u + n, (uint16_t)rx->ulpdu_len);   /* DDP segment length (M) */
        memcpy(u + n + 2, rx->raw + MPA_LEN_SIZE, copy);
        n += 2 + copy;
    }
    sd_iw_put16(out, (uint16_t)n);
    uint32_t pad = sd_iw_mpa_pad((uint32_t)n);         /* 0 for every layout above */
    memset(u + n, 0, pad);
    n += MPA_LEN_SIZE + pad;
    sd_iw_put_crc(out + n, qp->crc ? sd_crc32c(out, n) : 0);
    return n + MPA_CRC_SIZE;
}

void sd_soft_tx_abort(struct sd_qp *qp, const uint8_t *term, size_t term_len,
                      void (*flush)(struct sd_qp *, uint64_t, enum sd_wc_opcode))
{
    size_t rest = 0;
    struct iovec pieces[SD_SOFT_MAX_SGE + 2];
    int np = 0;
    if (qp->slot_count && qp->slot_sent) {
        const struct sd_soft_fpdu *f = &qp->slot[qp->slot_head];
        np = fpdu_pieces(f, qp->slot_sent, pieces, SD_SOFT_MAX_SGE + 2);
        rest = f->len - qp->slot_sent;
    }
    if (rest + term_len) {
        qp->tail = malloc(rest + term_len);
        if (qp->tail) {
            size_t off = 0;
            for (int i = 0; i < np; i++) {
                memcpy(qp->tail + off, pieces[i].iov_base, pieces[i].iov_len);
                off += pieces[i].iov_len;
            }
            if (term_len)
                memcpy(qp->tail + off, term, term_len);
            qp->tail_len = rest + term_len;
            qp->tail_off = 0;
        }
    }
    for (unsigned i = 0; i < qp->slot_count; i++) {
        const struct sd_soft_fpdu *f = &qp->slot[(qp->slot_head + i) % SD_SOFT_TX_SLOTS];
        if (f->wc_opcode >= 0)
            flush(qp, f->wr_id, (enum sd_wc_opcode)f->wc_opcode);
    }
    qp->slot_count = 0;
    qp->slot_sent = 0;
    qp->txm.active = 0;
}

int sd_soft_tx_drain_tail(struct sd_qp *qp)
{
    while (qp->tail_off < qp->tail_len) {
        ssize_t w = sd_libc()->send(qp->fd, qp->tail + qp->tail_off, qp->tail_len - qp->tail_off,
                         MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return 0;
        if (w < 0)
            break;                      /* the peer is gone: nothing left to tell it */
        qp->tail_off += (size_t)w;
    }
    free(qp->tail);
    qp->tail = NULL;
    qp->tail_len = qp->tail_off = 0;
    shutdown(qp->fd, SHUT_WR);
    return 1;
}
