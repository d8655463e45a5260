/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/channel/chan_client_build.h — the messages the client role writes: a
 * planned READ or WRITE rewritten to name the RDMA channel (MS-SMB2 2.2.19, 2.2.21,
 * 3.2.4.6, 3.2.4.7), and the ordinary inline READ response the program gets once the
 * server has written the data into the registered buffer (MS-SMB2 2.2.20). Every
 * builder takes the message its plan came from, writes into out and returns the bytes
 * written, or -1 when out (outlen bytes) is too small or the arguments do not fit. */
#ifndef SMBDIRECT_CHAN_CLIENT_BUILD_H
#define SMBDIRECT_CHAN_CLIENT_BUILD_H

#include <stddef.h>
#include <stdint.h>

#include "chan_client.h"
#include "smb2_wire.h"
#include "smbd_wire.h"

/* Bytes of a rewritten request carrying ndescs descriptors: 64 + 48 + 16 * ndescs. */
#define CHAN_REQUEST_SIZE(ndescs) (SMB2_RW_REQ_FIXED + (size_t)(ndescs) * SMBD_BUFFER_DESC_SIZE)

/* The WRITE of plan (CHAN_WRITE) over the channel: msg's header and fixed body with
 * DataOffset 0, Length 0, Channel plan->channel, RemainingBytes plan->length,
 * WriteChannelInfoOffset 64 + 48 and WriteChannelInfoLength 16 * ndescs, then the
 * descriptors (MS-SMBD 2.2.3.1); the inline data is left out. 1 to 4095 descriptors. */
int chan_build_write_request(const uint8_t *msg, size_t len, const struct chan_client_plan *plan,
                             const struct smbd_buffer_desc *descs, size_t ndescs, uint8_t *out,
                             size_t outlen);
/* The READ of plan (CHAN_READ) over the channel: msg's header and fixed body with
 * Channel plan->channel, RemainingBytes 0, ReadChannelInfoOffset 64 + 48,
 * ReadChannelInfoLength 16 * ndescs, then the descriptors in place of the 1-byte
 * Buffer; Length as it was. 1 to 4095 descriptors. */
int chan_build_read_request(const uint8_t *msg, size_t len, const struct chan_client_plan *plan,
                            const struct smbd_buffer_desc *descs, size_t ndescs, uint8_t *out,
                            size_t outlen);
/* The inline READ response for a READ_DONE: resp's header (NextCommand 0), then
 * StructureSize 17, DataOffset 0x50, DataLength bytes, DataRemaining 0, Flags 0. The
 * glue appends the bytes of data right after (at offset 0x50). Returns 0x50. */
int chan_build_read_response(const uint8_t *resp, size_t len, uint32_t bytes, uint8_t *out,
                             size_t outlen);

#endif
