/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/test_shim_siglearn.c — how the shim learns the program's SMB2 signing keys
 * (preload/shim_siglearn.c, preload/interpose_gnutls.c). First with a fake caller making
 * the calls Samba's libcli/smb/smb2_signing.c makes (a handle set up with the key, then
 * the header up to its Signature MAC'ed, or authenticated first for AES-128-GMAC), and
 * those it must not learn from: its key derivation (an HMAC-SHA256 whose first input is a
 * counter), an encryption (a transform header's bytes, a plaintext), another handle's
 * call in between, a key of another size, SessionId 0, a process without a tunnel, the
 * shim's own work. Then with real GnuTLS through the interposers, which this test links
 * in front of it as the shim is preloaded in front of Samba: the signatures GnuTLS
 * computes are the ones transport/channel/smb2_sign makes (nothing is changed on the
 * way), the key is learned from them, and an AES-128-GCM encryption, which decrypts back
 * whole, teaches nothing. A learned key shows by verifying a request signed with it. */
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <nettle/hmac.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "sd_bytes.h"
#include "shim_guard.h"
#include "shim_siglearn.h"
#include "shim_sigkeys.h"
#include "smb2_sign.h"
#include "smb2_wire.h"
#include "th_shim.h"

#define SID 0x0000100000000045ull
#define MSG TH_SHIM_REQUEST_SIZE

static const struct shim_fd_key tunnel = { .dev = 9, .ino = 77 };
static int handles[4]; /* fake handles: their addresses */

static struct smb2_sign_key key_of(enum smb2_sign_algo algo)
{
    struct smb2_sign_key k = { .algo = algo };

    for (size_t i = 0; i < sizeof(k.key); i++)
        k.key[i] = (uint8_t)(0x3C + 11 * i + algo);
    return k;
}

/* Whether k is known as the signing key of session sid: a request it signed verifies. */
static int learned(const struct smb2_sign_key *k, uint64_t sid)
{
    uint8_t b[MSG];

    th_shim_request(b, SMB2_READ, 9, sid, k);
    return shim_sigkeys_verify(&tunnel, sid, b, sizeof(b)) == SHIM_SIGKEYS_VERIFIED;
}

static int program_fd = -1;

static int with_a_tunnel(void **state)
{
    (void)state;
    shim_fdtable_clear();
    shim_sigkeys_wipe_all();
    program_fd = th_fake_tunnel(NULL);
    return 0;
}

static int close_tunnel(void **state)
{
    (void)state;
    close(program_fd);
    shim_fdtable_clear();
    return 0;
}

/* ---- a fake caller ---- */

/* Samba's HMAC-SHA256 and AES-128-CMAC signing: set up, then the 48 header bytes before
 * the Signature; its GMAC: set up, then the same bytes first of the additional data. */
static void the_first_use_of_a_signing_handle_teaches_its_key(void **state)
{
    const enum smb2_sign_algo algos[] = { SMB2_SIGN_HMAC_SHA256, SMB2_SIGN_AES_CMAC,
                                          SMB2_SIGN_AES_GMAC };
    uint8_t b[MSG];

    (void)state;
    for (size_t i = 0; i < 3; i++) {
        const struct smb2_sign_key k = key_of(algos[i]);

        th_shim_request(b, SMB2_SESSION_SETUP, 2, SID + i, NULL);
        shim_siglearn_setup(&handles[0], algos[i], k.key, sizeof(k.key));
        shim_siglearn_use(&handles[0], b, SMB2_HDR_SIGNATURE, 0);
        assert_true(learned(&k, SID + i));
        /* later messages on the handle teach nothing more */
        shim_siglearn_use(&handles[0], b, SMB2_HDR_SIGNATURE, 0);
        assert_int_equal(shim_sigkeys_count(), i + 1);
    }
}

static void derivations_encryptions_and_strangers_teach_nothing(void **state)
{
    const struct smb2_sign_key k = key_of(SMB2_SIGN_AES_GMAC);
    static const uint8_t counter[4] = { 0, 0, 0, 1 }; /* the KDF's i (MS-SMB2 3.1.4.2) */
    uint8_t b[MSG], transform[52] = { 0xFD, 'S', 'M', 'B' }, big_key[32] = { 0 };

    (void)state;
    th_shim_request(b, SMB2_WRITE, 3, SID, NULL);
    /* the key derivation: an HMAC-SHA256 with a 16-byte key, first over a counter */
    shim_siglearn_setup(&handles[0], SMB2_SIGN_HMAC_SHA256, k.key, sizeof(k.key));
    shim_siglearn_use(&handles[0], counter, sizeof(counter), 0);
    shim_siglearn_use(&handles[0], b, SMB2_HDR_SIGNATURE, 0);
    /* an encryption: the transform header's 32 bytes from its Nonce, then the message */
    shim_siglearn_setup(&handles[1], SMB2_SIGN_AES_GMAC, k.key, sizeof(k.key));
    shim_siglearn_use(&handles[1], transform + 20, 32, 1);
    /* ... even were its additional data an SMB2 header */
    shim_siglearn_setup(&handles[1], SMB2_SIGN_AES_GMAC, k.key, sizeof(k.key));
    shim_siglearn_use(&handles[1], b, SMB2_HDR_SIGNATURE, 1);
    /* another handle's call between the setup and the first use */
    shim_siglearn_setup(&handles[2], SMB2_SIGN_AES_CMAC, k.key, sizeof(k.key));
    shim_siglearn_use(&handles[3], b, SMB2_HDR_SIGNATURE, 0);
    shim_siglearn_use(&handles[2], b, SMB2_HDR_SIGNATURE, 0);
    /* a key of another size, a short header, a transform header, SessionId 0 */
    shim_siglearn_setup(&handles[0], SMB2_SIGN_AES_CMAC, big_key, sizeof(big_key));
    shim_siglearn_use(&handles[0], b, SMB2_HDR_SIGNATURE, 0);
    shim_siglearn_setup(&handles[0], SMB2_SIGN_AES_CMAC, k.key, sizeof(k.key));
    shim_siglearn_use(&handles[0], b, SMB2_HDR_SIGNATURE - 1, 0);
    b[0] = 0xFD;
    shim_siglearn_setup(&handles[0], SMB2_SIGN_AES_CMAC, k.key, sizeof(k.key));
    shim_siglearn_use(&handles[0], b, SMB2_HDR_SIGNATURE, 0);
    th_shim_request(b, SMB2_WRITE, 3, 0, NULL);
    shim_siglearn_setup(&handles[0], SMB2_SIGN_AES_CMAC, k.key, sizeof(k.key));
    shim_siglearn_use(&handles[0], b, SMB2_HDR_SIGNATURE, 0);
    assert_int_equal(shim_sigkeys_count(), 0);
}

static void without_a_tunnel_or_inside_the_shim_nothing_is_learned(void **state)
{
    const struct smb2_sign_key k = key_of(SMB2_SIGN_AES_CMAC);
    uint8_t b[MSG];

    (void)state;
    th_shim_request(b, SMB2_READ, 4, SID, NULL);
    shim_guard_enter();
    shim_siglearn_setup(&handles[0], k.algo, k.key, sizeof(k.key));
    shim_siglearn_use(&handles[0], b, SMB2_HDR_SIGNATURE, 0);
    shim_guard_leave();
    assert_int_equal(shim_sigkeys_count(), 0);
    close(program_fd);
    shim_fdtable_clear();
    shim_siglearn_setup(&handles[0], k.algo, k.key, sizeof(k.key));
    shim_siglearn_use(&handles[0], b, SMB2_HDR_SIGNATURE, 0);
    assert_int_equal(shim_sigkeys_count(), 0);
    program_fd = th_fake_tunnel(NULL); /* for the teardown */
}

/* ---- real GnuTLS through the interposers ---- */

/* What Samba's smb2_signing_calc_signature does for HMAC-SHA256 and AES-128-CMAC: the
 * handle is set up once, on the session's first message. */
static void gnutls_mac_sign(gnutls_hmac_hd_t *h, gnutls_mac_algorithm_t algo,
                            const struct smb2_sign_key *k, const uint8_t *msg, uint8_t sig[16])
{
    static const uint8_t zero_sig[16];
    uint8_t digest[32];

    if (!*h)
        assert_int_equal(gnutls_hmac_init(h, algo, k->key, sizeof(k->key)), 0);
    assert_int_equal(gnutls_hmac(*h, msg, SMB2_HDR_SIGNATURE), 0);
    assert_int_equal(gnutls_hmac(*h, zero_sig, sizeof(zero_sig)), 0);
    assert_int_equal(gnutls_hmac(*h, msg + SMB2_HDR_SIZE, MSG - SMB2_HDR_SIZE), 0);
    gnutls_hmac_output(*h, digest);
    memcpy(sig, digest, 16);
}

/* ... and for AES-128-GMAC: the message as additional data of an empty plaintext, the
 * nonce its MessageId (a request: no role bit). */
static void gnutls_gmac_sign(gnutls_aead_cipher_hd_t *c, const struct smb2_sign_key *k,
                             const uint8_t *msg, uint8_t sig[16])
{
    static const uint8_t zero_sig[16];
    gnutls_datum_t key = { .data = (unsigned char *)k->key, .size = sizeof(k->key) };
    const giovec_t aad[3] = { { (void *)msg, SMB2_HDR_SIGNATURE },
                              { (void *)zero_sig, sizeof(zero_sig) },
                              { (void *)(msg + SMB2_HDR_SIZE), MSG - SMB2_HDR_SIZE } };
    uint8_t nonce[12] = { 0 };
    size_t tag_size = 16;

    memcpy(nonce, msg + 24, 8); /* MessageId */
    if (!*c)
        assert_int_equal(gnutls_aead_cipher_init(c, GNUTLS_CIPHER_AES_128_GCM, &key), 0);
    assert_int_equal(gnutls_aead_cipher_encryptv2(*c, nonce, sizeof(nonce), aad, 3, NULL, 0,
                                                  sig, &tag_size),
                     0);
    assert_int_equal(tag_size, 16);
}

/* GnuTLS's signatures of two messages, the ones smb2_sign makes; the key learned once. */
static void samba_s_gnutls_calls_sign_as_smb2_sign_and_teach_the_key(void **state)
{
    const gnutls_mac_algorithm_t macs[] = { GNUTLS_MAC_SHA256, GNUTLS_MAC_AES_CMAC_128 };
    const enum smb2_sign_algo algos[] = { SMB2_SIGN_HMAC_SHA256, SMB2_SIGN_AES_CMAC,
                                          SMB2_SIGN_AES_GMAC };
    uint8_t b[MSG], ours[MSG], sig[16];

    (void)state;
    for (size_t i = 0; i < 3; i++) {
        const struct smb2_sign_key k = key_of(algos[i]);
        gnutls_hmac_hd_t h = NULL;
        gnutls_aead_cipher_hd_t c = NULL;

        for (uint64_t id = 5; id <= 6; id++) {
            th_shim_request(b, SMB2_WRITE, id, SID + i, NULL);
            b[16] |= SMB2_FLAGS_SIGNED;
            memcpy(ours, b, MSG);
            assert_int_equal(smb2_sign(&k, SMB2_SIGN_FROM_CLIENT, ours, MSG), 0);
            if (algos[i] == SMB2_SIGN_AES_GMAC)
                gnutls_gmac_sign(&c, &k, b, sig);
            else
                gnutls_mac_sign(&h, macs[i], &k, b, sig);
            assert_memory_equal(sig, ours + SMB2_HDR_SIGNATURE, 16);
        }
        if (h)
            gnutls_hmac_deinit(h, NULL);
        if (c)
            gnutls_aead_cipher_deinit(c);
        assert_true(learned(&k, SID + i));
        assert_int_equal(shim_sigkeys_count(), i + 1);
    }
}

/* A sealed message's AES-128-GCM (MS-SMB2 3.1.4.3: the transform header's bytes as
 * additional data, the message encrypted): sealed and opened again whole by GnuTLS
 * through the interposers, its key never learned; an HMAC-SHA256 with a 16-byte key over
 * other bytes gives what libnettle gives, and teaches nothing either. */
static void encryption_and_other_gnutls_users_pass_through_untouched(void **state)
{
    const struct smb2_sign_key k = key_of(SMB2_SIGN_AES_GMAC);
    gnutls_datum_t key = { .data = (unsigned char *)k.key, .size = sizeof(k.key) };
    uint8_t plain[MSG], msg[MSG], tag[16], nonce[12] = { 7 }, transform[32] = { 0xA0 };
    const giovec_t aad = { transform, sizeof(transform) }, data = { msg, MSG };
    static const char text[] = "a TLS record's worth of bytes";
    uint8_t theirs[32], mine[32];
    struct hmac_sha256_ctx ref;
    gnutls_aead_cipher_hd_t c;
    gnutls_hmac_hd_t h;
    size_t tag_size = sizeof(tag);

    (void)state;
    th_shim_request(plain, SMB2_WRITE, 8, SID, NULL);
    memcpy(msg, plain, MSG);
    assert_int_equal(gnutls_aead_cipher_init(&c, GNUTLS_CIPHER_AES_128_GCM, &key), 0);
    assert_int_equal(gnutls_aead_cipher_encryptv2(c, nonce, sizeof(nonce), &aad, 1, &data, 1,
                                                  tag, &tag_size),
                     0);
    assert_memory_not_equal(msg, plain, MSG);
    assert_int_equal(gnutls_aead_cipher_decryptv2(c, nonce, sizeof(nonce), &aad, 1, &data, 1,
                                                  tag, tag_size),
                     0);
    assert_memory_equal(msg, plain, MSG);
    gnutls_aead_cipher_deinit(c);

    assert_int_equal(gnutls_hmac_init(&h, GNUTLS_MAC_SHA256, k.key, sizeof(k.key)), 0);
    assert_int_equal(gnutls_hmac(h, text, sizeof(text)), 0);
    gnutls_hmac_deinit(h, theirs);
    hmac_sha256_set_key(&ref, sizeof(k.key), k.key);
    hmac_sha256_update(&ref, sizeof(text), (const uint8_t *)text);
    hmac_sha256_digest(&ref, sizeof(mine), mine);
    assert_memory_equal(theirs, mine, sizeof(mine));
    assert_int_equal(shim_sigkeys_count(), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(the_first_use_of_a_signing_handle_teaches_its_key,
                                        with_a_tunnel, close_tunnel),
        cmocka_unit_test_setup_teardown(derivations_encryptions_and_strangers_teach_nothing,
                                        with_a_tunnel, close_tunnel),
        cmocka_unit_test_setup_teardown(without_a_tunnel_or_inside_the_shim_nothing_is_learned,
                                        with_a_tunnel, close_tunnel),
        cmocka_unit_test_setup_teardown(samba_s_gnutls_calls_sign_as_smb2_sign_and_teach_the_key,
                                        with_a_tunnel, close_tunnel),
        cmocka_unit_test_setup_teardown(encryption_and_other_gnutls_users_pass_through_untouched,
                                        with_a_tunnel, close_tunnel),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
