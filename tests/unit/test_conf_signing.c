/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/test_conf_signing.c — the conformance client's signed sessions
 * (conformance/cf_smb2.c, cf_preauth.c) over a socketpair standing in for the server's TCP
 * connection: the preauth integrity hash chain (MS-SMB2 3.2.5.2) against values computed
 * apart, a signed session's request signed with Channel.SigningKey and a response that
 * verifies accepted, a response altered after signing or not signed refused with -EBADMSG
 * naming it; a binding's SESSION_SETUP signed with Session.SigningKey (3.2.4.1.1) and the
 * preauth hash taking each request and each response but the final one (3.2.5.3.1). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "cf_preauth.h"
#include "cf_smb2.h"
#include "cf_tcp.h"
#include "sd_bytes.h"

#define SESSION_ID 0x0000100000000011ull
#define STATUS_MORE_PROCESSING 0xC0000016u

static const uint8_t key_a[16] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };
static const uint8_t key_b[16] = { 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1 };

static void preauth_chains_sha512(void **state)
{
    /* SHA-512(64 zero bytes || "abc"), then SHA-512(that || "defg") (Python's hashlib) */
    static const char *want[2] = {
        "7682b6b84c6f692545a896ad210299bcc6f74e189d829e165739b11dd83b6f2c"
        "8cfacf27e812bf064df756d6235ac33c062b89ecb80f8215516dbbb844ce8480",
        "35511ce0b2ef9e80a52160d6ce8cb95bae063598ec813d66326726784a30ffaa"
        "017247fe20a6b0ec78b4faf004e5ab4ac6b2ffc5095a6276689ed0eb0186939f",
    };
    struct cf_preauth p;
    char hex[2 * SMB2_PREAUTH_HASH_SIZE + 1];

    (void)state;
    memset(&p, 0xAA, sizeof(p));
    cf_preauth_reset(&p);
    cf_preauth_update(&p, (const uint8_t *)"abc", 3);
    for (size_t i = 0; i < sizeof(p.hash); i++)
        snprintf(hex + 2 * i, 3, "%02x", p.hash[i]);
    assert_string_equal(hex, want[0]);
    cf_preauth_update(&p, (const uint8_t *)"defg", 4);
    for (size_t i = 0; i < sizeof(p.hash); i++)
        snprintf(hex + 2 * i, 3, "%02x", p.hash[i]);
    assert_string_equal(hex, want[1]);
}

struct fixture {
    struct cf_target t;
    struct cf_smb2 c;
    int peer;                 /* the server's end */
};

static void setup(struct fixture *f)
{
    int sv[2];

    memset(f, 0, sizeof(*f));
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    f->t.timeout_ms = 2000;
    f->c.t = &f->t;
    f->c.tcp = sv[0];
    f->peer = sv[1];
    f->c.credits = 10;
    f->c.next_mid = 5;
    f->c.session_id = SESSION_ID;
    assert_int_equal(smb2_sign_key_init(&f->c.session_key, SMB2_DIALECT_0300, -1, key_a, NULL),
                     0);
    assert_int_equal(smb2_sign_key_init(&f->c.channel_key, SMB2_DIALECT_0300, -1, key_b, NULL),
                     0);
}

static void teardown(struct fixture *f)
{
    cf_smb2_close(&f->c);
    close(f->peer);
}

/* A response of command (body: body_len bytes, StructureSize first) to MessageId mid,
 * signed with k when k is not NULL; queued on the server's end. Returns its length. */
static size_t respond(struct fixture *f, uint16_t command, uint32_t status, uint64_t mid,
                      uint16_t structure_size, size_t body_len, const struct smb2_sign_key *k,
                      size_t flip, uint8_t *msg)
{
    size_t len = SMB2_HDR_SIZE + body_len;

    memset(msg, 0, len);
    msg[0] = 0xFE;
    memcpy(msg + 1, "SMB", 3);
    sd_put_le16(msg + 4, SMB2_HDR_SIZE);
    sd_put_le32(msg + 8, status);
    sd_put_le16(msg + 12, command);
    sd_put_le16(msg + 14, 1);                         /* CreditResponse */
    sd_put_le32(msg + 16, SMB2_FLAGS_SERVER_TO_REDIR);
    sd_put_le64(msg + 24, mid);
    sd_put_le64(msg + 40, SESSION_ID);
    sd_put_le16(msg + SMB2_HDR_SIZE, structure_size);
    if (k)
        assert_int_equal(smb2_sign(k, SMB2_SIGN_FROM_SERVER, msg, len), 0);
    if (flip)
        msg[flip] ^= 0x01;
    assert_int_equal(cf_tcp_send(f->peer, msg, len, 1000), 0);
    return len;
}

/* The request the client sent, as the server reads it. */
static struct cf_msg *request(struct fixture *f)
{
    struct cf_msg *m = NULL;

    assert_int_equal(cf_tcp_recv(f->peer, 1000, &m), 0);
    return m;
}

