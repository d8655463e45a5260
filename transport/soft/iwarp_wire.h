/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/soft/iwarp_wire.h — iWARP wire formats for the soft-iWARP provider:
 * MPA request/reply frames and FPDU framing (RFC 5044, enhanced by RFC 6581), DDP
 * segment headers (RFC 5041) and RDMAP messages (RFC 5040), plus their codec.
 * Everything on the wire is big-endian except the MPA CRC (stored little-endian). */
#ifndef SMBDIRECT_IWARP_WIRE_H
#define SMBDIRECT_IWARP_WIRE_H

#include <stddef.h>
#include <stdint.h>

/* ---- byte order helpers ---- */
static inline uint16_t sd_iw_get16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static inline uint32_t sd_iw_get32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static inline uint64_t sd_iw_get64(const uint8_t *p)
{
    return (uint64_t)sd_iw_get32(p) << 32 | sd_iw_get32(p + 4);
}
static inline void sd_iw_put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
static inline void sd_iw_put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16); p[2] = (uint8_t)(v >> 8); p[3] = (uint8_t)v;
}
static inline void sd_iw_put64(uint8_t *p, uint64_t v)
{
    sd_iw_put32(p, (uint32_t)(v >> 32));
    sd_iw_put32(p + 4, (uint32_t)v);
}

/* ---- MPA connection setup frames (RFC 5044 7.1, RFC 6581 5) ---- */
#define MPA_KEY_LEN          16
#define MPA_KEY_REQ          "MPA ID Req Frame"
#define MPA_KEY_REP          "MPA ID Rep Frame"
#define MPA_RR_HDR_LEN       20      /* key, flags, revision, private data length */
#define MPA_FLAG_MARKERS     0x80
#define MPA_FLAG_CRC         0x40
#define MPA_FLAG_REJECT      0x20
#define MPA_FLAG_ENHANCED    0x10    /* RFC 6581: IRD/ORD lead the private data */
#define MPA_REVISION_1       1
#define MPA_REVISION_2       2
#define MPA_MAX_PRIVATE_DATA 512     /* RFC 5044 7.1.5 */

/* RFC 6581 5.1: two 16-bit words before the application's private data. */
#define MPA_V2_PARAMS_LEN    4
#define MPA_V2_PEER_TO_PEER  0x8000  /* in the IRD word */
#define MPA_V2_WRITE_RTR     0x8000  /* in the ORD word */
#define MPA_V2_READ_RTR      0x4000  /* in the ORD word */
#define MPA_V2_IRD_ORD_MASK  0x3fff

/* ---- MPA FPDU (RFC 5044 4) ---- */
#define MPA_LEN_SIZE         2       /* ULPDU length, before the ULPDU */
#define MPA_CRC_SIZE         4       /* after the pad */
#define MPA_MAX_ULPDU        0xffff

/* Pad bytes after an FPDU carrying ulpdu_len bytes of ULPDU (RFC 5044 4.1). */
static inline uint32_t sd_iw_mpa_pad(uint32_t ulpdu_len)
{
    return (4u - ((MPA_LEN_SIZE + ulpdu_len) & 3u)) & 3u;
}

/* ---- DDP (RFC 5041 4) and RDMAP (RFC 5040 4) ---- */
#define DDP_FLAG_TAGGED      0x80    /* first control byte */
#define DDP_FLAG_LAST        0x40
#define DDP_VERSION_MASK     0x03
#define DDP_VERSION          1
#define RDMAP_VERSION_SHIFT  6       /* second control byte */
#define RDMAP_VERSION        1
#define RDMAP_OPCODE_MASK    0x0f

#define DDP_TAGGED_HDR_LEN   14      /* ctrl 2, STag 4, TO 8 */
#define DDP_UNTAGGED_HDR_LEN 18      /* ctrl 2, RsvdULP 4, QN 4, MSN 4, MO 4 */
#define RDMAP_READ_REQ_LEN   28      /* sink STag/TO, size, source STag/TO */
#define RDMAP_TERM_CTRL_LEN  4
#define RDMAP_READ_REQ_HDR_LEN (DDP_UNTAGGED_HDR_LEN + RDMAP_READ_REQ_LEN)
/* Terminate ULPDU: header, control, the DDP segment length and a copy of the
 * offending DDP (+ Read Request) header (RFC 5040 4.8). */
#define RDMAP_TERM_MAX_LEN   (DDP_UNTAGGED_HDR_LEN + RDMAP_TERM_CTRL_LEN + 2 + RDMAP_READ_REQ_HDR_LEN)

enum sd_iw_opcode {          /* RFC 5040 4.2 */
    RDMAP_WRITE = 0,
    RDMAP_READ_REQ = 1,
    RDMAP_READ_RESP = 2,
    RDMAP_SEND = 3,
    RDMAP_SEND_INV = 4,
    RDMAP_SEND_SE = 5,
    RDMAP_SEND_SE_INV = 6,
    RDMAP_TERMINATE = 7,
};

enum sd_iw_qn {              /* RFC 5040 5.1: untagged queues */
    RDMAP_QN_SEND = 0,
    RDMAP_QN_READ = 1,
    RDMAP_QN_TERMINATE = 2,
    RDMAP_QN_COUNT = 3,
};

