/* SPDX-License-Identifier: BSD-3-Clause */
/* conformance/cf_preauth.c — the SMB 3.1.1 preauth integrity hash over libnettle's SHA-512
 * (see cf_preauth.h). */
#include "cf_preauth.h"

#include <nettle/sha2.h>
#include <string.h>

void cf_preauth_reset(struct cf_preauth *p)
{
    memset(p->hash, 0, sizeof(p->hash));
}

void cf_preauth_update(struct cf_preauth *p, const uint8_t *msg, size_t len)
{
    struct sha512_ctx c;

    sha512_init(&c);
    sha512_update(&c, sizeof(p->hash), p->hash);
    sha512_update(&c, len, msg);
    sha512_digest(&c, sizeof(p->hash), p->hash);
}
