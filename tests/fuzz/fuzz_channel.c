/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/fuzz/fuzz_channel.c — libFuzzer target for the READ/WRITE RDMA channel core
 * (transport/channel): the input is a program of steps, each handing one SMB2 message
 * (raw bytes, or a READ/WRITE request or a response rendered from fuzzed fields by the
 * th_smb2 helpers and then patched) to the client role's plan_request or on_response
 * or the server role's, or changing the roles' dialect, threshold and MaxReadWriteSize.
 * Every accepted plan is tracked and built into an exactly-sized heap buffer (ASan sees
 * any overrun) that is sometimes too small. Checked: pointers the core returns lie
 * inside the message; a builder fails only when out is too small; a client rewrite is
 * a channel request the server role accepts at the same dialect; after an error result
 * the role's I/Os are all released; every cookie comes back exactly once and nothing
 * leaks.
 * fuzz-sources: transport/channel/smb2_wire.c transport/channel/smb2_sign.c
 * fuzz-sources: transport/channel/chan_*.c
 * fuzz-sources: transport/smbd/smbd_wire.c tests/unit/th_smb2.c
 * fuzz-libs: -lnettle */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "chan_client_build.h"
#include "chan_desc.h"
#include "chan_server_build.h"
#include "sd_bytes.h"
#include "smb2_wire.h"
#include "th_smb2.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MSG_MAX   (TH_RW_FIXED + 70000u)
#define TOKEN(id) (0x100u + (uint32_t)(id))   /* the token an I/O of MessageId id uses */

struct input {
    const uint8_t *p;
    size_t n;
};

static uint32_t take(struct input *in, int bytes)
{
    uint32_t v = 0;

    for (int i = 0; i < bytes && in->n; i++, in->p++, in->n--)
        v |= (uint32_t)*in->p << (8 * i);
    return v;
}

struct roles {
    struct chan_client cc;
    struct chan_server cs;
    int cookies;                 /* cookies handed out and not yet taken back */
};

static uint8_t msg[MSG_MAX];

static void drain(struct chan_table *t, int *cookies)
{
    struct chan_released r;

    while (chan_table_take_released(t, &r)) {
        if (!r.cookie)
            abort();
        free(r.cookie);
        (*cookies)--;
    }
}

static void teardown(struct chan_table *t, int *cookies)
{
    chan_table_release_all(t);
    drain(t, cookies);
}

/* out of exactly outlen bytes, outlen fuzzed around need; checks the builder's answer. */
static size_t out_len(struct input *in, size_t need)
{
    size_t slack = take(in, 1) % 4;

    return slack == 0 && need ? need - 1 : need + slack - 1;
}

static void check_built(int got, size_t need, size_t outlen)
{
    if (outlen >= need ? got != (int)need : got != -1)
        abort();
}

/* A READ or WRITE request from fuzzed fields, maybe with channel information. */
static size_t render_request(struct input *in)
{
    struct th_hdr h = { .command = take(in, 1) & 1 ? SMB2_WRITE : SMB2_READ,
                        .flags = take(in, 1) & 0x0C, .message_id = take(in, 1) % 8 };
    struct th_rw rw = { .length = take(in, 4) % 70001, .channel = take(in, 1) % 4 };
    size_t n = take(in, 1) % 4, len;

    if (rw.channel && n) {
        rw.info_offset = TH_RW_FIXED;
        rw.info_length = (uint16_t)(16 * n);
        rw.remaining = h.command == SMB2_WRITE ? rw.length : 0;
        if (h.command == SMB2_WRITE)
            rw.length = 0;
    } else if (h.command == SMB2_WRITE) {
        rw.data_offset = TH_RW_FIXED;
    }
    len = h.command == SMB2_WRITE ? th_smb2_write_req(msg, &h, &rw)
                                  : th_smb2_read_req(msg, &h, &rw);
    for (size_t i = 0; rw.info_length && i < n; i++)
        th_smb2_desc(msg + TH_RW_FIXED + 16 * i, 0x1000 * i, TOKEN(h.message_id),
                     take(in, 4) % 40000);
    if (rw.info_length)
        len = TH_RW_FIXED + rw.info_length;
    else if (h.command == SMB2_WRITE)
        len += rw.length;
    return len;
}

