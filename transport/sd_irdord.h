/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/sd_irdord.h — MS-SMBD Appendix A (section 6) IRD/ORD negotiate
 * header: the 8 bytes an iWARP provider puts before the private data on port 5445,
 * and the section 6.2 min rules. Pure functions, no I/O. */
#ifndef SMBDIRECT_SD_IRDORD_H
#define SMBDIRECT_SD_IRDORD_H

#include <stddef.h>
#include <stdint.h>

#define SD_IRDORD_HDR_LEN 8

/* Writes IRD then ORD, each 4 bytes big-endian (MS-SMBD 6.1; what Windows sends). */
void sd_irdord_encode(uint8_t out[SD_IRDORD_HDR_LEN], uint32_t ird, uint32_t ord);

/* Reads the header from the first len bytes of private data. Accepts big-endian and
 * the legacy little-endian form old Linux peers sent (*legacy_le = 1). Returns 0, or
 * -1 when the data is too short, a value is zero (MS-SMBD 6.1: "greater than zero")
 * or the values fit neither byte order. */
int sd_irdord_decode(const uint8_t *data, size_t len, uint32_t *ird, uint32_t *ord,
                     int *legacy_le);

/* MS-SMBD 6.2, accepting peer: from our IRD/ORD and the connector's, the values to
 * put in the reply header (from the connector's point of view) and the values in
 * force on our side. Returns 0, or -1 when either ends up zero (reject). */
int sd_irdord_accept(uint32_t our_ird, uint32_t our_ord, uint32_t peer_ird, uint32_t peer_ord,
                     uint32_t *reply_ird, uint32_t *reply_ord, uint32_t *local_ird,
                     uint32_t *local_ord);

#endif
