/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/test_shim_connect.c — the connect() decision with an invalid setting
 * (SMBDIRECT_FALLBACK=bogus, set before the first connect): a TCP connect to an
 * intercepted port fails with EINVAL and an error line naming the variable; every
 * other connect (other ports, UDP, AF_UNIX) is the real one. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "th_stderr.h"

static struct sockaddr_in loopback(uint16_t port)
{
    struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(port) };

    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return sin;
}

/* connect() with stderr captured into out. Returns connect's result, errno kept. */
static int connect_capturing(int fd, const void *addr, socklen_t len, char *out, size_t outlen)
{
    struct th_stderr c;
    int rc, err;

    th_stderr_begin(&c);
    rc = connect(fd, addr, len);
    err = errno;
    th_stderr_end(&c, out, outlen);
    errno = err;
    return rc;
}

static void test_intercepted_port_fails_einval(void **state)
{
    struct sockaddr_in sin = loopback(445);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    char log[2048];

    (void)state;
    assert_int_equal(connect_capturing(fd, &sin, sizeof(sin), log, sizeof(log)), -1);
    assert_int_equal(errno, EINVAL);
    if (!strstr(log, "SMBDIRECT_FALLBACK='bogus'"))
        fail_msg("error line does not name the variable: '%s'", log);
    close(fd);
}

static void test_intercepted_port_ipv6(void **state)
{
    struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6, .sin6_port = htons(445) };
    int fd = socket(AF_INET6, SOCK_STREAM, 0);
    char log[2048];

    (void)state;
    sin6.sin6_addr = in6addr_loopback;
    assert_int_equal(connect_capturing(fd, &sin6, sizeof(sin6), log, sizeof(log)), -1);
    assert_int_equal(errno, EINVAL);
    close(fd);
}

static void test_other_port_is_real(void **state)
{
    struct sockaddr_in sin = loopback(0), peer;
    socklen_t len = sizeof(sin);
    int lfd = socket(AF_INET, SOCK_STREAM, 0), fd = socket(AF_INET, SOCK_STREAM, 0);

    (void)state;
    assert_int_equal(bind(lfd, (struct sockaddr *)&sin, sizeof(sin)), 0);
    assert_int_equal(listen(lfd, 1), 0);
    assert_int_equal(getsockname(lfd, (struct sockaddr *)&sin, &len), 0);
    assert_int_equal(connect(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
    len = sizeof(peer);
    assert_int_equal(getpeername(fd, (struct sockaddr *)&peer, &len), 0);
    assert_int_equal(peer.sin_port, sin.sin_port);
    /* A second connect gets the kernel's answer. */
    assert_int_equal(connect(fd, (struct sockaddr *)&sin, sizeof(sin)), -1);
    assert_int_equal(errno, EISCONN);
    close(fd), close(lfd);
}

static void test_udp_and_unix_are_real(void **state)
{
    struct sockaddr_in sin = loopback(445);
    struct sockaddr_un sun = { .sun_family = AF_UNIX, .sun_path = "/nonexistent/smbd" };
    int udp = socket(AF_INET, SOCK_DGRAM, 0), ux = socket(AF_UNIX, SOCK_STREAM, 0);

    (void)state;
    assert_int_equal(connect(udp, (struct sockaddr *)&sin, sizeof(sin)), 0);
    assert_int_equal(connect(ux, (struct sockaddr *)&sun, sizeof(sun)), -1);
    assert_int_equal(errno, ENOENT);
    close(udp), close(ux);
}

static void test_malformed_addresses_are_real(void **state)
{
    struct sockaddr_in sin = loopback(445);
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    (void)state;
    assert_int_equal(connect(fd, (struct sockaddr *)&sin, 4), -1);
    assert_int_equal(errno, EINVAL); /* the kernel's: address too short */
    assert_int_equal(connect(-1, (struct sockaddr *)&sin, sizeof(sin)), -1);
    assert_int_equal(errno, EBADF);
    close(fd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_intercepted_port_fails_einval),
        cmocka_unit_test(test_intercepted_port_ipv6),
        cmocka_unit_test(test_other_port_is_real),
        cmocka_unit_test(test_udp_and_unix_are_real),
        cmocka_unit_test(test_malformed_addresses_are_real),
    };

    setenv("SMBDIRECT_FALLBACK", "bogus", 1);
    unsetenv("SMBDIRECT_TRANSPORT");
    unsetenv("SMBDIRECT_PORTS");
    unsetenv("SMBDIRECT_LOG");
    return cmocka_run_group_tests(tests, NULL, NULL);
}
