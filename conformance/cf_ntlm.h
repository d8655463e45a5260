/* SPDX-License-Identifier: BSD-3-Clause */
/* conformance/cf_ntlm.h — the NTLMSSP client of the conformance SMB2 sessions
 * (MS-NLMP): NEGOTIATE_MESSAGE, CHALLENGE_MESSAGE parsing, AUTHENTICATE_MESSAGE with an
 * NTLMv2 response (3.3.2), or anonymous (3.2.5.1.2: empty responses, no user). A user's
 * authentication negotiates NTLMSSP_NEGOTIATE_KEY_EXCH and yields the session key the
 * SMB2 session signs with (3.1.5.1.2, 3.4.5.1: the exported random session key); no
 * NTLMSSP message signing or sealing is used. */
#ifndef SMBDIRECT_CF_NTLM_H
#define SMBDIRECT_CF_NTLM_H

#include <stddef.h>
#include <stdint.h>

#define CF_NTLM_HASH_SIZE 16

/* MS-NLMP 3.3.2 NTOWFv2(Passwd, User, UserDom): HMAC_MD5(MD4(UNICODE(Passwd)),
 * UNICODE(Uppercase(User) + UserDom)). user and domain are ASCII/UTF-8 (non-ASCII
 * bytes are taken as Latin-1 code points). */
void cf_ntlm_ntowfv2(const char *password, const char *user, const char *domain,
                     uint8_t out[CF_NTLM_HASH_SIZE]);

/* MS-NLMP 3.3.2 for ResponseKeyNT = ResponseKeyLM = key: writes NtChallengeResponse
 * (NTProofStr + temp, temp = 0x0101, 6 zero bytes, time, client challenge, 4 zero
 * bytes, target info, 4 zero bytes) to nt (returns its length, or -1 when ntcap is too
 * small), the LmChallengeResponse (HMAC of both challenges + client challenge, 24
 * bytes) to lm, and the SessionBaseKey to session_key (may be NULL). */
int cf_ntlm_v2_response(const uint8_t key[CF_NTLM_HASH_SIZE], const uint8_t server_challenge[8],
                        const uint8_t client_challenge[8], uint64_t time,
                        const uint8_t *target_info, size_t target_info_len, uint8_t *nt,
                        size_t ntcap, uint8_t lm[24], uint8_t *session_key);

/* The NEGOTIATE_MESSAGE (2.2.1.1) into out: its length, or -1. */
int cf_ntlm_negotiate(uint8_t *out, size_t cap);

/* What a CHALLENGE_MESSAGE (2.2.1.2) carries for the answer. */
struct cf_ntlm_challenge {
    uint32_t flags;
    uint8_t server_challenge[8];
    const uint8_t *target_info;   /* inside the message */
    size_t target_info_len;
    int has_timestamp;            /* MsvAvTimestamp present (2.2.2.1) */
    uint64_t timestamp;
};
/* 0, or -1 when msg is not a well-formed CHALLENGE_MESSAGE (signature, type, the
 * target info field inside the message, AV pairs inside the target info). */
int cf_ntlm_parse_challenge(const uint8_t *msg, size_t len, struct cf_ntlm_challenge *c);

/* The AUTHENTICATE_MESSAGE (2.2.1.3) answering c: NTLMv2 for user/password/domain, or
 * anonymous when user is NULL. client_challenge: 8 random bytes; now: the time as
 * a FILETIME, used when the challenge carries no timestamp; random_key: 16 random bytes,
 * the session key when the server agreed to NTLMSSP_NEGOTIATE_KEY_EXCH (sent as
 * EncryptedRandomSessionKey, RC4 under the KeyExchangeKey, which NTLMv2 makes the
 * SessionBaseKey: 3.1.5.1.2, 3.4.5.1). Its length, or -1; session_key (may be NULL):
 * the ExportedSessionKey, random_key with key exchange, else the SessionBaseKey; zeros
 * for anonymous (no key). */
int cf_ntlm_authenticate(const struct cf_ntlm_challenge *c, const char *user,
                         const char *password, const char *domain,
                         const uint8_t client_challenge[8], uint64_t now,
                         const uint8_t random_key[CF_NTLM_HASH_SIZE], uint8_t *out, size_t cap,
                         uint8_t *session_key);

#endif
