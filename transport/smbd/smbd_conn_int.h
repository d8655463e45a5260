/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/smbd/smbd_conn_int.h — private state of one MS-SMBD connection and the
 * functions the engine's files (smbd_conn*.c, smbd_credits.c, smbd_send_pool.c)
 * share. Not part of the public API: include smbd_conn.h instead. */
#ifndef SMBDIRECT_SMBD_CONN_INT_H
#define SMBDIRECT_SMBD_CONN_INT_H

#include <stdarg.h>
#include <stdint.h>

#include "sd_fsm.h"
#include "smbd_conn.h"
#include "smbd_wire.h"

/* A work request id carries its kind in the top byte, so completions are routed
 * without trusting wc->opcode (undefined for flushed requests in verbs). */
#define SMBD_WR_KIND_SHIFT 56
#define SMBD_WR_INDEX_MASK ((UINT64_C(1) << SMBD_WR_KIND_SHIFT) - 1)
enum smbd_wr_kind { SMBD_WR_RECV = 1, SMBD_WR_SEND = 2, SMBD_WR_RDMA = 3 };

#define SMBD_SIGNAL_EVERY          16u      /* signal at least every Nth send */
#define SMBD_REASSEMBLY_KEEP       65536u   /* reassembly capacity kept between messages */
#define SMBD_POOL_SHRINK_MS        1000u    /* unused extra send buffers freed after this */
#define SMBD_POOL_BASE_BYTES       1114112u /* permanent send buffers: 1 MiB + 64 KiB */

/* Connection.KeepaliveRequested (3.1.1.1). */
enum smbd_keepalive { SMBD_KA_NONE, SMBD_KA_PENDING, SMBD_KA_SENT };

/* The engine's lifecycle, beside Connection.Role (negotiating or established, which only
 * RUNNING and PROVIDER_GONE look at). Every change goes through smbd_enter_state
 * (smbd_conn_state.c), which refuses one this table does not list: that is a bug,
 * logged as an error, and the state stays (smbd_terminate then ends in TERMINATED).
 *
 *   from           to             when
 *   NEW            RUNNING        smbd_conn_start
 *                  DISCONNECTING  smbd_conn_disconnect before it (the link freed unstarted)
 *   RUNNING        PROVIDER_GONE  a post failed with -ENOTCONN: the provider lost it
 *                  REFUSING       the failure Negotiate Response is posted (3.1.5.3)
 *   RUNNING,       DRAINING       smbd_conn_disconnect with the last signaled Send in flight
 *   PROVIDER_GONE  DISCONNECTING  smbd_conn_disconnect otherwise
 *                  PEER_CLOSED    CONN_LOST, the peer's orderly close between messages
 *                  TERMINATED     any other failure or loss
 *   DRAINING       DISCONNECTING  that Send completed
 *                  TERMINATED     CONN_LOST first
 *   DISCONNECTING  TERMINATED     CONN_LOST: the local disconnect is complete
 *   REFUSING       TERMINATED     the refusal's Send completed: the provider disconnects
 *   PEER_CLOSED, TERMINATED       final
 *
 * The upper's terminated upcall is made on entering REFUSING, PEER_CLOSED or
 * TERMINATED from RUNNING, PROVIDER_GONE, DRAINING or DISCONNECTING (smbd_terminate). */
enum smbd_state {
    SMBD_ST_NEW,           /* smbd_conn_start not called yet */
    SMBD_ST_RUNNING,       /* negotiating or established (see role) */
    SMBD_ST_PROVIDER_GONE, /* running, but the provider lost the connection: nothing more
                              is sent, its CONN_LOST is coming (3.1.7.1) */
    SMBD_ST_DRAINING,      /* local orderly disconnect, waiting for the last signaled Send
                              before the provider's disconnect */
    SMBD_ST_DISCONNECTING, /* local orderly disconnect asked of the provider, waiting for
                              CONN_LOST */
    SMBD_ST_REFUSING,      /* terminated, the failure Negotiate Response going out: the
                              provider disconnects once it completes (3.1.5.3) */
    SMBD_ST_PEER_CLOSED,   /* terminated by the peer's orderly close (3.1.7.1) */
    SMBD_ST_TERMINATED,    /* terminated otherwise */
    SMBD_ST_STATES
};

