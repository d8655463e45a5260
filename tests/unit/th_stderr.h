/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/th_stderr.h — captures what the code under test logs to stderr (the
 * project's log lines) between begin and end, for tests that assert on log lines. */
#ifndef SMBDIRECT_TH_STDERR_H
#define SMBDIRECT_TH_STDERR_H

#include <stddef.h>

struct th_stderr {
    int saved; /* the real stderr */
    int file;  /* an unlinked temporary file standing in for it */
};

/* From now on stderr (fd 2) writes into a temporary file. */
void th_stderr_begin(struct th_stderr *c);
/* Restores stderr and copies what was written (NUL-terminated, cut to outlen - 1). */
void th_stderr_end(struct th_stderr *c, char *out, size_t outlen);

#endif
