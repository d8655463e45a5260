/* SPDX-License-Identifier: BSD-3-Clause */
/* conformance/cf_cases_multichannel.c — the Smb2Multichannel group: a signed session set
 * up over TCP (the server's SMB port) and a second channel bound to it over SMB Direct
 * (MS-SMB2 3.2.4.2.3.1, 3.3.5.5.2: a SESSION_SETUP with SMB2_SESSION_FLAG_BINDING signed
 * with Session.SigningKey, the channel's own signing key from that authentication, for
 * 3.1.1 over the binding's preauth hash), then a file written on one channel is read back
 * on the other and compared. Every request on either channel is signed and every response's
 * signature verified (a bad one fails the case naming it).
 *
 * As in the MS-SMBD test suite, the cases differ in where the TCP channel goes: to the
 * server's non-RDMA address ("DiffNicType": HOST as given, which an address map may send
 * elsewhere for SMB Direct) or to the RDMA address SMB Direct dials; on one host without a
 * map the two are the same address. The BVT case negotiates 3.0 as the suite does and
 * writes over TCP, reads over SMB Direct; the other negotiates the highest of 3.0, 3.0.2 and
 * 3.1.1 and goes the other way. The data moves inline on both channels: descriptors in a
 * signed request would end the connection at a keyless relay in front of a TCP server,
 * which passes the binding and inline signed messages through unchanged (the Smb2OverRdma
 * cases cover the RDMA channel). */
#include "cf_fixture.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sd_addr.h"

#define MC_SIZE (1024u * 1024u) /* the suite's LargeFileSizeInByte is of this order */
#define STATUS_NOT_SUPPORTED 0xC00000BBu

struct mc_case {
    const char *tag;
    const uint16_t *dialects;
    int n;
    int tcp_at_rdma;  /* the TCP channel at the RDMA address, not HOST's */
    int write_on_tcp; /* written over TCP, read over SMB Direct; else the other way */
};

static const uint16_t dialect_0300[] = { SMB2_DIALECT_0300 };
static const uint16_t dialects_3x[] = { SMB2_DIALECT_0300, SMB2_DIALECT_0302,
                                        CF_SMB2_DIALECT_0311 };

struct mc_run {
    struct cf_smb2 tcp, smbd;
    uint8_t fid[CF_SMB2_FILEID_SIZE];
    int open;
    char name[80], tcp_peer[SD_ADDR_STRLEN];
    uint8_t *w, *b;
};

/* The session over TCP with the test file open on it: 0, or -1 with r set. */
static int main_channel(struct cf_ctx *ctx, const struct mc_case *mc, struct mc_run *m,
                        struct cf_result *r)
{
    const struct sockaddr_storage *a = mc->tcp_at_rdma ? &ctx->t->tcp_rdma : &ctx->t->tcp_host;
    socklen_t alen = mc->tcp_at_rdma ? ctx->t->tcp_rdma_len : ctx->t->tcp_host_len;
    int rc;

    sd_addr_format((const struct sockaddr *)a, m->tcp_peer, sizeof(m->tcp_peer));
    rc = cf_smb2_connect_tcp(&m->tcp, ctx->t, (const struct sockaddr *)a, alen, mc->dialects,
                             mc->n, NULL);
    if (rc == -EREMOTEIO && m->tcp.status == STATUS_NOT_SUPPORTED && mc->n == 1)
        return cf_result(r, CF_SKIP, "the server does not offer dialect 0x%04x over TCP",
                         mc->dialects[0]), -1;
    if (rc == 0 && !(m->tcp.neg.capabilities & CF_SMB2_CAP_MULTI_CHANNEL))
        return cf_result(r, CF_SKIP, "the server does not offer multichannel at %s "
                         "(SMB2_GLOBAL_CAP_MULTI_CHANNEL not in its NEGOTIATE response)",
                         m->tcp_peer), -1;
    if (rc == 0)
        rc = cf_smb2_login_signed(&m->tcp, ctx->user, ctx->password);
    if (rc == 0)
        rc = cf_smb2_tree_connect(&m->tcp, ctx->share);
    if (rc == 0)
        rc = cf_smb2_create(&m->tcp, m->name, m->fid);
    if (rc < 0)
        return cf_result(r, CF_FAIL, "the TCP channel to %s: %s", m->tcp_peer, m->tcp.why), -1;
    m->open = 1;
    return 0;
}

