/* SPDX-License-Identifier: BSD-3-Clause */
/* conformance/cf_ntlm.c — NTLMSSP messages, the NTLMv2 computation and the session key
 * exchange (MS-NLMP 2.2.1, 3.3.2, 3.1.5.1.2) over libnettle's MD4, HMAC-MD5 and RC4 (see
 * cf_ntlm.h). */
#include "cf_ntlm.h"

#include <ctype.h>
#include <nettle/arcfour.h>
#include <nettle/hmac.h>
#include <nettle/md4.h>
#include <string.h>

#include "sd_bytes.h"

/* MS-NLMP 2.2.2.5 NEGOTIATE flags */
#define NEG_UNICODE       0x00000001u
#define NEG_REQUEST_TARGET 0x00000004u
#define NEG_SIGN          0x00000010u
#define NEG_NTLM          0x00000200u
#define NEG_ANONYMOUS     0x00000800u
#define NEG_ALWAYS_SIGN   0x00008000u
#define NEG_EXTENDED_SS   0x00080000u
#define NEG_TARGET_INFO   0x00800000u
#define NEG_128           0x20000000u
#define NEG_KEY_EXCH      0x40000000u
#define NEG_56            0x80000000u
#define OUR_FLAGS (NEG_UNICODE | NEG_REQUEST_TARGET | NEG_SIGN | NEG_NTLM | NEG_ALWAYS_SIGN | \
                   NEG_EXTENDED_SS | NEG_TARGET_INFO | NEG_128 | NEG_KEY_EXCH | NEG_56)
/* What an anonymous authentication leaves out: it has no key to sign with or exchange. */
#define KEY_FLAGS (NEG_SIGN | NEG_KEY_EXCH)

static const uint8_t signature[8] = { 'N', 'T', 'L', 'M', 'S', 'S', 'P', 0 };

enum { MSG_NEGOTIATE = 1, MSG_CHALLENGE = 2, MSG_AUTHENTICATE = 3 };
enum { AV_EOL = 0, AV_TIMESTAMP = 7 }; /* 2.2.2.1 AvId */

#define NEGOTIATE_SIZE    32u  /* 2.2.1.1 without Version */
#define CHALLENGE_MIN     48u  /* 2.2.1.2 up to TargetInfoFields */
#define AUTHENTICATE_HEAD 64u  /* 2.2.1.3 without Version and MIC */
#define MAX_NAME          256u /* characters of a user, domain or password */

/* UNICODE(s) (2.2.2... "UNICODE" in 3.3), optionally upper-cased: UTF-16LE of each byte. */
static size_t unicode(const char *s, int upper, uint8_t *out, size_t cap)
{
    size_t n = 0;

    for (; *s && n + 2 <= cap; s++) {
        unsigned char c = (unsigned char)*s;

        sd_put_le16(out + n, (uint16_t)(upper ? toupper(c) : c));
        n += 2;
    }
    return n;
}

void cf_ntlm_ntowfv2(const char *password, const char *user, const char *domain,
                     uint8_t out[CF_NTLM_HASH_SIZE])
{
    uint8_t buf[4 * MAX_NAME], nt[MD4_DIGEST_SIZE];
    struct md4_ctx md4;
    struct hmac_md5_ctx h;
    size_t n = unicode(password, 0, buf, sizeof(buf));

    md4_init(&md4);
    md4_update(&md4, n, buf);
    md4_digest(&md4, sizeof(nt), nt); /* NTOWFv1 */
    n = unicode(user, 1, buf, sizeof(buf));
    n += unicode(domain, 0, buf + n, sizeof(buf) - n);
    hmac_md5_set_key(&h, sizeof(nt), nt);
    hmac_md5_update(&h, n, buf);
    hmac_md5_digest(&h, CF_NTLM_HASH_SIZE, out);
}

