/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/soft/soft_mpa.c — MPA request/reply/reject frames and the IRD/ORD
 * negotiation of RFC 6581 and MS-SMBD Appendix A. Markers are never used. */
#include "soft_mpa.h"
#include "sd_irdord.h"
#include "log.h"

#include <errno.h>
#include <string.h>

static uint32_t min_u32(uint32_t a, uint32_t b) { return a < b ? a : b; }

static size_t put_frame_hdr(uint8_t *out, int reply, uint8_t flags, uint8_t rev,
                            uint16_t pd_len)
{
    memcpy(out, reply ? MPA_KEY_REP : MPA_KEY_REQ, MPA_KEY_LEN);  /* RFC 5044 7.1.1 */
    out[16] = flags;
    out[17] = rev;
    sd_iw_put16(out + 18, pd_len);
    return MPA_RR_HDR_LEN;
}

int sd_soft_mpa_parse_hdr(const uint8_t hdr[MPA_RR_HDR_LEN], int reply)
{
    if (memcmp(hdr, reply ? MPA_KEY_REP : MPA_KEY_REQ, MPA_KEY_LEN) != 0)
        return -EPROTO;
    uint16_t pd_len = sd_iw_get16(hdr + 18);
    return pd_len > MPA_MAX_PRIVATE_DATA ? -EPROTO : pd_len;
}

int sd_soft_mpa_build_request(const struct sd_cm_params *p, int want_crc, uint8_t *out,
                              size_t cap)
{
    size_t hdr_len = p->smbd_ird_ord_header ? SD_IRDORD_HDR_LEN : 0;
    size_t pd_len = MPA_V2_PARAMS_LEN + hdr_len + p->private_data_len;
    if (p->private_data_len > SD_MAX_PRIVATE_DATA || (p->private_data_len && !p->private_data) ||
        p->ird > MPA_V2_IRD_ORD_MASK || p->ord > MPA_V2_IRD_ORD_MASK ||
        cap < MPA_RR_HDR_LEN + pd_len)
        return -EINVAL;
    uint8_t *pd = out + put_frame_hdr(out, 0, (uint8_t)(MPA_FLAG_ENHANCED | (want_crc ? MPA_FLAG_CRC : 0)),
                                      MPA_REVISION_2, (uint16_t)pd_len);
    /* RFC 6581 5.1: our IRD and ORD; no peer-to-peer RTR (the initiator sends first). */
    sd_iw_put16(pd, (uint16_t)p->ird);
    sd_iw_put16(pd + 2, (uint16_t)p->ord);
    if (hdr_len)
        sd_irdord_encode(pd + MPA_V2_PARAMS_LEN, p->ird, p->ord);   /* MS-SMBD 6.1 */
    if (p->private_data_len)
        memcpy(pd + MPA_V2_PARAMS_LEN + hdr_len, p->private_data, p->private_data_len);
    return (int)(MPA_RR_HDR_LEN + pd_len);
}

int sd_soft_mpa_reject(uint8_t *out, size_t *out_len, uint8_t rev, const char *why)
{
    if (why)
        sd_warn("soft-iWARP: rejecting MPA request: %s", why);
    *out_len = put_frame_hdr(out, 1, MPA_FLAG_REJECT, rev, 0);     /* RFC 5044 7.1.3 */
    return -ECONNREFUSED;
}

int sd_soft_mpa_respond(const uint8_t *req, size_t req_len, const struct sd_cm_params *p,
                        int want_crc, uint8_t *out, size_t *out_len,
                        struct sd_soft_mpa_result *res)
{
    if (req_len < MPA_RR_HDR_LEN)
        return -EPROTO;
    int pd_len = sd_soft_mpa_parse_hdr(req, 0);
    if (pd_len < 0 || req_len != (size_t)(MPA_RR_HDR_LEN + pd_len))
        return -EPROTO;
    uint8_t flags = req[16], rev = req[17];
    const uint8_t *pd = req + MPA_RR_HDR_LEN;
    if (rev != MPA_REVISION_1 && rev != MPA_REVISION_2)
        return sd_soft_mpa_reject(out, out_len, MPA_REVISION_2, "unsupported MPA revision");
    if (flags & MPA_FLAG_MARKERS)
        return sd_soft_mpa_reject(out, out_len, rev, "peer asks for MPA markers");   /* as siw */
    int enhanced = rev == MPA_REVISION_2 && (flags & MPA_FLAG_ENHANCED);
    if (enhanced && pd_len < MPA_V2_PARAMS_LEN)
        return sd_soft_mpa_reject(out, out_len, rev, "enhanced request without IRD/ORD");