/* A message sent from the caller's memory (smbd_conn_send_owned): the allocation the
 * engine took over, registered for the local reads of its Sends. */
struct smbd_owned_msg {
    struct sd_mr mr;
    uint8_t *alloc;
    size_t cap;
    void (*release)(uint8_t *alloc, size_t cap);
    uint32_t refs;                /* its fragments' slots, and the sender while queueing */
};

/* One registered send buffer ("slot") holding one complete MS-SMBD message (or its
 * header, when the payload is an owned message's). */
struct smbd_send_slot {
    uint8_t *buf;
    struct smbd_send_chunk *chunk;
    struct smbd_send_slot *next;  /* free list, SendQueue or in-flight list */
    uint64_t seq;                 /* posting order, for batched completions */
    uint32_t data_len;            /* payload bytes at SMBD_DATA_OFFSET, or at ext */
    uint32_t remaining;           /* RemainingDataLength of this fragment */
    uint32_t invalidate;          /* token to invalidate at the peer (Send with Invalidate), 0: none */
    const uint8_t *ext;           /* the payload lies in owned's memory, not in buf */
    struct smbd_owned_msg *owned; /* ... whose registration the Send reads with (a ref) */
};

/* One registered allocation of send slots; the first one lives for the connection,
 * further ones are added under load and freed after SMBD_POOL_SHRINK_MS unused. */
struct smbd_send_chunk {
    struct smbd_send_chunk *next;
    struct sd_mr mr;
    uint8_t *mem;
    struct smbd_send_slot *slots;
    struct smbd_send_slot *free;
    uint32_t nslots, used;
    int registered;
    size_t drawn;          /* pinned bytes drawn from the connection's reserve */
};

struct smbd_fifo {
    struct smbd_send_slot *head, *tail;
};

/* One upper-layer RDMA Read or Write, possibly several provider requests. */
struct smbd_rdma_op {
    uint64_t cookie;
    struct sd_mr local_mr;
    uint32_t outstanding;  /* provider requests not yet completed */
    int status;            /* first error, or 0 */
    int in_use;
    size_t drawn;          /* pinned bytes drawn from the connection's reserve */
};

struct smbd_registration {
    struct smbd_registration *next, *prev;
    struct sd_mr mr;
    size_t drawn;          /* pinned bytes drawn from the connection's reserve */
};

struct smbd_conn {
    /* Connection.* of 3.1.1.1 */
    enum smbd_role role;
    struct smbd_negotiated neg;
    uint32_t send_credits;
    uint16_t receive_credit_target;
    uint32_t receive_credits;        /* granted to the peer and not yet consumed */
    struct smbd_fifo send_queue;     /* Connection.SendQueue, FIFO of fragments */
    uint8_t *reasm_buf;              /* Connection.FragmentReassemblyBuffer */
    size_t reasm_len, reasm_cap;
    uint32_t reasm_remaining;        /* Connection.FragmentReassemblyRemaining */
    int reasm_active;
    int reasm_first_pending;         /* streaming: no byte of the message delivered yet (it
                                        began with an empty fragment) */
    uint32_t invalidated_token;      /* Connection.InvalidatedToken */
    int invalidated_set;
    enum smbd_keepalive keepalive;   /* Connection.KeepaliveRequested */
    uint64_t keepalive_due_ms;       /* when the pending keepalive fell due */
    int send_immediate;              /* Connection.SendImmediate */

    /* engine state */
    enum smbd_state state;           /* changed only by smbd_enter_state */
    struct smbd_config cfg;
    const struct sd_provider_ops *ops;
    struct sd_qp *qp;
    struct smbd_upper upper;
    void *ctx;
    struct smbd_stats stats;
    int recv_paused;
    uint64_t provider_requests;      /* posts and disconnects asked of the provider */

