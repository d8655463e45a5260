/* SPDX-License-Identifier: BSD-3-Clause */
/* common/log.c — levelled logging to stderr, one line per call, thread safe
 * (a single write(2) per line so lines from threads and processes never mix). */
#include "log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sd_libc.h"

static volatile int current_level = SD_LOG_WARN;
static const char *volatile program;

static const char *const level_names[] = { "debug", "info", "notice", "warn", "error" };
/* syslog(3)'s priorities: LOG_DEBUG 7 ... LOG_ERR 3 */
static const int level_priority[] = { 7, 6, 5, 4, 3 };

/* The journal's stream, from JOURNAL_STREAM ("DEV:INO", set by systemd for a service
 * whose stderr it connected to the journal), read once; none: journal_known 0. */
static pthread_once_t journal_once = PTHREAD_ONCE_INIT;
static int journal_known;
static dev_t journal_dev;
static ino_t journal_ino;

static void journal_read(void)
{
    const char *v = getenv("JOURNAL_STREAM");
    unsigned long long dev, ino;
    int end = 0;

    if (v && sscanf(v, "%llu:%llu%n", &dev, &ino, &end) == 2 && v[end] == '\0') {
        journal_dev = (dev_t)dev;
        journal_ino = (ino_t)ino;
        journal_known = 1;
    }
}

/* Whether stderr is the journal's stream now (systemd's documented check: the
 * variable alone is inherited by children whose stderr may go elsewhere). */
static int stderr_is_journal(void)
{
    struct stat st;

    pthread_once(&journal_once, journal_read);
    return journal_known && fstat(STDERR_FILENO, &st) == 0 && st.st_dev == journal_dev &&
           st.st_ino == journal_ino;
}

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

void sd_log_set_program(const char *name) { program = name; }

void sd_log(enum sd_log_level level, const char *fmt, ...)
{
    char line[2048]; /* the relay's reload line names its whole allow list */
    const char *name = program;
    int n = 0;
    va_list ap;

    if ((int)level < current_level || level > SD_LOG_ERROR)
        return;
    if (stderr_is_journal())
        n = snprintf(line, sizeof(line), "<%d>", level_priority[level]);
    if (name)
        n += snprintf(line + n, sizeof(line) - (size_t)n, "%s: ", name);
    else
        n += snprintf(line + n, sizeof(line) - (size_t)n, "smbdirect[%d] %s: ", (int)getpid(),
                      level_names[level]);
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
