/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/bridge/bridge_framer.c — Direct-TCP framer: splits the SMB2 stream into
 * messages in place inside one owned buffer and builds the 4-byte prefix (MS-SMB2 2.1). */
#include "bridge_framer.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bridge_pool.h"

int bridge_framer_init(struct bridge_framer *f, size_t max_msg)
{
    memset(f, 0, sizeof(*f));
    if (max_msg > BRIDGE_FRAMER_MAX_MSG)
        return -EINVAL;
    bridge_buf_init(&f->buf, BRIDGE_FRAMER_BASE_CAP, BRIDGE_FRAMER_BASE_CAP);
    f->max_msg = max_msg;
    return 0;
}

void bridge_framer_destroy(struct bridge_framer *f)
{
    bridge_buf_free(&f->buf);
    memset(f, 0, sizeof(*f));
}

size_t bridge_framer_buffered(const struct bridge_framer *f)
{
    return bridge_buf_len(&f->buf);
}

void bridge_framer_prefix(uint32_t len, uint8_t out[4])
{
    out[0] = (uint8_t)(len >> 24);
    out[1] = (uint8_t)(len >> 16);
    out[2] = (uint8_t)(len >> 8);
    out[3] = (uint8_t)len;
}

/* Validates the prefix at head as far as it has arrived. Returns 1 with *total (prefix
 * plus message) when the whole prefix is known, 0 when it is incomplete, -EPROTO when
 * the stream is malformed (recorded in f->error). */
static int parse_prefix(struct bridge_framer *f, size_t *total)
{
    size_t n = bridge_buf_len(&f->buf);
    const uint8_t *p;
    size_t len;

    if (f->error)
        return -EPROTO;
    if (n == 0)
        return 0;
    p = bridge_buf_head(&f->buf);
    if (p[0] != 0) {
        f->error = "Direct-TCP prefix does not start with a zero byte (MS-SMB2 2.1)";
        return -EPROTO;
    }
    if (n < BRIDGE_FRAMER_PREFIX_SIZE)
        return 0;
    len = (size_t)p[1] << 16 | (size_t)p[2] << 8 | p[3];
    if (len > f->max_msg) {
        f->error = "Direct-TCP message length exceeds the configured maximum";
        f->too_long = len;
        return -EPROTO;
    }
    *total = BRIDGE_FRAMER_PREFIX_SIZE + len;
    return 1;
}

int bridge_framer_space(struct bridge_framer *f, uint8_t **dst, size_t *len)
{
    size_t total = 0, held, want;
    int r;

    if (f->error)
        return -EPROTO;
    bridge_buf_trim(&f->buf);
    r = parse_prefix(f, &total);
    if (r < 0)
        return r;
    held = bridge_buf_len(&f->buf);
    /* A complete message waiting is left in place: it must be popped first. */
    if (r == 1 && held >= total) {
        *dst = f->buf.data + f->buf.tail;
        *len = bridge_buf_room(&f->buf);
        return 0;
    }
    /* Room for the rest of the message, contiguous with its start (one read can complete
     * it); a full read while the prefix is incomplete or little is held. */
    want = r == 1 ? total - held : BRIDGE_FRAMER_MIN_ROOM;
    if (held <= BRIDGE_FRAMER_MIN_ROOM && want < BRIDGE_FRAMER_MIN_ROOM)
        want = BRIDGE_FRAMER_MIN_ROOM;
    if (!(*dst = bridge_buf_reserve(&f->buf, want)))
        return -ENOMEM;
    *len = bridge_buf_room(&f->buf);
    if (r == 1 && total - BRIDGE_FRAMER_PREFIX_SIZE >= BRIDGE_POOL_MIN)
        *len = want; /* a large message: nothing after it shares its buffer */
    return 0;
}

void bridge_framer_commit(struct bridge_framer *f, size_t n)
{
    bridge_buf_commit(&f->buf, n);
}

int bridge_framer_peek(struct bridge_framer *f, const uint8_t **msg, size_t *len, const char **why)
{
    size_t total = 0;
    int r = parse_prefix(f, &total);

    if (r < 0) {
        *why = f->error;
        return r;
    }
    if (r == 0 || bridge_buf_len(&f->buf) < total)
        return 0;
    *msg = bridge_buf_head(&f->buf) + BRIDGE_FRAMER_PREFIX_SIZE;
    *len = total - BRIDGE_FRAMER_PREFIX_SIZE;
    return 1;
}

void bridge_framer_drop(struct bridge_framer *f, size_t len)
{
    bridge_buf_consume(&f->buf, BRIDGE_FRAMER_PREFIX_SIZE + len);
}

int bridge_framer_take(struct bridge_framer *f, size_t len, uint8_t **mem, size_t *cap)
{
    return bridge_buf_detach(&f->buf, BRIDGE_FRAMER_PREFIX_SIZE + len, mem, cap);
}

int bridge_framer_pop(struct bridge_framer *f, const uint8_t **msg, size_t *len, const char **why)
{
    int r = bridge_framer_peek(f, msg, len, why);

    if (r > 0)
        bridge_framer_drop(f, *len);
    return r;
}
