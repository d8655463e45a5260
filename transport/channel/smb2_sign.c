/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/channel/smb2_sign.c — SMB2 signing keys (MS-SMB2 3.1.4.2, 3.2.5.3.1) and
 * message signatures (3.1.4.1, 3.1.5.1) over libnettle's HMAC-SHA256, AES-CMAC and
 * AES-GCM (see smb2_sign.h). */
#include "smb2_sign.h"

#include <errno.h>
#include <nettle/cmac.h>
#include <nettle/gcm.h>
#include <nettle/hmac.h>
#include <nettle/memops.h>
#include <string.h>

#include "sd_bytes.h"
#include "smb2_wire.h"

#define HDR_FLAGS 16u /* 2.2.1.2 Flags */

/* 3.1.4.1 AES-GMAC nonce, the 4 bytes after the MessageId */
#define GMAC_FROM_SERVER 0x00000001u
#define GMAC_CANCEL      0x00000002u

/* 3.1.4.2: NIST SP800-108 in counter mode with HMAC-SHA256, 128 bits out: the first 16
 * bytes of one HMAC over i (1), Label, a 0x00 byte, Context and L (128), i and L 32-bit
 * big-endian. */
static void kdf(const uint8_t ki[SMB2_SIGN_KEY_SIZE], const uint8_t *label, size_t label_len,
                const uint8_t *context, size_t context_len, uint8_t out[SMB2_SIGN_KEY_SIZE])
{
    struct hmac_sha256_ctx c;
    uint8_t n[4];
    static const uint8_t zero;

    hmac_sha256_set_key(&c, SMB2_SIGN_KEY_SIZE, ki);
    sd_put_be32(n, 1);
    hmac_sha256_update(&c, sizeof(n), n);
    hmac_sha256_update(&c, label_len, label);
    hmac_sha256_update(&c, 1, &zero);
    hmac_sha256_update(&c, context_len, context);
    sd_put_be32(n, SMB2_SIGN_KEY_SIZE * 8);
    hmac_sha256_update(&c, sizeof(n), n);
    hmac_sha256_digest(&c, SMB2_SIGN_KEY_SIZE, out);
    explicit_bzero(&c, sizeof(c));
}

int smb2_sign_key_init(struct smb2_sign_key *k, uint16_t dialect, int signing_algo_id,
                       const uint8_t session_key[SMB2_SIGN_KEY_SIZE],
                       const uint8_t *preauth_hash)
{
    /* 3.2.5.3.1: the labels and contexts are NUL-terminated strings, NUL counted. */
    static const uint8_t label_30[] = "SMB2AESCMAC", context_30[] = "SmbSign",
                         label_311[] = "SMBSigningKey";

    switch (dialect) {
    case SMB2_DIALECT_0202:
    case SMB2_DIALECT_0210:
        if (signing_algo_id != -1)
            return -1;
        k->algo = SMB2_SIGN_HMAC_SHA256;
        memcpy(k->key, session_key, SMB2_SIGN_KEY_SIZE);
        return 0;
    case SMB2_DIALECT_0300:
    case SMB2_DIALECT_0302:
        if (signing_algo_id != -1)
            return -1;
        k->algo = SMB2_SIGN_AES_CMAC;
        kdf(session_key, label_30, sizeof(label_30), context_30, sizeof(context_30), k->key);
        return 0;
    case SMB2_DIALECT_0311:
        if (!preauth_hash || signing_algo_id < -1 || signing_algo_id > SMB2_SIGN_AES_GMAC)
            return -1;
        k->algo = signing_algo_id == -1 ? SMB2_SIGN_AES_CMAC
                                        : (enum smb2_sign_algo)signing_algo_id;
        kdf(session_key, label_311, sizeof(label_311), preauth_hash, SMB2_PREAUTH_HASH_SIZE,
            k->key);
        return 0;
    default:
        return -1;
    }
}

