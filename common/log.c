/* SPDX-License-Identifier: BSD-3-Clause */
/* common/log.c — levelled logging to stderr, one line per call, thread safe
 * (a single write(2) per line so lines from threads and processes never mix). */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "sd_libc.h"

static volatile int current_level = SD_LOG_WARN;

static const char *const level_names[] = { "debug", "info", "warn", "error" };

int sd_log_parse_level(const char *s, enum sd_log_level *out)
{
    for (int i = SD_LOG_DEBUG; i <= SD_LOG_ERROR; i++) {
        if (strcmp(s, level_names[i]) == 0) {
            *out = (enum sd_log_level)i;
            return 0;
        }
    }
    return -1;
}

const char *sd_log_level_name(enum sd_log_level level) { return level_names[level]; }

void sd_log_set_level(enum sd_log_level level) { current_level = level; }

enum sd_log_level sd_log_get_level(void) { return (enum sd_log_level)current_level; }

void sd_log(enum sd_log_level level, const char *fmt, ...)
{
    char line[1024];
    int n;
    va_list ap;

    if ((int)level < current_level || level > SD_LOG_ERROR)
        return;
    n = snprintf(line, sizeof(line), "smbdirect[%d] %s: ", (int)getpid(), level_names[level]);
    va_start(ap, fmt);
    n += vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
    va_end(ap);
    if (n > (int)sizeof(line) - 2)
        n = (int)sizeof(line) - 2;
    line[n++] = '\n';
    /* One write per line; a failed log write has nowhere to be reported. */
    if (sd_libc()->write(STDERR_FILENO, line, (size_t)n) < 0)
        return;
}
