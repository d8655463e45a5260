/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/soft/soft_qp.h — internal state of one soft-iWARP connection, shared by
 * the provider's files: queues (soft_ring.c), STag table (soft_mem.c), completion
 * queue (soft_cq.c), transmit (soft_tx.c), receive (soft_rx.c), life cycle (its state
 * in soft_state.c, the rest in soft_provider.c) and connection setup (soft_cm.c). */
#ifndef SMBDIRECT_SOFT_QP_H
#define SMBDIRECT_SOFT_QP_H

#include "iwarp_wire.h"
#include "provider.h"
#include "sd_fsm.h"

#include <sys/uio.h>

#define SD_SOFT_MAX_SGE   8           /* per Send */
#define SD_SOFT_TX_SLOTS  128         /* FPDUs staged for one sendmsg */
#define SD_SOFT_RX_BUF    (256 * 1024)
#define SD_SOFT_MIN_FPDU  256         /* floor for the MSS-derived FPDU size */

/* ---- growable FIFO of fixed-size elements (soft_ring.c) ---- */
struct sd_soft_ring {
    unsigned char *buf;
    size_t esize, cap, head, count;
};
void sd_soft_ring_init(struct sd_soft_ring *r, size_t esize);
void *sd_soft_ring_push(struct sd_soft_ring *r);       /* NULL when out of memory */
void *sd_soft_ring_at(const struct sd_soft_ring *r, size_t i);
void sd_soft_ring_pop(struct sd_soft_ring *r);
void sd_soft_ring_free(struct sd_soft_ring *r);

/* ---- STag table (soft_mem.c) ---- */
struct sd_soft_region {
    uint8_t *base;
    size_t length;
    uint64_t addr;        /* tagged offset of base */
    uint32_t stag;        /* 0: slot free */
    int access;           /* enum sd_access */
    int valid;            /* cleared by invalidation */
};
struct sd_soft_mem {
    struct sd_soft_region *r;
    size_t n, cap;
    uint8_t next_key;
};
enum sd_soft_mem_check { SD_SOFT_MEM_OK, SD_SOFT_MEM_BAD_STAG, SD_SOFT_MEM_BOUNDS,
                         SD_SOFT_MEM_RIGHTS };
/* Checks a tagged access of len bytes at tagged offset to needing access rights;
 * on success *where is the first byte. */
enum sd_soft_mem_check sd_soft_mem_check(const struct sd_soft_mem *m, uint32_t stag,
                                         uint64_t to, uint32_t len, int access,
                                         uint8_t **where);
/* Checks that sge lies inside a valid registration with the given access bits. */
int sd_soft_mem_check_local(const struct sd_soft_mem *m, const struct sd_sge *sge, int access);
/* Remote invalidation (RFC 5040 6.3.1): 0, or -1 when stag is no valid remote STag. */
int sd_soft_mem_invalidate(struct sd_soft_mem *m, uint32_t stag);
void sd_soft_mem_free(struct sd_soft_mem *m);
sd_reg_mr_fn sd_soft_reg_mr;
sd_dereg_mr_fn sd_soft_dereg_mr;

/* ---- queue elements ---- */
struct sd_soft_swr {          /* send queue: Send, Send with Invalidate, Write, Read */
    uint64_t wr_id;
    uint8_t opcode;           /* enum sd_iw_opcode */
    uint8_t signaled, nsge;
    uint32_t length;          /* total bytes */
    uint32_t rstag;           /* Write/Read: remote STag; Send with Invalidate: its STag */
    uint64_t raddr;           /* Write/Read: remote tagged offset */
    uint32_t lstag;           /* Read: the local sink STag */
    struct iovec sge[SD_SOFT_MAX_SGE];
};
struct sd_soft_rwr {          /* receive queue */
    uint64_t wr_id;
    uint8_t *addr;
    uint32_t length;
};
struct sd_soft_orq {          /* outbound Read Request awaiting its Read Response */
    uint64_t wr_id;
    uint8_t *dst;
    uint32_t length, received, sink_stag;
    uint64_t sink_to;
};
struct sd_soft_irq {          /* inbound Read Request to answer */
    uint32_t src_stag, length, sink_stag;
    uint64_t src_to, sink_to;
};

/* One FPDU staged for transmission: MPA length + DDP/RDMAP header, payload pieces
 * pointing at the caller's memory, pad + CRC. */
struct sd_soft_fpdu {
    uint8_t hdr[MPA_LEN_SIZE + RDMAP_TERM_MAX_LEN + 2];
    uint8_t trailer[3 + MPA_CRC_SIZE];
    uint8_t hdr_len, trailer_len, niov;
    int8_t wc_opcode;         /* last FPDU of a Send/Write: its enum sd_wc_opcode, else -1 */
    uint8_t signaled;         /* complete it on success too */
    struct iovec iov[SD_SOFT_MAX_SGE];
    uint32_t len;             /* total wire bytes */
    uint64_t wr_id;
};

