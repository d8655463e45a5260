/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/provider.h — the RDMA provider interface the SMB Direct engine runs over.
 *
 * One interface, several providers: soft-iWARP (userspace MPA/DDP/RDMAP over a TCP
 * socket, transport/soft/), rdma-core verbs (transport/verbs/), and an in-memory fake
 * used only inside unit tests. Semantics follow RDMA verbs:
 *   - a buffer handed to post_* belongs to the provider until its completion is polled;
 *   - every work request completes exactly once (success, or an error status);
 *   - when the connection is lost, every outstanding work request completes with
 *     SD_WC_FLUSHED (or the error that caused the loss) and then one pseudo-completion
 *     with opcode SD_WC_CONN_LOST is returned; further posts fail with -ENOTCONN
 *     (MS-SMBD 3.1.7.1);
 *   - a Send arriving with no posted receive, or larger than the posted buffer, is a
 *     fatal connection error (as on real RDMA hardware).
 * All functions are non-blocking except connect() and accept(), which are bounded by
 * a timeout. Functions return 0 or a negative errno value unless stated otherwise.
 * A provider connection (struct sd_qp) is used by one thread at a time. */
#ifndef SMBDIRECT_PROVIDER_H
#define SMBDIRECT_PROVIDER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

struct sd_qp;       /* one RDMA connection (queue pair + its completion queue) */
struct sd_listener; /* a passive endpoint accepting connections */

/* Access rights of a memory registration. */
enum sd_access {
    SD_ACCESS_LOCAL_WRITE = 1,  /* the local provider may write (receives, read sinks) */
    SD_ACCESS_REMOTE_READ = 2,  /* the peer may RDMA Read it */
    SD_ACCESS_REMOTE_WRITE = 4, /* the peer may RDMA Write it */
    /* The local sink of this side's RDMA Reads (implies local write). On iWARP the Read
     * Response is a tagged write into the sink's STag (RFC 5040 4.4), so a provider that
     * needs it grants the peer remote write to this region, which then serves the Read
     * without a second registration of the same pages. */
    SD_ACCESS_READ_SINK = 8,
};

/* A registered memory region. addr is the tagged offset the peer uses with rkey
 * (for soft-iWARP and verbs it is the virtual address of base). */
struct sd_mr {
    void *base;
    size_t length;
    uint32_t lkey;  /* local key for SGEs */
    uint32_t rkey;  /* STag the peer uses (0 when no remote access was granted) */
    uint64_t addr;  /* tagged offset of base */
    int access;     /* enum sd_access bits */
    void *priv;     /* provider's handle */
};

/* A scatter/gather element: bytes inside a registered region. */
struct sd_sge {
    void *addr;
    uint32_t length;
    const struct sd_mr *mr;
};

enum sd_wc_opcode {
    SD_WC_SEND,
    SD_WC_RECV,
    SD_WC_RDMA_WRITE,
    SD_WC_RDMA_READ,
    SD_WC_CONN_LOST, /* pseudo-completion: the connection is gone, nothing more will complete */
};

enum sd_wc_status {
    SD_WC_SUCCESS = 0,
    SD_WC_FLUSHED,       /* connection went away before the request ran */
    SD_WC_LOCAL_LENGTH,  /* incoming Send larger than the posted receive */
    SD_WC_LOCAL_PROT,    /* local SGE outside its registration */
    SD_WC_REMOTE_ACCESS, /* the peer refused a tagged access (bad STag, bounds, rights) */
    SD_WC_REMOTE_OP,     /* the peer terminated the connection for another reason */
    SD_WC_FATAL,         /* transport failure (socket error, protocol violation) */
};

struct sd_wc {
    uint64_t wr_id;
    enum sd_wc_opcode opcode;
    enum sd_wc_status status;
    uint32_t byte_len;         /* RECV: bytes received */
    int with_invalidate;       /* RECV: the Send carried an invalidate STag */
    uint32_t invalidated_rkey; /* RECV: the local STag the peer invalidated */
};

/* Connection-manager parameters and results. private data is the application's
 * (the SMB Direct layer's) part only: providers add and strip the MS-SMBD Appendix A
 * IRD/ORD header themselves when smbd_ird_ord_header is set (iWARP, port 5445). */
