/* SPDX-License-Identifier: BSD-3-Clause */
/* conformance/cf_fixture.c — sessions with a test file, registered buffers, pattern
 * data and the "still serving" check shared by the SMB2 cases (see cf_fixture.h). */
#include "cf_fixture.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sd_bytes.h"
#include "sd_clock.h"

/* The default set: the highest of 3.0, 3.0.2, 3.1.1 the server offers. A user session
 * at 3.1.1 is signed (MS-SMB2 3.3.5.5.3: Session.SigningRequired for a session neither
 * anonymous nor guest), and these cases run unsigned sessions (only the Smb2Multichannel
 * cases sign): with a user it offers 3.0.2 at most. */
static const uint16_t dialects_all[] = { SMB2_DIALECT_0300, SMB2_DIALECT_0302,
                                         CF_SMB2_DIALECT_0311 };
static const uint16_t dialect_0300[] = { SMB2_DIALECT_0300 };
static const uint16_t dialect_0302[] = { SMB2_DIALECT_0302 };

int cf_file_open(struct cf_ctx *ctx, struct cf_file *f, enum cf_dialects d, const char *tag,
                 struct cf_result *r)
{
    const uint16_t *set = d == CF_DIALECTS_0300 ? dialect_0300
                          : d == CF_DIALECTS_0302 ? dialect_0302 : dialects_all;
    int n = d != CF_DIALECTS_ALL ? 1 : ctx->user ? 2 : 3, rc;

    memset(f, 0, sizeof(*f));
    snprintf(f->name, sizeof(f->name), "sdconf-%s-%s.bin", ctx->run_id, tag);
    rc = cf_smb2_connect(&f->c, ctx->t, set, n, NULL);
    if (rc == -EREMOTEIO && f->c.status == 0xC00000BBu /* STATUS_NOT_SUPPORTED */ && n == 1)
        return cf_result(r, CF_SKIP, "the server does not offer dialect 0x%04x", set[0]), -1;
    if (rc == 0)
        rc = cf_smb2_login(&f->c, ctx->user, ctx->password);
    if (rc == -EPERM)
        return cf_result(r, CF_SKIP, "%s", f->c.why), -1;
    if (rc == 0)
        rc = cf_smb2_tree_connect(&f->c, ctx->share);
    if (rc == 0)
        rc = cf_smb2_create(&f->c, f->name, f->fid);
    if (rc < 0)
        return cf_result(r, CF_FAIL, "setup: %s", f->c.why), -1;
    f->open = 1;
    return 0;
}

void cf_file_end(struct cf_file *f)
{
    if (f->open && !f->c.sd.lost)
        cf_smb2_close_file(&f->c, f->fid);
    f->open = 0;
    cf_smb2_close(&f->c);
}

void cf_list_target(const struct cf_ctx *ctx, struct cf_target *t, struct cf_ctx *c)
{
    *t = *ctx->t;
    t->credits = 10;
    t->max_send_size = 1024;
    t->max_receive_size = 1024;
    t->max_fragmented_size = 131072;
    *c = *ctx;
    c->t = t;
}

int cf_raw_open(const struct cf_target *t, struct cf_smbd *s, struct cf_result *r)
{
    struct smbd_negotiate_req q;
    int rc = cf_smbd_connect(s, t);

    cf_smbd_default_negotiate(t, &q);
    if (rc == 0)
        rc = cf_smbd_negotiate(s, &q);
    if (rc < 0)
        return cf_result(r, CF_FAIL, "setup: %s", s->why), -1;
    return 0;
}

int cf_still_negotiates(const struct cf_target *t, struct cf_result *r)
{
    struct cf_smbd s;
    int rc = cf_raw_open(t, &s, r);

    char why[sizeof(r->detail)];

    cf_smbd_close(&s);
    if (rc < 0) {
        snprintf(why, sizeof(why), "%s", r->detail);
        cf_result(r, CF_FAIL, "then a new connection: %s", why);
    }
    return rc;
}