/* Transmit cursor in the message being segmented. */
struct sd_soft_txmsg {
    int active, from_irq;
    uint32_t done;            /* payload bytes already segmented */
    uint8_t sge;              /* current SGE and offset inside it */
    uint32_t sge_off;
};

/* Receive parser (RFC 5044 4: FPDUs may be split or coalesced in the stream). */
enum sd_soft_rx_state { SD_SOFT_RX_HDR, SD_SOFT_RX_PAYLOAD, SD_SOFT_RX_TRAILER };
struct sd_soft_rx {
    uint8_t *buf;
    size_t start, end;        /* unparsed bytes: buf[start..end) */
    enum sd_soft_rx_state state;
    uint32_t ulpdu_len, hdr_len, payload_len, payload_done, trailer_len;
    uint32_t crc;             /* CRC state over the current FPDU */
    uint8_t *dst;             /* where the payload goes */
    struct sd_iw_hdr hdr;
    uint8_t raw[MPA_LEN_SIZE + RDMAP_TERM_MAX_LEN];   /* the FPDU's header bytes */
    uint32_t msn[RDMAP_QN_COUNT];  /* expected MSN per untagged queue (RFC 5041 5.1) */
    uint32_t send_mo;         /* bytes of the current Send placed so far */
};

/* Where a connection is in its life (as siw's enum siw_qp_state). Every change goes
 * through sd_soft_qp_enter (soft_state.c), which refuses one this table does not list:
 * that is a bug, logged as an error, and the state stays.
 *
 *   from     to       when
 *   RTS      CLOSING  a local disconnect: every request flushed, our FIN sent (after
 *                     the tail); CONN_LOST waits for the peer's
 *            ERROR    a failure (a Terminate sent or received, a protocol error, a
 *                     failed write, destroy): every request flushed, CONN_LOST queued
 *   CLOSING  CLOSED   the peer's EOF (or a receive error): CONN_LOST queued
 *   ERROR    CLOSED   the peer's EOF (or a receive error)
 *   CLOSED            final
 *
 * The peer's EOF while RTS is a failure (RTS -> ERROR -> CLOSED at once). Only RTS
 * posts, transmits and parses; CLOSING and ERROR read the input and drop it. */
enum sd_soft_qp_state {
    SD_SOFT_QP_RTS,           /* up: both ways */
    SD_SOFT_QP_CLOSING,       /* disconnected here: awaiting the peer's EOF */
    SD_SOFT_QP_ERROR,         /* failed: CONN_LOST queued, awaiting the peer's EOF */
    SD_SOFT_QP_CLOSED,        /* the peer's EOF seen after the end: nothing more to read */
    SD_SOFT_QP_STATES
};

struct sd_qp {
    int fd;
    enum sd_soft_qp_state state; /* changed only by sd_soft_qp_enter */
    int rx_hinted;            /* the owner reports readiness (ops->readable) */
    int rx_drained;           /* with rx_hinted: the last recv emptied the socket */
    int tx_gated;             /* responder: no FPDU before the peer's first (RFC 5044 7.1.2) */
    enum sd_wc_status fail_cause;   /* while failing: status for the blamed request */
    int blame_pending;
    int crc;
    uint32_t ird, ord;
    uint32_t max_fpdu;        /* bytes per FPDU on the wire, from the MSS */
    struct sd_soft_mem mem;
    struct sd_soft_ring sq, rq, orq, irq, cq;
    /* transmit */
    struct sd_soft_fpdu slot[SD_SOFT_TX_SLOTS];
    unsigned slot_head, slot_count;
    size_t slot_sent;         /* bytes of the head slot already written */
    struct sd_soft_txmsg txm;
    uint32_t tx_msn[RDMAP_QN_COUNT];
    uint8_t *tail;            /* bytes still owed to the stream after a failure */
    size_t tail_len, tail_off;
    /* receive */
    struct sd_soft_rx rx;
};

/* ---- completion queue (soft_cq.c) ---- */
/* Queues a completion and returns it for extra fields (NULL when out of memory). */
struct sd_wc *sd_soft_cq_push(struct sd_qp *qp, uint64_t wr_id, enum sd_wc_opcode op,
                              enum sd_wc_status status, uint32_t byte_len);
sd_poll_cq_fn sd_soft_poll_cq;