#define SD_MAX_PRIVATE_DATA 196
struct sd_cm_params {
    uint32_t ird;                 /* incoming RDMA Read depth we offer (> 0) */
    uint32_t ord;                 /* outgoing RDMA Read depth we want (> 0) */
    int smbd_ird_ord_header;      /* add/expect the MS-SMBD 6.1 header */
    /* soft-iWARP: ask the peer for MPA CRC (RFC 5044 7.1.2 M flag, 8); without it
     * CRC is used only when the peer asks. Verbs ignore it (the device decides). */
    int want_crc;
    const void *private_data;
    uint16_t private_data_len;
    /* Passive side only (may be NULL): called with the new qp once it exists and
     * before the connection is accepted, so the caller can post its receives before
     * the peer's first Send can arrive (a Send with no posted receive is fatal).
     * A negative return rejects the connection (the hook has undone its own work;
     * the provider destroys the qp). Once the hook has succeeded, accept returns the
     * qp even if the last step fails: that failure surfaces as connection loss
     * (posted work flushes, then SD_WC_CONN_LOST), so the caller cleans up as usual. */
    int (*pre_accept)(struct sd_qp *qp, void *arg);
    void *pre_accept_arg;
    /* Passive side only (may be NULL): asked with the address the peer connected to
     * (local: with a wildcard listener, the one of this host's addresses it dialled)
     * and the connecting peer's address before anything is set up for the connection;
     * a negative errno refuses it (soft-iWARP answers the MPA request with a reject,
     * verbs the request with rdma_reject) and accept fails with that errno, without a
     * log line of its own. */
    int (*admit)(const struct sockaddr *local, const struct sockaddr *peer, void *arg);
    void *admit_arg;
};

/* Listener parameters. */
struct sd_listen_params {
    int backlog;      /* connections waiting to be accepted, as for listen(2) */
    /* soft-iWARP: how long an accepted TCP connection may take to send its MPA
     * request (RFC 5044 7.1.2) before it is dropped, > 0. Verbs ignore it (the
     * kernel's connection manager times its own handshakes). */
    int handshake_ms;
};

struct sd_cm_result {
    uint32_t ird, ord;            /* negotiated values in force on the connection */
    uint8_t peer_private_data[SD_MAX_PRIVATE_DATA];
    uint16_t peer_private_data_len;
    int peer_legacy_le_header;    /* peer sent the Appendix A header little-endian */
    struct sockaddr_storage local, peer;
};

/* Which event an sd_qp or sd_listener wants its fd waited for. */
enum sd_poll { SD_POLL_IN = 1, SD_POLL_OUT = 4 };

/* The provider operations' types, so each provider declares its implementations
 * with them (e.g. "sd_post_send_fn sd_verbs_post_send;") instead of restating them.
 * What each one does is said at its member of struct sd_provider_ops below. */
typedef int sd_is_iwarp_fn(const struct sockaddr *dst, socklen_t dstlen);
typedef struct sd_qp *sd_connect_fn(const struct sockaddr *addr, socklen_t addrlen,
                                    const struct sd_cm_params *params, int timeout_ms,
                                    struct sd_cm_result *result, int *err);
typedef struct sd_listener *sd_listen_fn(const struct sockaddr *addr, socklen_t addrlen,
                                         const struct sd_listen_params *lp, int *err);
typedef int sd_listener_fd_fn(struct sd_listener *l);
typedef int sd_listener_addr_fn(struct sd_listener *l, struct sockaddr_storage *addr,
                                socklen_t *len);
typedef struct sd_qp *sd_accept_fn(struct sd_listener *l, const struct sd_cm_params *params,
                                   int timeout_ms, struct sd_cm_result *result, int *err);
typedef void sd_listener_close_fn(struct sd_listener *l);
typedef int sd_reg_mr_fn(struct sd_qp *qp, void *base, size_t length, int access, struct sd_mr *mr);
typedef int sd_dereg_mr_fn(struct sd_qp *qp, struct sd_mr *mr);
typedef int sd_post_recv_fn(struct sd_qp *qp, uint64_t wr_id, const struct sd_sge *sge);
typedef int sd_post_send_fn(struct sd_qp *qp, uint64_t wr_id, const struct sd_sge *sge,
                            int nsge, uint32_t invalidate_rkey /* 0: plain Send */, int signaled);
typedef int sd_post_write_fn(struct sd_qp *qp, uint64_t wr_id, const struct sd_sge *local,
                             uint32_t rkey, uint64_t raddr);
typedef int sd_post_read_fn(struct sd_qp *qp, uint64_t wr_id, const struct sd_sge *local,
                            uint32_t rkey, uint64_t raddr);
typedef int sd_fd_fn(struct sd_qp *qp);
typedef int sd_poll_events_fn(struct sd_qp *qp);
typedef int sd_progress_fn(struct sd_qp *qp);
typedef void sd_readable_fn(struct sd_qp *qp);
typedef int sd_poll_cq_fn(struct sd_qp *qp, struct sd_wc *wc, int max);
typedef void sd_disconnect_fn(struct sd_qp *qp);
typedef void sd_destroy_fn(struct sd_qp *qp);

