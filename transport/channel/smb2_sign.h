/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/channel/smb2_sign.h — SMB2 message signing (MS-SMB2 3.1.4.1, 3.1.5.1): the
 * signing key of a session or channel derived from its session key (3.1.4.2 KDF), and the
 * signature of one SMB2 message computed into, or checked against, its header. HMAC-SHA256
 * for 2.0.2 and 2.1, AES-128-CMAC for 3.x, AES-128-GMAC for a 3.1.1 connection whose
 * NEGOTIATE chose it (2.2.3.1.7); the primitives are libnettle's. Pure functions on caller
 * memory: no allocation, no I/O, no logging (so never of a key). Keys are the caller's:
 * smb2_sign_key_wipe() clears one when its session ends. */
#ifndef SMBDIRECT_SMB2_SIGN_H
#define SMBDIRECT_SMB2_SIGN_H

#include <stddef.h>
#include <stdint.h>

#include "smb2_wire.h" /* SMB2_HDR_SIGNATURE */

#define SMB2_SIGN_KEY_SIZE     16u  /* Session.SessionKey and every signing key (3.2.5.3.1) */
#define SMB2_SIGNATURE_SIZE    16u  /* 2.2.1.1 Signature */
#define SMB2_PREAUTH_HASH_SIZE 64u  /* 3.1.1 PreauthIntegrityHashValue (SHA-512) */

/* 2.2.3.1.7 SMB2_SIGNING_CAPABILITIES SigningAlgorithms IDs. */
enum smb2_sign_algo {
    SMB2_SIGN_HMAC_SHA256 = 0x0000,
    SMB2_SIGN_AES_CMAC = 0x0001,
    SMB2_SIGN_AES_GMAC = 0x0002,
};

/* Who sent the message: a request comes from the client, a response or a server-initiated
 * message (an oplock break) from the server. */
enum smb2_sign_sender {
    SMB2_SIGN_FROM_CLIENT,
    SMB2_SIGN_FROM_SERVER,
};

/* One signing key: Session.SigningKey, a Channel.SigningKey, or (2.x) Session.SessionKey
 * itself, with the algorithm it signs with. */
struct smb2_sign_key {
    enum smb2_sign_algo algo;
    uint8_t key[SMB2_SIGN_KEY_SIZE];
};

/* Fills k for a session or channel of dialect (2.2.4 DialectRevision) from its session key
 * (3.2.5.3.1 Session.SessionKey: the first 16 bytes of the GSS key, zero-padded):
 *   2.0.2, 2.1: the session key itself, HMAC-SHA256;
 *   3.0, 3.0.2: KDF(SessionKey, "SMB2AESCMAC\0", "SmbSign\0"), AES-128-CMAC;
 *   3.1.1:      KDF(SessionKey, "SMBSigningKey\0", preauth_hash), with the algorithm the
 *               NEGOTIATE response's SMB2_SIGNING_CAPABILITIES chose (signing_algo_id), or
 *               AES-128-CMAC when it carried none (signing_algo_id -1).
 * A channel bound to the session (3.2.5.3.1 binding) takes its own session key and preauth
 * hash. preauth_hash (SMB2_PREAUTH_HASH_SIZE bytes) is read for 3.1.1 only. 0, or -1 (k
 * untouched) for another dialect, 3.1.1 without a preauth hash, an algorithm 2.2.3.1.7 does
 * not define, or one given below 3.1.1 (only 3.1.1 negotiates it). */
int smb2_sign_key_init(struct smb2_sign_key *k, uint16_t dialect, int signing_algo_id,
                       const uint8_t session_key[SMB2_SIGN_KEY_SIZE],
                       const uint8_t *preauth_hash);

/* Clears a key's bytes so that they do not outlive its session (explicit_bzero: not
 * optimised away). */
void smb2_sign_key_wipe(struct smb2_sign_key *k);

/* The message signed is the SMB2 command starting at msg: its header and body up to its
 * NextCommand, padding included, or to len for the last command of a message (3.1.4.1), so
 * len is what msg holds up to the end of the whole message. The Signature field counts as
 * zero. With AES-128-GMAC the nonce is the MessageId (8 bytes, little-endian), then 4 bytes
 * 0x00000001 when the server sent the message, ORed with 0x00000002 for a CANCEL request;
 * the command is the additional authenticated data of an empty plaintext. A nonce must never
 * sign two different messages under one key: whoever re-signs a message (a rewrite) must
 * send only its own signature for that MessageId.
 *
 * Sets SMB2_FLAGS_SIGNED in the header and writes the signature into it: 0, or -EINVAL
 * (msg unchanged) when msg does not start with an SMB2 header, NextCommand is out of len,
 * SMB2_FLAGS_SERVER_TO_REDIR disagrees with sender, or k's algorithm is unknown. */
int smb2_sign(const struct smb2_sign_key *k, enum smb2_sign_sender sender, uint8_t *msg,
              size_t len);

/* smb2_sign for a single command (NextCommand 0) held in two pieces: head (head_len
 * bytes, the header and more) then tail (tail_len bytes: a READ response's data, which
 * lies elsewhere). Signs what smb2_sign signs of head and tail put end to end. */
int smb2_sign_parts(const struct smb2_sign_key *k, enum smb2_sign_sender sender, uint8_t *head,
                    size_t head_len, const uint8_t *tail, size_t tail_len);

/* Checks the signature in the header of the command at msg (bounded as for smb2_sign)
 * without writing msg: 0 when it is right, -EBADMSG when it is not (compared in constant
 * time), -EINVAL as for smb2_sign. Whether the message had to be signed, and
 * SMB2_FLAGS_SIGNED, are the caller's concern. */
int smb2_sign_verify(const struct smb2_sign_key *k, enum smb2_sign_sender sender,
                     const uint8_t *msg, size_t len);

/* smb2_sign_verify for a single command (NextCommand 0) whose signature the server
 * computed over the 4-byte big-endian Direct-TCP length of the message (MS-SMB2 2.1: len)
 * and then the message: Linux ksmbd (6.1 to at least 6.12) signs a READ response that
 * carries no data (an RDMA channel READ's) that way. Every byte of the message is still
 * under the key, and the input differs from any standard one (it begins with 0x00, an
 * SMB2 message with 0xFE), so no standard signature passes this check for another
 * message. 0, -EBADMSG, -EINVAL (as smb2_sign_verify; also a chain). */
int smb2_sign_verify_framed(const struct smb2_sign_key *k, enum smb2_sign_sender sender,
                            const uint8_t *msg, size_t len);

#endif
