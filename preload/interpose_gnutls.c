/* SPDX-License-Identifier: BSD-3-Clause */
/* preload/interpose_gnutls.c — the GnuTLS calls through which Samba's client signs SMB2
 * (libcli-smb-common's smb2_signing.c, calling libgnutls through its PLT): the setup of a
 * MAC (gnutls_hmac_init) or AEAD handle (gnutls_aead_cipher_init) and its use
 * (gnutls_hmac, gnutls_aead_cipher_encryptv2) are shown to shim_siglearn, which learns the
 * signing keys of the program's sessions; each call then goes on to GnuTLS unchanged,
 * with its own result. Any other use of these calls (GnuTLS's own, through its PLT; a
 * program's HMAC; wget's TLS makes none) costs a few comparisons at setup and one
 * per-thread load per use: no lock, no system call. GnuTLS's definitions are found with
 * shim_real_lookup (the shim does not link GnuTLS). */
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <stdatomic.h>

#include "log.h"
#include "shim_real.h"
#include "shim_siglearn.h"

typedef int hmac_init_fn(gnutls_hmac_hd_t *, gnutls_mac_algorithm_t, const void *, size_t);
typedef int hmac_fn(gnutls_hmac_hd_t, const void *, size_t);
typedef int aead_init_fn(gnutls_aead_cipher_hd_t *, gnutls_cipher_algorithm_t,
                         const gnutls_datum_t *);
typedef int aead_encryptv2_fn(gnutls_aead_cipher_hd_t, const void *, size_t, const giovec_t *,
                              int, const giovec_t *, int, void *, size_t *);

/* GnuTLS's definition of name, found once (a race finds the same one twice). */
static void *real(_Atomic(void *) *slot, const char *name, const void *caller)
{
    void *fn = atomic_load_explicit(slot, memory_order_acquire);

    if (!fn) {
        fn = shim_real_lookup(name, caller);
        if (fn)
            atomic_store_explicit(slot, fn, memory_order_release);
        else
            sd_error("%s called but GnuTLS's definition is not found", name);
    }
    return fn;
}

static _Atomic(void *) real_hmac_init, real_hmac, real_aead_init, real_aead_encryptv2;

int gnutls_hmac_init(gnutls_hmac_hd_t *dig, gnutls_mac_algorithm_t algorithm, const void *key,
                     size_t keylen)
{
    hmac_init_fn *fn = (hmac_init_fn *)real(&real_hmac_init, "gnutls_hmac_init",
                                            __builtin_return_address(0));
    int rc = fn ? fn(dig, algorithm, key, keylen) : GNUTLS_E_INTERNAL_ERROR;

    if (rc == 0 && algorithm == GNUTLS_MAC_SHA256)
        shim_siglearn_setup(*dig, SMB2_SIGN_HMAC_SHA256, key, keylen);
    else if (rc == 0 && algorithm == GNUTLS_MAC_AES_CMAC_128)
        shim_siglearn_setup(*dig, SMB2_SIGN_AES_CMAC, key, keylen);
    return rc;
}

int gnutls_hmac(gnutls_hmac_hd_t handle, const void *text, size_t textlen)
{
    hmac_fn *fn = (hmac_fn *)real(&real_hmac, "gnutls_hmac", __builtin_return_address(0));

    shim_siglearn_use(handle, text, textlen, 0);
    return fn ? fn(handle, text, textlen) : GNUTLS_E_INTERNAL_ERROR;
}

int gnutls_aead_cipher_init(gnutls_aead_cipher_hd_t *handle, gnutls_cipher_algorithm_t cipher,
                            const gnutls_datum_t *key)
{
    aead_init_fn *fn = (aead_init_fn *)real(&real_aead_init, "gnutls_aead_cipher_init",
                                            __builtin_return_address(0));
    int rc = fn ? fn(handle, cipher, key) : GNUTLS_E_INTERNAL_ERROR;

    if (rc == 0 && cipher == GNUTLS_CIPHER_AES_128_GCM)
        shim_siglearn_setup(*handle, SMB2_SIGN_AES_GMAC, key->data, key->size);
    return rc;
}

int gnutls_aead_cipher_encryptv2(gnutls_aead_cipher_hd_t handle, const void *nonce,
                                 size_t nonce_len, const giovec_t *auth_iov, int auth_iovcnt,
                                 const giovec_t *iov, int iovcnt, void *tag, size_t *tag_size)
{
    aead_encryptv2_fn *fn = (aead_encryptv2_fn *)real(&real_aead_encryptv2,
                                                      "gnutls_aead_cipher_encryptv2",
                                                      __builtin_return_address(0));

    shim_siglearn_use(handle, auth_iovcnt > 0 ? auth_iov[0].iov_base : NULL,
                      auth_iovcnt > 0 ? auth_iov[0].iov_len : 0, iovcnt > 0);
    return fn ? fn(handle, nonce, nonce_len, auth_iov, auth_iovcnt, iov, iovcnt, tag, tag_size)
              : GNUTLS_E_INTERNAL_ERROR;
}
