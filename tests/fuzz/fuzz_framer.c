/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/fuzz/fuzz_framer.c — libFuzzer target for the Direct-TCP framer: the input is a
 * small program that builds a byte stream (raw bytes, valid small and large messages)
 * and a chunking pattern; the stream goes through the framer in those chunks and every
 * result is compared with a simple reference parse of the whole stream.
 * fuzz-sources: transport/bridge/bridge_framer.c transport/bridge/bridge_buf.c
 * fuzz-sources: transport/bridge/bridge_pool.c */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bridge_framer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define STREAM_MAX (1u << 20)   /* keeps one execution fast */
#define CHUNKS_MAX 16

static const size_t limits[] = { 0, 100, 70000, 1u << 20, BRIDGE_FRAMER_MAX_MSG };

struct input {
    const uint8_t *p;
    size_t left;
};

static unsigned take(struct input *in)
{
    if (!in->left)
        return 0;
    in->left--;
    return *in->p++;
}

struct program {
    uint8_t *stream;
    size_t len;
    size_t chunk[CHUNKS_MAX];
    size_t nchunks;
};

/* Message bodies are slices of a fixed pseudo-random pattern, each starting at a
 * different phase so that misplaced bytes show. */
static uint8_t pattern[STREAM_MAX + 256];

static void append_message(struct program *pg, size_t len)
{
    if (pg->len + 4 + len > STREAM_MAX)
        return;
    bridge_framer_prefix((uint32_t)len, pg->stream + pg->len);
    memcpy(pg->stream + pg->len + 4, pattern + pg->len % 251, len);
    pg->len += 4 + len;
}

/* Ops: 0 raw bytes from the input, 1 small message, 2 large message, 3 chunk size. */
static void build(struct input *in, struct program *pg)
{
    while (in->left) {
        unsigned op = take(in), n;
        switch (op & 3) {
        case 0:
            n = take(in);
            if (n > in->left)
                n = (unsigned)in->left;
            if (pg->len + n <= STREAM_MAX) {
                memcpy(pg->stream + pg->len, in->p, n);
                pg->len += n;
            }
            in->p += n, in->left -= n;
            break;
        case 1:
            append_message(pg, op >> 2 | take(in) << 6);
            break;
        case 2:
            n = take(in);
            append_message(pg, (size_t)(n | take(in) << 8 | (op >> 2 & 0x7) << 16) + 1);
            break;
        default:
            n = take(in);
            if (pg->nchunks < CHUNKS_MAX)
                pg->chunk[pg->nchunks++] = 1 + (n | (size_t)(op >> 2) << 8) * 37;
        }
    }
}

/* Expected outcome: count complete messages, then either a malformed prefix (error)
 * or an incomplete tail starting at end_pos. */
struct expect {
    size_t count, end_pos;
    int error;
};

static void reference(const struct program *pg, size_t max, struct expect *e)
{
    size_t pos = 0;
    memset(e, 0, sizeof(*e));
    while (pos < pg->len) {
        const uint8_t *b = pg->stream + pos;
        size_t l;
        if (b[0] != 0) {
            e->error = 1;
            break;
        }
        if (pg->len - pos < 4)
            break;
        l = (size_t)b[1] << 16 | (size_t)b[2] << 8 | b[3];
        if (l > max) {
            e->error = 1;
            break;
        }
        if (pg->len - pos < 4 + l)
            break;
        e->count++;
        pos += 4 + l;
    }
    e->end_pos = pos;
}

static void run(const struct program *pg, size_t max, const struct expect *e)
{
    struct bridge_framer f;
    size_t pos = 0, ci = 0, popped = 0, ref_pos = 0, min_chunk = pg->len / 1024;
    int failed = 0;

    if (bridge_framer_init(&f, max) != 0)
        abort();
    while (pos < pg->len && !failed) {
        uint8_t *dst;
        size_t room, n;
        const uint8_t *msg;
        size_t len;
        const char *why = NULL;
        int r;

        if (bridge_framer_space(&f, &dst, &room) != 0 || room == 0)
            abort();
        n = pg->nchunks ? pg->chunk[ci++ % pg->nchunks] : room;
        if (n < min_chunk)      /* at most ~1024 reads per execution */
            n = min_chunk;
        if (n > room)
            n = room;
        if (n > pg->len - pos)
            n = pg->len - pos;
        memcpy(dst, pg->stream + pos, n);
        bridge_framer_commit(&f, n);
        pos += n;
        while ((r = bridge_framer_pop(&f, &msg, &len, &why)) == 1) {
            const uint8_t *b = pg->stream + ref_pos;
            if (popped >= e->count || len != ((size_t)b[1] << 16 | (size_t)b[2] << 8 | b[3]) ||
                memcmp(msg, b + 4, len) != 0)
                abort();
            ref_pos += 4 + len;
            popped++;
        }
        if (r < 0) {
            if (!e->error || popped != e->count || !why)
                abort();
            failed = 1;
        } else if (r != 0) {
            abort();
        }
    }
    if (!failed && (e->error || popped != e->count ||
                    bridge_framer_buffered(&f) != pg->len - e->end_pos))
        abort();
    bridge_framer_destroy(&f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static uint8_t stream[STREAM_MAX];
    struct input in = { data, size };
    struct program pg = { .stream = stream };
    struct expect e;
    size_t max = limits[take(&in) % (sizeof(limits) / sizeof(limits[0]))];

    if (!pattern[0]) {
        uint32_t x = 0x12345678;
        for (size_t i = 0; i < sizeof(pattern); i++) {
            x = x * 1103515245u + 12345u;
            pattern[i] = (uint8_t)(x >> 24);
        }
        pattern[0] = 1;
    }

    build(&in, &pg);
    reference(&pg, max, &e);
    run(&pg, max, &e);
    return 0;
}
