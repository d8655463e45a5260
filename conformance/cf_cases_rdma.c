/* SPDX-License-Identifier: BSD-3-Clause */
/* conformance/cf_cases_rdma.c — the Smb2OverRdma group: SMB2 READ and WRITE over the
 * RDMA channel (MS-SMB2 2.2.19, 2.2.21, 3.3.5.12, 3.3.5.13; MS-SMBD 2.2.3.1, 3.1.4.3,
 * 3.1.4.5, 3.1.4.6): large and repeated I/O, 4095-element descriptor lists, and
 * invalid descriptors, which must fail the READ without hurting the server. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cf_fixture.h"
#include "chan_desc.h"

#define READ_ACCESS  (SD_ACCESS_LOCAL_WRITE | SD_ACCESS_REMOTE_WRITE) /* the server writes */
#define WRITE_ACCESS SD_ACCESS_REMOTE_READ                            /* the server reads */

/* A channel READ (into) or WRITE (from) a fresh buffer of len bytes at file offset off,
 * cut into nd descriptors: a WRITE sends pattern bytes, a READ's bytes are checked one
 * by one against the pattern. 0, or -1 with r set. */
static int chan_io(struct cf_file *f, int is_write, uint64_t off, uint32_t len, size_t nd,
                   uint32_t seed, struct cf_result *r)
{
    const char *op = is_write ? "WRITE" : "READ";
    struct smbd_buffer_desc *d = calloc(nd, sizeof(*d));
    struct cf_buf b;
    uint32_t moved = 0;
    long diff = -1;
    int rc = d ? cf_buf_new(f, len, is_write ? WRITE_ACCESS : READ_ACCESS, &b) : -ENOMEM;

    if (rc < 0) {
        free(d);
        return cf_result(r, CF_FAIL, "registering %u bytes failed: %s", len, strerror(-rc)), -1;
    }
    if (is_write)
        cf_pattern(b.mem, len, off, seed);
    cf_buf_descs(&b, d, nd);
    rc = is_write ? cf_smb2_write_chan(&f->c, f->fid, off, len, SMB2_CHANNEL_RDMA_V1, d, nd, &moved)
                  : cf_smb2_read_chan(&f->c, f->fid, off, len, SMB2_CHANNEL_RDMA_V1, d, nd, &moved);
    if (rc == 0 && !is_write && moved == len)
        diff = cf_pattern_diff(b.mem, len, off, seed);
    cf_buf_free(f, &b);
    free(d);
    if (rc < 0)
        return cf_result(r, CF_FAIL, "channel %s of %u bytes at %llu: %s", op, len,
                         (unsigned long long)off, f->c.why), -1;
    if (moved != len)
        return cf_result(r, CF_FAIL, "channel %s of %u bytes at %llu: %s %u", op, len,
                         (unsigned long long)off, is_write ? "Count" : "DataRemaining", moved), -1;
    if (diff >= 0)
        return cf_result(r, CF_FAIL, "channel READ at %llu: byte %ld differs from what was "
                         "written", (unsigned long long)off, diff), -1;
    return 0;
}

static int read_verify(struct cf_file *f, uint64_t off, uint32_t len, size_t nd, uint32_t seed,
                       struct cf_result *r)
{
    return chan_io(f, 0, off, len, nd, seed, r);
}

static int write_chan(struct cf_file *f, uint64_t off, uint32_t len, size_t nd, uint32_t seed,
                      struct cf_result *r)
{
    return chan_io(f, 1, off, len, nd, seed, r);
}

/* Channel READs of at most max_read checking total bytes from offset 0. */
static int read_back(struct cf_file *f, uint64_t total, uint32_t seed, struct cf_result *r)
{
    for (uint64_t off = 0; off < total;) {
        uint32_t n = total - off < f->c.max_read ? (uint32_t)(total - off) : f->c.max_read;

        if (read_verify(f, off, n, 1, seed, r) < 0)
            return -1;
        off += n;
    }
    return 0;
}

static void read_large_file(struct cf_ctx *ctx, struct cf_result *r)
{
    struct cf_file f;

    if (cf_file_open(ctx, &f, CF_DIALECTS_ALL, "readlarge", r) == 0 &&
        cf_file_fill(&f, f.c.max_read, 1, r) == 0 && read_verify(&f, 0, f.c.max_read, 1, 1, r) == 0)
        cf_result(r, CF_PASS, "READ of MaxReadSize %u bytes by RDMA Write at dialect 0x%04x, "
                  "every byte equal", f.c.max_read, f.c.neg.dialect);
    cf_file_end(&f);
}

