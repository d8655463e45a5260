/* SPDX-License-Identifier: BSD-3-Clause */
/* preload/shim_iosize.h — how large the program's SMB2 READ/WRITE (and other
 * size-negotiated requests) may be on a tunnel so every SMB2 message still fits in one
 * SMB Direct message: an I/O that goes inline must fit in the receiver's
 * MaxFragmentedSize (MS-SMBD 3.1.4.2); one the READ/WRITE channel carries is bounded by
 * MaxReadWriteSize instead (3.1.4.3). Pure arithmetic: interpose_smb2cli.c applies it
 * to the sizes Samba's client library asks the connection for. */
#ifndef SMBDIRECT_SHIM_IOSIZE_H
#define SMBDIRECT_SHIM_IOSIZE_H

#include <stdint.h>

struct shim_iosize_limits {
    uint32_t peer_max_fragmented; /* the largest message the peer reassembles (we send) */
    uint32_t own_max_fragmented;  /* the largest we reassemble (the peer sends) */
    uint32_t max_read_write;      /* MaxReadWriteSize: the most one channel I/O moves */
    uint32_t channel_io_size;     /* the most a READ or WRITE by the channel moves */
    uint32_t channel_threshold;   /* I/Os of more bytes use the channel; 0: channel off */
    int inline_only;              /* READ/WRITE go inline for good (signing, sealing,
                                     dialect below 3.0, registration refused) */
};

enum shim_io_kind {
    SHIM_IO_READ,  /* READ: the response carries the data */
    SHIM_IO_WRITE, /* WRITE: the request carries it */
    SHIM_IO_TRANS, /* IOCTL, QUERY_INFO, QUERY_DIRECTORY...: always inline, either way */
};

/* The largest size of that kind the program may use: wanted (the server's own limit)
 * lowered to what the tunnel carries. */
uint32_t shim_iosize_cap(const struct shim_iosize_limits *l, enum shim_io_kind kind,
                         uint32_t wanted);

#endif