/* Terminate control (RFC 5040 4.8, 7): layer, error type, code, header flags. */
enum sd_iw_term_layer { TERM_LAYER_RDMAP = 0, TERM_LAYER_DDP = 1, TERM_LAYER_LLP = 2 };
enum sd_iw_rdmap_etype { RDMAP_ETYPE_CATASTROPHIC = 0, RDMAP_ETYPE_REMOTE_PROT = 1,
                         RDMAP_ETYPE_REMOTE_OP = 2 };
enum sd_iw_rdmap_ecode {
    RDMAP_ECODE_INVALID_STAG = 0x00, RDMAP_ECODE_BASE_BOUNDS = 0x01,
    RDMAP_ECODE_ACCESS_RIGHTS = 0x02, RDMAP_ECODE_STAG_NOT_ASSOC = 0x03,
    RDMAP_ECODE_TO_WRAP = 0x04, RDMAP_ECODE_VERSION = 0x05, RDMAP_ECODE_OPCODE = 0x06,
    RDMAP_ECODE_CATASTROPHIC_STREAM = 0x07, RDMAP_ECODE_CATASTROPHIC_GLOBAL = 0x08,
    RDMAP_ECODE_CANNOT_INVALIDATE = 0x09, RDMAP_ECODE_UNSPECIFIED = 0xff,
};
enum sd_iw_ddp_etype { DDP_ETYPE_CATASTROPHIC = 0, DDP_ETYPE_TAGGED = 1, DDP_ETYPE_UNTAGGED = 2 };
enum sd_iw_ddp_ecode {
    DDP_ECODE_T_INVALID_STAG = 0x00, DDP_ECODE_T_BASE_BOUNDS = 0x01,
    DDP_ECODE_T_STAG_NOT_ASSOC = 0x02, DDP_ECODE_T_TO_WRAP = 0x03, DDP_ECODE_T_VERSION = 0x04,
    DDP_ECODE_U_INVALID_QN = 0x01, DDP_ECODE_U_NO_BUFFER = 0x02,
    DDP_ECODE_U_INVALID_MSN = 0x03, DDP_ECODE_U_INVALID_MO = 0x04,
    DDP_ECODE_U_TOO_LONG = 0x05, DDP_ECODE_U_VERSION = 0x06,
};
enum sd_iw_llp_ecode { LLP_ECODE_CRC = 0x02, LLP_ECODE_FPDU_START = 0x03 }; /* MPA etype 0 */
#define TERM_HDRCT_M 0x80     /* DDP segment length valid */
#define TERM_HDRCT_D 0x40     /* DDP header included */
#define TERM_HDRCT_R 0x20     /* RDMAP header included */

/* One decoded DDP/RDMAP header. Tagged: stag/to. Untagged: inv_stag (RsvdULP, the
 * STag to invalidate for Send with Invalidate), qn/msn/mo; Read Request also rr_*. */
struct sd_iw_hdr {
    uint8_t tagged, last, ddp_version, rdmap_version, opcode;
    uint32_t stag;
    uint64_t to;
    uint32_t inv_stag, qn, msn, mo;
    uint32_t rr_sink_stag, rr_size, rr_src_stag;
    uint64_t rr_sink_to, rr_src_to;
};

struct sd_iw_term {
    uint8_t layer, etype, ecode, hdrct;
};

/* Bytes of DDP/RDMAP header implied by the two control bytes: 14 tagged, 46 for a
 * Read Request, 18 for other untagged messages (Terminate's control follows as data). */
size_t sd_iw_hdr_len(const uint8_t ctrl[2]);
/* Encodes h into out (room for RDMAP_READ_REQ_HDR_LEN) and returns its length. */
size_t sd_iw_hdr_encode(const struct sd_iw_hdr *h, uint8_t *out);
/* Decodes sd_iw_hdr_len(in) bytes. No semantic checks (versions, opcodes): callers
 * check them and answer with the proper Terminate. */
void sd_iw_hdr_decode(const uint8_t *in, struct sd_iw_hdr *h);

void sd_iw_term_encode(const struct sd_iw_term *t, uint8_t out[RDMAP_TERM_CTRL_LEN]);
void sd_iw_term_decode(const uint8_t in[RDMAP_TERM_CTRL_LEN], struct sd_iw_term *t);
/* Short text naming a Terminate's layer/type/code for log lines. */
const char *sd_iw_term_str(const struct sd_iw_term *t);

/* CRC32c (Castagnoli) as MPA uses it (RFC 5044 4.4). Start from SD_CRC32C_INIT,
 * feed bytes with sd_crc32c_update, the CRC is the complement of the state. */
#define SD_CRC32C_INIT 0xffffffffu
uint32_t sd_crc32c_update(uint32_t state, const void *buf, size_t len);
/* The portable table implementation behind it (tests compare the two paths). */
uint32_t sd_crc32c_update_table(uint32_t state, const void *buf, size_t len);
static inline uint32_t sd_crc32c(const void *buf, size_t len)
{
    return ~sd_crc32c_update(SD_CRC32C_INIT, buf, len);
}
/* Writes the CRC as MPA carries it: little-endian. */
static inline void sd_iw_put_crc(uint8_t *p, uint32_t crc)
{
    p[0] = (uint8_t)crc; p[1] = (uint8_t)(crc >> 8); p[2] = (uint8_t)(crc >> 16); p[3] = (uint8_t)(crc >> 24);
}
static inline uint32_t sd_iw_get_crc(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

#endif
