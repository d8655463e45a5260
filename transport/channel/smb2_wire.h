/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/channel/smb2_wire.h — the few SMB2 structures the READ/WRITE channel reads
 * and rewrites (MS-SMB2 2.2.1, 2.2.4, 2.2.19-2.2.21): constants, decoders with the
 * structural checks a message can prove alone, and the field encoders the rewrites
 * share. Little-endian on the wire; pure functions, no allocation, no I/O. Offsets
 * inside a command body count from the start of its SMB2 header, as MS-SMB2 does. */
#ifndef SMBDIRECT_SMB2_WIRE_H
#define SMBDIRECT_SMB2_WIRE_H

#include <stddef.h>
#include <stdint.h>

#define SMB2_HDR_SIZE 64u                 /* 2.2.1 */
#define SMB2_HDR_SIGNATURE 48u            /* the Signature's offset in it */
#define SMB2_TRANSFORM_HDR_SIZE 52u       /* 2.2.41, before an encrypted message */

#define SMB2_FLAGS_SERVER_TO_REDIR    0x00000001u /* 2.2.1.1 */
#define SMB2_FLAGS_ASYNC_COMMAND      0x00000002u
#define SMB2_FLAGS_RELATED_OPERATIONS 0x00000004u
#define SMB2_FLAGS_SIGNED             0x00000008u

enum smb2_command {                       /* 2.2.1.1 Command */
    SMB2_NEGOTIATE = 0x0000,
    SMB2_SESSION_SETUP = 0x0001,
    SMB2_LOGOFF = 0x0002,
    SMB2_TREE_CONNECT = 0x0003,
    SMB2_CANCEL = 0x000C,     /* 2.2.30: never answered */
    SMB2_READ = 0x0008,
    SMB2_WRITE = 0x0009,
    SMB2_IOCTL = 0x000B,
};

#define SMB2_FSCTL_VALIDATE_NEGOTIATE_INFO 0x00140204u /* 2.2.31 CtlCode */

#define SMB2_STATUS_SUCCESS 0x00000000u
#define SMB2_STATUS_PENDING 0x00000103u   /* interim response (MS-SMB2 3.3.4.2) */

enum smb2_dialect {                       /* 2.2.4 DialectRevision */
    SMB2_DIALECT_0202 = 0x0202,
    SMB2_DIALECT_0210 = 0x0210,
    SMB2_DIALECT_WILDCARD = 0x02FF,       /* "SMB 2.???": a second NEGOTIATE follows */
    SMB2_DIALECT_0300 = 0x0300,
    SMB2_DIALECT_0302 = 0x0302,
    SMB2_DIALECT_0311 = 0x0311,
};

/* 2.2.19 / 2.2.21 Channel; 3 (SMB2_CHANNEL_RDMA_TRANSFORM, 3.1.1) is not used here. */
enum smb2_channel {
    SMB2_CHANNEL_NONE = 0,
    SMB2_CHANNEL_RDMA_V1 = 1,
    SMB2_CHANNEL_RDMA_V1_INVALIDATE = 2,
};

/* 2.2.19 / 2.2.21: StructureSize 49 counts one byte of Buffer; the fixed part (header
 * plus 48 body bytes) ends where Buffer starts. */
#define SMB2_RW_REQ_STRUCTURE_SIZE 49u
#define SMB2_RW_REQ_FIXED          (SMB2_HDR_SIZE + 48u)
/* 2.2.20: StructureSize 17, fixed part header plus 16 body bytes, Buffer after it. */
#define SMB2_READ_RESP_STRUCTURE_SIZE 17u
#define SMB2_READ_RESP_FIXED          (SMB2_HDR_SIZE + 16u)

struct smb2_hdr {
    uint16_t command;
    uint32_t status;
    uint32_t flags;
    uint32_t next_command;  /* offset of the next header of a compound chain, 0: last */
    uint64_t message_id;
    uint64_t session_id;
};

/* SessionId of a related request of a compound chain that means "the previous
 * request's" (3.2.4.1.4, 3.3.5.2.7.2). */
#define SMB2_SESSION_ID_PREVIOUS 0xFFFFFFFFFFFFFFFFull

/* Decodes the SMB2 header at msg: 0, or -1 when len is short of a header, the protocol
 * id is not 0xFE 'SMB' (so a transform 0xFD, 2.2.41, or compression 0xFC, 2.2.42,
 * header never decodes), StructureSize is not 64, or NextCommand points inside this
 * header, at or past len, or to an offset not 8-byte aligned (3.2.4.1.4, 3.3.4.1.3). */
int smb2_hdr_decode(const uint8_t *msg, size_t len, struct smb2_hdr *h);

/* What a signer MACs first (3.1.4.1): the header up to its Signature. 0 and its
 * SessionId when p starts an SMB2 header (0xFE 'SMB', StructureSize 64) and len holds
 * its first SMB2_HDR_SIGNATURE bytes, else -1. */
int smb2_hdr_signed_part(const uint8_t *p, size_t len, uint64_t *session_id);

/* 1 when msg starts with a transform header (2.2.41 ProtocolId 0xFD 'S' 'M' 'B'): an
 * encrypted message. */
