/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/smbd/smbd_conn.h — the MS-SMBD connection state machine (MS-SMBD 3.1).
 *
 * Free of I/O: it is driven by events (RDMA completions, upper-layer sends, timer
 * expiry, all with an explicit "now" in milliseconds) and acts only through the
 * provider interface (transport/provider.h) it is given. Tests drive time and
 * completions explicitly; the event loops in preload/ and tools/ drive it for real.
 *
 * Threading: one connection is used by one thread at a time. Callbacks run inside
 * the smbd_conn_* call that caused them; they may call smbd_conn_send() but must
 * not free the connection (free it after the call returns). */
#ifndef SMBDIRECT_SMBD_CONN_H
#define SMBDIRECT_SMBD_CONN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "provider.h"

enum smbd_role { SMBD_ROLE_ACTIVE, SMBD_ROLE_PASSIVE, SMBD_ROLE_ESTABLISHED };

/* Local configuration (MS-SMBD 3.1.1.1 and Appendix B defaults). */
struct smbd_config {
    uint16_t receive_credit_max;       /* 255: receives we post and credits we may grant */
    uint16_t send_credit_target;       /* 255: credits we ask the peer for */
    uint32_t max_send_size;            /* 1364: our preferred send size */
    uint32_t max_receive_size;         /* 8192: size of each posted receive */
    uint32_t max_fragmented_recv_size; /* >= 8 MiB + headers: largest message we reassemble */
    uint32_t max_read_write_size;      /* 8 MiB */
    uint32_t keepalive_interval_ms;    /* 120 s idle -> keepalive with RESPONSE_REQUESTED */
    uint32_t keepalive_timeout_ms;     /* no message after a keepalive for this long -> terminate */
    uint32_t negotiate_timeout_ms;     /* 120 s active, 5 s passive (3.1.2.1) */
};

/* The fewest receive credits a connection works with: fewer lets two peers that
 * refill each other's last credits exchange credit-only messages forever
 * (see smbd_credits.c); smbd_config_check refuses less. */
#define SMBD_MIN_PEER_CREDITS 3u
/* The smallest MaxReceiveSize and MaxFragmentedSize a peer may offer (MS-SMBD 3.1.5.6,
 * 3.1.5.7); smbd_config_check holds our own settings to them too. */
#define SMBD_MIN_RECEIVE_SIZE    128u
#define SMBD_MIN_FRAGMENTED_SIZE 131072u
/* This engine's cap on MaxSendSize and MaxReceiveSize (each message sits in one
 * registered buffer); smbd_config_check refuses more. */
#define SMBD_MAX_MESSAGE_SIZE    1048576u

void smbd_config_default(struct smbd_config *cfg, enum smbd_role role);
/* Returns NULL when cfg is usable, else a static string naming the bad field. */
const char *smbd_config_check(const struct smbd_config *cfg);

/* The negotiated parameters (Connection.* of 3.1.1.1, set by 3.1.5.6 / 3.1.5.7). */
struct smbd_negotiated {
    uint16_t protocol;                 /* 0x0100 */
    uint32_t max_send_size;
    uint32_t max_receive_size;
    uint32_t max_fragmented_send_size;
    uint32_t max_fragmented_recv_size;
    uint32_t max_read_write_size;
    uint16_t send_credit_target;
    uint16_t receive_credit_max;
};

/* 3.1.4.7 Query Connection Parameters: the negotiated ones and the current credits. */
struct smbd_params {
    struct smbd_negotiated neg;
    uint16_t send_credits;             /* current */
    uint16_t receive_credits;          /* current, granted and not yet consumed */
};

/* Counters for logs, stats and tests. */
struct smbd_stats {
    uint64_t msgs_sent, msgs_delivered;    /* upper-layer messages */
    uint64_t bytes_sent, bytes_delivered;  /* upper-layer payload bytes */
    uint64_t bytes_sent_owned;             /* of bytes_sent: posted from the caller's
                                              memory (smbd_conn_send_owned), not copied */
    uint64_t fragments_sent, fragments_received;
    uint64_t keepalives_sent, keepalives_received;
    uint64_t credits_granted, credits_received;
};

/* Upcalls to the upper layer. Every pointer may be NULL except that one of deliver
 * and deliver_fragment must be set; when deliver_fragment is set, deliver is not used. */