int cf_ntlm_v2_response(const uint8_t key[CF_NTLM_HASH_SIZE], const uint8_t server_challenge[8],
                        const uint8_t client_challenge[8], uint64_t time,
                        const uint8_t *target_info, size_t target_info_len, uint8_t *nt,
                        size_t ntcap, uint8_t lm[24], uint8_t *session_key)
{
    size_t temp_len = 28 + target_info_len + 4, len = CF_NTLM_HASH_SIZE + temp_len;
    uint8_t *temp = nt + CF_NTLM_HASH_SIZE;
    struct hmac_md5_ctx h;

    if (ntcap < len)
        return -1;
    memset(temp, 0, temp_len);
    temp[0] = 1; /* Responserversion */
    temp[1] = 1; /* HiResponserversion */
    sd_put_le64(temp + 8, time);
    memcpy(temp + 16, client_challenge, 8);
    if (target_info_len)
        memcpy(temp + 28, target_info, target_info_len);
    /* NTProofStr = HMAC_MD5(ResponseKeyNT, ServerChallenge + temp) */
    hmac_md5_set_key(&h, CF_NTLM_HASH_SIZE, key);
    hmac_md5_update(&h, 8, server_challenge);
    hmac_md5_update(&h, temp_len, temp);
    hmac_md5_digest(&h, CF_NTLM_HASH_SIZE, nt);
    /* LmChallengeResponse = HMAC_MD5(ResponseKeyLM, ServerChallenge + ClientChallenge)
     * + ClientChallenge */
    hmac_md5_set_key(&h, CF_NTLM_HASH_SIZE, key);
    hmac_md5_update(&h, 8, server_challenge);
    hmac_md5_update(&h, 8, client_challenge);
    hmac_md5_digest(&h, CF_NTLM_HASH_SIZE, lm);
    memcpy(lm + CF_NTLM_HASH_SIZE, client_challenge, 8);
    /* SessionBaseKey = HMAC_MD5(ResponseKeyNT, NTProofStr) */
    if (session_key) {
        hmac_md5_set_key(&h, CF_NTLM_HASH_SIZE, key);
        hmac_md5_update(&h, CF_NTLM_HASH_SIZE, nt);
        hmac_md5_digest(&h, CF_NTLM_HASH_SIZE, session_key);
    }
    return (int)len;
}

static void put_header(uint8_t *out, uint32_t type)
{
    memcpy(out, signature, sizeof(signature));
    sd_put_le32(out + 8, type);
}

int cf_ntlm_negotiate(uint8_t *out, size_t cap)
{
    if (cap < NEGOTIATE_SIZE)
        return -1;
    memset(out, 0, NEGOTIATE_SIZE);
    put_header(out, MSG_NEGOTIATE);
    sd_put_le32(out + 12, OUR_FLAGS);
    /* DomainNameFields and WorkstationFields empty (offsets at the end) */
    sd_put_le32(out + 20, NEGOTIATE_SIZE);
    sd_put_le32(out + 28, NEGOTIATE_SIZE);
    return NEGOTIATE_SIZE;
}

int cf_ntlm_parse_challenge(const uint8_t *msg, size_t len, struct cf_ntlm_challenge *c)
{
    uint32_t ti_off;
    uint16_t ti_len;
    size_t off = 0;

    if (len < CHALLENGE_MIN || memcmp(msg, signature, sizeof(signature)) != 0 ||
        sd_le32(msg + 8) != MSG_CHALLENGE)
        return -1;
    memset(c, 0, sizeof(*c));
    c->flags = sd_le32(msg + 20);
    memcpy(c->server_challenge, msg + 24, 8);
    ti_len = sd_le16(msg + 40);
    ti_off = sd_le32(msg + 44);
    if (ti_len && ((size_t)ti_off > len || ti_len > len - ti_off))
        return -1;
    c->target_info = msg + ti_off;
    c->target_info_len = ti_len;
    /* 2.2.2.1: AV_PAIRs up to MsvAvEOL, each inside the field */
    while (off < c->target_info_len) {
        uint16_t id, n;

        if (c->target_info_len - off < 4)
            return -1;
        id = sd_le16(c->target_info + off);
        n = sd_le16(c->target_info + off + 2);
        if (n > c->target_info_len - off - 4)
            return -1;
        if (id == AV_EOL)
            break;
        if (id == AV_TIMESTAMP && n == 8) {
            c->has_timestamp = 1;
            c->timestamp = sd_le64(c->target_info + off + 4);
        }
        off += 4u + n;
    }
    return 0;
}

