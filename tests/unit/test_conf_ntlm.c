/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/test_conf_ntlm.c — the conformance client's NTLMSSP (conformance/cf_ntlm.c):
 * NTOWFv2, NTProofStr, the LMv2 response and the SessionBaseKey against the MS-NLMP
 * 4.2.4 NTLMv2 example (4.2.1 common values), the CHALLENGE_MESSAGE parser's rejections,
 * AUTHENTICATE_MESSAGE layout (user, anonymous), and the session key it yields: the
 * EncryptedRandomSessionKey of 4.2.4.2.3 with key exchange, the SessionBaseKey without. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "cf_ntlm.h"
#include "sd_bytes.h"

/* MS-NLMP 4.2.1 */
static const uint8_t server_challenge[8] = { 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef };
static const uint8_t client_challenge[8] = { 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa };
static const uint8_t random_key[16] = { 0x55, 0x55, 0x55, 0x55, 0x55, 0x55, 0x55, 0x55,
                                        0x55, 0x55, 0x55, 0x55, 0x55, 0x55, 0x55, 0x55 };
/* MS-NLMP 4.2.4.1.2 SessionBaseKey */
static const uint8_t base_key[16] = { 0x8d, 0xe4, 0x0c, 0xca, 0xdb, 0xc1, 0x4a, 0x82,
                                      0xf1, 0x5c, 0xb0, 0xad, 0x0d, 0xe9, 0x5c, 0xa3 };
/* MS-NLMP 4.2.4: AV pairs MsvAvNbDomainName "Domain", MsvAvNbComputerName "Server", EOL */
static const uint8_t target_info[36] = {
    0x02, 0x00, 0x0c, 0x00, 'D', 0, 'o', 0, 'm', 0, 'a', 0, 'i', 0, 'n', 0,
    0x01, 0x00, 0x0c, 0x00, 'S', 0, 'e', 0, 'r', 0, 'v', 0, 'e', 0, 'r', 0,
    0x00, 0x00, 0x00, 0x00,
};

static void ntowfv2_matches_4_2_4_1_1(void **state)
{
    static const uint8_t want[16] = { 0x0c, 0x86, 0x8a, 0x40, 0x3b, 0xfd, 0x7a, 0x93,
                                      0xa3, 0x00, 0x1e, 0xf2, 0x2e, 0xf0, 0x2e, 0x3f };
    uint8_t key[16];

    (void)state;
    cf_ntlm_ntowfv2("Password", "User", "Domain", key);
    assert_memory_equal(key, want, 16);
    /* the user is upper-cased, the domain is not */
    cf_ntlm_ntowfv2("Password", "uSeR", "Domain", key);
    assert_memory_equal(key, want, 16);
    cf_ntlm_ntowfv2("Password", "User", "DOMAIN", key);
    assert_memory_not_equal(key, want, 16);
}

static void v2_response_matches_4_2_4_2(void **state)
{
    static const uint8_t proof[16] = { 0x68, 0xcd, 0x0a, 0xb8, 0x51, 0xe5, 0x1c, 0x96,
                                       0xaa, 0xbc, 0x92, 0x7b, 0xeb, 0xef, 0x6a, 0x1c };
    static const uint8_t lm_want[24] = { 0x86, 0xc3, 0x50, 0x97, 0xac, 0x9c, 0xec, 0x10,
                                         0x25, 0x54, 0x76, 0x4a, 0x57, 0xcc, 0xcc, 0x19,
                                         0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa };
    uint8_t key[16], nt[200], lm[24], sk[16];
    int n;

    (void)state;
    cf_ntlm_ntowfv2("Password", "User", "Domain", key);
    n = cf_ntlm_v2_response(key, server_challenge, client_challenge, 0, target_info,
                            sizeof(target_info), nt, sizeof(nt), lm, sk);
    /* 4.2.4.2.2: 84 bytes: NTProofStr, temp (0x0101, zeros, time 0, client challenge,
     * zeros, target info, zeros) */
    assert_int_equal(n, 84);
    assert_memory_equal(nt, proof, 16);
    assert_int_equal(nt[16], 1);
    assert_int_equal(nt[17], 1);
    assert_memory_equal(nt + 32, client_challenge, 8);
    assert_memory_equal(nt + 44, target_info, sizeof(target_info));
    assert_memory_equal(lm, lm_want, 24);   /* 4.2.4.2.1 */
    assert_memory_equal(sk, base_key, 16);  /* 4.2.4.1.2 */
    assert_int_equal(cf_ntlm_v2_response(key, server_challenge, client_challenge, 0, target_info,
                                         sizeof(target_info), nt, 83, lm, NULL), -1);
}