struct smbd_upper {
    /* Negotiation finished; the connection is ESTABLISHED. */
    void (*established)(void *ctx);
    /* One complete upper-layer message, in strict order; data is only valid during
     * the call. An empty Data Transfer message delivers nothing. Fragmented messages
     * are reassembled first (3.1.5.8, Connection.FragmentReassemblyBuffer). */
    void (*deliver)(void *ctx, const uint8_t *data, size_t len);
    /* Streaming delivery, for upper layers that want a byte stream: the payload of
     * each Data Transfer fragment straight from its receive buffer, in strict order,
     * once every 3.1.5.8 check on that fragment has passed; data is only valid during
     * the call and there is no reassembly copy. first is 1 on a message's first
     * fragment, whose message is then len + remaining bytes long; remaining is the
     * fragment's RemainingDataLength, 0 on the message's last fragment. A fragment
     * sequence the peer breaks later terminates the connection (terminated follows)
     * with the earlier fragments already delivered. Empty messages deliver nothing. */
    void (*deliver_fragment)(void *ctx, const uint8_t *data, size_t len, uint32_t remaining,
                             int first);
    /* A received Send invalidated this local token (3.1.5.8, Connection.InvalidatedToken). */
    void (*invalidated)(void *ctx, uint32_t token);
    /* Queued bytes fell below the threshold given to smbd_conn_set_send_low_water. */
    void (*send_ready)(void *ctx);
    /* An RDMA Read/Write started with smbd_conn_rdma_* finished (status 0 or -errno). */
    void (*rdma_done)(void *ctx, uint64_t cookie, int status);
    /* The connection ended: err is 0 for an orderly local disconnect, else -errno
     * (-ECONNRESET peer loss, -EPROTO protocol violation, -ETIMEDOUT timers,
     * -ECONNREFUSED negotiate refused). reason is one human-readable line, also logged. */
    void (*terminated)(void *ctx, int err, const char *reason);
};

struct smbd_conn;

struct smbd_conn *smbd_conn_new(enum smbd_role role, const struct smbd_config *cfg,
                                const struct sd_provider_ops *ops, struct sd_qp *qp,
                                const struct smbd_upper *upper, void *ctx);
/* Frees everything, deregistering memory through the provider; does not destroy qp. */
void smbd_conn_free(struct smbd_conn *c);

/* The RDMA connection is up: post receives; ACTIVE sends the Negotiate Request
 * (3.1.5.2), PASSIVE waits for one (3.1.7.2); both arm the negotiation timer. */
int smbd_conn_start(struct smbd_conn *c, uint64_t now_ms);

/* Queue one upper-layer message (3.1.4.2). The bytes are copied. -EMSGSIZE when
 * larger than MaxFragmentedSendSize (a local error, the connection stays up),
 * -ENOTCONN when not established/terminated, -EAGAIN when the send buffers it needs
 * cannot be registered now (RLIMIT_MEMLOCK) but queued or posted Sends will give some
 * back (nothing was queued: offer it again after a send completion), -ENOMEM when they
 * cannot be had at all. len 0 sends an empty message. */
int smbd_conn_send(struct smbd_conn *c, const struct iovec *iov, int iovcnt, uint64_t now_ms);
/* The same with a Send with Invalidate of the peer's token (3.1.4.2: "an optional remote
 * memory token to be invalidated on the receiving peer"), e.g. a server answering an
 * SMB2 READ or WRITE with Channel RDMA_V1_INVALIDATE. token must not be 0. */
int smbd_conn_send_invalidate(struct smbd_conn *c, const struct iovec *iov, int iovcnt,
                              uint32_t token, uint64_t now_ms);
/* smbd_conn_send of one message of len bytes at data without copying it: data lies in
 * alloc (cap bytes), which the engine takes over; it registers the message's len bytes
 * for local access and posts each fragment's payload from there; once every fragment
 * is done with (sent, or dropped with the connection, or at smbd_conn_free) it
 * deregisters them and calls release(alloc, cap). 0, or -errno with nothing taken
 * (alloc is still the caller's). */
int smbd_conn_send_owned(struct smbd_conn *c, const uint8_t *data, size_t len, uint8_t *alloc,
                         size_t cap, void (*release)(uint8_t *alloc, size_t cap), uint64_t now_ms);
/* Registered memory on a provider that pins it (RLIMIT_MEMLOCK, sd_pinned.h): takes over
 * bytes the caller already charged to the process (sd_pinned_charge) as the connection's
 * reserve, given back when it is freed. Given before smbd_conn_start, the permanent
 * receive and send buffers draw from it first; what is left serves one I/O at a time:
 * channel buffers (smbd_conn_register_buffer, RDMA Read/Write) and send buffers beyond
 * the permanent ones draw from it before the process's shared room. buffers_planned of
 * the bytes count the permanent buffers at the configured sizes
 * (smbd_memplan_buffers_cost): once negotiated, what the buffers at the negotiated sizes
 * leave of them goes back to the process (a peer that sends and receives 1364-byte
 * messages, as ksmbd and Windows do, leaves most of it). */
