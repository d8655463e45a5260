/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/th_smb2.h — raw SMB2 messages for the channel tests: headers, READ/WRITE
 * requests, NEGOTIATE/READ/WRITE/ERROR responses and buffer descriptors, written at the
 * MS-SMB2 2.2 offsets spelled out here (not taken from transport/channel), so a builder
 * under test is compared with an independent rendering. Fields a test does not set get
 * distinct non-zero bytes, so a rewrite that touches them shows. */
#ifndef TH_SMB2_H
#define TH_SMB2_H

#include <stddef.h>
#include <stdint.h>

#include "smb2_sign.h"

/* MS-SMB2 2.2.1.2 header fields a test chooses; the rest (CreditCharge, credits,
 * TreeId, SessionId, Signature) get fixed distinct values. */
struct th_hdr {
    uint16_t command;
    uint32_t status;
    uint32_t flags;
    uint32_t next_command;
    uint64_t message_id;
};

/* 2.2.19 READ / 2.2.21 WRITE request fields a test chooses; the others (Padding, Flags,
 * Offset, FileId, MinimumCount, a WRITE's Flags) get fixed distinct values. */
struct th_rw {
    uint16_t data_offset;     /* WRITE only */
    uint32_t length;
    uint32_t channel;
    uint32_t remaining;
    uint16_t info_offset, info_length;
};

#define TH_RW_FIXED 112u      /* header + 48 fixed body bytes */

void th_smb2_hdr(uint8_t *b, const struct th_hdr *h);
/* A READ request: header, 48 fixed bytes and a 1-byte Buffer 0; returns 113. */
size_t th_smb2_read_req(uint8_t *b, const struct th_hdr *h, const struct th_rw *rw);
/* A WRITE request's header and 48 fixed bytes; returns 112 (data is the caller's). */
size_t th_smb2_write_req(uint8_t *b, const struct th_hdr *h, const struct th_rw *rw);
/* A plain READ of length bytes (message_id, dialect-independent): 113 bytes. */
size_t th_smb2_plain_read(uint8_t *b, uint64_t message_id, uint32_t length);
/* A plain WRITE of length bytes of pattern data at DataOffset 112: 112 + length. */
size_t th_smb2_plain_write(uint8_t *b, uint64_t message_id, uint32_t length);
/* 2.2.3.1 of MS-SMBD: one 16-byte buffer descriptor. */
void th_smb2_desc(uint8_t *b, uint64_t offset, uint32_t token, uint32_t length);

/* A successful NEGOTIATE response (SERVER_TO_REDIR, StructureSize 65) with dialect: 129
 * bytes (64 + 65; no security buffer). */
size_t th_smb2_negotiate_resp(uint8_t *b, uint16_t dialect);
/* A READ response (SERVER_TO_REDIR added to h->flags): header and 16 fixed bytes with
 * DataOffset, DataLength, DataRemaining, Flags 0; returns 80 (data is the caller's). */
size_t th_smb2_read_resp(uint8_t *b, const struct th_hdr *h, uint8_t data_offset,
                         uint32_t data_length, uint32_t data_remaining);
/* A WRITE response with Count: 80 bytes. */
size_t th_smb2_write_resp(uint8_t *b, const struct th_hdr *h, uint32_t count);
/* An ERROR response (2.2.2, StructureSize 9, one ErrorData byte): 73 bytes. */
size_t th_smb2_error_resp(uint8_t *b, const struct th_hdr *h);
/* Interim response (STATUS_PENDING, ASYNC) to message_id: an ERROR body, 73 bytes. */
size_t th_smb2_interim_resp(uint8_t *b, uint64_t message_id);

/* The SessionId every header above carries, a signing key for it (AES-128-CMAC) and a key
 * store that knows that key only (chan_client_key_fn, bridge_chan_host.signing_key). */
#define TH_SMB2_SESSION_ID 0x778899AABBCCDDEEull
extern const struct smb2_sign_key th_smb2_key;
int th_smb2_key_of(void *arg, uint64_t session_id, struct smb2_sign_key *key);
/* The server's answer to a channel READ of message_id: 65536 bytes RDMA-written (DataLength
 * 0, DataRemaining 65536), signed with k (NULL: unsigned). */
size_t th_smb2_channel_read_resp(uint8_t *b, uint64_t message_id, const struct smb2_sign_key *k);

#endif
