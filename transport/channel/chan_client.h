/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/channel/chan_client.h — the client role of the SMB2 READ/WRITE RDMA channel
 * (MS-SMB2 3.2.4.6, 3.2.4.7, 3.2.5.11, 3.2.5.12), I/O-free: the shim's glue hands it
 * every complete SMB2 message of the program (chan_client_plan_request) and of the
 * server (chan_client_on_response); it says which requests to carry over the channel,
 * keeps the outstanding ones by MessageId and says what to do with each response. The
 * glue registers buffers, posts and sends (MS-SMBD 3.1.4.3, 3.1.4.4).
 *
 * A request goes over the channel only when the core can rewrite it without breaking
 * it: a plain, non-compound SMB2 READ or WRITE on dialect 3.0 or later, unsigned, or
 * signed in a session whose signing key on this connection the glue knows
 * (signing_key): the rewritten request is then signed again with that key, the
 * server's response to it checked with it, and a READ's rebuilt inline response signed
 * with it (MS-SMB2 3.1.4.1; the bytes RDMA moves are outside the SMB2 signature, as
 * for any client that signs a channel request). The rewritten messages come from
 * chan_client_build.h. */
#ifndef SMBDIRECT_CHAN_CLIENT_H
#define SMBDIRECT_CHAN_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "chan_table.h"
#include "smbd_conn.h"

/* The signing key of session_id on this connection, copied into *key: 0, or -1 when
 * none is known (the session's READ/WRITE then go inline). */
typedef int (*chan_client_key_fn)(void *arg, uint64_t session_id, struct smb2_sign_key *key);

struct chan_client {
    uint16_t dialect;      /* from the server's NEGOTIATE response; 0: not decided */
    uint32_t threshold;    /* I/Os of more bytes go over the channel; 0: channel off */
    uint32_t max_io;       /* the most one channel I/O may move: MaxReadWriteSize */
    int remote_invalidation; /* 1 (default): ask for RDMA_V1_INVALIDATE from 3.0.2; 0: the
                                registrations cannot be invalidated remotely, RDMA_V1 */
    int protected_seen;    /* the program sent an encrypted message, or a signed one that
                              only a session signing everything signs (its READ/WRITE too)
                              of a session whose key signing_key does not give */
    chan_client_key_fn signing_key; /* NULL: signed sessions go inline */
    void *key_arg;
    /* Outstanding channel I/Os. Released ones (after their final response, or all of
     * them with chan_table_release_all on teardown) are taken out with
     * chan_table_take_released, each exactly once, to free their cookies. */
    struct chan_table ios;
};

void chan_client_init(struct chan_client *cc, uint32_t threshold, uint32_t max_io);
/* Frees the table; take the released cookies first (see ios). */
void chan_client_fini(struct chan_client *cc);

/* What to do with one request of the program. */
struct chan_client_plan {
    enum chan_kind kind;     /* CHAN_PASS: send unchanged */
    uint64_t message_id;
    uint32_t length;         /* bytes to read or to write */
    uint32_t channel;        /* SMB2_CHANNEL_RDMA_V1_INVALIDATE from 3.0.2, else _RDMA_V1 */
    const uint8_t *data;     /* WRITE: the length bytes of inline data, inside msg */
    int signed_io;           /* the request is signed: sign the rewritten one with key */
    struct smb2_sign_key key; /* signed_io: the session's key (the caller wipes the plan) */
};

/* Plans one complete SMB2 message of the program (len bytes, no Direct-TCP prefix);
 * returns plan->kind. READ or WRITE when all hold: dialect >= 3.0 (MS-SMB2 2.2.19,
 * 2.2.21: the channel is SMB 3.x only); the message is an SMB2 header (not transform
 * or compression: 0xFD/0xFC, MS-SMB2 2.2.41, 2.2.42), unsigned or signed in a session
 * signing_key knows (plan->signed_io and plan->key), not compound
 * (NextCommand 0 and no SMB2_FLAGS_RELATED_OPERATIONS); a READ or WRITE request with
 * Channel NONE and no channel information; Length > threshold and <= max_io; a WRITE's
 * data inside the message (DataOffset >= 64 + 48, DataOffset + Length <= len).
 * Everything else, CANCEL included, passes. */
