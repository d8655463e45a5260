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
    /* With the channel, an I/O above the threshold (up to MaxReadWriteSize) leaves as a
     * small request; one at or below it goes inline, so the threshold must fit there
     * too, or nothing above the inline limit is safe. Then the program's READs and
     * WRITEs take the channel's own I/O size (SMBDIRECT_CHANNEL_IO_SIZE) besides. */
    if (!l->inline_only && l->channel_threshold > 0 && l->channel_threshold <= cap) {
        if (l->max_read_write > cap)
            cap = l->max_read_write;
        if (l->channel_io_size < cap)
            cap = l->channel_io_size;
    }
    return wanted < cap ? wanted : cap;
}
