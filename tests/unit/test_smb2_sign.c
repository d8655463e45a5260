/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/test_smb2_sign.c — SMB2 signing (transport/channel/smb2_sign.c) against
 * known answers: the signing keys and signed messages Microsoft published, and, where no
 * SMB2 vector is published, values computed by implementations independent of libnettle;
 * then what verification rejects (a one-bit change anywhere in header, body or signature,
 * a wrong key, the wrong sender or GMAC role bit) and where a compound command ends.
 *
 * Published vectors: Microsoft Open Specifications blog, "SMB 2 and SMB 3 security in
 * Windows 10: the anatomy of signing and cryptographic keys" (2017), Appendix "Key
 * derivation examples": the 3.0 and 3.1.1 multichannel examples' session keys, preauth
 * integrity hashes and signing keys of both channels, and the signed SESSION_SETUP
 * messages of the 3.1.1 example (no SMB2_SIGNING_CAPABILITIES: AES-128-CMAC).
 *
 * No published SMB2 vector was found for HMAC-SHA256 (2.0.2/2.1) or AES-128-GMAC (3.1.1);
 * their expected signatures, over the blog's final SESSION_SETUP response (and a CANCEL
 * request written here), were computed with python3's hmac/hashlib (HMAC-SHA256, first 16
 * bytes) and with python3-cryptography's AESGCM(key).encrypt(nonce, b"", message), the
 * same values as OpenSSL 3.0's `openssl mac -cipher AES-128-GCM -macopt hexkey:K
 * -macopt hexiv:NONCE GMAC` and `openssl mac -digest SHA256 -macopt hexkey:K HMAC`, each
 * over the message with its Signature field zeroed. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include <nettle/cmac.h>

#include "sd_bytes.h"
#include "smb2_sign.h"
#include "smb2_wire.h"
#include "th_smb2.h"

/* The blog's 3.1.1 example, first channel: SessionKey, the preauth integrity hash after
 * the last SESSION_SETUP request, the SigningKey they derive, and the final SESSION_SETUP
 * response (MessageId 3, from the server) with its published signature. */
#define SK_311 "270E1BA896585EEB7AF3472D3B4C75A7"
#define PREAUTH_311 \
    "0DD13628CC3ED218EF9DF9772D436D0887AB9814BFAE63A80AA845F36909DB79" \
    "28622DDDAD522D9751640A459762C5A9D6BB084CBB3CE6BDADEF5D5BCE3C6C01"
#define SIGNING_KEY_311 "73FE7A9A77BEF0BDE49C650D8CCB5F76"
#define FINAL_RESP \
    "FE534D4240000100000000000100800009000000000000000300000000000000" \
    "FFFE0000000000001900000000100000EBE146DA120BA25FC3376A49DFE31BC1" \
    "0900000048001D00A11B3019A0030A0100A3120410010000003B453CDC352416" \
    "4200000000"
/* Second channel (binding): its first SESSION_SETUP request (MessageId 2, from the client,
 * signed with the session's SigningKey above), its SessionKey and preauth hash, the
 * Channel.SigningKey they derive, and the final response signed with it. */
#define BIND_REQ \
    "FE534D4240000100000000000100800008000000000000000200000000000000" \
    "FFFE000000000000190000000010000068BD0C58F613CE1334B1EB51C68D39EA" \
    "19000101010000000000000058004A000000000000000000604806062B060105" \
    "0502A03E303CA00E300C060A2B06010401823702020AA22A04284E544C4D5353" \
    "500001000000978208E200000000000000000000000000000000060380250000" \
    "000F"
#define SK_311_BIND "84B9DBB730116A8FA6E9889555C265F9"
#define PREAUTH_311_BIND \
    "EA3BF912B11CBFEC5B1889E8209614218687F82FA5294521AD3063425E49E88A" \
    "10BD022124CE25123BC9111F52D9566BA88BF46344E6063DC5E3FF0389026F6C"
#define SIGNING_KEY_311_BIND "C962BCA1A9DD1697B030644199705431"
#define BIND_FINAL_RESP \
    "FE534D4240000100000000000100800009000000000000000300000000000000" \
    "FFFE00000000000019000000001000008D604217FFBACF40635BF9D872992150" \
    "0900000048001D00A11B3019A0030A0100A312041001000000CFB046FC5D368E" \
    "2200000000"

/* Computed (see the top comment): FINAL_RESP signed with HMAC-SHA256 under SK_311 as a 2.x
 * session would, and with AES-128-GMAC under SIGNING_KEY_311 with the nonce's role bit set
 * (as the server sends it) and, to be refused, clear. */
#define FINAL_RESP_HMAC       "69F4B33F052C75B5F93906A96746A04E"
#define FINAL_RESP_GMAC       "75D05BAC99FF7FCC52A44C354381D559"
#define FINAL_RESP_GMAC_ROLE0 "48FE6970628518BC1797BC5FEC22A901"
/* A CANCEL request (2.2.30, StructureSize 4) from the client, signed, in the blog's
 * session, for MessageId 0x1122334455667788 (each byte distinct, so the nonce's byte order
 * shows): its GMAC under SIGNING_KEY_311 with the CANCEL bit (nonce 8877665544332211
 * 02000000) and, to be refused, without it. */
#define CANCEL_REQ \
    "FE534D4240000000000000000C00000008000000000000008877665544332211" \
    "000000000000000019000000001000000000000000000000000000000000000004000000"
#define CANCEL_GMAC       "073F8AE1E6423F0F810914B7A6FA6B07"
#define CANCEL_GMAC_PLAIN "DC5771E3176FE8CDDC72C78EE5DCCCDB"

#define MAX_MSG 512

static size_t unhex(const char *s, uint8_t *out, size_t cap)
{
    size_t n = strlen(s) / 2;

    assert_true(strlen(s) % 2 == 0 && n <= cap);
    for (size_t i = 0; i < n; i++) {
        unsigned v;

        assert_int_equal(sscanf(s + 2 * i, "%2x", &v), 1);
        out[i] = (uint8_t)v;
    }
    return n;
}

static void key_from(struct smb2_sign_key *k, enum smb2_sign_algo algo, const char *hex)
{
    k->algo = algo;
    unhex(hex, k->key, sizeof(k->key));
}

/* The key a 3.1.1 session or channel derives from session key and preauth hash (hex),
 * with algorithm id. */
static void key_311_from(struct smb2_sign_key *k, int signing_algo_id, const char *sk_hex,
                         const char *preauth_hex)
{
    uint8_t sk[SMB2_SIGN_KEY_SIZE], preauth[SMB2_PREAUTH_HASH_SIZE];

    unhex(sk_hex, sk, sizeof(sk));
    unhex(preauth_hex, preauth, sizeof(preauth));
    assert_int_equal(smb2_sign_key_init(k, SMB2_DIALECT_0311, signing_algo_id, sk, preauth), 0);
}

/* The blog's first channel's. */
static void key_311(struct smb2_sign_key *k, int signing_algo_id)
{
    key_311_from(k, signing_algo_id, SK_311, PREAUTH_311);
}

static void assert_key(const struct smb2_sign_key *k, enum smb2_sign_algo algo, const char *hex)
{
    uint8_t want[SMB2_SIGN_KEY_SIZE];

    unhex(hex, want, sizeof(want));
    assert_int_equal(k->algo, algo);
    assert_memory_equal(k->key, want, sizeof(want));
}

static void kdf_30_and_302_derive_the_published_signing_keys(void **state)
{
    static const struct { const char *session_key, *signing_key; } v[] = {
        { "7CD451825D0450D235424E44BA6E78CC", "0B7E9C5CAC36C0F6EA9AB275298CEDCE" },
        { "4E01A2B313BCF660CC250BEF021AEDE6", "BA1A17DBBFEC349BCA105563D598952F" },
    };
    const uint16_t dialects[] = { SMB2_DIALECT_0300, SMB2_DIALECT_0302 };
    uint8_t sk[SMB2_SIGN_KEY_SIZE];
    struct smb2_sign_key k;

    (void)state;
    for (size_t d = 0; d < 2; d++) {
        for (size_t i = 0; i < 2; i++) {
            unhex(v[i].session_key, sk, sizeof(sk));
            assert_int_equal(smb2_sign_key_init(&k, dialects[d], -1, sk, NULL), 0);
            assert_key(&k, SMB2_SIGN_AES_CMAC, v[i].signing_key);
        }
    }
}

static void kdf_311_derives_the_published_signing_keys(void **state)
{
    struct smb2_sign_key k;

    (void)state;
    key_311(&k, -1);
    assert_key(&k, SMB2_SIGN_AES_CMAC, SIGNING_KEY_311);
    key_311(&k, SMB2_SIGN_AES_GMAC);       /* the same key, another MAC */
    assert_key(&k, SMB2_SIGN_AES_GMAC, SIGNING_KEY_311);
    key_311(&k, SMB2_SIGN_HMAC_SHA256);    /* 3.1.4.1: whatever SigningAlgorithmId says */
    assert_key(&k, SMB2_SIGN_HMAC_SHA256, SIGNING_KEY_311);
    key_311_from(&k, -1, SK_311_BIND, PREAUTH_311_BIND);
    assert_key(&k, SMB2_SIGN_AES_CMAC, SIGNING_KEY_311_BIND);
}

static void key_init_2x_signs_with_the_session_key(void **state)
{
    const uint16_t dialects[] = { SMB2_DIALECT_0202, SMB2_DIALECT_0210 };
    uint8_t sk[SMB2_SIGN_KEY_SIZE];
    struct smb2_sign_key k;

    (void)state;
    unhex(SK_311, sk, sizeof(sk));
    for (size_t d = 0; d < 2; d++) {
        memset(&k, 0xAA, sizeof(k));
        assert_int_equal(smb2_sign_key_init(&k, dialects[d], -1, sk, NULL), 0);
        assert_key(&k, SMB2_SIGN_HMAC_SHA256, SK_311);
    }
}

static void key_init_rejects_what_no_dialect_signs_with(void **state)
{
    static const struct { uint16_t dialect; int algo; int preauth; } bad[] = {
        { SMB2_DIALECT_WILDCARD, -1, 1 }, { 0x0200, -1, 1 }, { 0x0312, -1, 1 },
        { SMB2_DIALECT_0311, -1, 0 },   /* no preauth hash */
        { SMB2_DIALECT_0311, 3, 1 }, { SMB2_DIALECT_0311, -2, 1 },
        { SMB2_DIALECT_0300, SMB2_SIGN_AES_CMAC, 1 },  /* signing capabilities are 3.1.1's */
        { SMB2_DIALECT_0210, SMB2_SIGN_HMAC_SHA256, 1 },
    };
    uint8_t sk[SMB2_SIGN_KEY_SIZE] = { 1 }, preauth[SMB2_PREAUTH_HASH_SIZE] = { 2 };
    struct smb2_sign_key k, before;

    (void)state;
    memset(&k, 0xAA, sizeof(k));
    before = k;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(smb2_sign_key_init(&k, bad[i].dialect, bad[i].algo, sk,
                                            bad[i].preauth ? preauth : NULL),
                         -1);
        assert_memory_equal(&k, &before, sizeof(k));
    }
}

static void key_wipe_clears_the_key(void **state)
{
    const uint8_t zero[sizeof(struct smb2_sign_key)] = { 0 };
    struct smb2_sign_key k;

    (void)state;
    key_311(&k, SMB2_SIGN_AES_GMAC);
    smb2_sign_key_wipe(&k);
    assert_memory_equal(&k, zero, sizeof(k));
}

/* Verifying msg as published succeeds and leaves it as it was; signing it afresh (the
 * signature zeroed, SIGNED cleared) writes back exactly the published bytes. */
static void check_published(const struct smb2_sign_key *k, enum smb2_sign_sender sender,
                            const char *hex)
{
    uint8_t msg[MAX_MSG], copy[MAX_MSG];
    size_t len = unhex(hex, msg, sizeof(msg));

    memcpy(copy, msg, len);
    assert_int_equal(smb2_sign_verify(k, sender, msg, len), 0);
    assert_memory_equal(msg, copy, len);
    memset(copy + SMB2_HDR_SIGNATURE, 0, SMB2_SIGNATURE_SIZE);
    copy[16] &= (uint8_t)~SMB2_FLAGS_SIGNED;
    assert_int_equal(smb2_sign(k, sender, copy, len), 0);
    assert_memory_equal(copy, msg, len);
}

static void cmac_matches_the_published_messages(void **state)
{
    struct smb2_sign_key k;

    (void)state;
    key_311(&k, -1);
    check_published(&k, SMB2_SIGN_FROM_SERVER, FINAL_RESP);
    check_published(&k, SMB2_SIGN_FROM_CLIENT, BIND_REQ);
    key_311_from(&k, -1, SK_311_BIND, PREAUTH_311_BIND);
    check_published(&k, SMB2_SIGN_FROM_SERVER, BIND_FINAL_RESP);
}

/* msg_hex with its signature replaced by sig_hex: what the verification of it returns. */
static int verify_with(const struct smb2_sign_key *k, enum smb2_sign_sender sender,
                       const char *msg_hex, const char *sig_hex)
{
    uint8_t msg[MAX_MSG];
    size_t len = unhex(msg_hex, msg, sizeof(msg));

    unhex(sig_hex, msg + SMB2_HDR_SIGNATURE, SMB2_SIGNATURE_SIZE);
    return smb2_sign_verify(k, sender, msg, len);
}

/* Signing msg_hex as sender writes want_hex; verification takes that, refuses the
 * signature refused_hex, and refuses the message as the other side's. */
static void check_computed(const struct smb2_sign_key *k, enum smb2_sign_sender sender,
                           const char *msg_hex, const char *want_hex, const char *refused_hex)
{
    enum smb2_sign_sender other = sender == SMB2_SIGN_FROM_CLIENT ? SMB2_SIGN_FROM_SERVER
                                                                  : SMB2_SIGN_FROM_CLIENT;
    uint8_t msg[MAX_MSG], want[SMB2_SIGNATURE_SIZE];
    size_t len = unhex(msg_hex, msg, sizeof(msg));

    assert_int_equal(smb2_sign(k, sender, msg, len), 0);
    unhex(want_hex, want, sizeof(want));
    assert_memory_equal(msg + SMB2_HDR_SIGNATURE, want, sizeof(want));
    assert_int_equal(verify_with(k, sender, msg_hex, want_hex), 0);
    assert_int_equal(verify_with(k, sender, msg_hex, refused_hex), -EBADMSG);
    /* SERVER_TO_REDIR says who sent it */
    assert_int_equal(verify_with(k, other, msg_hex, want_hex), -EINVAL);
}

static void hmac_sha256_matches_an_independent_computation(void **state)
{
    struct smb2_sign_key k;

    (void)state;
    key_from(&k, SMB2_SIGN_HMAC_SHA256, SK_311); /* 2.x signs with the session key */
    /* refused: the published signature, AES-CMAC's */
    check_computed(&k, SMB2_SIGN_FROM_SERVER, FINAL_RESP, FINAL_RESP_HMAC,
                   "EBE146DA120BA25FC3376A49DFE31BC1");
}

static void gmac_sets_the_role_bit_for_the_server(void **state)
{
    struct smb2_sign_key k;

    (void)state;
    key_311(&k, SMB2_SIGN_AES_GMAC);
    check_computed(&k, SMB2_SIGN_FROM_SERVER, FINAL_RESP, FINAL_RESP_GMAC,
                   FINAL_RESP_GMAC_ROLE0);
}

static void gmac_nonce_is_the_message_id_and_the_cancel_bit(void **state)
{
    struct smb2_sign_key k;

    (void)state;
    key_311(&k, SMB2_SIGN_AES_GMAC);
    check_computed(&k, SMB2_SIGN_FROM_CLIENT, CANCEL_REQ, CANCEL_GMAC, CANCEL_GMAC_PLAIN);
}

/* Every one-bit change of a signed message is refused: structural header fields
 * (ProtocolId, StructureSize, SERVER_TO_REDIR, NextCommand) may make it no message that
 * sender signed (-EINVAL), any other bit of the header, body or signature is a bad
 * signature; so is a one-bit change of the key. For each algorithm. */
static void verify_rejects_every_one_bit_change_and_a_wrong_key(void **state)
{
    const enum smb2_sign_algo algos[] = { SMB2_SIGN_HMAC_SHA256, SMB2_SIGN_AES_CMAC,
                                          SMB2_SIGN_AES_GMAC };
    uint8_t msg[MAX_MSG];
    size_t len = unhex(FINAL_RESP, msg, sizeof(msg));

    (void)state;
    for (size_t a = 0; a < 3; a++) {
        struct smb2_sign_key k;

        key_from(&k, algos[a], SIGNING_KEY_311);
        assert_int_equal(smb2_sign(&k, SMB2_SIGN_FROM_SERVER, msg, len), 0);
        for (size_t i = 0; i < len; i++) {
            int structural = i < 6 || (i >= 20 && i < 24);

            for (int bit = 0; bit < 8; bit++) {
                int got;

                msg[i] ^= (uint8_t)(1u << bit);
                got = smb2_sign_verify(&k, SMB2_SIGN_FROM_SERVER, msg, len);
                msg[i] ^= (uint8_t)(1u << bit);
                if (structural)
                    assert_true(got == -EBADMSG || got == -EINVAL);
                else if (i == 16 && bit == 0)
                    assert_int_equal(got, -EINVAL);
                else
                    assert_int_equal(got, -EBADMSG);
            }
        }
        assert_int_equal(smb2_sign_verify(&k, SMB2_SIGN_FROM_SERVER, msg, len), 0);
        for (size_t i = 0; i < sizeof(k.key); i++) {
            k.key[i] ^= 0x10;
            assert_int_equal(smb2_sign_verify(&k, SMB2_SIGN_FROM_SERVER, msg, len), -EBADMSG);
            k.key[i] ^= 0x10;
        }
    }
}

/* A compound request: a READ (113 bytes, padded to NextCommand 120) then a related WRITE.
 * Each command's signature covers its header up to NextCommand, padding included, or to
 * the end for the last, and nothing past it. */
static void compound_commands_are_signed_up_to_next_command(void **state)
{
    const enum smb2_sign_algo algos[] = { SMB2_SIGN_HMAC_SHA256, SMB2_SIGN_AES_CMAC,
                                          SMB2_SIGN_AES_GMAC };
    uint8_t msg[MAX_MSG];
    size_t len;

    (void)state;
    for (size_t a = 0; a < 3; a++) {
        struct smb2_sign_key k;
        uint8_t first_sig[SMB2_SIGNATURE_SIZE];
        size_t second_len;

        key_from(&k, algos[a], SIGNING_KEY_311);
        memset(msg, 0x5A, sizeof(msg));
        th_smb2_plain_read(msg, 7, 0x10000);
        sd_put_le32(msg + 20, 120);                              /* NextCommand */
        second_len = th_smb2_plain_write(msg + 120, 8, 40);
        sd_put_le32(msg + 120 + 16, SMB2_FLAGS_RELATED_OPERATIONS);
        len = 120 + second_len;
        assert_int_equal(smb2_sign(&k, SMB2_SIGN_FROM_CLIENT, msg, len), 0);
        assert_int_equal(smb2_sign(&k, SMB2_SIGN_FROM_CLIENT, msg + 120, second_len), 0);
        assert_true(sd_le32(msg + 16) & SMB2_FLAGS_SIGNED);
        assert_true(sd_le32(msg + 120 + 16) & SMB2_FLAGS_SIGNED);
        memcpy(first_sig, msg + SMB2_HDR_SIGNATURE, sizeof(first_sig));
        assert_int_equal(smb2_sign_verify(&k, SMB2_SIGN_FROM_CLIENT, msg, len), 0);
        assert_int_equal(smb2_sign_verify(&k, SMB2_SIGN_FROM_CLIENT, msg + 120, second_len), 0);

        msg[119] ^= 1; /* the first command's last padding byte */
        assert_int_equal(smb2_sign_verify(&k, SMB2_SIGN_FROM_CLIENT, msg, len), -EBADMSG);
        assert_int_equal(smb2_sign_verify(&k, SMB2_SIGN_FROM_CLIENT, msg + 120, second_len), 0);
        msg[119] ^= 1;
        msg[len - 1] ^= 1; /* the second command's last byte */
        assert_int_equal(smb2_sign_verify(&k, SMB2_SIGN_FROM_CLIENT, msg, len), 0);
        assert_int_equal(smb2_sign_verify(&k, SMB2_SIGN_FROM_CLIENT, msg + 120, second_len),
                         -EBADMSG);
        /* signing the first again over a longer buffer changes nothing */
        assert_int_equal(smb2_sign(&k, SMB2_SIGN_FROM_CLIENT, msg, sizeof(msg)), 0);
        assert_memory_equal(msg + SMB2_HDR_SIGNATURE, first_sig, sizeof(first_sig));
    }
}

static void sign_refuses_what_is_not_a_message_of_that_sender(void **state)
{
    uint8_t msg[MAX_MSG], copy[MAX_MSG];
    struct smb2_sign_key k;
    size_t len = th_smb2_plain_read(msg, 9, 0x10000);

    (void)state;
    key_311(&k, -1);
    memcpy(copy, msg, len);
    /* not SIGNED yet: signing sets the flag */
    assert_false(sd_le32(msg + 16) & SMB2_FLAGS_SIGNED);
    assert_int_equal(smb2_sign(&k, SMB2_SIGN_FROM_SERVER, msg, len), -EINVAL);
    assert_memory_equal(msg, copy, len);
    sd_put_le32(msg + 20, 120); /* NextCommand past the message */
    assert_int_equal(smb2_sign(&k, SMB2_SIGN_FROM_CLIENT, msg, len), -EINVAL);
    assert_int_equal(smb2_sign_verify(&k, SMB2_SIGN_FROM_CLIENT, msg, len), -EINVAL);
    sd_put_le32(msg + 20, 0);
    assert_int_equal(smb2_sign(&k, SMB2_SIGN_FROM_CLIENT, msg, SMB2_HDR_SIZE - 1), -EINVAL);
    msg[0] = 0xFD; /* 2.2.41 transform header: encrypted */
    assert_int_equal(smb2_sign(&k, SMB2_SIGN_FROM_CLIENT, msg, len), -EINVAL);
    msg[0] = 0xFE;
    k.algo = (enum smb2_sign_algo)3;
    assert_int_equal(smb2_sign(&k, SMB2_SIGN_FROM_CLIENT, msg, len), -EINVAL);
    assert_int_equal(smb2_sign_verify(&k, SMB2_SIGN_FROM_CLIENT, msg, len), -EINVAL);
    assert_memory_equal(msg, copy, len);
    k.algo = SMB2_SIGN_AES_CMAC;
    assert_int_equal(smb2_sign(&k, SMB2_SIGN_FROM_CLIENT, msg, len), 0);
    assert_true(sd_le32(msg + 16) & SMB2_FLAGS_SIGNED);
    assert_int_equal(smb2_sign_verify(&k, SMB2_SIGN_FROM_CLIENT, msg, len), 0);
}

/* A message signed in two pieces (head, then data lying elsewhere) gets the signature the
 * whole message gets, with every algorithm and at every split; a compound head is refused. */
static void sign_parts_equals_signing_the_whole_message(void **state)
{
    static const int algos[] = { -1, SMB2_SIGN_AES_GMAC };
    uint8_t whole[MAX_MSG], head[MAX_MSG];
    size_t len = unhex(FINAL_RESP, whole, sizeof(whole));
    struct smb2_sign_key k;

    (void)state;
    for (size_t a = 0; a < 3; a++) {
        if (a < 2)
            key_311(&k, algos[a]);
        else
            key_from(&k, SMB2_SIGN_HMAC_SHA256, SK_311);
        assert_int_equal(smb2_sign(&k, SMB2_SIGN_FROM_SERVER, whole, len), 0);
        for (size_t split = SMB2_HDR_SIZE; split <= len; split += 7) {
            memcpy(head, whole, len);
            memset(head + SMB2_HDR_SIGNATURE, 0, SMB2_SIGNATURE_SIZE);
            assert_int_equal(smb2_sign_parts(&k, SMB2_SIGN_FROM_SERVER, head, split,
                                             whole + split, len - split), 0);
            assert_memory_equal(head, whole, split);
        }
    }
    memcpy(head, whole, len);
    sd_put_le32(head + 20, 72); /* NextCommand: a compound cannot be signed in pieces */
    assert_int_equal(smb2_sign_parts(&k, SMB2_SIGN_FROM_SERVER, head, 72, whole + 72, len - 72),
                     -EINVAL);
}

/* A signature made over the Direct-TCP length and the message (Linux ksmbd's for a READ
 * response without data) passes the framed check only; a standard one only the standard
 * check; a chain is refused. */
static void framed_verify_takes_the_length_prefix_and_nothing_else(void **state)
{
    uint8_t msg[MAX_MSG], framed[4 + MAX_MSG];
    size_t len = unhex(FINAL_RESP, msg, sizeof(msg));
    struct smb2_sign_key k;

    (void)state;
    key_311(&k, -1);
    /* the ksmbd form: sign "00 00 00 len" + message as one message, then move the
     * signature it wrote onto the message */
    sd_put_be32(framed, (uint32_t)len);
    memcpy(framed + 4, msg, len);
    memset(msg + SMB2_HDR_SIGNATURE, 0, SMB2_SIGNATURE_SIZE);
    assert_int_equal(smb2_sign(&k, SMB2_SIGN_FROM_SERVER, msg, len), 0); /* flags as sent */
    memcpy(framed + 4, msg, len);
    memset(framed + 4 + SMB2_HDR_SIGNATURE, 0, SMB2_SIGNATURE_SIZE);
    {
        struct cmac_aes128_ctx c;

        cmac_aes128_set_key(&c, k.key);
        cmac_aes128_update(&c, 4 + len, framed);
        cmac_aes128_digest(&c, SMB2_SIGNATURE_SIZE, msg + SMB2_HDR_SIGNATURE);
    }
    assert_int_equal(smb2_sign_verify_framed(&k, SMB2_SIGN_FROM_SERVER, msg, len), 0);
    assert_int_equal(smb2_sign_verify(&k, SMB2_SIGN_FROM_SERVER, msg, len), -EBADMSG);
    msg[len - 1] ^= 1;
    assert_int_equal(smb2_sign_verify_framed(&k, SMB2_SIGN_FROM_SERVER, msg, len), -EBADMSG);
    msg[len - 1] ^= 1;
    /* a standard signature does not pass the framed check */
    assert_int_equal(smb2_sign(&k, SMB2_SIGN_FROM_SERVER, msg, len), 0);
    assert_int_equal(smb2_sign_verify_framed(&k, SMB2_SIGN_FROM_SERVER, msg, len), -EBADMSG);
    sd_put_le32(msg + 20, 72);
    assert_int_equal(smb2_sign_verify_framed(&k, SMB2_SIGN_FROM_SERVER, msg, len), -EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(kdf_30_and_302_derive_the_published_signing_keys),
        cmocka_unit_test(kdf_311_derives_the_published_signing_keys),
        cmocka_unit_test(key_init_2x_signs_with_the_session_key),
        cmocka_unit_test(key_init_rejects_what_no_dialect_signs_with),
        cmocka_unit_test(key_wipe_clears_the_key),
        cmocka_unit_test(cmac_matches_the_published_messages),
        cmocka_unit_test(hmac_sha256_matches_an_independent_computation),
        cmocka_unit_test(gmac_sets_the_role_bit_for_the_server),
        cmocka_unit_test(gmac_nonce_is_the_message_id_and_the_cancel_bit),
        cmocka_unit_test(verify_rejects_every_one_bit_change_and_a_wrong_key),
        cmocka_unit_test(compound_commands_are_signed_up_to_next_command),
        cmocka_unit_test(sign_refuses_what_is_not_a_message_of_that_sender),
        cmocka_unit_test(sign_parts_equals_signing_the_whole_message),
        cmocka_unit_test(framed_verify_takes_the_length_prefix_and_nothing_else),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
