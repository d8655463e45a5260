/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/test_log.c — the log module (common/log.c): the level names SMBDIRECT_LOG
 * takes (notice among them), the filter, the two line forms (smbdirect[PID] LEVEL:, and
 * a program's own name), and the syslog priority prefix written only while stderr is
 * the stream JOURNAL_STREAM names (main sets it to a file of its own before anything
 * logs: the module reads it once). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "log.h"

static int journal_fd = -1; /* the file JOURNAL_STREAM names */
static int plain_fd = -1;   /* another file */

/* What one sd_log call at level writes to stderr while it is fd. */
static void logged_on(int fd, enum sd_log_level level, const char *msg, char *out,
                      size_t outlen)
{
    int saved = dup(STDERR_FILENO);
    ssize_t n;

    assert_true(saved >= 0);
    assert_int_equal(ftruncate(fd, 0), 0);
    assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
    assert_int_equal(dup2(fd, STDERR_FILENO), STDERR_FILENO);
    sd_log(level, "%s", msg);
    dup2(saved, STDERR_FILENO);
    close(saved);
    n = pread(fd, out, outlen - 1, 0);
    out[n > 0 ? n : 0] = '\0';
}

static void logged(enum sd_log_level level, const char *msg, char *out, size_t outlen)
{
    logged_on(plain_fd, level, msg, out, outlen);
}

static void logged_to_journal(enum sd_log_level level, const char *msg, char *out,
                              size_t outlen)
{
    logged_on(journal_fd, level, msg, out, outlen);
}

/* out is "PRIORITYsmbdirect[PID] REST\n", this process's line. */
static void assert_pid_line(const char *out, const char *priority, const char *rest)
{
    char want[128];

    snprintf(want, sizeof(want), "%ssmbdirect[%d] %s\n", priority, (int)getpid(), rest);
    assert_string_equal(out, want);
}

static void test_levels_parse_and_name(void **state)
{
    static const char *const names[] = { "debug", "info", "notice", "warn", "error" };
    enum sd_log_level l;

    (void)state;
    for (int i = SD_LOG_DEBUG; i <= SD_LOG_ERROR; i++) {
        assert_int_equal(sd_log_parse_level(names[i], &l), 0);
        assert_int_equal(l, i);
        assert_string_equal(sd_log_level_name(l), names[i]);
    }
    assert_int_equal(sd_log_parse_level("warning", &l), -1);
    assert_int_equal(sd_log_parse_level("", &l), -1);
    assert_true(SD_LOG_INFO < SD_LOG_NOTICE && SD_LOG_NOTICE < SD_LOG_WARN);
}

static void test_the_level_filters_and_names_the_line(void **state)
{
    char out[256];

    (void)state;
    sd_log_set_level(SD_LOG_NOTICE);
    logged(SD_LOG_INFO, "hidden", out, sizeof(out));
    assert_string_equal(out, "");
    logged(SD_LOG_NOTICE, "conn 1 closed", out, sizeof(out));
    assert_pid_line(out, "", "notice: conn 1 closed");
    logged(SD_LOG_ERROR, "it broke", out, sizeof(out));
    assert_pid_line(out, "", "error: it broke");
    sd_log_set_level(SD_LOG_OFF);
    logged(SD_LOG_ERROR, "hidden", out, sizeof(out));
    assert_string_equal(out, "");
}

static void test_a_program_name_replaces_pid_and_level(void **state)
{
    char out[256];

    (void)state;
    sd_log_set_level(SD_LOG_DEBUG);
    sd_log_set_program("relay");
    logged(SD_LOG_NOTICE, "conn 1 from 127.0.0.1:1 established", out, sizeof(out));
    assert_string_equal(out, "relay: conn 1 from 127.0.0.1:1 established\n");
    logged(SD_LOG_ERROR, "conn 2 failed", out, sizeof(out));
    assert_string_equal(out, "relay: conn 2 failed\n");
    sd_log_set_program(NULL);
    sd_log_set_level(SD_LOG_OFF);
}

static void test_the_journal_gets_each_line_with_its_priority(void **state)
{
    static const char *const want[] = { "<7>relay: x\n", "<6>relay: x\n", "<5>relay: x\n",
                                        "<4>relay: x\n", "<3>relay: x\n" };
    char out[256];

    (void)state;
    sd_log_set_level(SD_LOG_DEBUG);
    sd_log_set_program("relay");
    for (int i = SD_LOG_DEBUG; i <= SD_LOG_ERROR; i++) {
        logged_to_journal((enum sd_log_level)i, "x", out, sizeof(out));
        assert_string_equal(out, want[i]);
    }
    sd_log_set_program(NULL);
    logged_to_journal(SD_LOG_WARN, "y", out, sizeof(out));
    assert_pid_line(out, "<4>", "warn: y");
    /* another file on stderr (a child's redirection keeps the variable): no prefix */
    logged(SD_LOG_ERROR, "z", out, sizeof(out));
    assert_pid_line(out, "", "error: z");
    sd_log_set_level(SD_LOG_OFF);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_levels_parse_and_name),
        cmocka_unit_test(test_the_level_filters_and_names_the_line),
        cmocka_unit_test(test_a_program_name_replaces_pid_and_level),
        cmocka_unit_test(test_the_journal_gets_each_line_with_its_priority),
    };
    char path[] = "/tmp/smbdirect-test-journal.XXXXXX", other[] = "/tmp/smbdirect-test-log.XXXXXX";
    char env[64];
    struct stat st;
    int rc;

    journal_fd = mkstemp(path);
    plain_fd = mkstemp(other);
    if (journal_fd < 0 || plain_fd < 0 || fstat(journal_fd, &st) != 0)
        return 1;
    unlink(path);
    unlink(other);
    snprintf(env, sizeof(env), "%llu:%llu", (unsigned long long)st.st_dev,
             (unsigned long long)st.st_ino);
    setenv("JOURNAL_STREAM", env, 1);
    rc = cmocka_run_group_tests_name("log", tests, NULL, NULL);
    close(journal_fd);
    close(plain_fd);
    return rc;
}