/* One response (READ, WRITE, ERROR, interim, NEGOTIATE) at b from fuzzed fields. */
static size_t render_one_response(struct input *in, uint8_t *b, size_t room)
{
    static const uint32_t statuses[] = { 0, 0x103, 0x80000005, 0xC0000011, 0xC0000120 };
    static const uint16_t dialects[] = { 0x0202, 0x0210, 0x02FF, 0x0300, 0x0302, 0x0311 };
    struct th_hdr h = { .status = statuses[take(in, 1) % 5], .flags = take(in, 1) & 0x0A,
                        .message_id = take(in, 1) % 8 };
    uint32_t dlen, rem;
    uint8_t doff;

    switch (take(in, 1) % 5) {
    case 0:
        h.command = SMB2_READ;
        doff = (uint8_t)take(in, 1);
        dlen = take(in, 4) % 70001;
        rem = take(in, 4) % 70001;
        th_smb2_read_resp(b, &h, doff, dlen, rem);
        return dlen + 80 <= room ? 80 + dlen : room;
    case 1:
        h.command = SMB2_WRITE;
        return th_smb2_write_resp(b, &h, take(in, 4));
    case 2:
        h.command = SMB2_READ;
        return th_smb2_error_resp(b, &h);
    case 3:
        return th_smb2_interim_resp(b, h.message_id);
    default:
        return th_smb2_negotiate_resp(b, dialects[take(in, 1) % 6]);
    }
}

/* A response, or two chained (the first padded to 8 bytes). */
static size_t render_response(struct input *in)
{
    size_t len = render_one_response(in, msg, MSG_MAX), next;

    if (!(take(in, 1) & 1) || len > 1024)
        return len;
    next = (len + 7) & ~(size_t)7;
    memset(msg + len, 0, next - len);
    sd_put_le32(msg + 20, (uint32_t)next);
    return next + render_one_response(in, msg + next, 1024);
}

/* Raw bytes, or a rendering, then up to two byte patches. */
static size_t message(struct input *in, int response)
{
    size_t len;

    if (take(in, 1) & 1) {
        len = take(in, 2) % 4096;
        len = len < in->n ? len : in->n;
        memcpy(msg, in->p, len);
        in->p += len;
        in->n -= len;
    } else {
        len = response ? render_response(in) : render_request(in);
    }
    for (int k = take(in, 1) % 3; k > 0 && len; k--) {
        size_t at = take(in, 2) % len;

        msg[at] = (uint8_t)take(in, 1);
    }
    return len;
}

/* A client rewrite must be a valid channel request for a server at its dialect. */
static void server_accepts(const struct chan_client *cc, const struct chan_client_plan *plan,
                           const uint8_t *req, size_t len)
{
    struct chan_server cs;
    struct chan_server_plan sp;

    chan_server_init(&cs, cc->max_io);
    cs.dialect = cc->dialect;
    if (chan_server_plan_request(&cs, req, len, &sp) != 0 || sp.kind != plan->kind ||
        sp.size != plan->length || sp.message_id != plan->message_id ||
        sp.invalidate != (plan->channel == SMB2_CHANNEL_RDMA_V1_INVALIDATE))
        abort();
    chan_server_fini(&cs);
}

static void client_request(struct roles *r, struct input *in)
{
    size_t len = message(in, 0), need, outlen;
    struct chan_client_plan plan;
    struct smbd_buffer_desc d;
    uint8_t *out;
    void *cookie;
    int got;

    if (chan_client_plan_request(&r->cc, msg, len, &plan) == CHAN_PASS)
        return;
    if (plan.kind == CHAN_WRITE &&
        (plan.data < msg + TH_RW_FIXED || plan.data + plan.length > msg + len))
        abort();
    d = (struct smbd_buffer_desc){ .offset = 0x1000, .token = TOKEN(plan.message_id),
                                   .length = plan.length };
    need = CHAN_REQUEST_SIZE(1);
    outlen = out_len(in, need);
    out = malloc(outlen ? outlen : 1);
    if (!out)
        abort();
    got = plan.kind == CHAN_WRITE
              ? chan_build_write_request(msg, len, &plan, &d, 1, out, outlen)
              : chan_build_read_request(msg, len, &plan, &d, 1, out, outlen);
    check_built(got, need, outlen);
    if (got > 0)
        server_accepts(&r->cc, &plan, out, (size_t)got);
    free(out);
    cookie = malloc(1);
    if (!cookie)
        abort();
    if (chan_client_track(&r->cc, &plan, &d, 1, cookie) == 0)
        r->cookies++;
    else
        free(cookie);
}

