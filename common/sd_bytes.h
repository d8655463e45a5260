/* SPDX-License-Identifier: BSD-3-Clause */
/* common/sd_bytes.h — fixed-width integers to and from wire bytes, little-endian (MS-SMBD,
 * SMB2, the legacy IRD/ORD header) and big-endian (the Appendix A IRD/ORD header), with
 * no alignment assumed and whatever the host's byte order. */
#ifndef SMBDIRECT_SD_BYTES_H
#define SMBDIRECT_SD_BYTES_H

#include <stdint.h>

static inline uint16_t sd_le16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static inline uint32_t sd_le32(const uint8_t *p)
{
    return (uint32_t)sd_le16(p) | (uint32_t)sd_le16(p + 2) << 16;
}
static inline uint64_t sd_le64(const uint8_t *p)
{
    return (uint64_t)sd_le32(p) | (uint64_t)sd_le32(p + 4) << 32;
}
static inline void sd_put_le16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}
static inline void sd_put_le32(uint8_t *p, uint32_t v)
{
    sd_put_le16(p, (uint16_t)v);
    sd_put_le16(p + 2, (uint16_t)(v >> 16));
}
static inline void sd_put_le64(uint8_t *p, uint64_t v)
{
    sd_put_le32(p, (uint32_t)v);
    sd_put_le32(p + 4, (uint32_t)(v >> 32));
}

static inline uint32_t sd_be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static inline void sd_put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

#endif
