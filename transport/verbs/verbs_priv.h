/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/verbs/verbs_priv.h — internals shared by the rdma-core verbs provider's
 * files: the connection and listener objects and the helpers each file exports.
 * Only transport/verbs/ includes this (and the unit tests of its pure helpers). */
#ifndef SMBDIRECT_VERBS_PRIV_H
#define SMBDIRECT_VERBS_PRIV_H

#include <infiniband/verbs.h>
#include <stdatomic.h>
#include <rdma/rdma_cma.h>

#include "provider.h"
#include "sd_fsm.h"

#define SD_VERBS_QUEUE_DEPTH 1024 /* send and receive work requests, before device caps */
#define SD_VERBS_MAX_SGE 4
#define SD_VERBS_CM_RETRY 6
#define SD_VERBS_RNR_RETRY 0 /* a Send with no posted receive is fatal (provider.h) */
/* Once the connection is lost, how long its outstanding requests may take to flush before
 * CONN_LOST is reported without them (a device that never flushes some must not hang
 * the program: seen on Linux 6.1's siw when ksmbd shut down mid-transfer). Kernel siw
 * under qemu's TCG took over 2 s to flush 64 RDMA requests to a destroyed peer, which it
 * does complete: 5 s leaves them that time and stays within the fault tests' 10 s. */
#define SD_VERBS_FLUSH_WAIT_MS 5000

/* One posted work request, remembered until its completion is polled: errors and
 * flushes do not report an opcode, and unsignaled Sends are signaled internally so
 * every request is accounted for before CONN_LOST is reported. */
struct sd_verbs_wr {
    uint64_t wr_id;
    enum sd_wc_opcode opcode;
    int signaled;
    int busy;                    /* posted, completion not yet polled */
    struct ibv_mr *read_sink_mr; /* iWARP RDMA Read: temporary sink registration */
};

/* Work requests of one queue. Slots are taken in ring order but may complete out of
 * order: kernel siw completes an RDMA Write posted after a Read before the Read's
 * response arrives. span counts the slots from the oldest busy one to the newest. */
struct sd_verbs_ring {
    struct sd_verbs_wr *slot;
    uint32_t size, head, span, count; /* count: busy slots */
};

/* Where a verbs connection is in its life. Every change goes through sd_verbs_qp_enter
 * (verbs_state.c), which refuses one this table does not list: that is a bug, logged as
 * an error, and the state stays.
 *
 *   from        to          when
 *   CONNECTING  CONNECTED   ESTABLISHED (rdma_connect's, or rdma_accept's)
 *               FLUSHING    a loss before it: the accept failed, a device event
 *   CONNECTED   FLUSHING    a loss: the peer disconnected, a request failed, a CM or
 *                           device event, the CQ failed, a local disconnect
 *   FLUSHING    LOST        every request flushed (or SD_VERBS_FLUSH_WAIT_MS passed):
 *                           poll_cq reports CONN_LOST
 *   LOST                    final
 *
 * Requests may be posted while CONNECTING and CONNECTED (a passive side posts its
 * receives before it accepts); only CONNECTED is disconnected from the peer. */
enum sd_verbs_qp_state {
    SD_VERBS_QP_CONNECTING, /* made on a resolved or requested id, not established yet */
    SD_VERBS_QP_CONNECTED,  /* ESTABLISHED seen and no disconnect started */
    SD_VERBS_QP_FLUSHING,   /* lost: the QP is in its error state, requests flush */
    SD_VERBS_QP_LOST,       /* CONN_LOST reported */
    SD_VERBS_QP_STATES
};

struct sd_qp {
    enum sd_verbs_qp_state state; /* changed only by sd_verbs_qp_enter */
    struct rdma_event_channel *cm_channel;
    struct rdma_cm_id *id;
    struct ibv_pd *pd;
    struct ibv_comp_channel *comp_channel;
    struct ibv_cq *cq;
    int iwarp;
    int epoll_fd;  /* fd(): completion channel + CM channel + wake_fd + the device's async fd */
    int wake_fd;   /* eventfd: readable while CONN_LOST waits to be polled */
    int events_hinted;  /* the owner reports epoll_fd's readiness (sd_verbs_readable) */
    int events_drained; /* progress() read what was ready since the last report */
    int flush_timer_fd;  /* timerfd in epoll_fd: SD_VERBS_FLUSH_WAIT_MS after the loss */
    enum sd_wc_status lost_cause; /* CONN_LOST's status: the first error, else FLUSHED */
    uint32_t max_sge;
    struct sd_verbs_ring sq, rq;
    size_t mr_bytes; /* bytes registered through reg_mr (pinned, RLIMIT_MEMLOCK on siw) */
    /* verbs_async.c: the device's async events */
    int async_watched;              /* in the live list */
    struct sd_qp *live_next;
    _Atomic int async_lost;         /* an event ended this connection: its type + 1 */
};

