/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/link/smbd_link_note.c — the relay's note in its connection reply's private
 * data (smbd_link_note.h). */
#include "smbd_link_note.h"

#include <string.h>

#include "sd_bytes.h"

static const uint8_t magic[4] = { 'S', 'D', 'P', 'R' };
#define NOTE_VERSION 1u

void smbd_link_note_encode(uint8_t out[SMBD_LINK_NOTE_LEN], uint16_t flags)
{
    memcpy(out, magic, sizeof(magic));
    sd_put_le16(out + 4, NOTE_VERSION);
    sd_put_le16(out + 6, flags);
}

uint16_t smbd_link_note_decode(const uint8_t *pd, size_t len)
{
    if (len < SMBD_LINK_NOTE_LEN || memcmp(pd, magic, sizeof(magic)) != 0 ||
        sd_le16(pd + 4) != NOTE_VERSION)
        return 0;
    return sd_le16(pd + 6);
}
