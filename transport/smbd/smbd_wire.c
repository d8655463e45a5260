/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/smbd/smbd_wire.c — MS-SMBD wire codec (MS-SMBD 2.2): fixed-layout messages to
 * and from little-endian bytes, with the structural checks a message can prove alone. */
#include "smbd_wire.h"

#include "sd_bytes.h"

#include <errno.h>
#include <string.h>

/* Reserved fields are written as 0 and ignored on receipt (MS-SMBD 2.2). */
int smbd_encode_negotiate_req(const struct smbd_negotiate_req *m, uint8_t *out, size_t out_len)
{
    if (out_len < SMBD_NEGOTIATE_REQ_SIZE)
        return -1;
    sd_put_le16(out + 0, m->min_version);
    sd_put_le16(out + 2, m->max_version);
    sd_put_le16(out + 4, 0);
    sd_put_le16(out + 6, m->credits_requested);
    sd_put_le32(out + 8, m->preferred_send_size);
    sd_put_le32(out + 12, m->max_receive_size);
    sd_put_le32(out + 16, m->max_fragmented_size);
    return SMBD_NEGOTIATE_REQ_SIZE;
}

int smbd_encode_negotiate_resp(const struct smbd_negotiate_resp *m, uint8_t *out, size_t out_len)
{
    if (out_len < SMBD_NEGOTIATE_RESP_SIZE)
        return -1;
    sd_put_le16(out + 0, m->min_version);
    sd_put_le16(out + 2, m->max_version);
    sd_put_le16(out + 4, m->negotiated_version);
    sd_put_le16(out + 6, 0);
    sd_put_le16(out + 8, m->credits_requested);
    sd_put_le16(out + 10, m->credits_granted);
    sd_put_le32(out + 12, m->status);
    sd_put_le32(out + 16, m->max_read_write_size);
    sd_put_le32(out + 20, m->preferred_send_size);
    sd_put_le32(out + 24, m->max_receive_size);
    sd_put_le32(out + 28, m->max_fragmented_size);
    return SMBD_NEGOTIATE_RESP_SIZE;
}

/* A message with payload carries 4 zero padding bytes and DataOffset 24; an empty
 * one is the bare 20-byte header with DataOffset 0 (MS-SMBD 3.1.5.4). Any other
 * DataOffset cannot be expressed by this fixed layout and is refused. */
int smbd_encode_data_hdr(const struct smbd_data_hdr *m, uint8_t *out, size_t out_len)
{
    uint32_t want_offset = m->data_length ? SMBD_DATA_OFFSET : 0;
    size_t size = m->data_length ? SMBD_DATA_OFFSET : SMBD_DATA_HEADER_SIZE;

    if (m->data_offset != want_offset || out_len < size)
        return -1;
    sd_put_le16(out + 0, m->credits_requested);
    sd_put_le16(out + 2, m->credits_granted);
    sd_put_le16(out + 4, m->flags);
    sd_put_le16(out + 6, 0);
    sd_put_le32(out + 8, m->remaining_data_length);
    sd_put_le32(out + 12, m->data_offset);
    sd_put_le32(out + 16, m->data_length);
    if (m->data_length)
        memset(out + SMBD_DATA_HEADER_SIZE, 0, SMBD_DATA_OFFSET - SMBD_DATA_HEADER_SIZE);
    return (int)size;
}

/* MS-SMBD 2.2.3.1: Offset (8), Token (4), Length (4). */
int smbd_encode_buffer_desc(uint64_t offset, uint32_t token, uint32_t length,
                            uint8_t *out, size_t out_len)
{
    if (out_len < SMBD_BUFFER_DESC_SIZE)
        return -1;
    sd_put_le32(out + 0, (uint32_t)offset);
    sd_put_le32(out + 4, (uint32_t)(offset >> 32));
    sd_put_le32(out + 8, token);
    sd_put_le32(out + 12, length);
    return SMBD_BUFFER_DESC_SIZE;
}

/* MS-SMBD 3.1.5.6: only the length is checked here; a bad version range must be
 * answered with STATUS_NOT_SUPPORTED by the state machine, not dropped. */
