/* SPDX-License-Identifier: BSD-3-Clause */
/* conformance/cf_smbd_int.h — private to cf_smbd.c (connect, completions, receiving)
 * and cf_smbd_send.c (sending): the work request ids and what each calls of the other. */
#ifndef SMBDIRECT_CF_SMBD_INT_H
#define SMBDIRECT_CF_SMBD_INT_H

#include <stdint.h>

#include "cf_smbd.h"

/* A work request's id: its kind, and the index of its receive buffer or send slot. */
#define WR_RECV (1ull << 32)
#define WR_SEND (2ull << 32)
#define WR_KIND(id) ((id) & ~0xffffffffull)
#define WR_INDEX(id) ((uint32_t)(id))

/* Records the session's first failure in s->why; returns err. */
int cf_smbd_fail(struct cf_smbd *s, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Handles what is complete; when nothing was, waits for the provider's fd until
 * deadline, then handles that. Returns completions handled, or -ETIMEDOUT. */
int cf_smbd_pump(struct cf_smbd *s, uint64_t deadline);
/* Keeps the peer able to send: an empty message when it asked for one (keepalive,
 * 3.1.5.8) or holds few of our credits (3.1.5.9). */
void cf_smbd_maybe_grant(struct cf_smbd *s);

#endif
