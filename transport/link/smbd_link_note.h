/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/link/smbd_link_note.h — what an smbdirect-relay tells the SMB Direct client
 * about itself in its connection reply's private data: 8 bytes after the MS-SMBD
 * Appendix A IRD/ORD header (on iWARP; the whole private data on IB/RoCE), which any
 * other client skips (Appendix A reads the header "at the beginning of any private
 * data"). The note says the server is a keyless relay: it cannot sign again, so it
 * refuses a signed SMB2 READ/WRITE over the RDMA channel, and the shim keeps a signed
 * session's I/O inline on that connection. Pure encode/decode, no I/O.
 *
 * Layout, little-endian: the 4 bytes "SDPR", version (2 bytes, 1), flags (2 bytes). */
#ifndef SMBDIRECT_SMBD_LINK_NOTE_H
#define SMBDIRECT_SMBD_LINK_NOTE_H

#include <stddef.h>
#include <stdint.h>

#define SMBD_LINK_NOTE_LEN 8

/* The server holds no SMB2 session keys (a relay): signed channel I/O is refused. */
#define SMBD_LINK_NOTE_KEYLESS 0x0001u

void smbd_link_note_encode(uint8_t out[SMBD_LINK_NOTE_LEN], uint16_t flags);

/* The flags of a note at the start of the len bytes of private data at pd (the part
 * after the IRD/ORD header), or 0 when there is none (another server, or a version
 * this one does not know). */
uint16_t smbd_link_note_decode(const uint8_t *pd, size_t len);

#endif