int smbd_decode_negotiate_req(const uint8_t *buf, size_t len, struct smbd_negotiate_req *m,
                              const char **why)
{
    if (len < SMBD_NEGOTIATE_REQ_SIZE) {
        *why = "Negotiate Request shorter than 20 bytes (MS-SMBD 3.1.5.6)";
        return -EPROTO;
    }
    m->min_version = sd_le16(buf + 0);
    m->max_version = sd_le16(buf + 2);
    m->credits_requested = sd_le16(buf + 6);
    m->preferred_send_size = sd_le32(buf + 8);
    m->max_receive_size = sd_le32(buf + 12);
    m->max_fragmented_size = sd_le32(buf + 16);
    return 0;
}

/* MS-SMBD 3.1.5.7: the value checks need Connection state and live in smbd_conn. */
int smbd_decode_negotiate_resp(const uint8_t *buf, size_t len, struct smbd_negotiate_resp *m,
                               const char **why)
{
    if (len < SMBD_NEGOTIATE_RESP_SIZE) {
        *why = "Negotiate Response shorter than 32 bytes (MS-SMBD 3.1.5.7)";
        return -EPROTO;
    }
    m->min_version = sd_le16(buf + 0);
    m->max_version = sd_le16(buf + 2);
    m->negotiated_version = sd_le16(buf + 4);
    m->credits_requested = sd_le16(buf + 8);
    m->credits_granted = sd_le16(buf + 10);
    m->status = sd_le32(buf + 12);
    m->max_read_write_size = sd_le32(buf + 16);
    m->preferred_send_size = sd_le32(buf + 20);
    m->max_receive_size = sd_le32(buf + 24);
    m->max_fragmented_size = sd_le32(buf + 28);
    return 0;
}

static int reject(const char **why, const char *rule)
{
    *why = rule;
    return -EPROTO;
}

/* MS-SMBD 2.2.3 and 3.1.5.8. The payload may not overlap the 20-byte header. */
int smbd_decode_data_hdr(const uint8_t *buf, size_t len, struct smbd_data_hdr *m,
                         const char **why)
{
    struct smbd_data_hdr h;

    if (len < SMBD_DATA_HEADER_SIZE)
        return reject(why, "Data Transfer shorter than 20 bytes (MS-SMBD 3.1.5.8)");
    h.credits_requested = sd_le16(buf + 0);
    h.credits_granted = sd_le16(buf + 2);
    h.flags = sd_le16(buf + 4);
    h.remaining_data_length = sd_le32(buf + 8);
    h.data_offset = sd_le32(buf + 12);
    h.data_length = sd_le32(buf + 16);

    if (h.flags & ~SMBD_FLAG_RESPONSE_REQUESTED)
        return reject(why, "Data Transfer has unknown Flags (MS-SMBD 2.2.3)");
    if (h.data_offset % 8)
        return reject(why, "Data Transfer DataOffset not 8-byte aligned (MS-SMBD 3.1.5.8)");
    if (h.data_length == 0 && h.data_offset != 0)
        return reject(why, "Data Transfer without payload has DataOffset != 0 (MS-SMBD 2.2.3)");
    if (h.data_length != 0 && h.data_offset < SMBD_DATA_HEADER_SIZE)
        return reject(why, "Data Transfer payload overlaps the header (MS-SMBD 2.2.3)");
    if ((uint64_t)h.data_offset + h.data_length > len)
        return reject(why, "Data Transfer DataOffset + DataLength beyond the message "
                           "(MS-SMBD 3.1.5.8)");
    *m = h;
    return 0;
}

int smbd_decode_buffer_desc(const uint8_t *buf, size_t len, uint64_t *offset, uint32_t *token,
                            uint32_t *length)
{
    if (len < SMBD_BUFFER_DESC_SIZE)
        return -EPROTO;
    *offset = (uint64_t)sd_le32(buf + 0) | (uint64_t)sd_le32(buf + 4) << 32;
    *token = sd_le32(buf + 8);
    *length = sd_le32(buf + 12);
    return 0;
}
