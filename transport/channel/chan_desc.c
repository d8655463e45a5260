/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/channel/chan_desc.c — Buffer Descriptor V1 lists in SMB2 channel
 * information, element by element through the MS-SMBD codec (see chan_desc.h). */
#include "chan_desc.h"

void chan_desc_put(uint8_t *out, const struct smbd_buffer_desc *d, size_t n)
{
    for (size_t i = 0; i < n; i++)
        smbd_encode_buffer_desc(d[i].offset, d[i].token, d[i].length,
                                out + i * SMBD_BUFFER_DESC_SIZE, SMBD_BUFFER_DESC_SIZE);
}

void chan_desc_get(const uint8_t *raw, size_t i, struct smbd_buffer_desc *d)
{
    smbd_decode_buffer_desc(raw + i * SMBD_BUFFER_DESC_SIZE, SMBD_BUFFER_DESC_SIZE, &d->offset,
                            &d->token, &d->length);
}