void smb2_sign_key_wipe(struct smb2_sign_key *k)
{
    explicit_bzero(k, sizeof(*k));
}

/* A MAC being computed. GCM takes its additional data in whole blocks but for the last
 * piece, so bytes short of a block wait in carry until more come or the digest. */
struct mac {
    enum smb2_sign_algo algo;
    union {
        struct hmac_sha256_ctx hmac;
        struct cmac_aes128_ctx cmac;
        struct gcm_aes128_ctx gcm;
    } c;
    uint8_t carry[GCM_BLOCK_SIZE];
    size_t carried;
};

static void mac_update(struct mac *m, size_t len, const uint8_t *p)
{
    size_t n, whole;

    if (len == 0)
        return;
    if (m->algo == SMB2_SIGN_HMAC_SHA256) {
        hmac_sha256_update(&m->c.hmac, len, p);
        return;
    }
    if (m->algo == SMB2_SIGN_AES_CMAC) {
        cmac_aes128_update(&m->c.cmac, len, p);
        return;
    }
    if (m->carried) {
        n = len < GCM_BLOCK_SIZE - m->carried ? len : GCM_BLOCK_SIZE - m->carried;
        memcpy(m->carry + m->carried, p, n);
        m->carried += n;
        p += n;
        len -= n;
        if (m->carried < GCM_BLOCK_SIZE)
            return;
        gcm_aes128_update(&m->c.gcm, GCM_BLOCK_SIZE, m->carry);
        m->carried = 0;
    }
    whole = len - len % GCM_BLOCK_SIZE;
    if (whole)
        gcm_aes128_update(&m->c.gcm, whole, p);
    memcpy(m->carry, p + whole, len - whole);
    m->carried = len - whole;
}

static int algo_known(enum smb2_sign_algo algo)
{
    return algo == SMB2_SIGN_HMAC_SHA256 || algo == SMB2_SIGN_AES_CMAC ||
           algo == SMB2_SIGN_AES_GMAC;
}

/* The command at msg (decoded into h) and its length: 0, or -EINVAL when it cannot be one
 * that sender signed with k. */
static int command(const struct smb2_sign_key *k, enum smb2_sign_sender sender,
                   const uint8_t *msg, size_t len, struct smb2_hdr *h, size_t *cmd_len)
{
    int from_server;

    if (!algo_known(k->algo) || smb2_hdr_decode(msg, len, h) != 0)
        return -EINVAL;
    from_server = (h->flags & SMB2_FLAGS_SERVER_TO_REDIR) != 0;
    if (from_server != (sender == SMB2_SIGN_FROM_SERVER))
        return -EINVAL;
    *cmd_len = h->next_command ? h->next_command : len;
    return 0;
}

/* The signature with k of the len bytes of the command at msg (header h), then tail_len
 * bytes at tail (the rest of a message held in two pieces), its Signature field taken as
 * zero; framed: after the 4-byte big-endian Direct-TCP length of the whole (see
 * smb2_sign_verify_framed). */
