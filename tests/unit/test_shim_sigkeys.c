/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/test_shim_sigkeys.c — the shim's store of learned SMB2 signing keys
 * (preload/shim_sigkeys.c) and the check of the program's signed requests with them
 * (preload/shim_sigcheck.c): a key learned for a SessionId verifies that session's
 * requests and is then bound to the tunnel that proved it; each channel of a session
 * keeps its own key; re-authentication replaces a bound key; LOGOFF, the tunnel's end,
 * the exit and a full table wipe keys; compound chains, unsigned and encrypted messages
 * are counted as they should; and no log line, at debug, carries a byte of a key. The
 * messages are signed with transport/channel/smb2_sign, checked against published vectors
 * in test_smb2_sign. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "log.h"
#include "sd_bytes.h"
#include "shim_sigcheck.h"
#include "shim_sigkeys.h"
#include "smb2_sign.h"
#include "smb2_wire.h"
#include "th_shim.h"
#include "th_stderr.h"

#define SID_A 0x0000000011223344ull
#define SID_B 0x00000000AABBCCDDull
#define MSG   TH_SHIM_REQUEST_SIZE

static const struct shim_fd_key tunnel1 = { .dev = 7, .ino = 1001 };
static const struct shim_fd_key tunnel2 = { .dev = 7, .ino = 1002 };

/* Key bytes that no log text holds by chance: none is printable ASCII. */
static struct smb2_sign_key key_of(enum smb2_sign_algo algo, uint8_t seed)
{
    struct smb2_sign_key k = { .algo = algo };

    for (size_t i = 0; i < sizeof(k.key); i++)
        k.key[i] = (uint8_t)(0x80 | (seed + 37 * i));
    return k;
}

static enum shim_sigkeys_verdict check(const struct shim_fd_key *t, uint64_t sid,
                                       const struct smb2_sign_key *signer, uint64_t id)
{
    uint8_t b[MSG];

    th_shim_request(b, SMB2_READ, id, sid, signer);
    return shim_sigkeys_verify(t, sid, b, sizeof(b));
}

static int reset(void **state)
{
    (void)state;
    shim_sigkeys_wipe_all();
    sd_log_set_level(SD_LOG_WARN);
    return 0;
}

static void a_key_verifies_its_session_then_binds_to_the_tunnel(void **state)
{
    const struct smb2_sign_key ka = key_of(SMB2_SIGN_AES_CMAC, 1);
    const struct smb2_sign_key other = key_of(SMB2_SIGN_AES_CMAC, 2);

    (void)state;
    assert_int_equal(check(&tunnel1, SID_A, &ka, 5), SHIM_SIGKEYS_NO_KEY);
    shim_sigkeys_learn(SID_A, &ka);
    assert_int_equal(shim_sigkeys_count(), 1);
    shim_sigkeys_learn(SID_A, &ka); /* Samba sets up a copy of a key: still one */
    assert_int_equal(shim_sigkeys_count(), 1);
    assert_int_equal(check(&tunnel1, SID_A, &ka, 6), SHIM_SIGKEYS_VERIFIED);
    assert_int_equal(check(&tunnel1, SID_A, &ka, 7), SHIM_SIGKEYS_VERIFIED);
    /* another key's signature, another session's, another tunnel's */
    assert_int_equal(check(&tunnel1, SID_A, &other, 8), SHIM_SIGKEYS_FAILED);
    assert_int_equal(check(&tunnel1, SID_B, &ka, 9), SHIM_SIGKEYS_NO_KEY);
    assert_int_equal(check(&tunnel2, SID_A, &ka, 10), SHIM_SIGKEYS_NO_KEY); /* bound to 1 */
}

static void each_algorithm_verifies(void **state)
{
    const enum smb2_sign_algo algos[] = { SMB2_SIGN_HMAC_SHA256, SMB2_SIGN_AES_CMAC,
                                          SMB2_SIGN_AES_GMAC };

    (void)state;
    for (size_t i = 0; i < 3; i++) {
        const struct smb2_sign_key k = key_of(algos[i], (uint8_t)i);
        struct smb2_sign_key wrong_algo = k;

        wrong_algo.algo = algos[(i + 1) % 3];
        shim_sigkeys_learn(SID_A + i, &k);
        assert_int_equal(check(&tunnel1, SID_A + i, &wrong_algo, 3), SHIM_SIGKEYS_FAILED);
        assert_int_equal(check(&tunnel1, SID_A + i, &k, 4), SHIM_SIGKEYS_VERIFIED);
    }
}