/* A CHALLENGE_MESSAGE carrying ti as its target info, with MS-NLMP 4.2.4's flags
 * (NTLMSSP_NEGOTIATE_KEY_EXCH among them). */
static size_t challenge(uint8_t *b, const uint8_t *ti, uint16_t ti_len)
{
    memset(b, 0, 56);
    memcpy(b, "NTLMSSP", 8);
    sd_put_le32(b + 8, 2);
    sd_put_le32(b + 20, 0xe2898215u);
    memcpy(b + 24, server_challenge, 8);
    sd_put_le16(b + 40, ti_len);
    sd_put_le16(b + 42, ti_len);
    sd_put_le32(b + 44, 56);
    memcpy(b + 56, ti, ti_len);
    return 56u + ti_len;
}

static void challenge_parses_and_finds_timestamp(void **state)
{
    uint8_t ti[48], b[200];
    struct cf_ntlm_challenge c;
    size_t n;

    (void)state;
    memcpy(ti, target_info, 32);
    sd_put_le16(ti + 32, 7); /* MsvAvTimestamp */
    sd_put_le16(ti + 34, 8);
    sd_put_le64(ti + 36, 0x0102030405060708ull);
    memset(ti + 44, 0, 4);
    n = challenge(b, ti, sizeof(ti));
    assert_int_equal(cf_ntlm_parse_challenge(b, n, &c), 0);
    assert_memory_equal(c.server_challenge, server_challenge, 8);
    assert_int_equal(c.target_info_len, sizeof(ti));
    assert_ptr_equal(c.target_info, b + 56);
    assert_true(c.has_timestamp);
    assert_true(c.timestamp == 0x0102030405060708ull);
}

static void challenge_rejects_garbage(void **state)
{
    uint8_t b[200], bad[8] = { 0x02, 0x00, 0x40, 0x00, 0, 0, 0, 0 }; /* AV past its field */
    struct cf_ntlm_challenge c;
    size_t n = challenge(b, target_info, sizeof(target_info));

    (void)state;
    for (size_t len = 0; len < 48; len++)
        assert_int_equal(cf_ntlm_parse_challenge(b, len, &c), -1);
    assert_int_equal(cf_ntlm_parse_challenge(b, n - 1, &c), -1); /* target info past the end */
    b[8] = 3;
    assert_int_equal(cf_ntlm_parse_challenge(b, n, &c), -1);     /* not type 2 */
    b[8] = 2;
    b[0] = 'X';
    assert_int_equal(cf_ntlm_parse_challenge(b, n, &c), -1);     /* signature */
    n = challenge(b, bad, sizeof(bad));
    assert_int_equal(cf_ntlm_parse_challenge(b, n, &c), -1);
    n = challenge(b, bad, 3);                                    /* a pair cut short */
    assert_int_equal(cf_ntlm_parse_challenge(b, n, &c), -1);
}

/* The 4.2.4 challenge, parsed (its target info stays in a static buffer). */
static struct cf_ntlm_challenge challenge_4_2_4(void)
{
    static uint8_t b[200];
    struct cf_ntlm_challenge c;

    assert_int_equal(cf_ntlm_parse_challenge(b, challenge(b, target_info, sizeof(target_info)),
                                             &c), 0);
    return c;
}

/* 4.2.4's user answering c at time 0 into out (cap bytes): its length; sk: the session key. */
static int authenticate_user(const struct cf_ntlm_challenge *c, uint8_t *out, size_t cap,
                             uint8_t *sk)
{
    return cf_ntlm_authenticate(c, "User", "Password", "Domain", client_challenge, 0, random_key,
                                out, cap, sk);
}

