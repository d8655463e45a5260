/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/sd_irdord.c — MS-SMBD Appendix A IRD/ORD negotiate header codec
 * and the accepting peer's section 6.2 rules. */
#include "sd_irdord.h"

#include "sd_bytes.h"

/* Real IRD/ORD values are small (a device's max_qp_rd_atom); anything above this in
 * one byte order means the peer used the other one. */
#define SD_IRDORD_MAX_PLAUSIBLE 0xffffu

static int plausible(uint32_t ird, uint32_t ord)
{
    return ird > 0 && ord > 0 && ird <= SD_IRDORD_MAX_PLAUSIBLE && ord <= SD_IRDORD_MAX_PLAUSIBLE;
}

void sd_irdord_encode(uint8_t out[SD_IRDORD_HDR_LEN], uint32_t ird, uint32_t ord)
{
    sd_put_be32(out, ird); /* MS-SMBD 6.1 */
    sd_put_be32(out + 4, ord);
}

int sd_irdord_decode(const uint8_t *data, size_t len, uint32_t *ird, uint32_t *ord,
                     int *legacy_le)
{
    if (len < SD_IRDORD_HDR_LEN)
        return -1;
    if (plausible(sd_be32(data), sd_be32(data + 4))) {
        *ird = sd_be32(data);
        *ord = sd_be32(data + 4);
        *legacy_le = 0;
        return 0;
    }
    /* A small value cannot be plausible in both byte orders, so this is unambiguous. */
    if (plausible(sd_le32(data), sd_le32(data + 4))) {
        *ird = sd_le32(data);
        *ord = sd_le32(data + 4);
        *legacy_le = 1;
        return 0;
    }
    return -1;
}

static uint32_t min_u32(uint32_t a, uint32_t b) { return a < b ? a : b; }

int sd_irdord_accept(uint32_t our_ird, uint32_t our_ord, uint32_t peer_ird, uint32_t peer_ord,
                     uint32_t *reply_ird, uint32_t *reply_ord, uint32_t *local_ird,
                     uint32_t *local_ord)
{
    /* MS-SMBD 6.2: reply IRD = min(our ORD, peer IRD), reply ORD = min(our IRD, peer
     * ORD). The reply is what the connector uses; our side is its mirror image (the
     * reads we may issue are the connector's IRD, the reads we serve its ORD). */
    *reply_ird = min_u32(our_ord, peer_ird);
    *reply_ord = min_u32(our_ird, peer_ord);
    *local_ird = *reply_ord;
    *local_ord = *reply_ird;
    return (*reply_ird == 0 || *reply_ord == 0) ? -1 : 0;
}
