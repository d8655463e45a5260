/* SPDX-License-Identifier: BSD-3-Clause */
/* preload/shim_siglearn.h — which of the program's MAC and AEAD calls (GnuTLS's, seen by
 * interpose_gnutls.c) sign SMB2 messages, and with which key. Samba (libcli/smb/
 * smb2_signing.c) sets up a handle with a session's signing key the first time it signs
 * or checks a message with it, then at once MACs the message's header up to its
 * Signature (HMAC-SHA256, AES-128-CMAC), or passes that header first as the additional
 * data of an empty plaintext (AES-128-GMAC with AES-128-GCM); the handle then serves the
 * session's later messages without being set up again. So a handle set up with a 16-byte
 * key of one of those algorithms is held, with a copy of its key, in a per-thread slot
 * until the thread's next call: when that call uses the same handle on an SMB2 header
 * (and encrypts nothing), the key signs for the header's SessionId
 * (shim_sigkeys_learn); whatever it is, the slot is wiped. A key-derivation HMAC (its
 * first input is a counter, not a header) or an encryption key (its additional data is a
 * transform header, and it encrypts) is never learned. Keys are learned only while the
 * process has a tunnel. */
#ifndef SMBDIRECT_SHIM_SIGLEARN_H
#define SMBDIRECT_SHIM_SIGLEARN_H

#include <stddef.h>

#include "smb2_sign.h"

/* handle was set up with key (key_len bytes) for algo: HMAC-SHA256 or AES-128-CMAC (a
 * MAC), AES-128-GMAC (an AES-128-GCM AEAD). */
void shim_siglearn_setup(const void *handle, enum smb2_sign_algo algo, const void *key,
                         size_t key_len);

/* handle's next call MACs len bytes at data first, or authenticates them first (and
 * encrypts something too: encrypts 1). Cheap when no setup is pending on this thread. */
void shim_siglearn_use(const void *handle, const void *data, size_t len, int encrypts);

#endif
