/* SPDX-License-Identifier: BSD-3-Clause */
/* conformance/cf_preauth.h — the SMB 3.1.1 preauth integrity hash a client keeps
 * (MS-SMB2 3.2.5.2, 3.2.5.3.1): SHA-512, starting from 64 zero bytes, each message the
 * new hash of the old one followed by the whole message. The connection's runs over its
 * NEGOTIATE request and response; a session's (or a bound channel's) starts from it and
 * runs over each SESSION_SETUP request and each response but the final one (STATUS_SUCCESS),
 * whose value then goes into the signing key's KDF (smb2_sign_key_init). Pure. */
#ifndef SMBDIRECT_CF_PREAUTH_H
#define SMBDIRECT_CF_PREAUTH_H

#include <stddef.h>
#include <stdint.h>

#include "smb2_sign.h" /* SMB2_PREAUTH_HASH_SIZE */

struct cf_preauth {
    uint8_t hash[SMB2_PREAUTH_HASH_SIZE];
};

/* 64 zero bytes (3.2.5.2: before the NEGOTIATE request). */
void cf_preauth_reset(struct cf_preauth *p);
/* hash = SHA-512(hash || msg) */
void cf_preauth_update(struct cf_preauth *p, const uint8_t *msg, size_t len);

#endif