static void write_large_file(struct cf_ctx *ctx, struct cf_result *r)
{
    struct cf_file f;

    if (cf_file_open(ctx, &f, CF_DIALECTS_ALL, "writelarge", r) == 0 &&
        write_chan(&f, 0, f.c.max_write, 1, 2, r) == 0 && read_back(&f, f.c.max_write, 2, r) == 0)
        cf_result(r, CF_PASS, "WRITE of MaxWriteSize %u bytes by RDMA Read at dialect 0x%04x, "
                  "read back equal", f.c.max_write, f.c.neg.dialect);
    cf_file_end(&f);
}

static void read_multiple(struct cf_ctx *ctx, struct cf_result *r)
{
    struct cf_file f;
    struct cf_buf b;
    struct smbd_buffer_desc d;
    uint64_t size, off = 0;
    uint32_t got = 0;
    unsigned reads = 0;
    int rc;

    if (cf_file_open(ctx, &f, CF_DIALECTS_ALL, "readmulti", r) < 0)
        goto out;
    size = 2ull * f.c.max_read + f.c.max_read / 2;
    if (cf_file_fill(&f, size, 3, r) < 0)
        goto out;
    if ((rc = cf_buf_new(&f, f.c.max_read, READ_ACCESS, &b)) < 0) {
        cf_result(r, CF_FAIL, "registering %u bytes failed: %s", f.c.max_read, strerror(-rc));
        goto out;
    }
    cf_buf_descs(&b, &d, 1);
    /* READs of the negotiated size until the server says END_OF_FILE */
    for (;;) {
        uint32_t want = size - off < f.c.max_read ? (uint32_t)(size - off) : f.c.max_read;

        rc = cf_smb2_read_chan(&f.c, f.fid, off, f.c.max_read, SMB2_CHANNEL_RDMA_V1, &d, 1, &got);
        if (rc == -EREMOTEIO && f.c.status == CF_STATUS_END_OF_FILE && off == size) {
            cf_result(r, CF_PASS, "%u channel READs of %u bytes to EOF at %llu, every byte "
                      "equal; the next READ: END_OF_FILE", reads, f.c.max_read,
                      (unsigned long long)size);
            break;
        }
        if (rc < 0) {
            cf_result(r, CF_FAIL, "channel READ %u at %llu: %s", reads + 1,
                      (unsigned long long)off, f.c.why);
            break;
        }
        if (got != want || cf_pattern_diff(b.mem, got, off, 3) >= 0) {
            cf_result(r, CF_FAIL, "channel READ %u at %llu: %u bytes (expected %u) or wrong data",
                      reads + 1, (unsigned long long)off, got, want);
            break;
        }
        reads++;
        off += got;
    }
    cf_buf_free(&f, &b);
out:
    cf_file_end(&f);
}

static void write_multiple(struct cf_ctx *ctx, struct cf_result *r)
{
    struct cf_file f;
    const unsigned writes = 3;
    uint64_t off = 0;

    if (cf_file_open(ctx, &f, CF_DIALECTS_ALL, "writemulti", r) < 0)
        goto out;
    for (unsigned i = 0; i < writes; i++, off += f.c.max_write)
        if (write_chan(&f, off, f.c.max_write, 1, 4, r) < 0)
            goto out;
    if (read_back(&f, off, 4, r) == 0)
        cf_result(r, CF_PASS, "%u channel WRITEs of %u bytes, read back over the channel equal",
                  writes, f.c.max_write);
out:
    cf_file_end(&f);
}

/* The most descriptors a 16-bit ChannelInfoLength holds, over one buffer each way. */
static void multiple_descriptors(struct cf_ctx *ctx, struct cf_result *r)
{
    struct cf_file f;
    uint32_t len;

    if (cf_file_open(ctx, &f, CF_DIALECTS_ALL, "descs", r) < 0)
        goto out;
    len = CHAN_MAX_DESCS * 256u;
    if (len > f.c.max_read)
        len = f.c.max_read;
    if (len > f.c.max_write)
        len = f.c.max_write;
    if (write_chan(&f, 0, len, CHAN_MAX_DESCS, 5, r) == 0 &&
        read_verify(&f, 0, len, CHAN_MAX_DESCS, 5, r) == 0)
        cf_result(r, CF_PASS, "WRITE and READ of %u bytes with %u descriptors each, equal", len,
                  (unsigned)CHAN_MAX_DESCS);
out:
    cf_file_end(&f);
}

/* ---- invalid descriptors: the READ must not succeed; the server keeps serving ---- */

enum bad_desc { BAD_OFFSET, BAD_LENGTH, BAD_TOKEN, BAD_DEREGISTERED };