/* The second channel over SMB Direct, bound to the session: 0, or -1 with r FAIL. */
static int bound_channel(struct cf_ctx *ctx, struct mc_run *m, struct cf_result *r)
{
    int rc = cf_smb2_connect(&m->smbd, ctx->t, &m->tcp.neg.dialect, 1, m->tcp.client_guid);

    if (rc == 0)
        rc = cf_smb2_bind(&m->smbd, &m->tcp, ctx->user, ctx->password);
    if (rc < 0)
        return cf_result(r, CF_FAIL, "the channel over SMB Direct: %s", m->smbd.why), -1;
    m->smbd.tree_id = m->tcp.tree_id;
    return 0;
}

/* MC_SIZE pattern bytes written on one channel, read back on the other: 0, or -1. */
static int cross_io(const struct mc_case *mc, struct mc_run *m, struct cf_result *r)
{
    struct cf_smb2 *wr = mc->write_on_tcp ? &m->tcp : &m->smbd;
    struct cf_smb2 *rd = mc->write_on_tcp ? &m->smbd : &m->tcp;
    const char *wname = mc->write_on_tcp ? "TCP" : "SMB Direct";
    const char *rname = mc->write_on_tcp ? "SMB Direct" : "TCP";
    size_t got = 0;

    m->w = malloc(MC_SIZE);
    m->b = malloc(MC_SIZE);
    if (!m->w || !m->b)
        return cf_result(r, CF_FAIL, "out of memory"), -1;
    cf_pattern(m->w, MC_SIZE, 0, 0x3C4A);
    if (cf_smb2_write(wr, m->fid, 0, m->w, MC_SIZE) < 0)
        return cf_result(r, CF_FAIL, "WRITE over %s: %s", wname, wr->why), -1;
    if (cf_smb2_read(rd, m->fid, 0, m->b, MC_SIZE, &got) < 0)
        return cf_result(r, CF_FAIL, "READ back over %s: %s", rname, rd->why), -1;
    if (got != MC_SIZE || memcmp(m->w, m->b, MC_SIZE) != 0)
        return cf_result(r, CF_FAIL, "%zu bytes read over %s differ from the %u written over %s",
                         got, rname, MC_SIZE, wname), -1;
    return 0;
}

static void two_channels(struct cf_ctx *ctx, struct cf_result *r, const struct mc_case *mc)
{
    struct mc_run *m = calloc(1, sizeof(*m));

    if (!m) {
        cf_result(r, CF_FAIL, "out of memory");
        return;
    }
    m->tcp.tcp = m->smbd.tcp = -1;
    snprintf(m->name, sizeof(m->name), "sdconf-%s-%s.bin", ctx->run_id, mc->tag);
    if (!ctx->user)
        cf_result(r, CF_SKIP, "binding a channel needs a signed session, which needs a user "
                  "(--user)");
    else if (main_channel(ctx, mc, m, r) == 0 && bound_channel(ctx, m, r) == 0 &&
             cross_io(mc, m, r) == 0)
        cf_result(r, CF_PASS, "dialect 0x%04x: session over TCP to %s, channel bound over SMB "
                  "Direct; %u bytes written over %s read back equal over %s; %u+%u signatures "
                  "verified", m->tcp.neg.dialect, m->tcp_peer, MC_SIZE,
                  mc->write_on_tcp ? "TCP" : "SMB Direct", mc->write_on_tcp ? "SMB Direct" : "TCP",
                  m->tcp.verified, m->smbd.verified);
    if (m->open && cf_smb2_close_file(&m->tcp, m->fid) < 0 && r->verdict == CF_PASS)
        cf_result(r, CF_FAIL, "CLOSE over TCP after the I/O: %s", m->tcp.why);
    cf_smb2_close(&m->smbd);
    cf_smb2_close(&m->tcp);
    free(m->w);
    free(m->b);
    free(m);
}

static void diff_nic_type(struct cf_ctx *ctx, struct cf_result *r)
{
    static const struct mc_case mc = { "mc-nic", dialect_0300, 1, 0, 1 };

    two_channels(ctx, r, &mc);
}

static void diff_transport(struct cf_ctx *ctx, struct cf_result *r)
{
    static const struct mc_case mc = { "mc-rnic", dialects_3x, 3, 1, 0 };

    two_channels(ctx, r, &mc);
}

static const struct cf_case cases[] = {
    { "BVT_Smb2MultiChannel_2Channels_DiffNicTypeDiffTransport", diff_nic_type },
    { "Smb2Multichannel_2Channels_DiffTransport", diff_transport },
};

const struct cf_group cf_group_smb2_multichannel = { "Smb2Multichannel", cases,
                                                     sizeof(cases) / sizeof(cases[0]) };