static void signature(const struct smb2_sign_key *k, enum smb2_sign_sender sender,
                      const struct smb2_hdr *h, const uint8_t *msg, size_t len,
                      const uint8_t *tail, size_t tail_len, int framed,
                      uint8_t sig[SMB2_SIGNATURE_SIZE])
{
    static const uint8_t zero[SMB2_SIGNATURE_SIZE];
    uint8_t nonce[GCM_IV_SIZE];
    struct mac m = { .algo = k->algo };

    if (k->algo == SMB2_SIGN_HMAC_SHA256) {
        hmac_sha256_set_key(&m.c.hmac, SMB2_SIGN_KEY_SIZE, k->key);
    } else if (k->algo == SMB2_SIGN_AES_CMAC) {
        cmac_aes128_set_key(&m.c.cmac, k->key);
    } else {
        sd_put_le64(nonce, h->message_id);
        sd_put_le32(nonce + 8, (sender == SMB2_SIGN_FROM_SERVER ? GMAC_FROM_SERVER : 0) |
                                   (h->command == SMB2_CANCEL ? GMAC_CANCEL : 0));
        gcm_aes128_set_key(&m.c.gcm, k->key);
        gcm_aes128_set_iv(&m.c.gcm, sizeof(nonce), nonce);
    }
    if (framed) {
        uint8_t prefix[4];

        sd_put_be32(prefix, (uint32_t)(len + tail_len));
        mac_update(&m, sizeof(prefix), prefix);
    }
    mac_update(&m, SMB2_HDR_SIGNATURE, msg);
    mac_update(&m, sizeof(zero), zero);
    mac_update(&m, len - SMB2_HDR_SIZE, msg + SMB2_HDR_SIZE);
    mac_update(&m, tail_len, tail);
    if (k->algo == SMB2_SIGN_HMAC_SHA256) {
        hmac_sha256_digest(&m.c.hmac, SMB2_SIGNATURE_SIZE, sig);
    } else if (k->algo == SMB2_SIGN_AES_CMAC) {
        cmac_aes128_digest(&m.c.cmac, SMB2_SIGNATURE_SIZE, sig);
    } else {
        if (m.carried) /* the last piece of the additional data */
            gcm_aes128_update(&m.c.gcm, m.carried, m.carry);
        gcm_aes128_digest(&m.c.gcm, SMB2_SIGNATURE_SIZE, sig);
    }
    explicit_bzero(&m, sizeof(m));
}

int smb2_sign(const struct smb2_sign_key *k, enum smb2_sign_sender sender, uint8_t *msg,
              size_t len)
{
    struct smb2_hdr h;
    size_t cmd_len;

    if (command(k, sender, msg, len, &h, &cmd_len) != 0)
        return -EINVAL;
    sd_put_le32(msg + HDR_FLAGS, h.flags | SMB2_FLAGS_SIGNED);
    signature(k, sender, &h, msg, cmd_len, NULL, 0, 0, msg + SMB2_HDR_SIGNATURE);
    return 0;
}

int smb2_sign_parts(const struct smb2_sign_key *k, enum smb2_sign_sender sender, uint8_t *head,
                    size_t head_len, const uint8_t *tail, size_t tail_len)
{
    struct smb2_hdr h;
    size_t cmd_len;

    if (command(k, sender, head, head_len, &h, &cmd_len) != 0 || h.next_command != 0)
        return -EINVAL;
    sd_put_le32(head + HDR_FLAGS, h.flags | SMB2_FLAGS_SIGNED);
    signature(k, sender, &h, head, head_len, tail, tail_len, 0, head + SMB2_HDR_SIGNATURE);
    return 0;
}

static int verify(const struct smb2_sign_key *k, enum smb2_sign_sender sender,
                     const uint8_t *msg, size_t len, int framed)
{
    uint8_t sig[SMB2_SIGNATURE_SIZE];
    struct smb2_hdr h;
    size_t cmd_len;

    if (command(k, sender, msg, len, &h, &cmd_len) != 0)
        return -EINVAL;
    signature(k, sender, &h, msg, cmd_len, NULL, 0, framed, sig);
    return memeql_sec(sig, msg + SMB2_HDR_SIGNATURE, sizeof(sig)) ? 0 : -EBADMSG;
}

int smb2_sign_verify(const struct smb2_sign_key *k, enum smb2_sign_sender sender,
                     const uint8_t *msg, size_t len)
{
    return verify(k, sender, msg, len, 0);
}

int smb2_sign_verify_framed(const struct smb2_sign_key *k, enum smb2_sign_sender sender,
                            const uint8_t *msg, size_t len)
{
    struct smb2_hdr h;

    if (smb2_hdr_decode(msg, len, &h) != 0 || h.next_command != 0 || len > UINT32_MAX)
        return -EINVAL;
    return verify(k, sender, msg, len, 1);
}
