/* SPDX-License-Identifier: BSD-3-Clause */
/* portmap/pm_list.h — the syntax the port list, the port map and the address map share:
 * comma-separated entries with blanks trimmed, decimal ports, and error text written
 * into the caller's buffer (the caller names where the text came from). */
#ifndef SMBDIRECT_PM_LIST_H
#define SMBDIRECT_PM_LIST_H

#include <stddef.h>
#include <stdint.h>

/* An entry of the list: [start, start+len) with blanks trimmed. */
struct pm_token {
    const char *start;
    size_t len;
};

/* How many of len bytes of text an error message quotes (at most 64), for "%.*s". */
#define PM_SHOWN(len) ((int)((len) > 64 ? 64 : (len)))

/* Advances *pos (the list, NULL once it is used up) past the next entry; 1 when an
 * entry was produced, 0 at the end. */
int pm_next_token(const char **pos, struct pm_token *t);

/* Parses a decimal port 1..65535 from exactly [s, s+len). 0 or -1. */
int pm_parse_port(const char *s, size_t len, uint16_t *out);

/* Writes the message into err (nothing when err is NULL or errlen 0). */
void pm_fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
