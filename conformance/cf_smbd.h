/* SPDX-License-Identifier: BSD-3-Clause */
/* conformance/cf_smbd.h — a raw SMB Direct (MS-SMBD) client session for the conformance
 * cases, straight over the RDMA provider operations (transport/provider.h), not the
 * engine: it sends whatever bytes a case builds (well-formed or not) as Negotiate
 * Request or Data Transfer messages, posts receives, grants credits, fragments and
 * reassembles SMB2 messages, registers buffers for the peer's RDMA, and waits for
 * completions with a timeout by polling the provider's fd. Cases that break the
 * protocol on purpose (credits withheld, malformed headers) use the raw calls. */
#ifndef SMBDIRECT_CF_SMBD_H
#define SMBDIRECT_CF_SMBD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "provider.h"
#include "smbd_wire.h"

/* Where and how to connect: filled by the program from its settings. */
struct cf_target {
    const struct sd_provider_ops *provider;
    struct sockaddr_storage addr;
    socklen_t addrlen;
    char host[64];                /* the server's address as text (SMB2 tree paths) */
    uint32_t ird, ord;
    int smbd_ird_ord_header;      /* MS-SMBD Appendix A header (iWARP) */
    int want_crc;
    int timeout_ms;               /* connect, and each wait for an expected message */
    /* What the session's Negotiate Request offers (MS-SMBD 2.2.1). */
    uint16_t credits;             /* CreditsRequested, and receives posted */
    uint32_t max_send_size;       /* PreferredSendSize */
    uint32_t max_receive_size;    /* MaxReceiveSize: each posted receive */
    uint32_t max_fragmented_size; /* MaxFragmentedSize */
    /* The server's SMB port over TCP, the Smb2Multichannel cases' first channel: at the
     * host's address as given (tcp_host) and at the address SMB Direct dials (tcp_rdma);
     * they differ when an address map sends SMB Direct to an RDMA address. */
    struct sockaddr_storage tcp_host, tcp_rdma;
    socklen_t tcp_host_len, tcp_rdma_len;
};

#define CF_SMBD_SEND_SLOTS 16

/* A whole SMB2 message received, and whether it came with a remote invalidation. */
struct cf_msg {
    struct cf_msg *next;
    size_t len;
    int invalidate;               /* some fragment arrived by Send with Invalidate */
    uint32_t inv_rkey;            /* the STag it invalidated */
    struct smbd_data_hdr first;   /* the header of its first fragment */
    unsigned frags;               /* Data Transfer messages it came in */
    uint8_t data[];
};

/* One connection. Fields are read by the cases; change them only through the calls. */
struct cf_smbd {
    const struct cf_target *t;
    const struct sd_provider_ops *ops;
    struct sd_qp *qp;
    struct sd_cm_result cm;
    /* receives: t->credits buffers of max_receive_size, one registration */
    uint8_t *recv_mem;
    struct sd_mr recv_mr;
    uint32_t nrecv;
    /* sends: CF_SMBD_SEND_SLOTS buffers of the negotiated send size */
    uint8_t *send_mem;
    struct sd_mr send_mr;
    uint32_t send_slot_size;
    unsigned send_busy;           /* bit per slot */
    /* MS-SMBD 3.1.1.1 state */
    struct smbd_negotiate_resp neg; /* the server's Negotiate Response */
    int negotiated;
    uint32_t max_send;            /* negotiated: min(our preferred, peer MaxReceiveSize) */
    uint32_t send_credits;        /* granted by the peer, not yet spent */
    uint32_t recv_posted;         /* receives posted */
    uint32_t peer_credits;        /* receive credits the peer holds (granted, unspent) */
    /* received: fragments being reassembled, then whole SMB2 messages queued */
    uint8_t *rx;
    size_t rx_len, rx_cap;
    int rx_invalidate;            /* a fragment of it came by Send with Invalidate */
    struct smbd_data_hdr rx_first; /* its first fragment's header */
    unsigned rx_frags;
    uint32_t rx_inv_rkey;
    struct cf_msg *head, *tail;   /* whole messages not yet taken */
    struct cf_msg *taken;         /* the one cf_smbd_recv_msg returned last */
    int ack_due;                  /* the peer set SMB_DIRECT_RESPONSE_REQUESTED */
    int hold_credits;             /* set by a case: grant the peer nothing (CreditsGranted
                                     0, no empty grant messages) until cf_smbd_grant */
    int hold_acks;                /* set by a case: never answer SMB_DIRECT_RESPONSE_REQUESTED */
    /* set by a case: how cf_smbd_send_msg cuts and pads its fragments */
    const uint32_t *frag_plan;    /* payload bytes of each fragment, cycled (0: an empty
                                     fragment); NULL: as many as fit */
    size_t frag_plan_n;
    uint32_t pad_to;              /* junk after the payload up to this message length */
    /* what the peer's Data Transfer messages showed (MS-SMBD 2.2.3, 3.1.5.8) */
    uint32_t keepalives;          /* with SMB_DIRECT_RESPONSE_REQUESTED */
    uint64_t keepalive_ms;        /* when the last one came (sd_now_ms) */
    uint32_t empty_grants;        /* without payload, granting credits */
    uint32_t zero_requested;      /* with CreditsRequested 0 */
    uint32_t over_credit;         /* sent while the peer held none of our credits */
    /* negotiate response bytes (raw), for cases that check them */
    uint8_t neg_raw[64];
    size_t neg_raw_len;
    int neg_set;
    uint32_t recv_count;          /* messages received, any kind */
    /* connection end */
    int lost;
    int bad;                      /* the peer broke MS-SMBD (why says how) */
    enum sd_wc_status first_error; /* first failed completion's status (SD_WC_SUCCESS: none) */
    char why[160];                /* why the session failed (protocol, provider) */
};

