/* SPDX-License-Identifier: BSD-3-Clause */
/* conformance/cf_smb2_wire.h — the SMB2 requests the conformance client sends and the
 * responses it reads (MS-SMB2 2.2.3-2.2.22): NEGOTIATE, SESSION_SETUP, TREE_CONNECT,
 * CREATE, CLOSE, READ, WRITE. Pure functions, no I/O; the decoders take peer bytes
 * and refuse anything short or out of bounds. READ/WRITE channel fields go through
 * transport/channel/smb2_wire.h, the descriptors through chan_desc.h. */
#ifndef SMBDIRECT_CF_SMB2_WIRE_H
#define SMBDIRECT_CF_SMB2_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "smb2_wire.h"
#include "smbd_conn.h"

enum cf_smb2_command {                 /* 2.2.1.2 Command */
    CF_SMB2_SESSION_SETUP = 0x0001,
    CF_SMB2_TREE_CONNECT = 0x0003,
    CF_SMB2_CREATE = 0x0005,
    CF_SMB2_CLOSE = 0x0006,
};

#define CF_SMB2_DIALECT_0311 0x0311u
#define CF_SMB2_MAX_DIALECTS 4
#define CF_SMB2_FILEID_SIZE 16

#define CF_STATUS_MORE_PROCESSING 0xC0000016u
#define CF_STATUS_END_OF_FILE     0xC0000011u

/* 2.2.4 SecurityMode */
#define CF_SMB2_SIGNING_ENABLED  0x0001u
#define CF_SMB2_SIGNING_REQUIRED 0x0002u
/* 2.2.5 Flags */
#define CF_SMB2_SESSION_FLAG_BINDING 0x01u

/* The fixed header of a request (2.2.1.2 SYNC). */
struct cf_smb2_req_hdr {
    uint16_t command, credit_charge, credit_request;
    uint64_t message_id, session_id;
    uint32_t tree_id;
};
void cf_smb2_put_hdr(uint8_t *out, const struct cf_smb2_req_hdr *h);

/* Each encoder writes a whole request (header included) into out and returns its
 * length, or -1 when cap is too small. */
/* 2.2.3; dialect 0x0311 adds the PREAUTH_INTEGRITY_CAPABILITIES context (2.2.3.1.1). */
int cf_smb2_negotiate_req(const struct cf_smb2_req_hdr *h, const uint16_t *dialects, int n,
                          const uint8_t guid[16], uint8_t *out, size_t cap);
/* 2.2.5 with the security blob, Flags flags (CF_SMB2_SESSION_FLAG_BINDING) and
 * SecurityMode security_mode (CF_SMB2_SIGNING_*) */
int cf_smb2_session_setup_req(const struct cf_smb2_req_hdr *h, uint8_t flags,
                              uint8_t security_mode, const uint8_t *blob, size_t len,
                              uint8_t *out, size_t cap);
/* 2.2.9 with the UTF-16 path \\host\share */
int cf_smb2_tree_connect_req(const struct cf_smb2_req_hdr *h, const char *host,
                             const char *share, uint8_t *out, size_t cap);
/* 2.2.13: read/write/delete access, shared, FILE_OVERWRITE_IF, delete-on-close */
int cf_smb2_create_req(const struct cf_smb2_req_hdr *h, const char *name, uint8_t *out,
                       size_t cap);
int cf_smb2_close_req(const struct cf_smb2_req_hdr *h, const uint8_t fid[16], uint8_t *out,
                      size_t cap);
/* 2.2.21 inline (data, len) or, with channel set, RemainingBytes len and the descriptors
 * as WriteChannelInfo (no inline data). */
int cf_smb2_write_req(const struct cf_smb2_req_hdr *h, const uint8_t fid[16], uint64_t offset,
                      const uint8_t *data, uint32_t len, uint32_t channel,
                      const struct smbd_buffer_desc *d, size_t nd, uint8_t *out, size_t cap);
/* 2.2.19 READ of len bytes; with channel set the descriptors as ReadChannelInfo. */
int cf_smb2_read_req(const struct cf_smb2_req_hdr *h, const uint8_t fid[16], uint64_t offset,
                     uint32_t len, uint32_t channel, const struct smbd_buffer_desc *d, size_t nd,
                     uint8_t *out, size_t cap);
/* Bytes a request of nd descriptors needs at most. */
#define CF_SMB2_RW_REQ_SIZE(nd) (SMB2_RW_REQ_FIXED + 8u + (size_t)(nd) * SMBD_BUFFER_DESC_SIZE)

/* ---- responses: each decoder takes one whole response message ---- */

/* The header fields a client needs (2.2.1.2) besides smb2_hdr's. */
struct cf_smb2_resp {
    struct smb2_hdr h;
    uint16_t credit_response;
    uint64_t session_id;
    uint32_t tree_id;
};
/* 0, or -1 when msg is not an SMB2 response header. */
int cf_smb2_resp_decode(const uint8_t *msg, size_t len, struct cf_smb2_resp *r);

#define CF_SMB2_CAP_MULTI_CHANNEL 0x00000008u /* 2.2.4 Capabilities */

struct cf_smb2_negotiate_resp {       /* 2.2.4 */
    uint16_t security_mode, dialect;
    uint32_t capabilities, max_transact, max_read, max_write;
};
int cf_smb2_negotiate_resp_decode(const uint8_t *msg, size_t len,
                                  struct cf_smb2_negotiate_resp *r);
/* 2.2.6: SessionFlags and the security blob (inside msg). */
int cf_smb2_session_setup_resp_decode(const uint8_t *msg, size_t len, uint16_t *flags,
                                      const uint8_t **blob, size_t *blob_len);
/* 2.2.14: the FileId. */
int cf_smb2_create_resp_decode(const uint8_t *msg, size_t len, uint8_t fid[16]);
/* 2.2.22: Count. */
int cf_smb2_write_resp_decode(const uint8_t *msg, size_t len, uint32_t *count);
/* 2.2.20 with the inline data inside msg (DataOffset/DataLength checked). */
int cf_smb2_read_resp_data(const uint8_t *msg, size_t len, struct smb2_read_resp *r,
                           const uint8_t **data);

#endif
