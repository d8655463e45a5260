/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/fuzz/fuzz_conformance.c — libFuzzer target for the conformance client's parsers of
 * server bytes (conformance/cf_smb2_wire.c, cf_ntlm.c): the input, as one response
 * message, goes to every SMB2 response decoder and, as an NTLMSSP blob, to the
 * CHALLENGE_MESSAGE parser and then the AUTHENTICATE builder (user and anonymous).
 * The input is copied to an exactly-sized heap buffer, so ASan sees any read past it;
 * pointers the decoders return must lie inside it.
 * fuzz-sources: conformance/cf_smb2_wire.c conformance/cf_ntlm.c
 * fuzz-sources: transport/channel/smb2_wire.c transport/channel/chan_desc.c
 * fuzz-sources: transport/smbd/smbd_wire.c
 * fuzz-libs: -lnettle */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cf_ntlm.h"
#include "cf_smb2_wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void inside(const uint8_t *p, size_t n, const uint8_t *msg, size_t len)
{
    if (n && (p < msg || p + n > msg + len))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *msg = malloc(size ? size : 1), fid[16], cc[8] = { 0 }, out[4096], rk[16] = { 0 },
            sk[16];
    struct cf_smb2_negotiate_resp nr;
    struct cf_smb2_resp r;
    struct smb2_read_resp rr;
    struct cf_ntlm_challenge ch;
    const uint8_t *p;
    size_t pl;
    uint16_t flags;
    uint32_t count;

    if (!msg)
        return 0;
    memcpy(msg, data, size);
    cf_smb2_resp_decode(msg, size, &r);
    cf_smb2_negotiate_resp_decode(msg, size, &nr);
    if (cf_smb2_session_setup_resp_decode(msg, size, &flags, &p, &pl) == 0)
        inside(p, pl, msg, size);
    cf_smb2_create_resp_decode(msg, size, fid);
    cf_smb2_write_resp_decode(msg, size, &count);
    if (cf_smb2_read_resp_data(msg, size, &rr, &p) == 0)
        inside(p, rr.data_length, msg, size);
    if (cf_ntlm_parse_challenge(msg, size, &ch) == 0) {
        inside(ch.target_info, ch.target_info_len, msg, size);
        cf_ntlm_authenticate(&ch, "user", "pass", "DOM", cc, 0, rk, out, sizeof(out), sk);
        cf_ntlm_authenticate(&ch, NULL, NULL, NULL, cc, 0, rk, out, sizeof(out), sk);
    }
    free(msg);
    return 0;
}