/* RDMA connect to t (no MS-SMBD yet); receives are posted before the peer can send.
 * 0, or a negative errno with why set. */
int cf_smbd_connect(struct cf_smbd *s, const struct cf_target *t);
/* Disconnects (if connected) and frees everything. */
void cf_smbd_close(struct cf_smbd *s);

/* The Negotiate Request of t (MS-SMBD 2.2.1, version 1.0 only). */
void cf_smbd_default_negotiate(const struct cf_target *t, struct smbd_negotiate_req *req);
/* Sends req, waits for the Negotiate Response and applies it (3.1.5.2, 3.1.5.3):
 * 0 with s->neg when its Status is success; -EPROTO (why set) when it does not
 * decode or refuses; -ETIMEDOUT; -ENOTCONN when the connection ended. */
int cf_smbd_negotiate(struct cf_smbd *s, const struct smbd_negotiate_req *req);
/* Sends len raw bytes as one Send (any message, e.g. a malformed negotiate). */
int cf_smbd_send_raw(struct cf_smbd *s, const void *buf, size_t len);
/* Waits up to timeout_ms for the Negotiate Response (after a raw request) and decodes
 * it into s->neg whatever its Status: 0; -ENOTCONN (the connection ended first);
 * -ETIMEDOUT; -EPROTO (it does not decode; why set). */
int cf_smbd_wait_negotiate(struct cf_smbd *s, int timeout_ms);

/* Sends one SMB2 message, fragmented into Data Transfer messages of the negotiated
 * send size (MS-SMBD 3.1.4.1, 3.1.5.1), waiting for send credits as needed and
 * granting receive credits on each. 0, or a negative errno. */
int cf_smbd_send_msg(struct cf_smbd *s, const void *msg, size_t len);
/* The same with at most frag payload bytes per fragment (1 and up; the negotiated
 * room bounds it), for the cases that fragment on purpose. Without frag, a frag_plan
 * set on s cuts the fragments; pad_to pads each with junk. */
int cf_smbd_send_frags(struct cf_smbd *s, const void *msg, size_t len, size_t frag);
/* An empty Data Transfer message granting n receive credits (at most those not yet
 * granted), whatever hold_credits says (3.1.5.9). 0, or a negative errno. */
int cf_smbd_grant(struct cf_smbd *s, uint16_t n);
/* Waits up to timeout_ms for the next whole SMB2 message (reassembled, 3.1.5.8):
 * 0 with *msg (valid until the next call, which frees it); -ETIMEDOUT; -ENOTCONN (the
 * connection ended: s->first_error says how); -EPROTO (why set). */
int cf_smbd_recv_msg(struct cf_smbd *s, int timeout_ms, const struct cf_msg **msg);
/* An empty Data Transfer message with SMB_DIRECT_RESPONSE_REQUESTED (a keepalive,
 * MS-SMBD 3.1.6.2), granting what cf_smbd_send_msg would. 0, or a negative errno. */
int cf_smbd_keepalive(struct cf_smbd *s);
/* Waits up to timeout_ms until *counter (one of s's counters) reaches value: 0;
 * -ENOTCONN (the connection ended first); -ETIMEDOUT. */
int cf_smbd_wait_count(struct cf_smbd *s, const uint32_t *counter, uint32_t value,
                       int timeout_ms);
/* Waits up to timeout_ms for the connection to end: 0 when it did, -ETIMEDOUT.
 * Messages arriving meanwhile stay queued. */
int cf_smbd_wait_lost(struct cf_smbd *s, int timeout_ms);

/* Registers len bytes at buf for the peer (SD_ACCESS_* bits; 3.1.4.3). */
int cf_smbd_reg(struct cf_smbd *s, void *buf, size_t len, int access, struct sd_mr *mr);
int cf_smbd_dereg(struct cf_smbd *s, struct sd_mr *mr);

#endif