/* Appends a payload field (2.2.1.3: Len, MaxLen, BufferOffset at fields) at *end. */
static int put_field(uint8_t *out, size_t cap, size_t fields, size_t *end, const uint8_t *data,
                     size_t n)
{
    if (n > UINT16_MAX || cap < *end || n > cap - *end)
        return -1;
    if (n)
        memcpy(out + *end, data, n);
    sd_put_le16(out + fields, (uint16_t)n);
    sd_put_le16(out + fields + 2, (uint16_t)n);
    sd_put_le32(out + fields + 4, (uint32_t)*end);
    *end += n;
    return 0;
}

int cf_ntlm_authenticate(const struct cf_ntlm_challenge *c, const char *user,
                         const char *password, const char *domain,
                         const uint8_t client_challenge[8], uint64_t now,
                         const uint8_t random_key[CF_NTLM_HASH_SIZE], uint8_t *out, size_t cap,
                         uint8_t *session_key)
{
    uint8_t key[CF_NTLM_HASH_SIZE], lm[24] = { 0 }, nt[1024], udom[2 * MAX_NAME],
        uname[2 * MAX_NAME], base[CF_NTLM_HASH_SIZE], exported[CF_NTLM_HASH_SIZE] = { 0 },
        sealed[CF_NTLM_HASH_SIZE];
    size_t end = AUTHENTICATE_HEAD, lm_len = 1, nt_len = 0, ud = 0, un = 0, sealed_len = 0;
    uint32_t flags = c->flags & OUR_FLAGS;
    struct arcfour_ctx rc4;
    int n;

    if (cap < AUTHENTICATE_HEAD)
        return -1;
    if (user) {
        cf_ntlm_ntowfv2(password ? password : "", user, domain ? domain : "", key);
        n = cf_ntlm_v2_response(key, c->server_challenge, client_challenge,
                                c->has_timestamp ? c->timestamp : now, c->target_info,
                                c->target_info_len, nt, sizeof(nt), lm, base);
        if (n < 0)
            return -1;
        nt_len = (size_t)n;
        lm_len = 24;
        /* 3.1.5.1.2: with MsvAvTimestamp the LmChallengeResponse is Z(24) */
        if (c->has_timestamp)
            memset(lm, 0, sizeof(lm));
        ud = unicode(domain ? domain : "", 0, udom, sizeof(udom));
        un = unicode(user, 0, uname, sizeof(uname));
        /* 3.1.5.1.2: KeyExchangeKey is the SessionBaseKey (NTLMv2, 3.4.5.1) */
        memcpy(exported, base, sizeof(exported));
        if (flags & NEG_KEY_EXCH) {
            memcpy(exported, random_key, sizeof(exported));
            arcfour_set_key(&rc4, sizeof(base), base);
            arcfour_crypt(&rc4, sizeof(sealed), sealed, random_key);
            sealed_len = sizeof(sealed);
            explicit_bzero(&rc4, sizeof(rc4));
        }
        explicit_bzero(key, sizeof(key));
        explicit_bzero(base, sizeof(base));
    } else {
        /* 3.1.5.1.2: LmChallengeResponse Z(1), no NT response */
        flags = (flags & ~KEY_FLAGS) | NEG_ANONYMOUS;
    }
    memset(out, 0, AUTHENTICATE_HEAD);
    put_header(out, MSG_AUTHENTICATE);
    sd_put_le32(out + 60, flags);
    n = put_field(out, cap, 12, &end, lm, lm_len) < 0 ||
        put_field(out, cap, 20, &end, nt, nt_len) < 0 ||
        put_field(out, cap, 28, &end, udom, ud) < 0 ||
        put_field(out, cap, 36, &end, uname, un) < 0 ||
        put_field(out, cap, 44, &end, NULL, 0) < 0 ||
        put_field(out, cap, 52, &end, sealed, sealed_len) < 0 ? -1 : (int)end;
    if (session_key)
        memcpy(session_key, exported, sizeof(exported));
    explicit_bzero(exported, sizeof(exported));
    return n;
}