void smbd_conn_adopt_reserve(struct smbd_conn *c, size_t bytes, size_t buffers_planned);
/* Whether a registration of len bytes (anywhere) fits the reserve or the process's room
 * now (always 1 when the provider pins nothing). */
int smbd_conn_can_register(const struct smbd_conn *c, size_t len);
/* Whether a registration holds part of the reserve now (it comes back when that
 * registration goes). */
int smbd_conn_reserve_in_use(const struct smbd_conn *c);
/* Payload bytes of the largest message the connection can always send at the
 * negotiated send size: what its permanent send buffers and its reserve carry (0 before
 * negotiation). Larger ones need room in the process's account at the time. */
size_t smbd_conn_send_capacity(const struct smbd_conn *c);

/* Bytes accepted by smbd_conn_send and not yet handed to the provider. */
size_t smbd_conn_send_queued(const struct smbd_conn *c);
void smbd_conn_set_send_low_water(struct smbd_conn *c, size_t bytes);

/* Receive-side flow control: while paused, no new receive credits are granted to
 * the peer (the peer then stops sending); messages already in flight are still
 * delivered. Used when the upper layer cannot take more data. */
void smbd_conn_pause_receive(struct smbd_conn *c, int paused, uint64_t now_ms);

/* Feed one provider completion (including SD_WC_CONN_LOST). */
void smbd_conn_on_completion(struct smbd_conn *c, const struct sd_wc *wc, uint64_t now_ms);
/* Fire any expired timers (3.1.6). */
void smbd_conn_on_timer(struct smbd_conn *c, uint64_t now_ms);
/* Absolute time of the next timer, or UINT64_MAX when none is armed. */
uint64_t smbd_conn_next_timer(const struct smbd_conn *c);

/* Orderly local disconnect: queued sends are dropped, sends already posted complete
 * first, then the provider disconnects; terminated(ctx, 0, ...) follows once the
 * provider reports the loss. */
void smbd_conn_disconnect(struct smbd_conn *c);

/* From now on upcalls go to upper/ctx (same rules as smbd_conn_new). For owners that
 * hand a connection on, e.g. from the negotiation to a data pump. */
void smbd_conn_set_upper(struct smbd_conn *c, const struct smbd_upper *upper, void *ctx);

/* How many requests (posts, disconnects) the connection has made of its provider so
 * far. Whoever drives the provider compares it with the count it last saw: a change
 * means progress() and completion polling are due (e.g. before an event loop sleeps). */
uint64_t smbd_conn_provider_requests(const struct smbd_conn *c);

enum smbd_role smbd_conn_role(const struct smbd_conn *c);
int smbd_conn_is_established(const struct smbd_conn *c);
int smbd_conn_is_terminated(const struct smbd_conn *c);
/* 1 when the connection ended because the peer closed it in order (the provider saw a
 * disconnect, not an error; MS-SMBD 3.1.7.1): what it delivered is all it sent. */
int smbd_conn_peer_closed(const struct smbd_conn *c);
int smbd_conn_query(const struct smbd_conn *c, struct smbd_params *out); /* 3.1.4.7 */
void smbd_conn_get_stats(const struct smbd_conn *c, struct smbd_stats *out);

/* 2.2.3.1 Buffer Descriptor V1, host order. */
struct smbd_buffer_desc {
    uint64_t offset;
    uint32_t token;
    uint32_t length;
};

struct smbd_registration;
enum smbd_reg_access { SMBD_REG_PEER_READ = 1, SMBD_REG_PEER_WRITE = 2 };

/* Register Buffer (3.1.4.3): makes buf available to the peer and fills up to
 * max_descs descriptors (each at most MaxReadWriteSize). */
int smbd_conn_register_buffer(struct smbd_conn *c, void *buf, size_t len, int access,
                              struct smbd_registration **reg,
                              struct smbd_buffer_desc *descs, size_t max_descs, size_t *ndescs);
/* Deregister Buffer (3.1.4.4). */
int smbd_conn_deregister_buffer(struct smbd_conn *c, struct smbd_registration *reg);

/* RDMA Write to / Read from a peer buffer (3.1.4.5, 3.1.4.6): len bytes starting at
 * byte `offset` into the concatenation of the descriptor array, split across elements
 * as needed. Completion is reported through upper->rdma_done(cookie). */
int smbd_conn_rdma_write(struct smbd_conn *c, uint64_t cookie, const void *local, size_t len,
                         const struct smbd_buffer_desc *descs, size_t ndescs, uint64_t offset);
int smbd_conn_rdma_read(struct smbd_conn *c, uint64_t cookie, void *local, size_t len,
                        const struct smbd_buffer_desc *descs, size_t ndescs, uint64_t offset);

#endif