static void authenticate_layout(void **state)
{
    struct cf_ntlm_challenge c = challenge_4_2_4();
    uint8_t out[600];
    int len;

    (void)state;
    len = authenticate_user(&c, out, sizeof(out), NULL);
    assert_true(len > 64);
    assert_memory_equal(out, "NTLMSSP", 8);
    assert_int_equal(sd_le32(out + 8), 3);
    assert_int_equal(sd_le16(out + 12), 24);                  /* LmChallengeResponse */
    assert_int_equal(sd_le16(out + 20), 84);                  /* NtChallengeResponse */
    assert_int_equal(sd_le16(out + 28), 12);                  /* "Domain" */
    assert_int_equal(sd_le16(out + 36), 8);                   /* "User" */
    assert_memory_equal(out + sd_le32(out + 40), "U\0s\0e\0r\0", 8);
    assert_int_equal(sd_le32(out + 24) + 84, len - 36);       /* NT, domain, user, key */
    assert_int_equal(authenticate_user(&c, out, 100, NULL), -1);
    /* anonymous (MS-NLMP 3.2.5.1.2): LM Z(1), no NT response, no user, ANONYMOUS flag */
    len = cf_ntlm_authenticate(&c, NULL, NULL, NULL, client_challenge, 0, random_key, out,
                               sizeof(out), NULL);
    assert_int_equal(len, 65);
    assert_int_equal(sd_le16(out + 12), 1);
    assert_int_equal(sd_le16(out + 20), 0);
    assert_int_equal(sd_le16(out + 36), 0);
    assert_int_equal(sd_le16(out + 52), 0);                   /* no session key sent */
    assert_true(sd_le32(out + 60) & 0x800u);
    assert_false(sd_le32(out + 60) & 0x40000010u);            /* neither KEY_EXCH nor SIGN */
}

/* MS-NLMP 4.2.4.2.3: with NTLMSSP_NEGOTIATE_KEY_EXCH the RandomSessionKey (0x55 x 16) goes
 * as RC4(SessionBaseKey, it) and is the session key; without, the SessionBaseKey is. */
static void session_key_4_2_4_2_3(void **state)
{
    static const uint8_t sealed_want[16] = { 0xc5, 0xda, 0xd2, 0x54, 0x4f, 0xc9, 0x79, 0x90,
                                             0x94, 0xce, 0x1c, 0xe9, 0x0b, 0xc9, 0xd0, 0x3e };
    struct cf_ntlm_challenge c = challenge_4_2_4();
    uint8_t out[600], sk[16];
    int len;

    (void)state;
    len = authenticate_user(&c, out, sizeof(out), sk);
    assert_true(len > 0);
    assert_true(sd_le32(out + 60) & 0x40000000u);             /* KEY_EXCH kept */
    assert_true(sd_le32(out + 60) & 0x00000010u);             /* SIGN kept */
    assert_int_equal(sd_le16(out + 52), 16);
    assert_int_equal(sd_le32(out + 56) + 16, len);
    assert_memory_equal(out + sd_le32(out + 56), sealed_want, 16);
    assert_memory_equal(sk, random_key, 16);
    /* a server that does not agree to key exchange: no key sent, the SessionBaseKey */
    c.flags &= ~0x40000000u;
    len = authenticate_user(&c, out, sizeof(out), sk);
    assert_true(len > 0);
    assert_false(sd_le32(out + 60) & 0x40000000u);
    assert_int_equal(sd_le16(out + 52), 0);
    assert_memory_equal(sk, base_key, 16);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ntowfv2_matches_4_2_4_1_1),
        cmocka_unit_test(v2_response_matches_4_2_4_2),
        cmocka_unit_test(challenge_parses_and_finds_timestamp),
        cmocka_unit_test(challenge_rejects_garbage),
        cmocka_unit_test(authenticate_layout),
        cmocka_unit_test(session_key_4_2_4_2_3),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