/* One SessionId, two channels (two tunnels), each with its own Channel.SigningKey. */
static void each_channel_of_a_session_proves_its_own_key(void **state)
{
    const struct smb2_sign_key k1 = key_of(SMB2_SIGN_AES_CMAC, 11);
    const struct smb2_sign_key k2 = key_of(SMB2_SIGN_AES_CMAC, 22);

    (void)state;
    shim_sigkeys_learn(SID_A, &k1);
    shim_sigkeys_learn(SID_A, &k2);
    assert_int_equal(shim_sigkeys_count(), 2);
    assert_int_equal(check(&tunnel2, SID_A, &k2, 1), SHIM_SIGKEYS_VERIFIED);
    assert_int_equal(check(&tunnel1, SID_A, &k1, 1), SHIM_SIGKEYS_VERIFIED);
    assert_int_equal(check(&tunnel1, SID_A, &k2, 2), SHIM_SIGKEYS_FAILED);
    assert_int_equal(check(&tunnel2, SID_A, &k1, 2), SHIM_SIGKEYS_FAILED);
    assert_int_equal(shim_sigkeys_count(), 2);
}

/* Re-authentication: the session signs with a new key; the tunnel's old one goes. */
static void a_new_key_proved_on_the_tunnel_replaces_the_old_one(void **state)
{
    const struct smb2_sign_key old = key_of(SMB2_SIGN_AES_GMAC, 3);
    const struct smb2_sign_key now = key_of(SMB2_SIGN_AES_GMAC, 4);

    (void)state;
    shim_sigkeys_learn(SID_A, &old);
    assert_int_equal(check(&tunnel1, SID_A, &old, 1), SHIM_SIGKEYS_VERIFIED);
    shim_sigkeys_learn(SID_A, &now);
    assert_int_equal(shim_sigkeys_count(), 2);
    assert_int_equal(check(&tunnel1, SID_A, &now, 2), SHIM_SIGKEYS_VERIFIED);
    assert_int_equal(shim_sigkeys_count(), 1);
    assert_int_equal(check(&tunnel1, SID_A, &old, 3), SHIM_SIGKEYS_FAILED);
}

static void the_tunnels_end_wipes_only_its_keys(void **state)
{
    const struct smb2_sign_key k1 = key_of(SMB2_SIGN_AES_CMAC, 5);
    const struct smb2_sign_key k2 = key_of(SMB2_SIGN_AES_CMAC, 6);
    const struct smb2_sign_key unproved = key_of(SMB2_SIGN_AES_CMAC, 7);

    (void)state;
    shim_sigkeys_learn(SID_A, &k1);
    shim_sigkeys_learn(SID_B, &k2);
    shim_sigkeys_learn(SID_B + 1, &unproved);
    assert_int_equal(check(&tunnel1, SID_A, &k1, 1), SHIM_SIGKEYS_VERIFIED);
    assert_int_equal(check(&tunnel2, SID_B, &k2, 1), SHIM_SIGKEYS_VERIFIED);
    shim_sigkeys_forget_tunnel(&tunnel1);
    assert_int_equal(shim_sigkeys_count(), 2);
    assert_int_equal(check(&tunnel1, SID_A, &k1, 2), SHIM_SIGKEYS_NO_KEY);
    assert_int_equal(check(&tunnel2, SID_B, &k2, 2), SHIM_SIGKEYS_VERIFIED);
    shim_sigkeys_wipe_all(); /* the exit */
    assert_int_equal(shim_sigkeys_count(), 0);
    assert_int_equal(check(&tunnel2, SID_B, &k2, 3), SHIM_SIGKEYS_NO_KEY);
}

/* A full table makes room with the oldest key no tunnel proved; proved keys stay. */
static void a_full_table_drops_the_oldest_unproved_key(void **state)
{
    const struct smb2_sign_key proved = key_of(SMB2_SIGN_AES_CMAC, 9);

    (void)state;
    shim_sigkeys_learn(SID_B, &proved);
    assert_int_equal(check(&tunnel1, SID_B, &proved, 1), SHIM_SIGKEYS_VERIFIED);
    for (uint64_t i = 0; i < SHIM_SIGKEYS_MAX; i++) {
        const struct smb2_sign_key k = key_of(SMB2_SIGN_AES_CMAC, (uint8_t)i);

        shim_sigkeys_learn(SID_A + i, &k);
    }
    assert_int_equal(shim_sigkeys_count(), SHIM_SIGKEYS_MAX);
    assert_int_equal(check(&tunnel1, SID_B, &proved, 2), SHIM_SIGKEYS_VERIFIED);
    {
        const struct smb2_sign_key first = key_of(SMB2_SIGN_AES_CMAC, 0);
        const struct smb2_sign_key second = key_of(SMB2_SIGN_AES_CMAC, 1);

        assert_int_equal(check(&tunnel1, SID_A, &first, 1), SHIM_SIGKEYS_NO_KEY);
        assert_int_equal(check(&tunnel1, SID_A + 1, &second, 1), SHIM_SIGKEYS_VERIFIED);
    }
}