static void signed_session_verifies_responses(void **state)
{
    static const uint8_t fid[16] = { 7 };
    struct fixture f;
    struct cf_msg *m;
    uint8_t resp[200];
    struct smb2_hdr h;

    (void)state;
    setup(&f);
    f.c.sign = 1;
    /* a CLOSE response signed with the channel's key: accepted */
    respond(&f, CF_SMB2_CLOSE, 0, 5, 60, 60, &f.c.channel_key, 0, resp);
    assert_int_equal(cf_smb2_close_file(&f.c, fid), 0);
    assert_int_equal(f.c.verified, 1);
    m = request(&f);
    assert_int_equal(smb2_hdr_decode(m->data, m->len, &h), 0);
    assert_true(h.flags & SMB2_FLAGS_SIGNED);
    assert_int_equal(smb2_sign_verify(&f.c.channel_key, SMB2_SIGN_FROM_CLIENT, m->data, m->len), 0);
    assert_int_equal(smb2_sign_verify(&f.c.session_key, SMB2_SIGN_FROM_CLIENT, m->data, m->len),
                     -EBADMSG);
    free(m);
    /* one byte of the body altered after signing: refused, named */
    respond(&f, CF_SMB2_CLOSE, 0, 6, 60, 60, &f.c.channel_key, SMB2_HDR_SIZE + 8, resp);
    assert_int_equal(cf_smb2_close_file(&f.c, fid), -EBADMSG);
    assert_non_null(strstr(f.c.why, "CLOSE response (status 0x00000000) has a bad signature"));
    free(request(&f));
    /* signed with another key: refused too */
    respond(&f, CF_SMB2_CLOSE, 0, 7, 60, 60, &f.c.session_key, 0, resp);
    assert_int_equal(cf_smb2_close_file(&f.c, fid), -EBADMSG);
    free(request(&f));
    /* not signed at all, an error status: refused, not taken for the server's answer */
    respond(&f, CF_SMB2_CLOSE, 0xC0000022u, 8, 9, 8, NULL, 0, resp);
    assert_int_equal(cf_smb2_close_file(&f.c, fid), -EBADMSG);
    assert_non_null(strstr(f.c.why, "is not signed on a signed session"));
    free(request(&f));
    assert_int_equal(f.c.verified, 1);
    teardown(&f);
}

static void binding_signs_with_the_session_key(void **state)
{
    static const uint8_t blob[4] = { 'N', 'T', 'L', 'M' };
    struct cf_smb2_req_hdr h;
    const struct cf_msg *r;
    struct cf_preauth want;
    struct fixture f;
    struct cf_msg *m;
    uint8_t req[200], resp[200];
    size_t rlen;
    int n;

    (void)state;
    setup(&f);
    f.c.binding = 1;
    cf_preauth_reset(&f.c.preauth);
    cf_preauth_reset(&want);
    /* the intermediate response, signed with Session.SigningKey */
    rlen = respond(&f, CF_SMB2_SESSION_SETUP, STATUS_MORE_PROCESSING, 5, 9, 8, &f.c.session_key,
                   0, resp);
    h = cf_smb2_next_hdr(&f.c, CF_SMB2_SESSION_SETUP, 0);
    n = cf_smb2_session_setup_req(&h, CF_SMB2_SESSION_FLAG_BINDING, CF_SMB2_SIGNING_REQUIRED,
                                  blob, sizeof(blob), req, sizeof(req));
    assert_int_equal(cf_smb2_call(&f.c, &h, req, n, &r), 0);
    assert_int_equal(f.c.status, STATUS_MORE_PROCESSING);
    m = request(&f);
    assert_int_equal(m->data[SMB2_HDR_SIZE + 2], CF_SMB2_SESSION_FLAG_BINDING);
    assert_int_equal(m->data[SMB2_HDR_SIZE + 3], CF_SMB2_SIGNING_REQUIRED);
    assert_int_equal(smb2_sign_verify(&f.c.session_key, SMB2_SIGN_FROM_CLIENT, m->data, m->len), 0);
    assert_int_equal(smb2_sign_verify(&f.c.channel_key, SMB2_SIGN_FROM_CLIENT, m->data, m->len),
                     -EBADMSG);
    /* the hash took the request as sent (signed) and the response */
    cf_preauth_update(&want, m->data, m->len);
    cf_preauth_update(&want, resp, rlen);
    assert_memory_equal(f.c.preauth.hash, want.hash, sizeof(want.hash));
    free(m);
    /* the final response (STATUS_SUCCESS): the request goes into the hash, it does not */
    respond(&f, CF_SMB2_SESSION_SETUP, 0, 6, 9, 8, &f.c.channel_key, 0, resp);
    h = cf_smb2_next_hdr(&f.c, CF_SMB2_SESSION_SETUP, 0);
    n = cf_smb2_session_setup_req(&h, CF_SMB2_SESSION_FLAG_BINDING, CF_SMB2_SIGNING_REQUIRED,
                                  blob, sizeof(blob), req, sizeof(req));
    assert_int_equal(cf_smb2_call(&f.c, &h, req, n, &r), 0);
    m = request(&f);
    cf_preauth_update(&want, m->data, m->len);
    assert_memory_equal(f.c.preauth.hash, want.hash, sizeof(want.hash));
    free(m);
    /* an intermediate response altered after signing: refused */
    respond(&f, CF_SMB2_SESSION_SETUP, STATUS_MORE_PROCESSING, 7, 9, 8, &f.c.session_key,
            SMB2_HDR_SIZE + 4, resp);
    h = cf_smb2_next_hdr(&f.c, CF_SMB2_SESSION_SETUP, 0);
    n = cf_smb2_session_setup_req(&h, CF_SMB2_SESSION_FLAG_BINDING, CF_SMB2_SIGNING_REQUIRED,
                                  blob, sizeof(blob), req, sizeof(req));
    assert_int_equal(cf_smb2_call(&f.c, &h, req, n, &r), -EBADMSG);
    assert_non_null(strstr(f.c.why, "SESSION_SETUP response (status 0xc0000016) has a bad "
                                    "signature"));
    free(request(&f));
    teardown(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(preauth_chains_sha512),
        cmocka_unit_test(signed_session_verifies_responses),
        cmocka_unit_test(binding_signs_with_the_session_key),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
