/* SPDX-License-Identifier: BSD-3-Clause */
/* conformance/cf_smb2_session.c — SESSION_SETUP of the conformance client (see cf_smb2.h):
 * one NTLMSSP authentication in two rounds (MS-SMB2 3.2.4.2.3, 3.2.5.3), for an unsigned
 * session, a signed one (the signing key derived from NTLM's session key and verified on
 * the final response, 3.2.5.3.1), or a channel bound to a signed session (3.2.4.2.3.1,
 * 3.2.5.3.3: the binding requests signed with Session.SigningKey, the channel's own key
 * verified on the final response). */
#include "cf_smb2.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "cf_ntlm.h"

#define REQ_SMALL 1024u
#define SESSION_FLAG_IS_GUEST 0x0001u /* 2.2.6 SessionFlags */
#define SESSION_FLAG_IS_NULL  0x0002u

/* Splits DOMAIN\USER (or DOMAIN/USER) into dom and name. */
static void split_user(const char *user, char *dom, char *name, size_t cap)
{
    const char *sep = strpbrk(user, "\\/");

    snprintf(dom, cap, "%.*s", sep ? (int)(sep - user) : 0, user);
    snprintf(name, cap, "%s", sep ? sep + 1 : user);
}

/* NEGOTIATE_MESSAGE, then the AUTHENTICATE_MESSAGE answering the server's challenge, in
 * SESSION_SETUP requests with flags and security_mode: 0 with *final the final response
 * and key the session key (MS-NLMP's exported key; zeros for anonymous). */
static int authenticate(struct cf_smb2 *c, uint8_t flags, uint8_t security_mode,
                        const char *user, const char *password,
                        uint8_t key[CF_NTLM_HASH_SIZE], const struct cf_msg **final)
{
    struct cf_ntlm_challenge ch;
    struct cf_smb2_req_hdr h;
    const struct cf_msg *resp;
    const uint8_t *blob;
    uint8_t tok[2048], req[REQ_SMALL + sizeof(tok)], cc[8], random_key[CF_NTLM_HASH_SIZE];
    char dom[128], name[128];
    size_t blob_len;
    uint16_t sflags;
    int n, rc;

    n = cf_ntlm_negotiate(tok, sizeof(tok));
    h = cf_smb2_next_hdr(c, CF_SMB2_SESSION_SETUP, 0);
    rc = cf_smb2_call(c, &h, req,
                      cf_smb2_session_setup_req(&h, flags, security_mode, tok, (size_t)n, req,
                                                sizeof(req)), &resp);
    if (rc < 0)
        return rc;
    if (c->status != CF_STATUS_MORE_PROCESSING ||
        cf_smb2_session_setup_resp_decode(resp->data, resp->len, &sflags, &blob, &blob_len) != 0 ||
        cf_ntlm_parse_challenge(blob, blob_len, &ch) != 0)
        return cf_smb2_say(c, -EPROTO, "SESSION_SETUP: no NTLMSSP CHALLENGE_MESSAGE (status "
                           "0x%08x)", c->status);
    for (size_t i = 0; i < sizeof(cc); i++)
        cc[i] = (uint8_t)rand();
    if (getrandom(random_key, sizeof(random_key), 0) != (ssize_t)sizeof(random_key))
        return cf_smb2_say(c, -EIO, "no random bytes for the session key");
    if (user)
        split_user(user, dom, name, sizeof(dom));
    /* FILETIME: 100 ns units since 1601 */
    n = cf_ntlm_authenticate(&ch, user ? name : NULL, password, user ? dom : NULL, cc,
                             ((uint64_t)time(NULL) + 11644473600ull) * 10000000ull, random_key,
                             tok, sizeof(tok), key);
    explicit_bzero(random_key, sizeof(random_key));
    h = cf_smb2_next_hdr(c, CF_SMB2_SESSION_SETUP, 0);
    rc = cf_smb2_call(c, &h, req,
                      n < 0 ? -1 : cf_smb2_session_setup_req(&h, flags, security_mode, tok,
                                                             (size_t)n, req, sizeof(req)),
                      final);
    if (rc == -EREMOTEIO)
        return cf_smb2_say(c, rc, "SESSION_SETUP%s as %s refused: status 0x%08x",
                           flags & CF_SMB2_SESSION_FLAG_BINDING ? " binding a channel" : "",
                           user ? user : "anonymous", c->status);
    return rc;
}