/* ---- transmit (soft_tx.c) ---- */
sd_post_send_fn sd_soft_post_send;
sd_post_write_fn sd_soft_post_write;
sd_post_read_fn sd_soft_post_read;
/* Segments queued work into FPDUs and writes them until the socket is full. */
void sd_soft_tx_progress(struct sd_qp *qp);
int sd_soft_tx_pending(const struct sd_qp *qp);
#define SD_SOFT_TERM_FPDU_MAX (MPA_LEN_SIZE + RDMAP_TERM_MAX_LEN + MPA_CRC_SIZE)
/* Builds a Terminate FPDU (RFC 5040 4.8) about the FPDU being received (its header
 * copied in when t->hdrct asks for it) into out and returns its length. */
size_t sd_soft_tx_build_terminate(const struct sd_qp *qp, const struct sd_iw_term *t,
                                  uint8_t out[SD_SOFT_TERM_FPDU_MAX]);
/* On failure: keeps the unsent rest of a half-written FPDU (the stream must stay
 * parseable for the Terminate behind it), appends term, and drops the other
 * staged FPDUs, calling flush(qp, wr_id, opcode) for those that owe a completion. */
void sd_soft_tx_abort(struct sd_qp *qp, const uint8_t *term, size_t term_len,
                      void (*flush)(struct sd_qp *, uint64_t, enum sd_wc_opcode));
/* Writes what sd_soft_tx_abort kept; 1 when all of it is out, 0 when blocked. */
int sd_soft_tx_drain_tail(struct sd_qp *qp);
/* Whether n > 0 bytes at p share a byte with [base, base+len). */
static inline int sd_soft_overlaps(const void *p, size_t n, const uint8_t *base, size_t len)
{
    const uint8_t *b = p;

    return n > 0 && b < base + len && base < b + n;
}
/* How RDMA in flight uses memory, for its deregistration (sd_soft_dereg_mr). */
enum sd_soft_use { SD_SOFT_UNUSED, SD_SOFT_USED_LOCALLY, SD_SOFT_USED_BY_PEER };
/* Whether bytes still to leave lie in [base, base+len): a peer's Read Request of
 * registration stag not yet answered (BY_PEER), an FPDU staged or part-way written, a
 * posted Send, Write or Read (its sink too) not yet segmented (LOCALLY). */
enum sd_soft_use sd_soft_tx_uses(const struct sd_qp *qp, const uint8_t *base, size_t len,
                                 uint32_t stag);

/* ---- receive (soft_rx.c) ---- */
sd_post_recv_fn sd_soft_post_recv;
void sd_soft_rx_progress(struct sd_qp *qp);
/* Whether bytes still to arrive go into [base, base+len): a peer's RDMA Write part-way
 * placed (BY_PEER), another FPDU's payload part-way placed, an RDMA Read's sink, a posted
 * receive (LOCALLY). */
enum sd_soft_use sd_soft_rx_uses(const struct sd_qp *qp, const uint8_t *base, size_t len);

/* ---- life cycle: the state (soft_state.c, no I/O) ---- */
/* The one way qp->state changes: 0, or -1 when the table beside enum sd_soft_qp_state
 * does not allow it (logged as an error; the state stays). */
int sd_soft_qp_enter(struct sd_qp *qp, enum sd_soft_qp_state to);
extern const struct sd_fsm sd_soft_qp_fsm; /* the table and the states' names */
/* Whether the connection is up (RTS): it posts, transmits and parses. */
static inline int sd_soft_qp_up(const struct sd_qp *qp)
{
    return qp->state == SD_SOFT_QP_RTS;
}

/* ---- life cycle (soft_provider.c) ---- */
/* Takes over a connected socket after MPA negotiation. NULL on ENOMEM. */
struct sd_qp *sd_soft_qp_create(int fd, int responder, int crc, uint32_t ird, uint32_t ord);
/* Which work request a failure is charged to. */
enum sd_soft_blame { SD_SOFT_BLAME_NONE, SD_SOFT_BLAME_RECV, SD_SOFT_BLAME_SEND };
/* The connection is lost (RTS -> ERROR; later calls do nothing): every outstanding
 * request completes (the blamed one with cause, the rest SD_WC_FLUSHED), then CONN_LOST
 * with status cause. */
void sd_soft_qp_fail(struct sd_qp *qp, enum sd_wc_status cause, enum sd_soft_blame blame);
/* The peer's EOF, or a receive error (-> CLOSED): while RTS a failure with cause; after
 * a local disconnect, the CONN_LOST it held back. */
void sd_soft_qp_peer_closed(struct sd_qp *qp, enum sd_wc_status cause);
/* A local protocol check failed on the FPDU being received: send a Terminate
 * (RFC 5040 5.3) and fail with SD_WC_FATAL (or cause). */
void sd_soft_qp_terminate(struct sd_qp *qp, uint8_t layer, uint8_t etype, uint8_t ecode,
                          enum sd_wc_status cause, enum sd_soft_blame blame);

#endif
