/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/bridge/bridge_framer.h — Direct-TCP framing of the SMB2 byte stream (MS-SMB2 2.1):
 * every message is prefixed by 0x00 and a 24-bit big-endian length. The framer owns one
 * growable buffer (bridge_buf): the caller recv()s straight into its free space and pops
 * complete messages in place, so stream bytes are copied at most once (when a partial
 * message is moved to the front) and one recv() can bring in many messages.
 *
 * Memory: the buffer is allocated on first use at BRIDGE_FRAMER_BASE_CAP bytes, grows to
 * hold one whole large message, and shrinks back once it is empty and the last message
 * popped was small, so an idle connection holds only the base buffer. */
#ifndef SMBDIRECT_BRIDGE_FRAMER_H
#define SMBDIRECT_BRIDGE_FRAMER_H

#include <stddef.h>
#include <stdint.h>

#include "bridge_buf.h"

#define BRIDGE_FRAMER_PREFIX_SIZE 4u
#define BRIDGE_FRAMER_MAX_MSG     0xFFFFFFu       /* largest 24-bit length */
#define BRIDGE_FRAMER_MIN_ROOM    (64u * 1024)    /* free space offered per read when useful */
#define BRIDGE_FRAMER_BASE_CAP    (128u * 1024)   /* buffer size of an idle connection */

struct bridge_framer {
    struct bridge_buf buf; /* stream bytes not yet popped (prefixes included) */
    size_t max_msg;        /* largest upper-layer message accepted */
    size_t too_long;       /* with error: the length of a message over max_msg, else 0 */
    const char *error;     /* set once the stream is malformed; sticky */
};

/* max_msg is the largest upper-layer message (without prefix), <= BRIDGE_FRAMER_MAX_MSG.
 * Returns 0 or -EINVAL. Allocates nothing. */
int  bridge_framer_init(struct bridge_framer *f, size_t max_msg);
void bridge_framer_destroy(struct bridge_framer *f);

/* Space to read into at *dst, *len bytes: at least all the bytes the message being
 * assembled still lacks (one read can complete it, however big), and at least
 * BRIDGE_FRAMER_MIN_ROOM while the next prefix is incomplete. For a message of
 * BRIDGE_POOL_MIN bytes or more, exactly what it lacks: it then ends where the buffer's
 * bytes end, and bridge_framer_take hands the buffer over without moving a byte. *len is
 * 0 only while a complete message waits to be popped. Invalidates messages returned by
 * earlier pops. Returns 0, -ENOMEM, or -EPROTO once the stream is known to be malformed. */
int  bridge_framer_space(struct bridge_framer *f, uint8_t **dst, size_t *len);
/* n (<= the *len of the last bridge_framer_space) bytes were written at its *dst. */
void bridge_framer_commit(struct bridge_framer *f, size_t n);
/* 1 with *msg and *len set to the next complete message (prefix stripped; may be empty),
 * valid until the next bridge_framer_space(); 0 when more bytes are needed; -EPROTO with
 * *why set when the prefix's first byte is not 0 or its length exceeds max_msg. The
 * error is sticky: later calls return it again. */
int  bridge_framer_pop(struct bridge_framer *f, const uint8_t **msg, size_t *len,
                       const char **why);
/* pop in two steps, for a caller that may have to leave the message for later: peek
 * returns what pop would without taking the message; drop(len) then takes the message
 * peek returned (len its *len). While a peeked message is left in place,
 * bridge_framer_space offers no room (*len 0). */
int  bridge_framer_peek(struct bridge_framer *f, const uint8_t **msg, size_t *len,
                        const char **why);
void bridge_framer_drop(struct bridge_framer *f, size_t len);
/* drop(len) that hands the buffer holding the peeked message over to the caller
 * (bridge_buf_detach: *mem, *cap; the message stays where peek returned it); the framer
 * goes on in a new buffer. 0 or -ENOMEM (nothing changed). */
int  bridge_framer_take(struct bridge_framer *f, size_t len, uint8_t **mem, size_t *cap);
/* Committed bytes not yet popped (prefixes included). */
size_t bridge_framer_buffered(const struct bridge_framer *f);
/* The 4-byte prefix for a message of len bytes: len as 32-bit big-endian, so any len
 * over BRIDGE_FRAMER_MAX_MSG yields a non-zero first byte that every receiver rejects. */
void bridge_framer_prefix(uint32_t len, uint8_t out[4]);

#endif