    /* receive pool: receive_credit_max buffers of cfg.max_receive_size */
    uint8_t *recv_mem;
    struct sd_mr recv_mr;
    uint8_t *recv_posted_flag;
    uint32_t recv_count, recv_buf_size, recv_posted;
    size_t recv_drawn;               /* pinned bytes drawn from the reserve (smbd_pin.c) */

    /* send pool and queues */
    struct smbd_send_chunk *chunks;  /* first = permanent base chunk */
    struct smbd_send_chunk *retired; /* the negotiate message's, freed once unused */
    uint32_t send_buf_size;
    uint32_t slots_free;             /* over all chunks */
    struct smbd_fifo in_flight;      /* posted, completion not yet seen */
    uint64_t send_seq;
    uint64_t signaled_seq;           /* the last send posted signaled */
    uint32_t unsignaled_run;
    size_t queued_bytes;             /* payload bytes in send_queue */
    size_t low_water;
    int send_ready_armed;
    uint64_t pool_extra_used_ms;
    size_t pin_buffers_planned;      /* of the reserve, for the permanent receive and send
                                        buffers at the configured sizes */

    /* timers (absolute ms, UINT64_MAX = not armed) */
    uint64_t negotiate_deadline;
    uint64_t idle_deadline;

    /* RDMA operations and registrations */
    struct smbd_rdma_op **rdma_ops;  /* index = work request id; reused when done */
    uint32_t rdma_ops_cap;
    struct smbd_registration *regs;

    /* registered memory on a provider that pins it (smbd_pin.c) */
    size_t pin_reserve;              /* charged to the process for one I/O */
    size_t pin_reserve_free;         /* ... not drawn by a registration now */
};

/* Whether the connection runs (RUNNING, PROVIDER_GONE): it receives, negotiates, times
 * out and queues sends. */
static inline int smbd_is_live(const struct smbd_conn *c)
{
    return c->state == SMBD_ST_RUNNING || c->state == SMBD_ST_PROVIDER_GONE;
}

/* Whether the upper has been told the connection ended (REFUSING, PEER_CLOSED,
 * TERMINATED). */
static inline int smbd_is_terminated(const struct smbd_conn *c)
{
    return c->state == SMBD_ST_REFUSING || c->state == SMBD_ST_PEER_CLOSED ||
           c->state == SMBD_ST_TERMINATED;
}

/* smbd_conn_state.c: the lifecycle (enum smbd_state), no I/O */
/* The one way c->state changes: 0, or -1 when the table beside enum smbd_state does not
 * allow it (logged as an error; the state stays). */
int smbd_enter_state(struct smbd_conn *c, enum smbd_state to);
extern const struct sd_fsm smbd_state_fsm; /* the table and the states' names */

/* smbd_conn.c */
/* Asks the provider for its orderly disconnect (counted in provider_requests). */
void smbd_provider_disconnect(struct smbd_conn *c);
/* Ends the connection (-> TERMINATED) and tells the upper, once; from DRAINING or
 * DISCONNECTING without a further provider disconnect. smbd_terminate_as ends it in
 * state to instead: REFUSING (the provider disconnects once the refusal's Send completes)
 * or PEER_CLOSED. */