enum chan_kind chan_client_plan_request(struct chan_client *cc, const uint8_t *msg,
                                        size_t len, struct chan_client_plan *plan);

/* 1 once this connection's READ/WRITE go inline for good, so the program must size them
 * to fit in one SMB Direct message (MS-SMBD 3.1.4.2 MaxFragmentedSize): the channel is
 * off (threshold 0), the dialect is below 3.0, or the program sent an encrypted message,
 * or a signed one other than those every 3.x client signs (smb2_signed_regardless) in a
 * session whose key signing_key does not give: sealed sessions, and signed ones
 * without a key, are never rewritten (MS-SMB2 3.2.4.1.1). 0 while the dialect is
 * undecided. */
int chan_client_inline_only(const struct chan_client *cc);

/* Once the rewritten request is sent: remembers it with the descriptors it carried
 * (their first Token, for remote invalidation), cookie and, signed, the key. 0, -EINVAL (plan not READ
 * or WRITE, or no descriptor), -EEXIST (MessageId outstanding already), -ENOMEM. */
int chan_client_track(struct chan_client *cc, const struct chan_client_plan *plan,
                      const struct smbd_buffer_desc *descs, size_t ndescs, void *cookie);

enum chan_client_action {
    CHAN_CLIENT_PASS,       /* hand the message to the program unchanged */
    CHAN_CLIENT_READ_DONE,  /* hand it chan_build_read_response + bytes of cookie's buffer */
    CHAN_CLIENT_ERROR,      /* the server broke the protocol: end the connection, log why */
};

struct chan_client_result {
    enum chan_client_action action;
    void *cookie;            /* READ_DONE: the READ's cookie (also released, see ios) */
    uint32_t bytes;          /* READ_DONE: bytes the server wrote (DataRemaining) */
    int signed_io;           /* READ_DONE: sign the rebuilt response with key (server's) */
    struct smb2_sign_key key; /* signed_io: the session's key (the caller wipes res) */
    const char *why;         /* ERROR: one line naming the violation */
};

/* Handles one complete SMB2 message of the server. invalidated_token is the local
 * Token a Send with Invalidate delivering it named (MS-SMBD 3.1.5.8
 * Connection.InvalidatedToken), 0 if none. Learns the dialect from a NEGOTIATE response
 * (a 0x02FF answer: not decided). Walks a compound chain; each response to a
 * tracked MessageId that is final (not STATUS_PENDING with SMB2_FLAGS_ASYNC_COMMAND,
 * MS-SMB2 3.3.4.2) releases its I/O, marked invalidated when invalidated_token is its
 * first Token. A tracked READ answered with a non-error status and DataLength 0 is
 * READ_DONE with bytes = DataRemaining (MS-SMB2 3.3.5.12); ERROR when DataRemaining is
 * more than was registered, the READ response does not decode, it is part of a chain,
 * or it is signed for an unsigned READ (the rewrite would not verify); for a signed
 * READ, ERROR also when the response is unsigned or its signature does not verify
 * with the session's key (MS-SMB2 3.2.5.1.3: altered or forged, so its data is never
 * handed on). A READ answered inline or with an
 * error, a WRITE, an interim or untracked response: PASS. ERROR also when
 * invalidated_token is not the first Token of an I/O whose final response this
 * message carries (MS-SMBD 3.1.4.2: the server invalidates the token of the request
 * it answers). */
void chan_client_on_response(struct chan_client *cc, const uint8_t *msg, size_t len,
                             uint32_t invalidated_token, struct chan_client_result *res);

#endif