struct sd_listener {
    struct rdma_event_channel *cm_channel;
    struct rdma_cm_id *id;
};

/* A CM event copied out before it is acked. */
struct sd_verbs_cm_event {
    enum rdma_cm_event_type type;
    int status;
    struct rdma_cm_id *id;
    struct rdma_conn_param conn;
    uint8_t private_data[256];
    uint8_t private_data_len;
};

/* verbs_device.c */
int sd_verbs_require_device(const char *what);
int sd_verbs_is_iwarp(const struct sockaddr *dst, socklen_t dstlen);

/* verbs_cm.c: what the active side (there) and the passive side (verbs_listen.c) share */
/* Creates a non-blocking CM event channel and an RC (RDMA_PS_TCP) id on it. */
int sd_verbs_new_cm_id(struct rdma_event_channel **ch, struct rdma_cm_id **id);
int sd_verbs_channel_nonblock(int fd);
int sd_verbs_wait_cm_event(struct rdma_event_channel *ch, long long deadline_ms,
                           struct sd_verbs_cm_event *ev);
/* Waits for event `want`; any other event is the failure it stands for. */
int sd_verbs_expect_cm_event(struct rdma_event_channel *ch, long long deadline_ms,
                             enum rdma_cm_event_type want, struct sd_verbs_cm_event *ev);
/* -EINVAL unless p holds depths and private data that fit. */
int sd_verbs_check_params(const struct sd_cm_params *p);
/* Limits the depths to what the device and rdma_conn_param (8 bits) can carry. */
void sd_verbs_clamp_to_device(struct ibv_context *ctx, uint32_t *ird, uint32_t *ord);
/* ... and to what the peer's rdma_conn_param allows. */
void sd_verbs_clamp_to_peer(const struct rdma_conn_param *peer, uint32_t *ird, uint32_t *ord);
/* Our private data: [Appendix A header] + the application's bytes. Returns its length. */
uint8_t sd_verbs_private_data(uint8_t *buf, const struct sd_cm_params *p, int with_header,
                              uint32_t hdr_ird, uint32_t hdr_ord);
void sd_verbs_fill_conn_param(struct rdma_conn_param *cp, uint32_t ird, uint32_t ord,
                              const uint8_t *pd, uint8_t pd_len);
/* An IPv4 or IPv6 address (else zeroes) into dst. */
void sd_verbs_copy_addr(struct sockaddr_storage *dst, const struct sockaddr *src);
/* Fills result; the peer's private data goes after skip bytes (its header). */
void sd_verbs_fill_result(struct sd_cm_result *r, struct rdma_cm_id *id, uint32_t ird,
                          uint32_t ord, const struct sd_verbs_cm_event *ev, size_t skip,
                          int legacy_le);

/* verbs_qp.c: making and destroying a connection's verbs objects */
/* Builds the QP, CQ, completion channel and fd() set on a resolved (active) or
 * requested (passive) id; on success the qp owns ch and id. */
struct sd_qp *sd_verbs_qp_new(struct rdma_event_channel *ch, struct rdma_cm_id *id, int *err);
/* Adds fd to the epoll set epfd for input. 0, or -errno. */
int sd_verbs_epoll_watch(int epfd, int fd);

/* verbs_ring.c: a queue's work requests */
#define SD_VERBS_RECV_TAG (1ull << 32) /* ibv wr_id = ring slot, plus this bit on the RQ */
int sd_verbs_ring_init(struct sd_verbs_ring *r, uint32_t size);
/* The slot the next posted request will use, or NULL when the queue is full. The
 * slot is committed by sd_verbs_ring_commit once the request is posted. */
struct sd_verbs_wr *sd_verbs_ring_next(struct sd_verbs_ring *r, uint32_t *index);
void sd_verbs_ring_commit(struct sd_verbs_ring *r, uint32_t index);
/* Retires the request in slot index (which must be busy) and deregisters its temporary
 * iWARP read sink; returns a copy of it. */
