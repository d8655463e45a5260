/* SPDX-License-Identifier: BSD-3-Clause */
/* conformance/cf_smb2.h — a minimal SMB2 client over the raw SMB Direct session
 * (cf_smbd.h), enough for the channel cases: NEGOTIATE a chosen dialect set,
 * SESSION_SETUP with NTLMSSP (NTLMv2 or anonymous, never signing), TREE_CONNECT,
 * CREATE/CLOSE, READ and WRITE inline or over the RDMA channel (MS-SMB2 2.2.19,
 * 2.2.21 with Buffer Descriptor V1 lists, MS-SMBD 2.2.3.1). One request at a time;
 * credits and MessageIds are kept (MS-SMB2 3.2.4.1.5, 3.2.5.1.4). */
#ifndef SMBDIRECT_CF_SMB2_H
#define SMBDIRECT_CF_SMB2_H

#include "cf_smb2_wire.h"
#include "cf_smbd.h"

struct cf_smb2 {
    struct cf_smbd sd;
    uint64_t next_mid;
    uint32_t credits;           /* granted by the server, not yet charged */
    uint64_t session_id;
    uint32_t tree_id;
    struct cf_smb2_negotiate_resp neg;
    uint32_t max_read, max_write; /* min(SMB2 MaxRead/WriteSize, SMBD MaxReadWriteSize) */
    /* the last response */
    uint32_t status;
    int invalidate;             /* it came by Send with Invalidate ... */
    uint32_t inv_rkey;          /* ... of this STag */
    char why[200];              /* what went wrong, for a case's detail */
};

/* Return values of the calls below: 0 (status success), -EREMOTEIO (the server
 * answered c->status, an error), -ENOTCONN (the connection ended), -ETIMEDOUT,
 * -EPROTO (a malformed answer), other negative errno; why says what happened. */

/* RDMA connect, MS-SMBD negotiate (t's defaults) and SMB2 NEGOTIATE of dialects. */
int cf_smb2_connect(struct cf_smb2 *c, const struct cf_target *t, const uint16_t *dialects,
                    int n);
/* SESSION_SETUP rounds with NTLMSSP: NTLMv2 for user (DOMAIN\USER or USER) and
 * password, anonymous when user is NULL. */
int cf_smb2_login(struct cf_smb2 *c, const char *user, const char *password);
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

/* Ends the session's connection and frees it. */
void cf_smb2_close(struct cf_smb2 *c);

#endif
