/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/smbd/smbd_wire.h — MS-SMBD wire codec (MS-SMBD 2.2): encode and decode with
 * full structural validation. Little-endian on the wire regardless of host order.
 * Pure functions, no allocation, no I/O. Semantic checks that depend on connection
 * state (version ranges, size minimums, credit rules) live in the state machine. */
#ifndef SMBDIRECT_SMBD_WIRE_H
#define SMBDIRECT_SMBD_WIRE_H

#include <stddef.h>
#include <stdint.h>

#define SMBD_VERSION_1_0            0x0100u  /* 1.7 */
#define SMBD_NEGOTIATE_REQ_SIZE     20u      /* 2.2.1 */
#define SMBD_NEGOTIATE_RESP_SIZE    32u      /* 2.2.2 */
#define SMBD_DATA_HEADER_SIZE       20u      /* 2.2.3 up to DataLength */
#define SMBD_DATA_OFFSET            24u      /* header + 4 bytes padding (8-byte aligned) */
#define SMBD_BUFFER_DESC_SIZE       16u      /* 2.2.3.1 */
#define SMBD_FLAG_RESPONSE_REQUESTED 0x0001u /* 2.2.3 */
#define SMBD_STATUS_SUCCESS              0x00000000u
#define SMBD_STATUS_NOT_SUPPORTED        0xC00000BBu
#define SMBD_STATUS_INSUFFICIENT_RESOURCES 0xC000009Au

struct smbd_negotiate_req {          /* 2.2.1 */
    uint16_t min_version, max_version;
    uint16_t credits_requested;
    uint32_t preferred_send_size, max_receive_size, max_fragmented_size;
};

struct smbd_negotiate_resp {         /* 2.2.2 */
    uint16_t min_version, max_version, negotiated_version;
    uint16_t credits_requested, credits_granted;
    uint32_t status;
    uint32_t max_read_write_size, preferred_send_size, max_receive_size, max_fragmented_size;
};

struct smbd_data_hdr {               /* 2.2.3 */
    uint16_t credits_requested, credits_granted, flags;
    uint32_t remaining_data_length, data_offset, data_length;
};

/* Encoders write exactly the fixed size into out (out_len must be >= it) and return
 * the number of bytes written, or -1 when out_len is too small. */
int smbd_encode_negotiate_req(const struct smbd_negotiate_req *m, uint8_t *out, size_t out_len);
int smbd_encode_negotiate_resp(const struct smbd_negotiate_resp *m, uint8_t *out, size_t out_len);
/* Writes the header of a Data Transfer message: with a payload (data_length > 0,
 * data_offset must be 24) the 20 header bytes plus 4 zero padding bytes, returning 24;
 * an empty message (data_length 0, data_offset must be 0) is the bare 20-byte header,
 * padding absent (MS-SMBD 3.1.5.4), returning 20. -1 for any other data_offset. */
int smbd_encode_data_hdr(const struct smbd_data_hdr *m, uint8_t *out, size_t out_len);
int smbd_encode_buffer_desc(uint64_t offset, uint32_t token, uint32_t length,
                            uint8_t *out, size_t out_len);

/* Decoders return 0, or a negative errno (-EPROTO) with *why set to a static string
 * naming the violated rule. They check only what the message itself can prove:
 * length, and for Data Transfer: DataOffset 8-byte aligned, DataOffset/DataLength
 * inside the message, DataOffset 0 iff DataLength 0, unknown flags. */
int smbd_decode_negotiate_req(const uint8_t *buf, size_t len, struct smbd_negotiate_req *m,
                              const char **why);
int smbd_decode_negotiate_resp(const uint8_t *buf, size_t len, struct smbd_negotiate_resp *m,
                               const char **why);
int smbd_decode_data_hdr(const uint8_t *buf, size_t len, struct smbd_data_hdr *m,
                         const char **why);
int smbd_decode_buffer_desc(const uint8_t *buf, size_t len, uint64_t *offset, uint32_t *token,
                            uint32_t *length);

#endif
