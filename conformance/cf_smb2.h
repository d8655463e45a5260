/* SPDX-License-Identifier: BSD-3-Clause */
/* conformance/cf_smb2.h — a minimal SMB2 client over the raw SMB Direct session
 * (cf_smbd.h) or over TCP (cf_tcp.h), enough for the channel and multichannel cases:
 * NEGOTIATE a chosen dialect set, SESSION_SETUP with NTLMSSP (NTLMv2 or anonymous;
 * unsigned, signed, or binding a second channel to a signed session: cf_smb2_session.c),
 * TREE_CONNECT, CREATE/CLOSE, READ and WRITE inline or over the RDMA channel (MS-SMB2
 * 2.2.19, 2.2.21 with Buffer Descriptor V1 lists, MS-SMBD 2.2.3.1). One request at a
 * time; credits and MessageIds are kept (MS-SMB2 3.2.4.1.5, 3.2.5.1.4). On a signed
 * session every request is signed and every response's signature checked (3.2.4.1.1,
 * 3.2.5.1.3); the 3.1.1 preauth integrity hash is kept for the signing keys (3.2.5.2). */
#ifndef SMBDIRECT_CF_SMB2_H
#define SMBDIRECT_CF_SMB2_H

#include "cf_preauth.h"
#include "cf_smb2_wire.h"
#include "cf_smbd.h"
#include "smb2_sign.h"

struct cf_smb2 {
    struct cf_smbd sd;          /* the SMB Direct connection, unless tcp is one */
    const struct cf_target *t;  /* timeouts, and the host of tree paths */
    int tcp;                    /* >= 0: the connection is this TCP socket instead */
    struct cf_msg *tcp_msg;     /* the message last received over tcp */
    uint8_t client_guid[16];    /* 2.2.3 ClientGuid: a bound channel's is its session's */
    uint64_t next_mid;
    uint32_t credits;           /* granted by the server, not yet charged */
    uint64_t session_id;
    uint32_t tree_id;
    struct cf_smb2_negotiate_resp neg;
    uint32_t max_read, max_write; /* min(SMB2 MaxRead/WriteSize, SMBD MaxReadWriteSize) */
    /* signing: Session.SigningKey and this connection's Channel.SigningKey (3.2.5.3.1) */
    int sign;                   /* requests signed, responses verified */
    int binding;                /* SESSION_SETUP binds this connection to session_id */
    struct smb2_sign_key session_key, channel_key;
    struct cf_preauth preauth;  /* the connection's, then its session's or channel's */
    uint32_t verified;          /* the server's signatures verified */
    /* the last response */
    uint32_t status;
    int invalidate;             /* it came by Send with Invalidate ... */
    uint32_t inv_rkey;          /* ... of this STag */
    char why[200];              /* what went wrong, for a case's detail */
};

/* Return values of the calls below: 0 (status success), -EREMOTEIO (the server
 * answered c->status, an error), -ENOTCONN (the connection ended), -ETIMEDOUT,
 * -EPROTO (a malformed answer), other negative errno; why says what happened. */

/* RDMA connect, MS-SMBD negotiate (t's defaults) and SMB2 NEGOTIATE of dialects with
 * ClientGuid guid (NULL: a random one). */
int cf_smb2_connect(struct cf_smb2 *c, const struct cf_target *t, const uint16_t *dialects,
                    int n, const uint8_t *guid);
/* The same over TCP to addr (the server's SMB port); t gives the timeouts and host. */
int cf_smb2_connect_tcp(struct cf_smb2 *c, const struct cf_target *t,
                        const struct sockaddr *addr, socklen_t addrlen,
                        const uint16_t *dialects, int n, const uint8_t *guid);

/* SESSION_SETUP (cf_smb2_session.c), rounds with NTLMSSP: NTLMv2 for user (DOMAIN\USER
 * or USER) and password, anonymous when user is NULL. Unsigned: -EPERM (why set) when
 * the server requires signing. */
int cf_smb2_login(struct cf_smb2 *c, const char *user, const char *password);
/* A signed session for user (dialect 3.0 or later): SecurityMode SIGNING_REQUIRED, the
 * signing key from NTLM's session key (smb2_sign_key_init; 3.1.1 over the preauth hash),
 * the final response's signature verified (-EBADMSG, why naming it, when it fails); every
 * later request signed and response verified. */
int cf_smb2_login_signed(struct cf_smb2 *c, const char *user, const char *password);
/* Binds c's connection (negotiated at session's dialect, with its ClientGuid) to the
 * signed session of session as a second channel (MS-SMB2 3.2.4.2.3.1, 3.2.5.3.3):
 * SESSION_SETUP with SMB2_SESSION_FLAG_BINDING, signed with Session.SigningKey, for the
 * same user; Channel.SigningKey from this authentication's session key (3.1.1: over this
 * connection's preauth hash); the final response verified with it. c then uses session's
 * SessionId, signed. */
int cf_smb2_bind(struct cf_smb2 *c, const struct cf_smb2 *session, const char *user,
                 const char *password);

int cf_smb2_tree_connect(struct cf_smb2 *c, const char *share);
/* Creates (overwrites) name, delete-on-close. */
int cf_smb2_create(struct cf_smb2 *c, const char *name, uint8_t fid[16]);
int cf_smb2_close_file(struct cf_smb2 *c, const uint8_t fid[16]);

/* Inline WRITE of len bytes (several requests of at most max_write). */
int cf_smb2_write(struct cf_smb2 *c, const uint8_t fid[16], uint64_t offset, const void *data,
                  size_t len);
/* One inline WRITE request of len bytes, whatever its size (the cases that size the
 * SMB Direct message on purpose). */
int cf_smb2_write_one(struct cf_smb2 *c, const uint8_t fid[16], uint64_t offset,
                      const void *data, uint32_t len);
/* Inline READ of len bytes into out (several requests); *got: bytes read (short at EOF). */
int cf_smb2_read(struct cf_smb2 *c, const uint8_t fid[16], uint64_t offset, void *out,
                 size_t len, size_t *got);
/* WRITE over the channel (Channel RDMA_V1 or RDMA_V1_INVALIDATE): the server RDMA-reads
 * len bytes from d; *count: the response's Count. */
int cf_smb2_write_chan(struct cf_smb2 *c, const uint8_t fid[16], uint64_t offset, uint32_t len,
                       uint32_t channel, const struct smbd_buffer_desc *d, size_t nd,
                       uint32_t *count);
/* READ over the channel: the server RDMA-writes into d; *remaining: DataRemaining (the
 * bytes written), checked against a DataLength of 0. */
int cf_smb2_read_chan(struct cf_smb2 *c, const uint8_t fid[16], uint64_t offset, uint32_t len,
                      uint32_t channel, const struct smbd_buffer_desc *d, size_t nd,
                      uint32_t *remaining);

/* Ends the session's connection and frees it (keys wiped). */
void cf_smb2_close(struct cf_smb2 *c);

/* For the client's own modules: the header of the next request of command, and one
 * request/response exchange (the request signed when the session signs, the response
 * matched, its signature checked, the preauth hash kept): 0 or an error as above. */
struct cf_smb2_req_hdr cf_smb2_next_hdr(struct cf_smb2 *c, uint16_t command, uint32_t payload);
int cf_smb2_call(struct cf_smb2 *c, const struct cf_smb2_req_hdr *h, uint8_t *req, int len,
                 const struct cf_msg **resp);
int cf_smb2_say(struct cf_smb2 *c, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