struct sd_provider_ops {
    const char *name; /* "soft" or "rdma" */
    /* 1 when a peer's Send with Invalidate can revoke a registration made with reg_mr
     * (soft-iWARP, like siw), so a client may ask for SMB2_CHANNEL_RDMA_V1_INVALIDATE.
     * 0 for verbs: InfiniBand/RoCE invalidate remotely only fast-registered MRs and
     * memory windows, not ibv_reg_mr regions (rxe refuses). Sending one is another
     * matter: every provider's post_send puts invalidate_rkey on the wire as a Send with
     * Invalidate of that STag, which a server owes a client that asked for it. */
    int remote_invalidation;

    /* 1 when every registration pins memory that the kernel charges to RLIMIT_MEMLOCK
     * (verbs): the engine then budgets its registrations against that limit
     * (sd_pinned.h). 0 when registering pins nothing (soft-iWARP). */
    int pins_memory;

    /* File descriptors one connection holds open, which the relay sizes its connection
     * limit by: soft-iWARP 1 (its TCP socket); verbs 5 (its CM event channel, completion
     * channel, epoll and eventfd, and a timer while a lost connection's requests
     * flush). Shared ones (a device's context, the listener's) are not counted. */
    unsigned fds_per_qp;

    /* 1 when the device that reaches dst is iWARP (SMB Direct port 5445 and the
     * Appendix A header), 0 for InfiniBand/RoCE (port 445), negative errno when
     * no RDMA device reaches dst. Soft-iWARP always answers 1. */
    sd_is_iwarp_fn *is_iwarp;

    /* Active side: connect to addr, bounded by timeout_ms. NULL with *err set: -EACCES
     * when the server refused the connection request (soft-iWARP: an MPA reject frame,
     * RFC 5044 7.1.3; verbs on InfiniBand and RoCE: an rdma_cm REJECTED event with a
     * consumer-defined reason, what an admit hook's refusal sends; an iWARP device
     * reports a reject as it does a TCP reset), -ECONNREFUSED when nothing accepts
     * connections at addr. */
    sd_connect_fn *connect;

    /* Passive side. listener_fd is readable when accept() can make progress (a new
     * connection, more of a pending connection request, a handshake deadline). */
    sd_listen_fn *listen;
    sd_listener_fd_fn *listener_fd;
    /* The address the listener is bound to (with the port chosen when listen() asked
     * for port 0). *len: in, the size of *addr; out, the address's length. */
    sd_listener_addr_fn *listener_addr;
    /* Accepts one connection, replies with params (IRD/ORD = MS-SMBD 6.2 min rules),
     * waiting up to timeout_ms for one to complete its connection request (< 0: no
     * limit). timeout_ms 0 never waits (event loops): NULL with -EAGAIN when no
     * connection is ready. NULL with *err set (the listener stays usable). */
    sd_accept_fn *accept;
    sd_listener_close_fn *listener_close;

    /* Memory registration with exactly the access bits asked for. */
    sd_reg_mr_fn *reg_mr;
    sd_dereg_mr_fn *dereg_mr;

    /* Work requests. signaled=0 on a send asks for no successful completion
     * (errors always complete); receives and RDMA ops always complete. */
    sd_post_recv_fn *post_recv;
    sd_post_send_fn *post_send;
    sd_post_write_fn *post_write;
    sd_post_read_fn *post_read;

    /* Event loop integration: wait for fd() with the events of poll_events(),
     * then call progress() (moves bytes, may generate completions), then poll_cq()
     * until it returns 0. poll_cq returns the number of completions (>= 0). */
    sd_fd_fn *fd;
    sd_poll_events_fn *poll_events;
    sd_progress_fn *progress;
    sd_poll_cq_fn *poll_cq;
    /* May be NULL. The owner's poll reported fd() readable (or hung up, or in error).
     * An owner that calls it on every such report lets progress() skip reading while it
     * knows the fd drained (no wasted recv per progress call); one that never calls it
     * gets a read attempt on every progress(). */
    sd_readable_fn *readable;

    /* Starts an orderly disconnect; outstanding requests flush, then CONN_LOST (on
     * soft-iWARP once the peer has closed too: the owner bounds the wait). */
    sd_disconnect_fn *disconnect;
    /* Frees everything; the qp must not be used afterwards. */
    sd_destroy_fn *destroy;
};

/* A short human-readable name of a completion status, for log lines. */
const char *sd_wc_status_str(enum sd_wc_status status);
/* What connect's error err says, for log lines: the server's refusal (-EACCES) named as
 * one, any other errno as strerror says. */
const char *sd_cm_strerror(int err);

extern const struct sd_provider_ops sd_soft_provider;  /* transport/soft/ */
extern const struct sd_provider_ops sd_verbs_provider; /* transport/verbs/ */

/* Returns 1 when rdma-core reports at least one RDMA device, else 0. */
int sd_verbs_device_present(void);

#endif
