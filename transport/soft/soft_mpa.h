/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/soft/soft_mpa.h — MPA connection setup for soft-iWARP (RFC 5044 7.1,
 * RFC 6581 enhanced IRD/ORD, MS-SMBD Appendix A IRD/ORD header): building the request,
 * answering it, checking the reply. Pure functions on byte buffers, no I/O. */
#ifndef SMBDIRECT_SOFT_MPA_H
#define SMBDIRECT_SOFT_MPA_H

#include "iwarp_wire.h"
#include "provider.h"

#define SD_SOFT_MPA_FRAME_MAX (MPA_RR_HDR_LEN + MPA_MAX_PRIVATE_DATA)
/* Upper bound on IRD/ORD we agree to (bounds the inbound Read queue). */
#define SD_SOFT_MAX_RD 1024u

struct sd_soft_mpa_result {
    int crc;                  /* both directions carry MPA CRC */
    uint8_t revision;         /* 1 or 2 */
    uint32_t ird, ord;        /* in force on our side: reads we serve / may issue */
    int legacy_le;            /* the peer's Appendix A header was little-endian */
    const uint8_t *app_pd;    /* the peer's application private data (in its frame) */
    uint16_t app_pd_len;
};

/* Checks the 20-byte frame header: the key for a request (reply = 0) or a reply,
 * the private data length (RFC 5044 7.1.5). Returns the private data length, or
 * -EPROTO. */
int sd_soft_mpa_parse_hdr(const uint8_t hdr[MPA_RR_HDR_LEN], int reply);

/* Initiator: revision 2, enhanced IRD/ORD (RFC 6581), CRC when want_crc, then the
 * Appendix A header when p->smbd_ird_ord_header, then p's private data. Returns
 * the frame length, or -EINVAL (private data too long, IRD/ORD out of range). */
int sd_soft_mpa_build_request(const struct sd_cm_params *p, int want_crc, uint8_t *out,
                              size_t cap);

/* Responder: answers the request frame req (header + private data). Returns 0 with
 * the reply in out/out_len and res filled; -ECONNREFUSED with a reject frame in out
 * (markers asked, unsupported revision, Appendix A IRD or ORD ending up zero);
 * -EPROTO when the frame is no MPA request (nothing to answer: close). */
int sd_soft_mpa_respond(const uint8_t *req, size_t req_len, const struct sd_cm_params *p,
                        int want_crc, uint8_t *out, size_t *out_len,
                        struct sd_soft_mpa_result *res);

/* Responder: a reject frame (RFC 5044 7.1.3) of revision rev in out/out_len; logs why
 * (NULL: no line, the caller's refusal logs its own). Returns -ECONNREFUSED. */
int sd_soft_mpa_reject(uint8_t *out, size_t *out_len, uint8_t rev, const char *why);

/* Initiator: checks the reply frame rep against what p asked. Returns 0 with res
 * filled, -EACCES for a reject (the server refused the connection), -ECONNREFUSED for a
 * zero Appendix A IRD/ORD, -EPROTO for a malformed or unacceptable reply (markers,
 * missing enhanced words). */
int sd_soft_mpa_check_reply(const uint8_t *rep, size_t rep_len, const struct sd_cm_params *p,
                            int want_crc, struct sd_soft_mpa_result *res);

#endif
