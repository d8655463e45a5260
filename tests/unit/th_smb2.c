/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/th_smb2.c — raw SMB2 message builders for the channel tests (see th_smb2.h). */
#include "th_smb2.h"

#include <string.h>

#include "sd_bytes.h"

void th_smb2_hdr(uint8_t *b, const struct th_hdr *h)
{
    memset(b, 0, 64);
    b[0] = 0xFE, b[1] = 'S', b[2] = 'M', b[3] = 'B';
    sd_put_le16(b + 4, 64);                   /* StructureSize */
    sd_put_le16(b + 6, 0x0011);               /* CreditCharge */
    sd_put_le32(b + 8, h->status);
    sd_put_le16(b + 12, h->command);
    sd_put_le16(b + 14, 0x0022);              /* CreditRequest/CreditResponse */
    sd_put_le32(b + 16, h->flags);
    sd_put_le32(b + 20, h->next_command);
    sd_put_le64(b + 24, h->message_id);
    sd_put_le32(b + 36, 0x33445566);          /* TreeId (or AsyncId high half) */
    sd_put_le64(b + 40, TH_SMB2_SESSION_ID);
    for (int i = 0; i < 16; i++)
        b[48 + i] = (uint8_t)(0xA0 + i);      /* Signature */
}

/* The 48 fixed body bytes common to READ and WRITE, before the channel fields. */
static void rw_common(uint8_t *b, const struct th_hdr *h, uint32_t length)
{
    th_smb2_hdr(b, h);
    memset(b + 64, 0, 48);
    sd_put_le16(b + 64, 49);                  /* StructureSize */
    sd_put_le32(b + 68, length);
    sd_put_le64(b + 72, 0x0102030405060708ull); /* Offset */
    for (int i = 0; i < 16; i++)
        b[80 + i] = (uint8_t)(0x50 + i);      /* FileId */
}

size_t th_smb2_read_req(uint8_t *b, const struct th_hdr *h, const struct th_rw *rw)
{
    rw_common(b, h, rw->length);
    b[66] = 0x50;                             /* Padding */
    b[67] = 0x01;                             /* Flags: READ_UNBUFFERED */
    sd_put_le32(b + 96, 0x00000123);          /* MinimumCount */
    sd_put_le32(b + 100, rw->channel);
    sd_put_le32(b + 104, rw->remaining);
    sd_put_le16(b + 108, rw->info_offset);
    sd_put_le16(b + 110, rw->info_length);
    b[112] = 0;                               /* Buffer */
    return 113;
}

size_t th_smb2_write_req(uint8_t *b, const struct th_hdr *h, const struct th_rw *rw)
{
    rw_common(b, h, rw->length);
    sd_put_le16(b + 66, rw->data_offset);
    sd_put_le32(b + 96, rw->channel);
    sd_put_le32(b + 100, rw->remaining);
    sd_put_le16(b + 104, rw->info_offset);
    sd_put_le16(b + 106, rw->info_length);
    sd_put_le32(b + 108, 0x00000001);         /* Flags: WRITE_THROUGH */
    return TH_RW_FIXED;
}

size_t th_smb2_plain_read(uint8_t *b, uint64_t message_id, uint32_t length)
{
    const struct th_hdr h = { .command = 8, .message_id = message_id };
    const struct th_rw rw = { .length = length };

    return th_smb2_read_req(b, &h, &rw);
}

size_t th_smb2_plain_write(uint8_t *b, uint64_t message_id, uint32_t length)
{
    const struct th_hdr h = { .command = 9, .message_id = message_id };
    const struct th_rw rw = { .data_offset = TH_RW_FIXED, .length = length };

    th_smb2_write_req(b, &h, &rw);
    for (uint32_t i = 0; i < length; i++)
        b[TH_RW_FIXED + i] = (uint8_t)(i * 7 + 1);
    return TH_RW_FIXED + length;
}

void th_smb2_desc(uint8_t *b, uint64_t offset, uint32_t token, uint32_t length)
{
    sd_put_le64(b, offset);
    sd_put_le32(b + 8, token);
    sd_put_le32(b + 12, length);
}

size_t th_smb2_negotiate_resp(uint8_t *b, uint16_t dialect)
{
    const struct th_hdr h = { .command = 0, .flags = 0x1 };

    th_smb2_hdr(b, &h);
    memset(b + 64, 0, 65);
    sd_put_le16(b + 64, 65);                  /* StructureSize */
    sd_put_le16(b + 66, 0x0001);              /* SecurityMode */
    sd_put_le16(b + 68, dialect);             /* DialectRevision */
    sd_put_le32(b + 96, 0x00800000);          /* MaxReadSize */
    sd_put_le32(b + 100, 0x00800000);         /* MaxWriteSize */
    return 129;
}

size_t th_smb2_read_resp(uint8_t *b, const struct th_hdr *h, uint8_t data_offset,
                         uint32_t data_length, uint32_t data_remaining)
{
    struct th_hdr r = *h;

    r.flags |= 0x1;
    th_smb2_hdr(b, &r);
    memset(b + 64, 0, 16);
    sd_put_le16(b + 64, 17);
    b[66] = data_offset;
    sd_put_le32(b + 68, data_length);
    sd_put_le32(b + 72, data_remaining);
    return 80;
}

size_t th_smb2_write_resp(uint8_t *b, const struct th_hdr *h, uint32_t count)
{
    struct th_hdr r = *h;

    r.flags |= 0x1;
    th_smb2_hdr(b, &r);
    memset(b + 64, 0, 16);
    sd_put_le16(b + 64, 17);
    sd_put_le32(b + 68, count);
    return 80;
}

size_t th_smb2_error_resp(uint8_t *b, const struct th_hdr *h)
{
    struct th_hdr r = *h;

    r.flags |= 0x1;
    th_smb2_hdr(b, &r);
    memset(b + 64, 0, 9);
    sd_put_le16(b + 64, 9);
    return 73;
}

size_t th_smb2_interim_resp(uint8_t *b, uint64_t message_id)
{
    const struct th_hdr h = { .command = 8, .status = 0x103, .flags = 0x2,
                              .message_id = message_id };

    return th_smb2_error_resp(b, &h);
}

const struct smb2_sign_key th_smb2_key = {
    SMB2_SIGN_AES_CMAC, { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 }
};

int th_smb2_key_of(void *arg, uint64_t session_id, struct smb2_sign_key *key)
{
    (void)arg;
    if (session_id != TH_SMB2_SESSION_ID)
        return -1;
    *key = th_smb2_key;
    return 0;
}

size_t th_smb2_channel_read_resp(uint8_t *b, uint64_t message_id, const struct smb2_sign_key *k)
{
    const struct th_hdr h = { .command = 0x0008, .flags = 0x00000001, /* SERVER_TO_REDIR */
                              .message_id = message_id };
    size_t n = th_smb2_read_resp(b, &h, 0x50, 0, 65536);

    if (k && smb2_sign(k, SMB2_SIGN_FROM_SERVER, b, n) != 0)
        return 0;
    return n;
}
