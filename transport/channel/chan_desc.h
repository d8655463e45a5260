/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/channel/chan_desc.h — Buffer Descriptor V1 lists (MS-SMBD 2.2.3.1) as the
 * channel information of an SMB2 READ or WRITE request (MS-SMB2 2.2.19, 2.2.21): 16-byte
 * elements, packed, at Read/WriteChannelInfoOffset. */
#ifndef SMBDIRECT_CHAN_DESC_H
#define SMBDIRECT_CHAN_DESC_H

#include <stddef.h>
#include <stdint.h>

#include "smbd_conn.h"
#include "smbd_wire.h"

/* The most descriptors a 16-bit Read/WriteChannelInfoLength can hold: 4095. */
#define CHAN_MAX_DESCS (UINT16_MAX / SMBD_BUFFER_DESC_SIZE)

/* Writes n descriptors at out (n * SMBD_BUFFER_DESC_SIZE bytes). */
void chan_desc_put(uint8_t *out, const struct smbd_buffer_desc *d, size_t n);
/* Reads element i of the list at raw (which holds at least i + 1 elements). */
void chan_desc_get(const uint8_t *raw, size_t i, struct smbd_buffer_desc *d);

#endif
