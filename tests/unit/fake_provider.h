/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/fake_provider.h — an in-memory RDMA provider for unit tests and the
 * engine benchmark. Two queue pairs are linked back to back: a posted Send lands in
 * the peer's oldest posted receive, RDMA Read/Write move bytes between registered
 * regions with bounds and rights checks. Requests wait on a "wire" until the test
 * executes them (fake_deliver) unless auto-delivery is on, and completions come out
 * of poll_cq in a seeded random interleaving of the send and receive queues, so a
 * test controls every ordering. As on real RDMA, a Send without a posted receive,
 * larger than the posted buffer, or a refused tagged access breaks the connection
 * on both sides: the failing request completes with an error, everything else
 * outstanding is flushed, then SD_WC_CONN_LOST is reported.
 * A queue pair without a peer is driven by the test itself: its Sends complete at
 * once and are recorded; fake_inject() plays a received message. */
#ifndef FAKE_PROVIDER_H
#define FAKE_PROVIDER_H

#include <stddef.h>
#include <stdint.h>

#include "provider.h"

extern const struct sd_provider_ops fake_provider;

/* A connected pair; seed drives the completion interleaving. */
void fake_pair_new(struct sd_qp **a, struct sd_qp **b, uint64_t seed);
/* A queue pair whose peer is the test. */
struct sd_qp *fake_qp_new(uint64_t seed);

/* Executes up to max requests waiting on qp's wire (in order); returns how many. */
int fake_deliver(struct sd_qp *qp, int max);
/* Requests of qp waiting on the wire. */
int fake_wire_pending(const struct sd_qp *qp);
/* Completions qp has ready for poll_cq (not counting CONN_LOST). */
int fake_cq_pending(const struct sd_qp *qp);
/* Execute requests at post time (no wire queue). */
void fake_set_auto_deliver(struct sd_qp *qp, int on);
/* Whether poll_cq interleaves the queues randomly (default) or returns send
 * completions first. */
void fake_set_random_cq(struct sd_qp *qp, int on);

/* Plays a message from the peer into qp's oldest posted receive. Returns 0, or
 * -ENOBUFS / -EMSGSIZE after breaking the connection as real RDMA would. A non-zero
 * invalidate_rkey is a Send with Invalidate of that local STag of qp. */
int fake_inject(struct sd_qp *qp, const void *data, size_t len, uint32_t invalidate_rkey);

/* Every Send posted on qp, in order (bytes gathered at post time). */
struct fake_sent {
    uint8_t *data;
    uint32_t len;
    uint32_t invalidate_rkey;
    int signaled;
};
void fake_set_record(struct sd_qp *qp, int on); /* default on for fake_qp_new, off for pairs */
size_t fake_sent_count(const struct sd_qp *qp);
const struct fake_sent *fake_sent_get(const struct sd_qp *qp, size_t i);
void fake_sent_clear(struct sd_qp *qp);

int fake_posted_recvs(const struct sd_qp *qp);
int fake_mr_count(const struct sd_qp *qp);      /* live registrations */
int fake_mr_access(const struct sd_qp *qp, const void *base); /* a live one's, or -1 */
size_t fake_mr_bytes(const struct sd_qp *qp);   /* bytes they cover */
int fake_is_connected(const struct sd_qp *qp);
int fake_disconnects(const struct sd_qp *qp);   /* calls of ops->disconnect on qp */

/* Make the next posts/registrations fail with err (0 clears). */
void fake_fail_post_send(struct sd_qp *qp, int err);
void fake_fail_post_recv(struct sd_qp *qp, int err);
void fake_fail_reg_mr(struct sd_qp *qp, int err);

/* A transport failure: the oldest outstanding request completes with status, all
 * others flush, CONN_LOST follows, on both sides. */
void fake_break(struct sd_qp *qp, enum sd_wc_status status);

#endif
