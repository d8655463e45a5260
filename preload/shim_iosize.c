/* SPDX-License-Identifier: BSD-3-Clause */
/* preload/shim_iosize.c — the READ/WRITE size arithmetic of shim_iosize.h. */
#include "shim_iosize.h"

#include "smb2_wire.h"

/* What an inline READ/WRITE message holds besides its data: a transform header when
 * the session is sealed (MS-SMB2 2.2.41), the SMB2 header and the larger fixed body
 * (WRITE request, 2.2.21; the READ response's is smaller, 2.2.20). */
#define SHIM_IO_OVERHEAD (SMB2_TRANSFORM_HDR_SIZE + SMB2_RW_REQ_FIXED)
#define SHIM_IO_ALIGN 4096u /* keep the program's I/O page-sized */

/* The most data an inline message of at most limit bytes carries. */
static uint32_t inline_data(uint32_t limit)
{
    uint32_t n = limit > SHIM_IO_OVERHEAD ? limit - SHIM_IO_OVERHEAD : 1;

    return n >= SHIM_IO_ALIGN ? n / SHIM_IO_ALIGN * SHIM_IO_ALIGN : n;
}

uint32_t shim_iosize_cap(const struct shim_iosize_limits *l, enum shim_io_kind kind,
                         uint32_t wanted)
{
    uint32_t cap;

    switch (kind) {
    case SHIM_IO_WRITE:
        cap = inline_data(l->peer_max_fragmented);
        break;
    case SHIM_IO_READ:
        cap = inline_data(l->own_max_fragmented);
        break;
    default:
        cap = inline_data(l->peer_max_fragmented < l->own_max_fragmented
                              ? l->peer_max_fragmented : l->own_max_fragmented);
        return wanted < cap ? wanted : cap;
    }
    /* With the channel, an I/O above the threshold leaves as a small request, its data in
     * one buffer of at most MaxReadWriteSize (MS-SMBD 3.1.4.3); one at or below it goes
     * inline, so the threshold must fit there too, or nothing above the inline limit is
     * safe. The program's READs and WRITEs then take the channel's size: the smaller of
     * MaxReadWriteSize and SMBDIRECT_CHANNEL_IO_SIZE, whether that is above or below the
     * inline limit (larger I/O would leave the channel for inline messages), unless no
     * I/O above the threshold fits it. */
    if (!l->inline_only && l->channel_threshold > 0 && l->channel_threshold <= cap) {
        uint32_t channel = l->max_read_write < l->channel_io_size ? l->max_read_write
                                                                  : l->channel_io_size;

        if (channel > l->channel_threshold)
            cap = channel;
    }
    return wanted < cap ? wanted : cap;
}
