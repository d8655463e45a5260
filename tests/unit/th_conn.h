/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/th_conn.h — test harness for the MS-SMBD engine: one engine over a
 * fake queue pair with recording upcalls, polling helpers, and builders for raw
 * MS-SMBD messages (including malformed ones) to inject. */
#ifndef TH_CONN_H
#define TH_CONN_H

#include <stddef.h>
#include <stdint.h>

#include "fake_provider.h"
#include "sd_bytes.h"
#include "smbd_conn.h"

struct th_end {
    struct smbd_conn *conn;
    struct sd_qp *qp;
    int established;
    int terminated_calls, term_err;
    char term_reason[256];
    size_t delivered;               /* messages */
    uint8_t *last;                  /* copy of the last delivered message */
    size_t last_len;
    uint32_t invalidated[8];
    int ninvalidated;
    int send_ready_calls;
    int rdma_done_calls, rdma_status;
    uint64_t rdma_cookie;
    /* optional hooks for every delivered message and every RDMA completion */
    void (*on_deliver)(struct th_end *e, const uint8_t *data, size_t len);
    void (*on_rdma_done)(struct th_end *e, uint64_t cookie, int status);
    void *user;
    /* streaming delivery (th_end_init_streaming): every fragment in arrival order; the
     * payloads concatenated in stream (messages count into delivered at their end) */
    struct th_frag { size_t len; uint32_t remaining; int first; } frags[64];
    int nfrags;
    uint8_t *stream;
    size_t stream_len;
};

/* Creates the engine (asserting success); cfg NULL means defaults for role. */
void th_end_init(struct th_end *e, enum smbd_role role, const struct smbd_config *cfg,
                 struct sd_qp *qp);
/* The same over ops, a wrapper of fake_provider's (th_pinned.h). */
void th_end_init_ops(struct th_end *e, enum smbd_role role, const struct smbd_config *cfg,
                     struct sd_qp *qp, const struct sd_provider_ops *ops);
/* The same with deliver_fragment (streaming delivery) instead of deliver. */
void th_end_init_streaming(struct th_end *e, enum smbd_role role, const struct smbd_config *cfg,
                           struct sd_qp *qp);
void th_end_free(struct th_end *e); /* frees the engine and destroys the qp */

/* Polls up to max completions into the engine; returns how many. */
int th_poll(struct th_end *e, uint64_t now_ms, int max);
/* Delivers and polls both sides until nothing moves; returns the rounds taken. */
int th_settle(struct th_end *a, struct th_end *b, uint64_t now_ms);

/* A connected ACTIVE/PASSIVE pair, negotiated and settled. */
void th_pair_establish(struct th_end *a, struct th_end *b, const struct smbd_config *ca,
                       const struct smbd_config *cb, uint64_t seed);

/* Starts e (ACTIVE, just initialized) at time 0, feeds it the Negotiate Response resp
 * (len bytes) as the peer, and asserts (cmocka) that it is established. */
void th_active_establish(struct th_end *e, const uint8_t *resp, size_t len);

/* Asserts (cmocka) that e was terminated exactly once, with err and a reason naming
 * rule, that the provider was told to disconnect and that nothing was delivered. */
void th_expect_terminated(const struct th_end *e, int err, const char *rule);

/* Raw little-endian builders for injected messages; return the length written. */
size_t th_data_msg(uint8_t *out, uint16_t credits_req, uint16_t credits_granted,
                   uint16_t flags, uint32_t remaining, uint32_t offset, uint32_t length,
                   const void *payload, size_t payload_len);
size_t th_negotiate_req(uint8_t *out, uint16_t min_v, uint16_t max_v, uint16_t credits,
                        uint32_t pref_send, uint32_t max_recv, uint32_t max_frag);
size_t th_negotiate_resp(uint8_t *out, uint16_t negotiated, uint16_t credits_req,
                         uint16_t credits_granted, uint32_t status, uint32_t max_rw,
                         uint32_t pref_send, uint32_t max_recv, uint32_t max_frag);

#endif
