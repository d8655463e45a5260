/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/link/smbd_link.h — an SMB Direct connection with its provider: dial (active
 * side: RDMA connect + MS-SMBD negotiate, synchronously and bounded by a timeout, as
 * the preload shim's connect() needs) and accept (passive side, for the relay); then, for
 * the owner of an established link (the bridge), the engine and an sd_loop driving it. */
#ifndef SMBDIRECT_SMBD_LINK_H
#define SMBDIRECT_SMBD_LINK_H

#include <sys/socket.h>

#include "provider.h"
#include "sd_loop.h"
#include "smbd_conn.h"

struct smbd_link_opts {
    const struct sd_provider_ops *provider;
    struct smbd_config cfg;
    uint32_t ird, ord;          /* offered RDMA read depths (> 0) */
    int smbd_ird_ord_header;    /* MS-SMBD Appendix A header (iWARP, port 5445) */
    int want_crc;               /* soft-iWARP: ask the peer for MPA CRC (sd_cm_params) */
    int timeout_ms;             /* whole RDMA connect + negotiate */
    uint32_t io_size;           /* bytes one I/O registers at most (a channel buffer, or
                                   send buffers for an inline one); 0: cfg's
                                   max_read_write_size. Where registering pins memory
                                   (RLIMIT_MEMLOCK), the link reserves room for one such
                                   I/O beside its permanent buffers, shrinking what can
                                   shrink when the limit holds less (smbd_memplan.h). */
    /* Passive side, may be NULL: asked with the address the peer connected to and the
     * peer's before anything is set up for it (sd_cm_params.admit), with the ctx given
     * to smbd_link_accept_start (NULL from smbd_link_accept); a negative errno refuses
     * the connection and the accept fails with it. */
    int (*admit)(void *ctx, const struct sockaddr *local, const struct sockaddr *peer);
    /* The application's part of the private data this side sends with its connection
     * request or reply (sd_cm_params; the relay's note: smbd_link_note.h). */
    const void *private_data;
    uint16_t private_data_len;
};

/* An established connection: provider qp + smbd_conn, not yet bound to a loop. */
struct smbd_link;

/* Connect to dst and negotiate. 0 and *out, or -errno (-ECONNREFUSED, -ETIMEDOUT,
 * -EPROTO...) with a reason logged and copied to why (may be NULL). A server that
 * refused the connection (its access policy or limits: provider.h) fails it with
 * -ECONNREFUSED, as a TCP server's refusal would, and why names the refusal. */
int smbd_link_dial(const struct sockaddr *dst, socklen_t dstlen, const struct smbd_link_opts *o,
                   struct smbd_link **out, char *why, size_t whylen);

/* Accept one connection on a provider listener and negotiate as PASSIVE. */
int smbd_link_accept(struct sd_listener *l, const struct smbd_link_opts *o,
                     struct smbd_link **out, char *why, size_t whylen);

/* The same for event-driven servers (the relay): call it when the listener fd is
 * readable. The provider accept runs without blocking: -EAGAIN (no reason logged)
 * when no connection has completed its connection request yet, which is normal.
 * The PASSIVE negotiate then runs on loop; o->timeout_ms bounds it. Returns 0 when
 * done will run (once, on the loop thread, with the established link owned by the
 * callee, or NULL, -errno and a reason), else -errno with the reason in why. Must be
 * called on the loop thread. */
typedef void (*smbd_link_done_cb)(void *ctx, struct smbd_link *k, int err, const char *why);
int smbd_link_accept_start(struct sd_loop *loop, struct sd_listener *l,
                           const struct smbd_link_opts *o, smbd_link_done_cb done, void *ctx,
                           char *why, size_t whylen);

const struct smbd_conn *smbd_link_conn(const struct smbd_link *k);
/* The I/O a connection of o reserves registered memory for where a limit binds. */
uint32_t smbd_link_planned_io(const struct smbd_link_opts *o, enum smbd_role role);
/* The most one I/O may register on this link: the reserved I/O size where registering
 * pins memory under a limit, else UINT32_MAX. */
uint32_t smbd_link_io_limit(const struct smbd_link *k);
const struct sd_cm_result *smbd_link_cm(const struct smbd_link *k);
void smbd_link_free(struct smbd_link *k); /* disconnects if still connected */

/* ---- for the owner of an established link (the bridge) ---- */

struct smbd_conn *smbd_link_engine(struct smbd_link *k);
const struct sd_provider_ops *smbd_link_provider(const struct smbd_link *k);

/* From now on the engine calls up/ctx directly (NULL: the link's own upcalls again, as
 * while negotiating; then completions stop being polled once the link is established,
 * so no message is delivered to nobody). up->deliver_fragment must be set. */
void smbd_link_set_upper(struct smbd_link *k, const struct smbd_upper *up, void *ctx);

/* loop watches the provider fd and runs the engine's timers, and before it sleeps moves
 * whatever the owner's engine calls (smbd_conn_send, pause/resume, disconnect) asked
 * of the provider (a prepare hook); after(ctx) (may be NULL) runs at the end of each
 * such callback, outside any engine call. Polls the provider once right away, for
 * completions it may already hold. 0 or -errno. */
int smbd_link_attach(struct smbd_link *k, struct sd_loop *loop, void (*after)(void *ctx),
                     void *ctx);
void smbd_link_detach(struct smbd_link *k);

#endif