int cf_smb2_login(struct cf_smb2 *c, const char *user, const char *password)
{
    const struct cf_msg *resp;
    uint8_t key[CF_NTLM_HASH_SIZE];
    int rc;

    if (c->neg.security_mode & CF_SMB2_SIGNING_REQUIRED)
        return cf_smb2_say(c, -EPERM, "the server requires signing, and this case runs an "
                           "unsigned session");
    rc = authenticate(c, 0, CF_SMB2_SIGNING_ENABLED, user, password, key, &resp);
    explicit_bzero(key, sizeof(key));
    return rc;
}

/* The final SESSION_SETUP response: a user's session (not guest, not anonymous), signed
 * with k (3.2.5.3.1: the client MUST verify it). 0, or -EBADMSG / -EPERM with why. */
static int check_final(struct cf_smb2 *c, const struct cf_msg *resp,
                       const struct smb2_sign_key *k, const char *what)
{
    struct smb2_hdr h;
    const uint8_t *blob;
    size_t blob_len;
    uint16_t sflags;

    if (smb2_hdr_decode(resp->data, resp->len, &h) != 0 ||
        cf_smb2_session_setup_resp_decode(resp->data, resp->len, &sflags, &blob, &blob_len) != 0)
        return cf_smb2_say(c, -EPROTO, "%s: the final SESSION_SETUP response does not decode",
                           what);
    if (sflags & (SESSION_FLAG_IS_GUEST | SESSION_FLAG_IS_NULL))
        return cf_smb2_say(c, -EPERM, "%s: the server made it a %s session, which cannot sign",
                           what, sflags & SESSION_FLAG_IS_NULL ? "null" : "guest");
    if (!(h.flags & SMB2_FLAGS_SIGNED))
        return cf_smb2_say(c, -EBADMSG, "%s: the final SESSION_SETUP response is not signed",
                           what);
    if (smb2_sign_verify(k, SMB2_SIGN_FROM_SERVER, resp->data, resp->len) != 0)
        return cf_smb2_say(c, -EBADMSG, "%s: the final SESSION_SETUP response's signature does "
                           "not verify with the signing key derived for dialect 0x%04x",
                           what, c->neg.dialect);
    c->verified++;
    return 0;
}

/* k from the session key for c's dialect (3.1.1: over c's preauth hash). */
static int derive(struct cf_smb2 *c, struct smb2_sign_key *k, const uint8_t *key)
{
    if (smb2_sign_key_init(k, c->neg.dialect, -1, key, c->preauth.hash) != 0)
        return cf_smb2_say(c, -EPROTO, "no signing key for dialect 0x%04x", c->neg.dialect);
    return 0;
}

int cf_smb2_login_signed(struct cf_smb2 *c, const char *user, const char *password)
{
    const struct cf_msg *resp;
    uint8_t key[CF_NTLM_HASH_SIZE];
    int rc;

    if (!user)
        return cf_smb2_say(c, -EINVAL, "a signed session needs a user (--user)");
    rc = authenticate(c, 0, CF_SMB2_SIGNING_REQUIRED, user, password, key, &resp);
    /* 3.2.5.3.1: Session.SigningKey; the first channel's key is the same */
    if (rc == 0)
        rc = derive(c, &c->session_key, key);
    explicit_bzero(key, sizeof(key));
    if (rc < 0)
        return rc;
    c->channel_key = c->session_key;
    rc = check_final(c, resp, &c->channel_key, "signed session");
    c->sign = rc == 0;
    return rc;
}

int cf_smb2_bind(struct cf_smb2 *c, const struct cf_smb2 *session, const char *user,
                 const char *password)
{
    const struct cf_msg *resp;
    uint8_t key[CF_NTLM_HASH_SIZE];
    int rc;

    if (!session->sign)
        return cf_smb2_say(c, -EINVAL, "binding needs a signed session");
    /* 3.3.5.5: the server fails a binding whose dialect is not the session's */
    if (c->neg.dialect != session->neg.dialect)
        return cf_smb2_say(c, -EPROTO, "the channel negotiated dialect 0x%04x, the session "
                           "0x%04x", c->neg.dialect, session->neg.dialect);
    c->session_id = session->session_id;
    c->session_key = session->session_key;
    c->binding = 1;
    rc = authenticate(c, CF_SMB2_SESSION_FLAG_BINDING, CF_SMB2_SIGNING_REQUIRED, user, password,
                      key, &resp);
    c->binding = 0;
    /* 3.2.5.3.3: Channel.SigningKey from this authentication's session key */
    if (rc == 0)
        rc = derive(c, &c->channel_key, key);
    explicit_bzero(key, sizeof(key));
    if (rc < 0)
        return rc;
    rc = check_final(c, resp, &c->channel_key, "binding");
    c->sign = rc == 0;
    return rc;
}