#define BAD_LEN (64u * 1024u)

static void invalid_descriptor(struct cf_ctx *ctx, struct cf_result *r, enum bad_desc how)
{
    static const char *const tags[] = { "badoff", "badlen", "badtok", "baddereg" };
    struct cf_file f;
    struct cf_buf b;
    struct smbd_buffer_desc d;
    uint32_t len = how == BAD_LENGTH ? BAD_LEN + 1 : BAD_LEN, got = 0;
    char how_refused[200], why[200];
    int rc;

    if (cf_file_open(ctx, &f, CF_DIALECTS_ALL, tags[how], r) < 0 ||
        cf_file_fill(&f, BAD_LEN + 1, 6, r) < 0)
        goto out;
    if ((rc = cf_buf_new(&f, BAD_LEN, READ_ACCESS, &b)) < 0) {
        cf_result(r, CF_FAIL, "registering %u bytes failed: %s", BAD_LEN, strerror(-rc));
        goto out;
    }
    cf_buf_descs(&b, &d, 1);
    switch (how) {
    case BAD_OFFSET: d.offset = b.mr.addr + BAD_LEN + 1; break; /* past the region */
    case BAD_LENGTH: d.length = BAD_LEN + 1; break;            /* one byte too many */
    case BAD_TOKEN: d.token = b.mr.rkey + 1; break;             /* no such STag */
    case BAD_DEREGISTERED:
        cf_smbd_dereg(&f.c.sd, &b.mr); /* MS-SMBD 3.1.4.4: the token is gone */
        b.reg = 0;
        break;
    }
    rc = cf_smb2_read_chan(&f.c, f.fid, 0, len, SMB2_CHANNEL_RDMA_V1, &d, 1, &got);
    if (rc == 0)
        cf_result(r, CF_FAIL, "the READ succeeded (DataRemaining %u); expected an error or the "
                  "connection ended", got);
    else if (rc == -ETIMEDOUT)
        cf_result(r, CF_FAIL, "the server neither answered the READ nor ended the connection: %s",
                  f.c.why);
    else if (rc != -EREMOTEIO && rc != -ENOTCONN)
        cf_result(r, CF_FAIL, "%s", f.c.why);
    cf_buf_free(&f, &b);
    if (rc == -EREMOTEIO || rc == -ENOTCONN) {
        snprintf(how_refused, sizeof(how_refused), "%s", f.c.why);
        cf_file_end(&f);
        if (cf_still_serving(ctx, why, sizeof(why)) < 0)
            cf_result(r, CF_FAIL, "READ refused (%s), but then %s", how_refused, why);
        else
            cf_result(r, CF_PASS, "READ refused: %s; a new connection's channel READ served",
                      how_refused);
        return;
    }
out:
    cf_file_end(&f);
}

static void invalid_offset(struct cf_ctx *ctx, struct cf_result *r)
{
    invalid_descriptor(ctx, r, BAD_OFFSET);
}

static void invalid_length(struct cf_ctx *ctx, struct cf_result *r)
{
    invalid_descriptor(ctx, r, BAD_LENGTH);
}

static void invalid_token(struct cf_ctx *ctx, struct cf_result *r)
{
    invalid_descriptor(ctx, r, BAD_TOKEN);
}

static void invalid_deregistered(struct cf_ctx *ctx, struct cf_result *r)
{
    invalid_descriptor(ctx, r, BAD_DEREGISTERED);
}

static const struct cf_case cases[] = {
    { "BVT_Smb2OverRdmaChannel_ReadLargeFile", read_large_file },
    { "BVT_Smb2OverRdmaChannel_WriteLargeFile", write_large_file },
    { "Smb2OverRdmaChannel_ReadMultipleOperation", read_multiple },
    { "Smb2OverRdmaChannel_WriteMultipleOperation", write_multiple },
    { "Smb2OverRdmaChannel_ReadWriteMultipleBufferDescriptorList", multiple_descriptors },
    { "Smb2OverRdmaChannel_InvalidBufferDescriptor_Offset", invalid_offset },
    { "Smb2OverRdmaChannel_InvalidBufferDescriptor_Length", invalid_length },
    { "Smb2OverRdmaChannel_InvalidBufferDescriptor_Token", invalid_token },
    { "Smb2OverRdmaChannel_InvalidBufferDescriptor_DeregisteredBuffer", invalid_deregistered },
};

const struct cf_group cf_group_smb2_over_rdma = { "Smb2OverRdma", cases,
                                                  sizeof(cases) / sizeof(cases[0]) };
