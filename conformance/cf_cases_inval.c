/* SPDX-License-Identifier: BSD-3-Clause */
/* conformance/cf_cases_inval.c — the RemoteInvalidation group: SMB2_CHANNEL_RDMA_V1_INVALIDATE
 * (MS-SMB2 2.2.19, 2.2.21, 3.3.5.12, 3.3.5.13; MS-SMBD 3.1.4.2 Send with Invalidate).
 * From dialect 3.0.2 the response arrives by Send with Invalidate naming the first
 * descriptor's token, which is then unusable; RDMA_V1 invalidates nothing; on 3.0 the
 * server serves RDMA_V1_INVALIDATE without invalidating. */
#include <errno.h>
#include <string.h>

#include "cf_fixture.h"

#define IO_LEN (64u * 1024u)
#define REUSE_END_MS 3000 /* how long a refused reuse may take to end the connection */

/* One channel READ or WRITE of IO_LEN at offset 0 through b (whose pattern is seed). */
static int io(struct cf_file *f, int is_write, uint32_t channel, struct cf_buf *b,
              uint32_t seed, uint32_t *moved)
{
    struct smbd_buffer_desc d;

    cf_buf_descs(b, &d, 1);
    if (is_write) {
        cf_pattern(b->mem, b->len, 0, seed);
        return cf_smb2_write_chan(&f->c, f->fid, 0, IO_LEN, channel, &d, 1, moved);
    }
    memset(b->mem, 0, b->len);
    return cf_smb2_read_chan(&f->c, f->fid, 0, IO_LEN, channel, &d, 1, moved);
}

/* After io: the bytes moved and the file's (READ: the buffer's) content. */
static int check_data(struct cf_file *f, int is_write, const struct cf_buf *b, uint32_t seed,
                      uint32_t moved, struct cf_result *r)
{
    struct cf_buf back;
    struct smbd_buffer_desc d;
    uint32_t got = 0;
    long diff = -1;
    int rc;

    if (moved != IO_LEN)
        return cf_result(r, CF_FAIL, "%s moved %u bytes, expected %u", is_write ? "WRITE" : "READ",
                         moved, IO_LEN), -1;
    if (!is_write) {
        diff = cf_pattern_diff(b->mem, IO_LEN, 0, seed);
        return diff < 0 ? 0 : (cf_result(r, CF_FAIL, "READ: byte %ld differs", diff), -1);
    }
    /* the WRITE's data, read back over the channel into a fresh buffer (RDMA_V1) */
    rc = cf_buf_new(f, IO_LEN, SD_ACCESS_LOCAL_WRITE | SD_ACCESS_REMOTE_WRITE, &back);
    if (rc == 0) {
        cf_buf_descs(&back, &d, 1);
        rc = cf_smb2_read_chan(&f->c, f->fid, 0, IO_LEN, SMB2_CHANNEL_RDMA_V1, &d, 1, &got);
        if (rc == 0)
            diff = got == IO_LEN ? cf_pattern_diff(back.mem, IO_LEN, 0, seed) : 0;
    }
    cf_buf_free(f, &back);
    if (rc < 0)
        return cf_result(r, CF_FAIL, "reading the WRITE back: %s", f->c.why), -1;
    if (diff >= 0)
        return cf_result(r, CF_FAIL, "the WRITE's data reads back different at byte %ld", diff), -1;
    return 0;
}

/* What the response's arrival says about invalidation, against what is expected. */
static int check_invalidation(struct cf_file *f, int expected, uint32_t token,
                              struct cf_result *r, const char *which)
{
    if (expected && (!f->c.invalidate || f->c.inv_rkey != token))
        return cf_result(r, CF_FAIL, "%s response: expected Send with Invalidate of 0x%08x, got %s "
                         "0x%08x", which, token, f->c.invalidate ? "one of" : "none", f->c.inv_rkey),
               -1;
    if (!expected && f->c.invalidate)
        return cf_result(r, CF_FAIL, "%s response came by Send with Invalidate of 0x%08x; expected "
                         "no invalidation", which, f->c.inv_rkey), -1;
    return 0;
}

enum shape {
    INVALIDATE_302, /* BVT: invalidated, then the reuse fails and the connection ends */
    PLAIN_302,      /* RDMA_V1 on 3.0.2: nothing invalidated */
    INVALIDATE_300, /* RDMA_V1_INVALIDATE twice on 3.0: both succeed, nothing invalidated */
};