    *res = (struct sd_soft_mpa_result){.revision = rev};
    /* RFC 5044 7.1.2: CRC is used when either side asks for it. */
    res->crc = (flags & MPA_FLAG_CRC) || want_crc;
    uint16_t v2_ird = 0, v2_ord = 0;
    const uint8_t *app = pd;
    size_t app_len = (size_t)pd_len;
    if (enhanced) {
        v2_ird = sd_iw_get16(pd);
        v2_ord = sd_iw_get16(pd + 2);
        app += MPA_V2_PARAMS_LEN;
        app_len -= MPA_V2_PARAMS_LEN;
    }
    uint32_t reply_hdr_ird = 0, reply_hdr_ord = 0;
    int with_hdr = p->smbd_ird_ord_header && app_len >= SD_IRDORD_HDR_LEN;
    if (with_hdr) {
        uint32_t peer_ird, peer_ord;
        if (sd_irdord_decode(app, app_len, &peer_ird, &peer_ord, &res->legacy_le) != 0 ||
            sd_irdord_accept(p->ird, p->ord, peer_ird, peer_ord, &reply_hdr_ird,
                             &reply_hdr_ord, &res->ird, &res->ord) != 0)
            return sd_soft_mpa_reject(out, out_len, rev, "MS-SMBD 6.2 IRD/ORD ends up zero");
        app += SD_IRDORD_HDR_LEN;
        app_len -= SD_IRDORD_HDR_LEN;
    } else if (enhanced) {
        /* RFC 6581 5.1: the peer's ORD bounds our IRD and its IRD our ORD. */
        res->ird = min_u32(p->ird, v2_ord & MPA_V2_IRD_ORD_MASK);
        res->ord = min_u32(p->ord, v2_ird & MPA_V2_IRD_ORD_MASK);
    } else {
        res->ird = p->ird;
        res->ord = p->ord;
    }
    res->ird = min_u32(res->ird, SD_SOFT_MAX_RD);
    res->ord = min_u32(res->ord, SD_SOFT_MAX_RD);
    if (app_len > SD_MAX_PRIVATE_DATA)
        return sd_soft_mpa_reject(out, out_len, rev, "private data too long");
    if (p->private_data_len > SD_MAX_PRIVATE_DATA || (p->private_data_len && !p->private_data))
        return -EINVAL;
    res->app_pd = app;
    res->app_pd_len = (uint16_t)app_len;

    uint16_t rtr = 0;
    if (enhanced && (v2_ird & MPA_V2_PEER_TO_PEER)) {
        /* RFC 6581 5.2: pick one RTR the peer offers, a zero-length Write first (as
         * siw). We send nothing before the peer's first FPDU in any case. */
        rtr = (v2_ord & MPA_V2_READ_RTR) && !(v2_ord & MPA_V2_WRITE_RTR) ? MPA_V2_READ_RTR
                                                                        : MPA_V2_WRITE_RTR;
        if (rtr == MPA_V2_READ_RTR && res->ird == 0)
            res->ird = 1;
    }
    size_t rep_pd_len = (enhanced ? MPA_V2_PARAMS_LEN : 0) + (with_hdr ? SD_IRDORD_HDR_LEN : 0) +
                        p->private_data_len;
    uint8_t rep_flags = (uint8_t)((enhanced ? MPA_FLAG_ENHANCED : 0) | (res->crc ? MPA_FLAG_CRC : 0));
    uint8_t *o = out + put_frame_hdr(out, 1, rep_flags, rev, (uint16_t)rep_pd_len);
    if (enhanced) {
        sd_iw_put16(o, (uint16_t)(min_u32(res->ird, MPA_V2_IRD_ORD_MASK) |
                                  (rtr ? MPA_V2_PEER_TO_PEER : 0)));
        sd_iw_put16(o + 2, (uint16_t)(min_u32(res->ord, MPA_V2_IRD_ORD_MASK) | rtr));
        o += MPA_V2_PARAMS_LEN;
    }
    if (with_hdr) {
        sd_irdord_encode(o, reply_hdr_ird, reply_hdr_ord);          /* MS-SMBD 6.2 */
        o += SD_IRDORD_HDR_LEN;
    }
    if (p->private_data_len)
        memcpy(o, p->private_data, p->private_data_len);
    *out_len = MPA_RR_HDR_LEN + rep_pd_len;
    return 0;
}

