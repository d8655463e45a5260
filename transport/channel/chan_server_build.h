/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/channel/chan_server_build.h — the messages the server role writes: a
 * planned channel READ or WRITE rewritten inline for the TCP backend (MS-SMB2 2.2.19,
 * 2.2.21 with Channel NONE), and the READ response the SMB Direct client gets once the
 * data is in its buffer (MS-SMB2 2.2.20, 3.3.5.12). Every builder writes into out and
 * returns the bytes written, or -1 when out (outlen bytes) is too small or the
 * arguments do not fit. */
#ifndef SMBDIRECT_CHAN_SERVER_BUILD_H
#define SMBDIRECT_CHAN_SERVER_BUILD_H

#include <stddef.h>
#include <stdint.h>

#include "chan_server.h"

/* The WRITE of plan (CHAN_WRITE) for the backend: msg's header and fixed body with
 * DataOffset 64 + 48, Length plan->size, Channel NONE, RemainingBytes 0 and
 * WriteChannelInfoOffset/Length 0. The glue appends the plan->size bytes it RDMA-read
 * right after. Returns 64 + 48. */
int chan_build_inline_write(const uint8_t *msg, size_t len, const struct chan_server_plan *plan,
                            uint8_t *out, size_t outlen);
/* The READ of plan (CHAN_READ) for the backend: msg's header and fixed body with
 * Channel NONE, RemainingBytes 0, ReadChannelInfoOffset/Length 0 and the 1-byte Buffer
 * 0; Length as it was. Returns 64 + 49. */
int chan_build_inline_read(const uint8_t *msg, size_t len, const struct chan_server_plan *plan,
                           uint8_t *out, size_t outlen);
/* The READ response for a WRITE_DATA once the bytes are written into the client's
 * buffer: resp's header (NextCommand 0), then StructureSize 17, DataOffset 0x50,
 * DataLength 0, DataRemaining bytes, Flags 0 (MS-SMB2 3.3.5.12: over RDMA the data is
 * not in the response; DataOffset names where Buffer would start, as ksmbd sends).
 * Returns 0x50: no Buffer byte follows. */
int chan_build_channel_read_response(const uint8_t *resp, size_t len, uint32_t bytes,
                                     uint8_t *out, size_t outlen);

#endif