/* ---- shim_sigcheck: the program's messages on a tunnel ---- */

static void logoff_ends_the_sessions_keys_on_its_tunnel(void **state)
{
    const struct smb2_sign_key k = key_of(SMB2_SIGN_AES_GMAC, 12);
    struct shim_sigcheck_stats st = { 0 };
    uint8_t b[MSG];

    (void)state;
    shim_sigkeys_learn(SID_A, &k);
    th_shim_request(b, SMB2_WRITE, 4, SID_A, &k);
    shim_sigcheck_request(&tunnel1, b, sizeof(b), &st);
    th_shim_request(b, SMB2_LOGOFF, 5, SID_A, &k);
    shim_sigcheck_request(&tunnel1, b, sizeof(b), &st);
    assert_int_equal(st.verified, 2);
    assert_int_equal(shim_sigkeys_count(), 0);
    th_shim_request(b, SMB2_TREE_CONNECT, 6, SID_A, &k);
    shim_sigcheck_request(&tunnel1, b, sizeof(b), &st);
    assert_int_equal(st.verified, 2);
    assert_int_equal(st.failed, 0);
    assert_int_equal(st.no_key, 1);
}

/* A chain: each signed command checked over its own bytes, a related one's SessionId
 * "the previous one's"; an unsigned command and an encrypted message are not counted. */
static void a_compound_chain_is_checked_command_by_command(void **state)
{
    const struct smb2_sign_key k = key_of(SMB2_SIGN_HMAC_SHA256, 13);
    struct shim_sigcheck_stats st = { 0 };
    uint8_t chain[3 * MSG];

    (void)state;
    shim_sigkeys_learn(SID_A, &k);
    th_shim_request(chain, SMB2_READ, 1, SID_A, NULL);
    th_shim_request(chain + MSG, SMB2_READ, 2, SMB2_SESSION_ID_PREVIOUS, NULL);
    th_shim_request(chain + 2 * MSG, SMB2_READ, 3, SID_A, NULL);
    sd_put_le32(chain + 20, MSG);                         /* NextCommand */
    sd_put_le32(chain + MSG + 20, MSG);
    sd_put_le32(chain + MSG + 16, SMB2_FLAGS_RELATED_OPERATIONS);
    assert_int_equal(smb2_sign(&k, SMB2_SIGN_FROM_CLIENT, chain, sizeof(chain)), 0);
    assert_int_equal(smb2_sign(&k, SMB2_SIGN_FROM_CLIENT, chain + MSG, 2 * MSG), 0);
    /* the third stays unsigned */
    shim_sigcheck_request(&tunnel1, chain, sizeof(chain), &st);
    assert_int_equal(st.verified, 2);
    assert_int_equal(st.failed + st.no_key, 0);
    chain[MSG + SMB2_HDR_SIZE] ^= 1; /* the second command's body */
    shim_sigcheck_request(&tunnel1, chain, sizeof(chain), &st);
    assert_int_equal(st.verified, 3);
    assert_int_equal(st.failed, 1);
    chain[0] = 0xFD; /* a transform header: encrypted, nothing to check */
    shim_sigcheck_request(&tunnel1, chain, sizeof(chain), &st);
    assert_int_equal(st.verified + st.failed + st.no_key, 4);
}

/* A command larger than SHIM_SIGCHECK_MAX_BYTES (a WRITE with its data inline) is counted
 * as too large and not MACed again, whether its signature is right or not; one at the
 * bound is checked. */