static void client_response(struct roles *r, struct input *in)
{
    uint32_t pick = take(in, 1) % 10;
    uint32_t token = pick < 8 ? TOKEN(pick) : pick == 8 ? 0x999 : 0;
    size_t len = message(in, 1), outlen;
    struct chan_client_result res;
    uint8_t *out;

    chan_client_on_response(&r->cc, msg, len, token, &res);
    if (res.action == CHAN_CLIENT_ERROR) {
        if (!res.why)
            abort();
        teardown(&r->cc.ios, &r->cookies);
        return;
    }
    if (res.action == CHAN_CLIENT_READ_DONE) {
        outlen = out_len(in, SMB2_READ_RESP_FIXED);
        out = malloc(outlen ? outlen : 1);
        if (!out || !res.cookie)
            abort();
        check_built(chan_build_read_response(msg, len, res.bytes, out, outlen),
                    SMB2_READ_RESP_FIXED, outlen);
        free(out);
    }
    drain(&r->cc.ios, &r->cookies);
}

static void server_request(struct roles *r, struct input *in)
{
    size_t len = message(in, 0), need, outlen;
    struct chan_server_plan plan;
    const struct chan_io *io;
    uint8_t *out;
    void *cookie;
    int err = chan_server_plan_request(&r->cs, msg, len, &plan);

    if (err) {
        if (!plan.why || plan.kind != CHAN_PASS)
            abort();
        return;
    }
    if (plan.kind == CHAN_PASS)
        return;
    if (plan.descs < msg + TH_RW_FIXED || plan.ndescs == 0 || plan.ndescs > CHAN_MAX_DESCS ||
        plan.descs + 16 * plan.ndescs > msg + len || plan.size > r->cs.max_io)
        abort();
    need = plan.kind == CHAN_WRITE ? TH_RW_FIXED : TH_RW_FIXED + 1;
    outlen = out_len(in, need);
    out = malloc(outlen ? outlen : 1);
    if (!out)
        abort();
    check_built(plan.kind == CHAN_WRITE ? chan_build_inline_write(msg, len, &plan, out, outlen)
                                        : chan_build_inline_read(msg, len, &plan, out, outlen),
                need, outlen);
    free(out);
    cookie = malloc(1);
    if (!cookie)
        abort();
    if (chan_server_track(&r->cs, &plan, cookie, &io) == 0) {
        r->cookies++;
        if (io->ndescs != plan.ndescs || io->length != plan.size)
            abort();
    } else {
        free(cookie);
    }
}

static void server_response(struct roles *r, struct input *in)
{
    size_t len = message(in, 1), outlen;
    struct chan_server_result res;
    uint8_t *out;

    chan_server_on_response(&r->cs, msg, len, &res);
    if (res.action == CHAN_SERVER_ERROR) {
        if (!res.why)
            abort();
        teardown(&r->cs.ios, &r->cookies);
        return;
    }
    if (res.action == CHAN_SERVER_WRITE_DATA) {
        if (!res.io || res.io->kind != CHAN_READ || res.data_len > res.io->length ||
            (res.data_len && (res.data < msg + SMB2_READ_RESP_FIXED ||
                              res.data + res.data_len > msg + len)))
            abort();
        outlen = out_len(in, SMB2_READ_RESP_FIXED);
        out = malloc(outlen ? outlen : 1);
        if (!out)
            abort();
        check_built(chan_build_channel_read_response(msg, len, res.data_len, out, outlen),
                    SMB2_READ_RESP_FIXED, outlen);
        free(out);
    }
    drain(&r->cs.ios, &r->cookies);
}

static void configure(struct roles *r, struct input *in)
{
    static const uint16_t dialects[] = { 0, 0x0202, 0x0210, 0x0300, 0x0302, 0x0311 };

    r->cc.dialect = dialects[take(in, 1) % 6];
    r->cc.threshold = take(in, 2);
    r->cc.max_io = take(in, 4) % 140000;
    r->cs.dialect = dialects[take(in, 1) % 6];
    r->cs.max_io = take(in, 4) % 140000;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct input in = { data, size };
    struct roles r = { .cookies = 0 };

    chan_client_init(&r.cc, 4096, 1u << 16);
    chan_server_init(&r.cs, 1u << 16);
    r.cc.dialect = r.cs.dialect = 0x0302;
    for (int steps = 0; in.n && steps < 64; steps++) {
        switch (take(&in, 1) % 5) {
        case 0: client_request(&r, &in); break;
        case 1: client_response(&r, &in); break;
        case 2: server_request(&r, &in); break;
        case 3: server_response(&r, &in); break;
        default: configure(&r, &in); break;
        }
    }
    teardown(&r.cc.ios, &r.cookies);
    teardown(&r.cs.ios, &r.cookies);
    if (r.cookies != 0)
        abort();
    chan_client_fini(&r.cc);
    chan_server_fini(&r.cs);
    return 0;
}