int sd_soft_mpa_check_reply(const uint8_t *rep, size_t rep_len, const struct sd_cm_params *p,
                            int want_crc, struct sd_soft_mpa_result *res)
{
    if (rep_len < MPA_RR_HDR_LEN)
        return -EPROTO;
    int pd_len = sd_soft_mpa_parse_hdr(rep, 1);
    if (pd_len < 0 || rep_len != (size_t)(MPA_RR_HDR_LEN + pd_len))
        return -EPROTO;
    uint8_t flags = rep[16], rev = rep[17];
    if (flags & MPA_FLAG_REJECT) {
        /* the caller names the refusal (provider.h: connect's -EACCES) */
        sd_info("soft-iWARP: the server rejected the MPA request (RFC 5044 7.1.3)");
        return -EACCES;
    }
    if (flags & MPA_FLAG_MARKERS) {
        sd_warn("soft-iWARP: MPA reply asks for markers, which were not offered");
        return -EPROTO;
    }
    if (rev != MPA_REVISION_1 && rev != MPA_REVISION_2) {
        sd_warn("soft-iWARP: MPA reply has revision %u", rev);
        return -EPROTO;
    }
    *res = (struct sd_soft_mpa_result){.revision = rev};
    res->crc = (flags & MPA_FLAG_CRC) || want_crc;
    const uint8_t *app = rep + MPA_RR_HDR_LEN;
    size_t app_len = (size_t)pd_len;
    int enhanced = rev == MPA_REVISION_2 && (flags & MPA_FLAG_ENHANCED);
    res->ird = p->ird;
    res->ord = p->ord;
    if (enhanced) {
        if (app_len < MPA_V2_PARAMS_LEN) {
            sd_warn("soft-iWARP: enhanced MPA reply without IRD/ORD");
            return -EPROTO;
        }
        /* RFC 6581 5.1: the responder's IRD bounds our ORD; its ORD is how many reads
         * it may issue, which we serve (relaxed like siw, up to our maximum). */
        res->ord = min_u32(p->ord, sd_iw_get16(app) & MPA_V2_IRD_ORD_MASK);
        res->ird = sd_iw_get16(app + 2) & MPA_V2_IRD_ORD_MASK;
        app += MPA_V2_PARAMS_LEN;
        app_len -= MPA_V2_PARAMS_LEN;
    }
    int have_hdr = p->smbd_ird_ord_header && app_len >= SD_IRDORD_HDR_LEN;
    if (have_hdr) {
        /* MS-SMBD 6.2: the connecting peer uses the values the acceptor sent. */
        if (sd_irdord_decode(app, app_len, &res->ird, &res->ord, &res->legacy_le) != 0) {
            sd_warn("soft-iWARP: MS-SMBD IRD/ORD header in the reply is zero or invalid");
            return -ECONNREFUSED;
        }
        app += SD_IRDORD_HDR_LEN;
        app_len -= SD_IRDORD_HDR_LEN;
    }
    res->ird = min_u32(res->ird, SD_SOFT_MAX_RD);
    res->ord = min_u32(res->ord, SD_SOFT_MAX_RD);
    /* ksmbd answers with the header only when the connector's header disagreed with
     * its MPA IRD/ORD: then the MPA values stand (as in the verbs provider). */
    if (p->smbd_ird_ord_header && !have_hdr)
        sd_info("soft-iWARP: the MPA reply has no MS-SMBD IRD/ORD header (6.1); using the "
                "MPA values IRD %u ORD %u", res->ird, res->ord);
    if (app_len > SD_MAX_PRIVATE_DATA) {
        sd_warn("soft-iWARP: MPA reply private data too long (%zu bytes)", app_len);
        return -EPROTO;
    }
    res->app_pd = app;
    res->app_pd_len = (uint16_t)app_len;
    return 0;
}
