/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/soft/soft_wire.c — DDP/RDMAP header and Terminate control codec
 * (RFC 5041 4.2-4.3, RFC 5040 4.1-4.8). Pure functions, no I/O. */
#include "iwarp_wire.h"

#include <stdio.h>

size_t sd_iw_hdr_len(const uint8_t ctrl[2])
{
    if (ctrl[0] & DDP_FLAG_TAGGED)
        return DDP_TAGGED_HDR_LEN;
    if ((ctrl[1] & RDMAP_OPCODE_MASK) == RDMAP_READ_REQ)
        return RDMAP_READ_REQ_HDR_LEN;
    return DDP_UNTAGGED_HDR_LEN;
}

size_t sd_iw_hdr_encode(const struct sd_iw_hdr *h, uint8_t *out)
{
    out[0] = (uint8_t)((h->tagged ? DDP_FLAG_TAGGED : 0) | (h->last ? DDP_FLAG_LAST : 0) |
                       (h->ddp_version & DDP_VERSION_MASK));
    out[1] = (uint8_t)((h->rdmap_version << RDMAP_VERSION_SHIFT) | (h->opcode & RDMAP_OPCODE_MASK));
    if (h->tagged) {                               /* RFC 5041 4.2 */
        sd_iw_put32(out + 2, h->stag);
        sd_iw_put64(out + 6, h->to);
        return DDP_TAGGED_HDR_LEN;
    }
    sd_iw_put32(out + 2, h->inv_stag);             /* RFC 5041 4.3 */
    sd_iw_put32(out + 6, h->qn);
    sd_iw_put32(out + 10, h->msn);
    sd_iw_put32(out + 14, h->mo);
    if (h->opcode != RDMAP_READ_REQ)
        return DDP_UNTAGGED_HDR_LEN;
    uint8_t *rr = out + DDP_UNTAGGED_HDR_LEN;      /* RFC 5040 4.4 */
    sd_iw_put32(rr, h->rr_sink_stag);
    sd_iw_put64(rr + 4, h->rr_sink_to);
    sd_iw_put32(rr + 12, h->rr_size);
    sd_iw_put32(rr + 16, h->rr_src_stag);
    sd_iw_put64(rr + 20, h->rr_src_to);
    return RDMAP_READ_REQ_HDR_LEN;
}

void sd_iw_hdr_decode(const uint8_t *in, struct sd_iw_hdr *h)
{
    *h = (struct sd_iw_hdr){0};
    h->tagged = !!(in[0] & DDP_FLAG_TAGGED);
    h->last = !!(in[0] & DDP_FLAG_LAST);
    h->ddp_version = in[0] & DDP_VERSION_MASK;
    h->rdmap_version = in[1] >> RDMAP_VERSION_SHIFT;
    h->opcode = in[1] & RDMAP_OPCODE_MASK;
    if (h->tagged) {
        h->stag = sd_iw_get32(in + 2);
        h->to = sd_iw_get64(in + 6);
        return;
    }
    h->inv_stag = sd_iw_get32(in + 2);
    h->qn = sd_iw_get32(in + 6);
    h->msn = sd_iw_get32(in + 10);
    h->mo = sd_iw_get32(in + 14);
    if (h->opcode != RDMAP_READ_REQ)
        return;
    const uint8_t *rr = in + DDP_UNTAGGED_HDR_LEN;
    h->rr_sink_stag = sd_iw_get32(rr);
    h->rr_sink_to = sd_iw_get64(rr + 4);
    h->rr_size = sd_iw_get32(rr + 12);
    h->rr_src_stag = sd_iw_get32(rr + 16);
    h->rr_src_to = sd_iw_get64(rr + 20);
}

void sd_iw_term_encode(const struct sd_iw_term *t, uint8_t out[RDMAP_TERM_CTRL_LEN])
{
    out[0] = (uint8_t)((t->layer & 0x0f) << 4 | (t->etype & 0x0f));
    out[1] = t->ecode;
    out[2] = t->hdrct & (TERM_HDRCT_M | TERM_HDRCT_D | TERM_HDRCT_R);
    out[3] = 0;
}

void sd_iw_term_decode(const uint8_t in[RDMAP_TERM_CTRL_LEN], struct sd_iw_term *t)
{
    t->layer = in[0] >> 4;
    t->etype = in[0] & 0x0f;
    t->ecode = in[1];
    t->hdrct = in[2] & (TERM_HDRCT_M | TERM_HDRCT_D | TERM_HDRCT_R);
}

const char *sd_iw_term_str(const struct sd_iw_term *t)
{
    static const char *const layers[] = {"RDMAP", "DDP", "MPA"};
    static const char *const rdmap_types[] = {"local catastrophic", "remote protection",
                                              "remote operation"};
    static const char *const ddp_types[] = {"local catastrophic", "tagged buffer",
                                            "untagged buffer"};
    static __thread char buf[96];
    const char *layer = t->layer < 3 ? layers[t->layer] : "unknown layer";
    const char *type = "";
    if (t->layer == TERM_LAYER_RDMAP && t->etype < 3)
        type = rdmap_types[t->etype];
    else if (t->layer == TERM_LAYER_DDP && t->etype < 3)
        type = ddp_types[t->etype];
    snprintf(buf, sizeof(buf), "%s%s%s error, code 0x%02x", layer, *type ? " " : "", type,
             t->ecode);
    return buf;
}
