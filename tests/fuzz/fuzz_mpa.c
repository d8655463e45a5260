/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/fuzz/fuzz_mpa.c — libFuzzer target for MPA connection setup (RFC 5044 7.1,
 * RFC 6581, MS-SMBD Appendix A): arbitrary bytes as the frame header alone, as a
 * request the responder answers, and as a reply the initiator checks, with and without
 * CRC and the Appendix A header. Checked: no crash or sanitizer report; a frame the
 * responder accepts yields IRD/ORD within SD_SOFT_MAX_RD and private data inside the
 * frame; a reply the initiator accepts does too.
 * fuzz-sources: common/log.c common/sd_libc.c transport/soft/soft_mpa.c
 * fuzz-sources: transport/soft/soft_wire.c
 * fuzz-sources: transport/soft/soft_crc32c.c transport/sd_irdord.c */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "soft/soft_mpa.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_result(const struct sd_soft_mpa_result *res, const uint8_t *frame,
                         size_t len)
{
    /* 0 is valid without the Appendix A header (RFC 6581: a peer taking no Reads) */
    if (res->ird > SD_SOFT_MAX_RD || res->ord > SD_SOFT_MAX_RD)
        abort();
    if (res->app_pd_len &&
        (res->app_pd < frame || res->app_pd + res->app_pd_len > frame + len))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int quiet;
    struct sd_cm_params p;
    struct sd_soft_mpa_result res;
    uint8_t out[SD_SOFT_MPA_FRAME_MAX];
    size_t out_len = sizeof(out);
    int flags;

    if (!quiet++)
        sd_log_set_level(SD_LOG_OFF); /* rejects log a line each: keep the run quiet */
    if (size < 1)
        return 0;
    flags = data[0];
    data++;
    size--;
    memset(&p, 0, sizeof(p));
    p.ird = (flags & 4) ? 1 : 16;
    p.ord = (flags & 8) ? 255 : 16;
    p.smbd_ird_ord_header = flags & 1;
    if (size >= MPA_RR_HDR_LEN)
        (void)sd_soft_mpa_parse_hdr(data, flags & 16);
    memset(&res, 0, sizeof(res));
    if (sd_soft_mpa_respond(data, size, &p, flags & 2, out, &out_len, &res) == 0) {
        check_result(&res, data, size);
        if (out_len > sizeof(out))
            abort();
    }
    memset(&res, 0, sizeof(res));
    if (sd_soft_mpa_check_reply(data, size, &p, flags & 2, &res) == 0)
        check_result(&res, data, size);
    return 0;
}