static inline int smb2_is_transform(const uint8_t *msg, size_t len)
{
    return len >= 4 && msg[0] == 0xFD && msg[1] == 'S' && msg[2] == 'M' && msg[3] == 'B';
}

/* 1 when the command is part of a compound chain (2.2.1.2 NextCommand, 3.2.4.1.4
 * SMB2_FLAGS_RELATED_OPERATIONS). */
static inline int smb2_hdr_in_compound(const struct smb2_hdr *h)
{
    return h->next_command != 0 || (h->flags & SMB2_FLAGS_RELATED_OPERATIONS);
}

/* 1 for an interim response: async, STATUS_PENDING; the final one follows (3.3.4.2). */
static inline int smb2_hdr_is_interim(const struct smb2_hdr *h)
{
    return (h->flags & SMB2_FLAGS_ASYNC_COMMAND) && h->status == SMB2_STATUS_PENDING;
}

/* 1 when the request h (the header of msg, len bytes) is one that SMB 3.x clients sign
 * whatever the session's signing: SESSION_SETUP (the binding and final legs), a 3.1.1
 * TREE_CONNECT (MS-SMB2 3.2.4.1.1: signed unless the share encrypts), and the
 * FSCTL_VALIDATE_NEGOTIATE_INFO IOCTL of 3.0/3.0.2 (2.2.31.4: its response must come
 * signed, so the request is too). Its signature says nothing of the session's data. */
int smb2_signed_regardless(const struct smb2_hdr *h, const uint8_t *msg, size_t len);

/* 1 when an NTSTATUS has severity "error" (MS-ERREF 2.3: Sev bits 11); success,
 * informational and warning (e.g. STATUS_BUFFER_OVERFLOW on a pipe) carry a body. */
static inline int smb2_status_is_error(uint32_t status)
{
    return (status >> 30) == 3;
}

/* The commands of a message, one after another along NextCommand (3.2.4.1.4). */
struct smb2_chain {
    const uint8_t *msg;
    size_t len, off;
    int done;
};

void smb2_chain_init(struct smb2_chain *c, const uint8_t *msg, size_t len);
/* The next command: its decoded header and its bytes (up to its NextCommand, or the
 * end of the message). 0, or -1 after the last command or at one that does not decode
 * (the iteration then ends). */
int smb2_chain_next(struct smb2_chain *c, struct smb2_hdr *h, const uint8_t **cmd,
                    size_t *cmd_len);

/* The dialect a NEGOTIATE response settles (2.2.4 DialectRevision): 0 and *dialect set
 * (to 0 for the 0x02FF wildcard: not decided yet) when msg is a successful SMB2
 * NEGOTIATE response (SERVER_TO_REDIR, status 0, StructureSize 65); else -1. */
int smb2_negotiated_dialect(const uint8_t *msg, size_t len, uint16_t *dialect);

/* The fields of a READ or WRITE request (2.2.19, 2.2.21) the channel reads or sets. */
struct smb2_rw_req {
    uint16_t data_offset;   /* WRITE: offset of the inline data; READ: not present */
    uint32_t length;        /* bytes to read, or inline bytes written */
    uint32_t channel;
    uint32_t remaining;     /* RemainingBytes: a WRITE over a channel, its data length */
    uint16_t info_offset;   /* Read/WriteChannelInfoOffset */
    uint16_t info_length;   /* Read/WriteChannelInfoLength */
};

/* Decodes the READ or WRITE request (command, from its header) in the len bytes of one
 * command. 0, or -1 when len is short of the fixed part, StructureSize is not 49 or the
 * command is neither. */
int smb2_rw_req_decode(const uint8_t *cmd, size_t len, uint16_t command, struct smb2_rw_req *r);
/* Writes r's fields into the fixed part (SMB2_RW_REQ_FIXED bytes) of the READ or WRITE
 * (command, one of the two) request at cmd; every other byte is left as it is, and so
 * are a READ's Padding and Flags where a WRITE has DataOffset. */
void smb2_rw_req_put(uint8_t *cmd, uint16_t command, const struct smb2_rw_req *r);

/* The fields of a READ response (2.2.20). */
struct smb2_read_resp {
    uint8_t data_offset;
    uint32_t data_length;
    uint32_t data_remaining;  /* bytes sent on the channel (RDMA) */
};

/* Decodes the READ response body in the len bytes of one command: 0, or -1 when len is
 * short of the fixed part or StructureSize is not 17 (an error response carries the
 * 2.2.2 ERROR body instead). */
int smb2_read_resp_decode(const uint8_t *cmd, size_t len, struct smb2_read_resp *r);
/* Builds the fixed part of a READ response at out: the header of resp (its first
 * SMB2_HDR_SIZE of len bytes: flags, status, MessageId, credits, signature bytes) with
 * NextCommand 0, then StructureSize 17, r's fields, Reserved and Reserved2/Flags 0.
 * Returns SMB2_READ_RESP_FIXED, or -1 when resp is short of a header or outlen of the
 * fixed part. */
int smb2_read_resp_build(const uint8_t *resp, size_t len, const struct smb2_read_resp *r,
                         uint8_t *out, size_t outlen);

#endif