int cf_send_dt(struct cf_smbd *s, const struct cf_dt *d)
{
    size_t len = d->len == CF_DT_MAX_SEND ? s->max_send : d->len;
    uint8_t *m = calloc(1, len > SMBD_DATA_OFFSET ? len : SMBD_DATA_OFFSET), neg[200];
    uint8_t guid[16] = { 0 };
    const uint16_t dialect = SMB2_DIALECT_0302;
    const struct cf_smb2_req_hdr h = { .command = SMB2_NEGOTIATE, .credit_charge = 1 };
    int n = cf_smb2_negotiate_req(&h, &dialect, 1, guid, neg, sizeof(neg)), rc;

    if (!m)
        return -ENOMEM;
    if (len > SMBD_DATA_OFFSET && n > 0)
        memcpy(m + SMBD_DATA_OFFSET, neg,
               len - SMBD_DATA_OFFSET < (size_t)n ? len - SMBD_DATA_OFFSET : (size_t)n);
    sd_put_le16(m, d->credits_requested);
    sd_put_le16(m + 2, d->credits_granted);
    sd_put_le16(m + 4, d->flags);
    sd_put_le32(m + 8, d->remaining == CF_DT_MFS_PLUS_1 ? s->neg.max_fragmented_size + 1
                                                        : d->remaining);
    sd_put_le32(m + 12, d->offset);
    sd_put_le32(m + 16, d->length == CF_DT_PAST_END ? (uint32_t)(len - SMBD_DATA_OFFSET + 1)
                                                    : d->length);
    rc = cf_smbd_send_raw(s, m, len);
    free(m);
    return rc;
}

void cf_expect_end(struct cf_ctx *ctx, struct cf_result *r, const struct cf_bad *v, size_t nv,
                   const char *pass)
{
    struct cf_target t;
    struct cf_ctx c;

    cf_list_target(ctx, &t, &c);
    for (size_t i = 0; i < nv; i++) {
        struct cf_smbd s;
        int rc = cf_raw_open(&t, &s, r), ok = 0;

        for (size_t k = 0; rc == 0 && k < v[i].n && !s.lost; k++)
            rc = cf_send_dt(&s, &v[i].d[k]);
        if (rc == 0 || rc == -ENOTCONN) {
            if (cf_smbd_wait_lost(&s, CF_END_MS) == 0)
                ok = 1;
            else
                cf_result(r, CF_FAIL, "%s: the connection still stands after %d ms", v[i].what,
                          CF_END_MS);
        } else if (s.negotiated) {
            cf_result(r, CF_FAIL, "%s: %s", v[i].what, s.why);
        }
        cf_smbd_close(&s);
        if (!ok)
            return;
    }
    if (cf_still_negotiates(&t, r) == 0)
        cf_result(r, CF_PASS, "%s: terminated; a new connection negotiated", pass);
}

int cf_keepalive_answered(struct cf_smbd *s, const char *what, struct cf_result *r)
{
    uint32_t before = s->recv_count;
    uint64_t t0 = sd_now_ms();

    /* MS-SMBD 3.1.5.8: the receiver MUST promptly send a message in response */
    if (cf_smbd_keepalive(s) < 0)
        return cf_result(r, CF_FAIL, "%s: sending it: %s", what, s->why), -1;
    if (cf_smbd_wait_count(s, &s->recv_count, before + 1, CF_ANSWER_MS) < 0)
        return cf_result(r, CF_FAIL, "%s: no answer in %d ms%s", what, CF_ANSWER_MS,
                         s->lost ? " (the connection ended)" : ""), -1;
    cf_result(r, CF_PASS, "%s: answered after %llu ms", what,
              (unsigned long long)(sd_now_ms() - t0));
    return 0;
}

int cf_buf_new(struct cf_file *f, size_t len, int access, struct cf_buf *b)
{
    int rc;

    memset(b, 0, sizeof(*b));
    b->mem = calloc(1, len ? len : 1);
    b->len = len;
    if (!b->mem)
        return -ENOMEM;
    rc = cf_smbd_reg(&f->c.sd, b->mem, len, access, &b->mr);
    b->reg = rc == 0;
    return rc;
}

void cf_buf_free(struct cf_file *f, struct cf_buf *b)
{
    if (b->reg && f->c.sd.qp)
        cf_smbd_dereg(&f->c.sd, &b->mr);
    b->reg = 0;
    free(b->mem);
    b->mem = NULL;
}

void cf_buf_descs(const struct cf_buf *b, struct smbd_buffer_desc *d, size_t n)
{
    size_t off = 0;

    for (size_t i = 0; i < n; i++) {
        size_t piece = b->len / n + (i < b->len % n);

        d[i] = (struct smbd_buffer_desc){ .offset = b->mr.addr + off, .token = b->mr.rkey,
                                          .length = (uint32_t)piece };
        off += piece;
    }
}

