/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/th_stderr.c — stderr capture for log-line assertions (see th_stderr.h). */
#include "th_stderr.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmocka.h>

void th_stderr_begin(struct th_stderr *c)
{
    char path[] = "/tmp/smbdirect-test-stderr.XXXXXX";

    fflush(stderr);
    c->file = mkstemp(path);
    assert_true(c->file >= 0);
    unlink(path);
    c->saved = dup(STDERR_FILENO);
    assert_true(c->saved >= 0);
    assert_int_equal(dup2(c->file, STDERR_FILENO), STDERR_FILENO);
}

void th_stderr_end(struct th_stderr *c, char *out, size_t outlen)
{
    ssize_t n;

    fflush(stderr);
    dup2(c->saved, STDERR_FILENO);
    close(c->saved);
    n = pread(c->file, out, outlen - 1, 0);
    out[n > 0 ? n : 0] = '\0';
    close(c->file);
}