struct sd_verbs_wr sd_verbs_ring_retire(struct sd_verbs_ring *r, uint32_t index);
/* Retires every busy slot (requests the device never flushed). */
void sd_verbs_ring_drop(struct sd_verbs_ring *r);

/* verbs_lost.c: the connection's loss */
/* The connection is gone: move the QP to error so everything flushes. */
void sd_verbs_qp_set_lost(struct sd_qp *qp, enum sd_wc_status cause, const char *why);
/* A request failed with status. A port or device event names the loss (it often trails
 * the first failed request: a network link gone down; for a status a link can cause, it
 * is awaited up to LINK_SETTLE_MS, once per lost connection); else the loss takes the
 * request's status, with the port's state when the port is not up. */
void sd_verbs_qp_lose_on_error(struct sd_qp *qp, enum ibv_wc_status status);
/* The device refused a post (what returned rc): the connection is lost, named as a failed
 * request's loss is (a link gone down before its event was read makes the QP refuse
 * posts). -ENOTCONN: the loss follows as SD_WC_CONN_LOST with its cause. */
int sd_verbs_post_refused(struct sd_qp *qp, const char *what, int rc);
/* Whether the wait for flushes after the loss is over (its timer fired). */
int sd_verbs_flush_wait_over(struct sd_qp *qp);

/* verbs_state.c: the connection's life (enum sd_verbs_qp_state), no I/O */
/* The one way qp->state changes: 0, or -1 when the table beside enum sd_verbs_qp_state
 * does not allow it (logged as an error; the state stays). */
int sd_verbs_qp_enter(struct sd_qp *qp, enum sd_verbs_qp_state to);
extern const struct sd_fsm sd_verbs_qp_fsm; /* the table and the states' names */
/* Whether the connection is lost (FLUSHING, LOST): nothing more may be posted. */
static inline int sd_verbs_qp_lost(const struct sd_qp *qp)
{
    return qp->state == SD_VERBS_QP_FLUSHING || qp->state == SD_VERBS_QP_LOST;
}

/* verbs_wc.c: pure mapping of verbs completions and access flags. */
enum sd_wc_status sd_verbs_wc_status(enum ibv_wc_status s);
void sd_verbs_wc_fill(const struct ibv_wc *in, const struct sd_verbs_wr *wr, int is_recv,
                      struct sd_wc *out);
int sd_verbs_access_flags(int sd_access);

/* The provider's entry points (types from provider.h), one file per concern: connect
 * (verbs_cm.c), listen and accept (verbs_listen.c), reg_mr and dereg_mr (verbs_mem.c),
 * the posts (verbs_post.c), fd, poll_events, progress and readable (verbs_events.c),
 * poll_cq (verbs_cq.c), disconnect (verbs_lost.c), destroy (verbs_qp.c). */
sd_connect_fn sd_verbs_connect;
sd_listen_fn sd_verbs_listen;
sd_listener_fd_fn sd_verbs_listener_fd;
sd_listener_addr_fn sd_verbs_listener_addr;
sd_accept_fn sd_verbs_accept;
sd_listener_close_fn sd_verbs_listener_close;
sd_reg_mr_fn sd_verbs_reg_mr;
sd_dereg_mr_fn sd_verbs_dereg_mr;
sd_post_recv_fn sd_verbs_post_recv;
sd_post_send_fn sd_verbs_post_send;
sd_post_write_fn sd_verbs_post_write;
sd_post_read_fn sd_verbs_post_read;
sd_fd_fn sd_verbs_fd;
sd_poll_events_fn sd_verbs_poll_events;
sd_progress_fn sd_verbs_progress;
sd_readable_fn sd_verbs_readable;
sd_poll_cq_fn sd_verbs_poll_cq;
sd_disconnect_fn sd_verbs_disconnect;
sd_destroy_fn sd_verbs_destroy;

/* verbs_async.c: the device's asynchronous events end the connections they concern. */
int sd_verbs_async_watch(struct sd_qp *qp);    /* once its queue pair exists */
void sd_verbs_async_unwatch(struct sd_qp *qp); /* before it is destroyed */
/* Reads events; ends qp if one concerns it (fabric_only: only a port or device event). */
void sd_verbs_async_progress(struct sd_qp *qp, int fabric_only);

#endif