void smbd_terminate(struct smbd_conn *c, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void smbd_terminate_as(struct smbd_conn *c, enum smbd_state to, int err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void smbd_become_established(struct smbd_conn *c, uint64_t now_ms);

/* smbd_conn_negotiate.c (3.1.5.2, 3.1.5.3, 3.1.5.6, 3.1.5.7) */
int smbd_send_negotiate_request(struct smbd_conn *c);
void smbd_recv_negotiate_request(struct smbd_conn *c, const uint8_t *buf, uint32_t len,
                                 uint64_t now_ms);
void smbd_recv_negotiate_response(struct smbd_conn *c, const uint8_t *buf, uint32_t len,
                                  uint64_t now_ms);

/* smbd_conn_recv.c (3.1.5.5, 3.1.5.8) */
int smbd_recv_pool_init(struct smbd_conn *c);
void smbd_recv_pool_free(struct smbd_conn *c);
/* A client's pool once the Negotiate Response is in: ReceiveCreditMax receives of the
 * negotiated MaxReceiveSize; the planned pages it does not use return to the process. */
int smbd_recv_pool_resize(struct smbd_conn *c);
void smbd_on_recv(struct smbd_conn *c, const struct sd_wc *wc, uint64_t now_ms);

/* smbd_conn_send.c (3.1.5.1, 3.1.5.4) */
void smbd_send_pump(struct smbd_conn *c, uint64_t now_ms);
int smbd_post_slot(struct smbd_conn *c, struct smbd_send_slot *s, uint32_t len, int signaled);
void smbd_on_send_done(struct smbd_conn *c, const struct sd_wc *wc);

/* smbd_send_pool.c */
int smbd_send_pool_init(struct smbd_conn *c);
/* Once negotiated: the permanent send buffers, at the negotiated MaxSendSize. */
int smbd_send_pool_rebase(struct smbd_conn *c);
void smbd_send_pool_free(struct smbd_conn *c);
int smbd_send_pool_reserve(struct smbd_conn *c, uint32_t nslots, uint64_t now_ms);
struct smbd_send_slot *smbd_slot_get(struct smbd_conn *c, uint64_t now_ms);
void smbd_slot_put(struct smbd_conn *c, struct smbd_send_slot *s);
/* Drops a reference to an owned message; the last one deregisters it and gives the
 * memory back to its owner. */
void smbd_owned_put(struct smbd_conn *c, struct smbd_owned_msg *m);
void smbd_send_pool_shrink(struct smbd_conn *c, uint64_t now_ms);
uint64_t smbd_send_pool_next_shrink(const struct smbd_conn *c);
void smbd_fifo_push(struct smbd_fifo *q, struct smbd_send_slot *s);
struct smbd_send_slot *smbd_fifo_pop(struct smbd_fifo *q);
/* Gives every slot of q back to the pool (smbd_slot_put), in order. */
void smbd_fifo_release(struct smbd_conn *c, struct smbd_fifo *q);

/* smbd_pin.c: ops->reg_mr and ops->dereg_mr with the pinned-memory accounting. With
 * from_reserve, the cost is drawn from the connection's reserve when it fits; *drawn
 * tells smbd_dereg how much. */
int smbd_reg(struct smbd_conn *c, void *base, size_t len, int access, int from_reserve,
             struct sd_mr *mr, size_t *drawn);
int smbd_dereg(struct smbd_conn *c, struct sd_mr *mr, size_t drawn);
void smbd_pin_release_reserve(struct smbd_conn *c);
void smbd_pin_return_reserve(struct smbd_conn *c, size_t bytes); /* up to bytes, unused */
/* Once the permanent buffers hold the negotiated sizes: what the plan counted for them at
 * the configured sizes and they do not pin goes back to the process, said in one line. */
void smbd_pin_return_unplanned(struct smbd_conn *c);
/* Before a channel registration of len bytes: idle extra send buffers give back the
 * reserve they hold when it would not fit otherwise. */
void smbd_pin_make_room(struct smbd_conn *c, size_t len);
/* The permanent buffers drew drawn bytes of the reserve: they keep that charge for good. */
void smbd_pin_settle_reserve(struct smbd_conn *c, size_t drawn);

/* smbd_credits.c (3.1.5.9) */
uint32_t smbd_credits_peek_grant(const struct smbd_conn *c);
uint16_t smbd_credits_take_grant(struct smbd_conn *c);
int smbd_credits_refill_due(const struct smbd_conn *c);

/* smbd_conn_timers.c (3.1.2, 3.1.6) */
void smbd_idle_timer_restart(struct smbd_conn *c, uint64_t now_ms);

/* smbd_conn_rdma.c (3.1.4.3 - 3.1.4.6) */
void smbd_on_rdma_done(struct smbd_conn *c, const struct sd_wc *wc);
void smbd_rdma_free_all(struct smbd_conn *c);

#endif
