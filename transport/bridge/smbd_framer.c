/* transport/bridge/smbd_framer.c — Direct-TCP framer: splits the SMB2 stream into messages in
 * place inside one owned buffer and builds the 4-byte prefix (MS-SMB2 2.1). */
#include "smbd_framer.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define ALLOC_ALIGN 4096u

int smbd_framer_init(struct smbd_framer *f, size_t max_msg)
{
    memset(f, 0, sizeof(*f));
    if (max_msg > SMBD_FRAMER_MAX_MSG)
        return -EINVAL;
    f->max_msg = max_msg;
    return 0;
}

void smbd_framer_destroy(struct smbd_framer *f)
{
    free(f->buf);
    memset(f, 0, sizeof(*f));
}

size_t smbd_framer_buffered(const struct smbd_framer *f)
{
    return f->tail - f->head;
}

void smbd_framer_prefix(uint32_t len, uint8_t out[4])
{
    out[0] = (uint8_t)(len >> 24);
    out[1] = (uint8_t)(len >> 16);
    out[2] = (uint8_t)(len >> 8);
    out[3] = (uint8_t)len;
}

/* Validates the prefix at head as far as it has arrived. Returns 1 with *total (prefix
 * plus message) when the whole prefix is known, 0 when it is incomplete, -EPROTO when
 * the stream is malformed (recorded in f->error). */
static int parse_prefix(struct smbd_framer *f, size_t *total)
{
    size_t n = f->tail - f->head;
    const uint8_t *p;
    size_t len;

    if (f->error)
        return -EPROTO;
    if (n == 0)
        return 0;           /* f->buf may still be NULL */
    p = f->buf + f->head;
    if (p[0] != 0) {
        f->error = "Direct-TCP prefix does not start with a zero byte (MS-SMB2 2.1)";
        return -EPROTO;
    }
    if (n < SMBD_FRAMER_PREFIX_SIZE)
        return 0;
    len = (size_t)p[1] << 16 | (size_t)p[2] << 8 | p[3];
    if (len > f->max_msg) {
        f->error = "Direct-TCP message length exceeds the configured maximum";
        f->too_long = len;
        return -EPROTO;
    }
    *total = SMBD_FRAMER_PREFIX_SIZE + len;
    return 1;
}

/* Moves the unpopped bytes into a new buffer of cap bytes (they are copied once). */
static int reallocate(struct smbd_framer *f, size_t cap)
{
    size_t n = f->tail - f->head;
    uint8_t *nb = malloc(cap);

    if (!nb)
        return -ENOMEM;
    if (n)
        memcpy(nb, f->buf + f->head, n);
    free(f->buf);
    f->buf = nb;
    f->cap = cap;
    f->head = 0;
    f->tail = n;
    return 0;
}

static void compact(struct smbd_framer *f)
{
    size_t n = f->tail - f->head;

    memmove(f->buf, f->buf + f->head, n);
    f->head = 0;
    f->tail = n;
}

/* An empty buffer is rewound for free; a grown one is given back once traffic is small
 * again, so idle connections keep only the base buffer. */
static int rewind_empty(struct smbd_framer *f)
{
    f->head = f->tail = 0;
    if (!f->buf)
        return reallocate(f, SMBD_FRAMER_BASE_CAP);
    if (f->cap > SMBD_FRAMER_BASE_CAP &&
        f->last_len + SMBD_FRAMER_PREFIX_SIZE <= SMBD_FRAMER_BASE_CAP) {
        uint8_t *nb = realloc(f->buf, SMBD_FRAMER_BASE_CAP);
        if (nb) {               /* on failure the big buffer simply stays */
            f->buf = nb;
            f->cap = SMBD_FRAMER_BASE_CAP;
        }
    }
    return 0;
}

/* Makes room for the rest of the message being assembled (total bytes including the
 * prefix, 0 while its prefix is incomplete), contiguous with its start, or else for a
 * full read. Compacts also when that is cheap and the free room is below a full read. */
static int make_room(struct smbd_framer *f, size_t total)
{
    size_t n = f->tail - f->head;
    size_t need = total ? total - n : SMBD_FRAMER_MIN_ROOM;
    size_t free_room = f->cap - f->tail;

    if (f->head > 0 && (free_room < need ||
                        (free_room < SMBD_FRAMER_MIN_ROOM && n <= SMBD_FRAMER_MIN_ROOM)))
        compact(f);
    if (f->cap - f->tail < need) {
        size_t cap = total + SMBD_FRAMER_MIN_ROOM;
        return reallocate(f, (cap + ALLOC_ALIGN - 1) / ALLOC_ALIGN * ALLOC_ALIGN);
    }
    return 0;
}

int smbd_framer_space(struct smbd_framer *f, uint8_t **dst, size_t *len)
{
    size_t total = 0;
    int r;

    if (f->error)
        return -EPROTO;
    if (f->tail == f->head && (r = rewind_empty(f)) < 0)
        return r;
    r = parse_prefix(f, &total);
    if (r < 0)
        return r;
    /* A complete message waiting is left in place: it must be popped first. */
    if (r == 0 || f->tail - f->head < total) {
        if ((r = make_room(f, total)) < 0)
            return r;
    }
    *dst = f->buf + f->tail;
    *len = f->cap - f->tail;
    return 0;
}

void smbd_framer_commit(struct smbd_framer *f, size_t n)
{
    f->tail += n;
}

int smbd_framer_pop(struct smbd_framer *f, const uint8_t **msg, size_t *len, const char **why)
{
    size_t total = 0;
    int r = parse_prefix(f, &total);

    if (r < 0) {
        *why = f->error;
        return r;
    }
    if (r == 0 || f->tail - f->head < total)
        return 0;
    *msg = f->buf + f->head + SMBD_FRAMER_PREFIX_SIZE;
    *len = total - SMBD_FRAMER_PREFIX_SIZE;
    f->head += total;
    f->last_len = *len;
    return 1;
}