static void a_bulk_write_is_counted_unchecked(void **state)
{
    const struct smb2_sign_key k = key_of(SMB2_SIGN_AES_CMAC, 16);
    struct shim_sigcheck_stats st = { 0 };
    const size_t big = SHIM_SIGCHECK_MAX_BYTES + 1;
    uint8_t *b = calloc(1, big);

    (void)state;
    assert_non_null(b);
    shim_sigkeys_learn(SID_A, &k);
    th_shim_request(b, SMB2_WRITE, 1, SID_A, NULL);
    assert_int_equal(smb2_sign(&k, SMB2_SIGN_FROM_CLIENT, b, big - 1), 0);
    shim_sigcheck_request(&tunnel1, b, big - 1, &st);
    assert_int_equal(st.verified, 1);
    assert_int_equal(smb2_sign(&k, SMB2_SIGN_FROM_CLIENT, b, big), 0);
    b[big - 1] ^= 1; /* a wrong signature, not looked at */
    shim_sigcheck_request(&tunnel1, b, big, &st);
    assert_int_equal(st.verified, 1);
    assert_int_equal(st.failed + st.no_key, 0);
    assert_int_equal(st.too_large, 1);
    free(b);
}

/* Everything the store and the check log at debug: the session, the algorithm, never a
 * byte of a key (as hex in either case, or raw), not even four in a row. */
static void no_log_line_carries_key_bytes(void **state)
{
    const struct smb2_sign_key k = key_of(SMB2_SIGN_AES_GMAC, 14);
    const struct smb2_sign_key wrong = key_of(SMB2_SIGN_AES_GMAC, 15);
    struct shim_sigcheck_stats st = { 0 };
    struct th_stderr cap;
    char log[8192], hex[2 * SMB2_SIGN_KEY_SIZE + 1], window[9];
    uint8_t b[MSG];

    (void)state;
    sd_log_set_level(SD_LOG_DEBUG);
    th_stderr_begin(&cap);
    shim_sigkeys_learn(SID_A, &k);
    th_shim_request(b, SMB2_READ, 1, SID_A, &k);
    shim_sigcheck_request(&tunnel1, b, sizeof(b), &st);  /* proved */
    th_shim_request(b, SMB2_READ, 2, SID_A, &wrong);
    shim_sigcheck_request(&tunnel1, b, sizeof(b), &st);  /* fails */
    th_shim_request(b, SMB2_LOGOFF, 3, SID_A, &k);
    shim_sigcheck_request(&tunnel1, b, sizeof(b), &st);  /* wiped */
    shim_sigkeys_learn(SID_B, &k);
    shim_sigkeys_forget_tunnel(&tunnel1);
    shim_sigkeys_wipe_all();
    th_stderr_end(&cap, log, sizeof(log));
    print_message("# %s", log);
    assert_non_null(strstr(log, "learned signing key for SMB2 session 0x0000000011223344 "
                                "(AES-128-GMAC)"));
    assert_non_null(strstr(log, "its signature does not verify with the learned key"));
    assert_non_null(strstr(log, "session 0x0000000011223344 wiped: the session ended (LOGOFF)"));
    assert_non_null(strstr(log, "1 signing key(s) wiped at exit"));
    for (int upper = 0; upper < 2; upper++) {
        for (size_t i = 0; i < sizeof(k.key); i++)
            snprintf(hex + 2 * i, 3, upper ? "%02X" : "%02x", k.key[i]);
        for (size_t i = 0; i + 8 <= 2 * sizeof(k.key); i += 2) {
            memcpy(window, hex + i, 8);
            window[8] = '\0';
            assert_null(strstr(log, window));
        }
    }
    for (size_t i = 0; i + 4 <= sizeof(k.key); i++)
        assert_null(memmem(log, strlen(log), k.key + i, 4));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(a_key_verifies_its_session_then_binds_to_the_tunnel, reset),
        cmocka_unit_test_setup(each_algorithm_verifies, reset),
        cmocka_unit_test_setup(each_channel_of_a_session_proves_its_own_key, reset),
        cmocka_unit_test_setup(a_new_key_proved_on_the_tunnel_replaces_the_old_one, reset),
        cmocka_unit_test_setup(the_tunnels_end_wipes_only_its_keys, reset),
        cmocka_unit_test_setup(a_full_table_drops_the_oldest_unproved_key, reset),
        cmocka_unit_test_setup(logoff_ends_the_sessions_keys_on_its_tunnel, reset),
        cmocka_unit_test_setup(a_compound_chain_is_checked_command_by_command, reset),
        cmocka_unit_test_setup(a_bulk_write_is_counted_unchecked, reset),
        cmocka_unit_test_setup(no_log_line_carries_key_bytes, reset),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