/* A byte of a 64-bit mix of the position and the seed: no period a shifted or
 * repeated copy could hide behind. */
static uint8_t pattern_byte(uint64_t pos, uint32_t seed)
{
    uint64_t x = (pos >> 3) * 0x9E3779B97F4A7C15ull ^ seed;

    x ^= x >> 29;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 32;
    return (uint8_t)(x >> (8 * (pos & 7)));
}

void cf_pattern(uint8_t *buf, size_t len, uint64_t off, uint32_t seed)
{
    for (size_t i = 0; i < len; i++)
        buf[i] = pattern_byte(off + i, seed);
}

long cf_pattern_diff(const uint8_t *buf, size_t len, uint64_t off, uint32_t seed)
{
    for (size_t i = 0; i < len; i++)
        if (buf[i] != pattern_byte(off + i, seed))
            return (long)i;
    return -1;
}

int cf_file_fill(struct cf_file *f, size_t len, uint32_t seed, struct cf_result *r)
{
    uint8_t *data = malloc(len ? len : 1);
    int rc;

    if (!data)
        return cf_result(r, CF_FAIL, "out of memory"), -1;
    cf_pattern(data, len, 0, seed);
    rc = cf_smb2_write(&f->c, f->fid, 0, data, len);
    free(data);
    if (rc < 0)
        return cf_result(r, CF_FAIL, "setup: inline WRITE of %zu bytes: %s", len, f->c.why), -1;
    return 0;
}

int cf_write_back(struct cf_file *f, uint32_t len, uint32_t seed, struct cf_msg *wresp,
                  struct cf_result *r)
{
    uint8_t *w = malloc(len ? len : 1), *b = malloc(len ? len : 1);
    size_t got = 0;
    int rc = -1;

    if (!w || !b) {
        cf_result(r, CF_FAIL, "out of memory");
        goto out;
    }
    cf_pattern(w, len, 0, seed);
    if (cf_smb2_write_one(&f->c, f->fid, 0, w, len) < 0) {
        cf_result(r, CF_FAIL, "WRITE of %u bytes: %s", len, f->c.why);
        goto out;
    }
    if (wresp)
        *wresp = *f->c.sd.taken;
    if (cf_smb2_read(&f->c, f->fid, 0, b, len, &got) < 0)
        cf_result(r, CF_FAIL, "READ back: %s", f->c.why);
    else if (got != len || memcmp(w, b, len) != 0)
        cf_result(r, CF_FAIL, "read back %zu bytes differing from the %u written", got, len);
    else
        rc = 0;
out:
    free(w);
    free(b);
    return rc;
}

#define SERVING_SIZE (64u * 1024u)
#define SERVING_SEED 0x5E4Eu

int cf_still_serving(struct cf_ctx *ctx, char *why, size_t whylen)
{
    struct cf_result r;
    struct cf_file f;
    struct cf_buf b;
    struct smbd_buffer_desc d;
    uint32_t got = 0;
    long diff;
    int rc = -1;

    if (cf_file_open(ctx, &f, CF_DIALECTS_ALL, "serving", &r) < 0) {
        snprintf(why, whylen, "a new connection failed: %s", r.detail);
        cf_file_end(&f);
        return -1;
    }
    if (cf_file_fill(&f, SERVING_SIZE, SERVING_SEED, &r) < 0)
        snprintf(why, whylen, "a new connection: %s", r.detail);
    else if (cf_buf_new(&f, SERVING_SIZE, SD_ACCESS_LOCAL_WRITE | SD_ACCESS_REMOTE_WRITE, &b) < 0)
        snprintf(why, whylen, "registering a buffer failed");
    else {
        cf_buf_descs(&b, &d, 1);
        if (cf_smb2_read_chan(&f.c, f.fid, 0, SERVING_SIZE, SMB2_CHANNEL_RDMA_V1, &d, 1, &got) < 0)
            snprintf(why, whylen, "a new connection's channel READ failed: %s", f.c.why);
        else if (got != SERVING_SIZE || (diff = cf_pattern_diff(b.mem, got, 0, SERVING_SEED)) >= 0)
            snprintf(why, whylen, "a new connection's channel READ returned wrong data");
        else
            rc = 0;
        cf_buf_free(&f, &b);
    }
    cf_file_end(&f);
    return rc;
}