static void run(struct cf_ctx *ctx, struct cf_result *r, int is_write, enum shape shape)
{
    const char *op = is_write ? "WRITE" : "READ";
    int sees = ctx->t->provider->remote_invalidation;
    uint32_t channel = shape == PLAIN_302 ? SMB2_CHANNEL_RDMA_V1 : SMB2_CHANNEL_RDMA_V1_INVALIDATE;
    struct cf_file f;
    struct cf_buf b = { 0 };
    uint32_t moved = 0;
    int rc;

    if (shape == INVALIDATE_302 && !sees) {
        cf_result(r, CF_SKIP, "the %s provider cannot see remote invalidation "
                  "(remote_invalidation=0)", ctx->t->provider->name);
        return;
    }
    if (cf_file_open(ctx, &f, shape == INVALIDATE_300 ? CF_DIALECTS_0300 : CF_DIALECTS_0302,
                     is_write ? "invw" : "invr", r) < 0)
        goto out;
    if (!is_write && cf_file_fill(&f, IO_LEN, 7, r) < 0)
        goto out;
    rc = cf_buf_new(&f, IO_LEN, is_write ? SD_ACCESS_REMOTE_READ
                                         : SD_ACCESS_LOCAL_WRITE | SD_ACCESS_REMOTE_WRITE, &b);
    if (rc < 0) {
        cf_result(r, CF_FAIL, "registering %u bytes failed: %s", IO_LEN, strerror(-rc));
        goto out;
    }
    rc = io(&f, is_write, channel, &b, 7, &moved);
    if (rc < 0) {
        cf_result(r, CF_FAIL, "%s with Channel %u: %s", op, channel, f.c.why);
        goto out;
    }
    if (check_invalidation(&f, shape == INVALIDATE_302, b.mr.rkey, r, op) < 0 ||
        check_data(&f, is_write, &b, 7, moved, r) < 0)
        goto out;
    if (shape == PLAIN_302) {
        cf_result(r, CF_PASS, "%s with RDMA_V1 on 3.0.2 served, no invalidation%s, content equal",
                  op, sees ? "" : " (not visible to this provider)");
        goto out;
    }
    /* the same descriptor again (a WRITE with new data; a READ of the same) */
    rc = io(&f, is_write, channel, &b, is_write ? 8 : 7, &moved);
    if (shape == INVALIDATE_300) {
        if (rc < 0)
            cf_result(r, CF_FAIL, "the second %s on the same descriptor: %s", op, f.c.why);
        else if (check_invalidation(&f, 0, b.mr.rkey, r, "second") == 0 &&
                 check_data(&f, is_write, &b, is_write ? 8 : 7, moved, r) == 0)
            cf_result(r, CF_PASS, "two %ss with RDMA_V1_INVALIDATE on 3.0 on one descriptor, "
                      "both served, no invalidation%s, content equal", op,
                      sees ? "" : " (not visible to this provider)");
        goto out;
    }
    if (rc == 0) {
        cf_result(r, CF_FAIL, "reusing the invalidated token 0x%08x succeeded", b.mr.rkey);
    } else if (rc == -ENOTCONN) {
        cf_result(r, CF_PASS, "Send with Invalidate of 0x%08x, data equal; the reuse: %s",
                  b.mr.rkey, f.c.why);
    } else if (rc == -EREMOTEIO && cf_smbd_wait_lost(&f.c.sd, REUSE_END_MS) == 0) {
        cf_result(r, CF_PASS, "Send with Invalidate of 0x%08x, data equal; the reuse was refused "
                  "(status 0x%08x) and the connection ended", b.mr.rkey, f.c.status);
    } else {
        cf_result(r, CF_FAIL, "reusing the invalidated token: %s; the connection did not end "
                  "within %d ms", f.c.why, REUSE_END_MS);
    }
out:
    cf_buf_free(&f, &b);
    cf_file_end(&f);
}

static void write_inval_302(struct cf_ctx *ctx, struct cf_result *r) { run(ctx, r, 1, INVALIDATE_302); }
static void read_inval_302(struct cf_ctx *ctx, struct cf_result *r) { run(ctx, r, 0, INVALIDATE_302); }
static void write_plain_302(struct cf_ctx *ctx, struct cf_result *r) { run(ctx, r, 1, PLAIN_302); }
static void read_plain_302(struct cf_ctx *ctx, struct cf_result *r) { run(ctx, r, 0, PLAIN_302); }
static void write_inval_300(struct cf_ctx *ctx, struct cf_result *r) { run(ctx, r, 1, INVALIDATE_300); }
static void read_inval_300(struct cf_ctx *ctx, struct cf_result *r) { run(ctx, r, 0, INVALIDATE_300); }

static const struct cf_case cases[] = {
    { "BVT_SMB2OverRdma_SMB302_Write_RemoteInvalidation", write_inval_302 },
    { "BVT_SMB2OverRdma_SMB302_Read_RemoteInvalidation", read_inval_302 },
    { "SMB2OverRdma_SMB302_Write_NoRemoteInvalidation", write_plain_302 },
    { "SMB2OverRdma_SMB302_Read_NoRemoteInvalidation", read_plain_302 },
    { "SMB2OverRdma_SMB300_Write_RemoteInvalidation", write_inval_300 },
    { "SMB2OverRdma_SMB300_Read_RemoteInvalidation", read_inval_300 },
};

const struct cf_group cf_group_remote_invalidation = { "RemoteInvalidation", cases,
                                                       sizeof(cases) / sizeof(cases[0]) };
