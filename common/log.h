/* SPDX-License-Identifier: BSD-3-Clause */
/* common/log.h — the one logging module: levelled messages to stderr, at or above
 * the level set (default warn; the programs set SMBDIRECT_LOG's, see
 * transport/settings). A line is "smbdirect[PID] LEVEL: message", or "NAME: message"
 * in a program that set its name (the relay: its lines are stable texts for scripts,
 * the level goes to the journal). When stderr is the systemd journal's stream
 * (JOURNAL_STREAM names its device and inode), each line starts with its syslog
 * priority, "<N>", which the journal takes as the line's priority. */
#ifndef SMBDIRECT_LOG_H
#define SMBDIRECT_LOG_H

enum sd_log_level {
    SD_LOG_DEBUG = 0,
    SD_LOG_INFO,
    SD_LOG_NOTICE, /* normal but significant: the relay's connection lines */
    SD_LOG_WARN,
    SD_LOG_ERROR,
    SD_LOG_OFF
};

void sd_log_set_level(enum sd_log_level level);
enum sd_log_level sd_log_get_level(void);
/* Parses "debug|info|notice|warn|error"; returns -1 for anything else. */
int sd_log_parse_level(const char *s, enum sd_log_level *out);
/* The name of a level from SD_LOG_DEBUG to SD_LOG_ERROR. */
const char *sd_log_level_name(enum sd_log_level level);
/* From now on this process's lines are "name: message" (name a static string). */
void sd_log_set_program(const char *name);

void sd_log(enum sd_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#define sd_debug(...) do { if (sd_log_get_level() <= SD_LOG_DEBUG) sd_log(SD_LOG_DEBUG, __VA_ARGS__); } while (0)
#define sd_info(...)   sd_log(SD_LOG_INFO, __VA_ARGS__)
#define sd_notice(...) sd_log(SD_LOG_NOTICE, __VA_ARGS__)
#define sd_warn(...)   sd_log(SD_LOG_WARN, __VA_ARGS__)
#define sd_error(...)  sd_log(SD_LOG_ERROR, __VA_ARGS__)

#endif
