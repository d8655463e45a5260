/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/test_verbs_nodev.c — the verbs provider on a machine without an RDMA
 * device: device detection agrees with sysfs, and connect/listen/is_iwarp fail fast
 * (well inside their timeouts) with -ENODEV and a log line pointing at soft-iWARP. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>

#include <cmocka.h>

#include "log.h"
#include "provider.h"
#include "sd_clock.h"
#include "th_stderr.h"

#define FAST_MS 2000        /* "fails fast" */
#define CALL_TIMEOUT_MS 10000 /* what the calls are allowed; a wait would show */

/* RDMA devices the kernel exposes (the ground truth rdma-core reads). */
static int sysfs_device_count(void)
{
    DIR *d = opendir("/sys/class/infiniband");
    struct dirent *e;
    int n = 0;

    if (!d)
        return 0;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n;
}

static void assert_soft_hint(const char *log)
{
    if (!strstr(log, "no RDMA device") || !strstr(log, "SMBDIRECT_TRANSPORT=soft"))
        fail_msg("log lacks the no-device hint: '%s'", log);
}

static int group_setup(void **state)
{
    (void)state;
    alarm(30); /* a hang fails the test run instead of blocking it */
    sd_log_set_level(SD_LOG_WARN);
    return 0;
}

#define REQUIRE_NO_DEVICE()                                                    \
    do {                                                                       \
        if (sysfs_device_count() > 0)                                          \
            skip(); /* the VM tier covers real devices */                      \
    } while (0)

static struct sockaddr_in loopback(uint16_t port)
{
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };

    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return a;
}

static void test_device_present_matches_sysfs(void **state)
{
    (void)state;
    assert_int_equal(sd_verbs_device_present(), sysfs_device_count() > 0);
}

static void test_connect_fails_fast(void **state)
{
    struct sockaddr_in dst = loopback(5445);
    struct sd_cm_params p = { .ird = 8, .ord = 8, .smbd_ird_ord_header = 1 };
    struct sd_cm_result r;
    struct th_stderr c;
    char log[2048];
    int err = 12345;
    long long t0;
    struct sd_qp *qp;

    (void)state;
    REQUIRE_NO_DEVICE();
    th_stderr_begin(&c);
    t0 = (long long)sd_now_ms();
    qp = sd_verbs_provider.connect((struct sockaddr *)&dst, sizeof(dst), &p, CALL_TIMEOUT_MS, &r,
                                   &err);
    t0 = (long long)sd_now_ms() - t0;
    th_stderr_end(&c, log, sizeof(log));
    assert_null(qp);
    assert_int_equal(err, -ENODEV);
    assert_true(t0 < FAST_MS);
    assert_soft_hint(log);
}

static void test_listen_fails_fast(void **state)
{
    struct sockaddr_in any = loopback(0);
    struct th_stderr c;
    char log[2048];
    int err = 12345;
    long long t0;
    struct sd_listener *l;

    (void)state;
    REQUIRE_NO_DEVICE();
    th_stderr_begin(&c);
    t0 = (long long)sd_now_ms();
    l = sd_verbs_provider.listen((struct sockaddr *)&any, sizeof(any),
                                 &(struct sd_listen_params){ 16, 5000 }, &err);
    t0 = (long long)sd_now_ms() - t0;
    th_stderr_end(&c, log, sizeof(log));
    assert_null(l);
    assert_int_equal(err, -ENODEV);
    assert_true(t0 < FAST_MS);
    assert_soft_hint(log);
}

static void test_is_iwarp_fails_fast(void **state)
{
    struct sockaddr_in dst = loopback(445);
    struct th_stderr c;
    char log[2048];
    long long t0;
    int rc;

    (void)state;
    REQUIRE_NO_DEVICE();
    th_stderr_begin(&c);
    t0 = (long long)sd_now_ms();
    rc = sd_verbs_provider.is_iwarp((struct sockaddr *)&dst, sizeof(dst));
    t0 = (long long)sd_now_ms() - t0;
    th_stderr_end(&c, log, sizeof(log));
    assert_int_equal(rc, -ENODEV);
    assert_true(t0 < FAST_MS);
    assert_soft_hint(log);
}

/* Bad arguments are refused before any device work, on every machine. */
static void test_bad_arguments_refused(void **state)
{
    struct sockaddr_in dst = loopback(5445);
    struct sd_cm_params zero_ird = { .ird = 0, .ord = 8 };
    struct sd_cm_params too_long = { .ird = 8, .ord = 8, .private_data = "x",
                                     .private_data_len = SD_MAX_PRIVATE_DATA + 1 };
    struct sd_cm_result r;
    int err = 0;

    (void)state;
    sd_log_set_level(SD_LOG_ERROR); /* the refusals are expected; keep the output clean */
    assert_null(sd_verbs_provider.connect((struct sockaddr *)&dst, sizeof(dst), &zero_ird, 100,
                                          &r, &err));
    assert_int_equal(err, -EINVAL);
    err = 0;
    assert_null(sd_verbs_provider.connect((struct sockaddr *)&dst, sizeof(dst), &too_long, 100,
                                          &r, &err));
    assert_int_equal(err, -EINVAL);
    err = 0;
    assert_null(sd_verbs_provider.connect(NULL, 0, &zero_ird, 100, &r, &err));
    assert_int_equal(err, -EINVAL);
    err = 0;
    assert_null(sd_verbs_provider.accept(NULL, &zero_ird, 100, &r, &err));
    assert_int_equal(err, -EINVAL);
    assert_int_equal(sd_verbs_provider.is_iwarp(NULL, 0), -EINVAL);
    assert_string_equal(sd_verbs_provider.name, "rdma");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_device_present_matches_sysfs),
        cmocka_unit_test(test_connect_fails_fast),
        cmocka_unit_test(test_listen_fails_fast),
        cmocka_unit_test(test_is_iwarp_fails_fast),
        cmocka_unit_test(test_bad_arguments_refused),
    };
    return cmocka_run_group_tests_name("verbs_nodev", tests, group_setup, NULL);
}
