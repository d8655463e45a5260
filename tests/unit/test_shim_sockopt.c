/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/test_shim_sockopt.c — through the interposed libc calls (the shim's
 * objects are linked into this program): a tunneled fd looks like a connected TCP
 * socket to getpeername/getsockname/getsockopt/setsockopt and refuses a second
 * connect; other sockets get the real calls with their real errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "shim_fdtable.h"
#include "th_shim.h"

static int fake_tunnel(void)
{
    struct shim_fd_info info;
    int sv[2];

    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    th_ipv4_tunnel_info(&info, "192.0.2.10", 445, "192.0.2.1", 40000);
    assert_int_equal(shim_fdtable_add(sv[0], -1, &info), 0);
    close(sv[1]);
    return sv[0];
}

static void test_names(void **state)
{
    struct sockaddr_in sin;
    socklen_t len = sizeof(sin);
    int fd = fake_tunnel();
    char small[4];

    (void)state;
    assert_int_equal(getpeername(fd, (struct sockaddr *)&sin, &len), 0);
    assert_int_equal(len, sizeof(sin));
    assert_int_equal(sin.sin_family, AF_INET);
    assert_int_equal(ntohs(sin.sin_port), 445);
    assert_int_equal(ntohl(sin.sin_addr.s_addr), 0xc000020a);
    len = sizeof(sin);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&sin, &len), 0);
    assert_int_equal(ntohs(sin.sin_port), 40000);
    /* Truncation as the kernel does it: partial copy, full length reported. */
    len = sizeof(small);
    assert_int_equal(getpeername(fd, (struct sockaddr *)small, &len), 0);
    assert_int_equal(len, sizeof(struct sockaddr_in));
    assert_int_equal(getpeername(fd, (struct sockaddr *)&sin, NULL), -1);
    assert_int_equal(errno, EFAULT);
    close(fd);
}

static int get_int(int fd, int level, int name)
{
    int v = -12345;
    socklen_t len = sizeof(v);

    if (getsockopt(fd, level, name, &v, &len) < 0)
        return -errno - 100000;
    assert_int_equal(len, sizeof(v));
    return v;
}

static void test_identity(void **state)
{
    int fd = fake_tunnel();
    struct tcp_info ti;
    socklen_t len = sizeof(ti);

    (void)state;
    assert_int_equal(get_int(fd, SOL_SOCKET, SO_DOMAIN), AF_INET);
    assert_int_equal(get_int(fd, SOL_SOCKET, SO_PROTOCOL), IPPROTO_TCP);
    assert_int_equal(get_int(fd, SOL_SOCKET, SO_TYPE), SOCK_STREAM);
    assert_int_equal(get_int(fd, SOL_SOCKET, SO_ERROR), 0);
    assert_true(get_int(fd, SOL_SOCKET, SO_RCVBUF) > 0); /* the socketpair answers */
    assert_int_equal(getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len), 0);
    assert_int_equal(ti.tcpi_state, TCP_ESTABLISHED);
    close(fd);
}

static void test_tcp_options(void **state)
{
    int fd = fake_tunnel(), one = 1, tos = 0x10;
    char cc[16];
    socklen_t len = sizeof(cc);

    (void)state;
    assert_int_equal(get_int(fd, IPPROTO_TCP, TCP_NODELAY), 0);
    assert_int_equal(setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)), 0);
    assert_int_equal(get_int(fd, IPPROTO_TCP, TCP_NODELAY), 1);
    assert_int_equal(get_int(fd, IPPROTO_TCP, TCP_KEEPIDLE), 7200);
    assert_int_equal(setsockopt(fd, IPPROTO_IP, IP_TOS, &tos, sizeof(tos)), 0);
    assert_int_equal(get_int(fd, IPPROTO_IP, IP_TOS), 0x10);
    assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one)), 0);
    assert_int_equal(get_int(fd, SOL_SOCKET, SO_KEEPALIVE), 1);
    assert_int_equal(setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, 1), -1);
    assert_int_equal(errno, EINVAL);
    assert_int_equal(setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, "cubic", 5), 0);
    assert_int_equal(getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, cc, &len), -1);
    assert_int_equal(errno, ENOPROTOOPT);
    close(fd);
}

/* The same calls on sockets the shim does not own fail exactly as without it. */
static void test_other_sockets_untouched(void **state)
{
    int sv[2], one = 1, tcp = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_storage ss;
    socklen_t len = sizeof(ss);

    (void)state;
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    assert_int_equal(setsockopt(sv[0], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)), -1);
    assert_int_equal(errno, EOPNOTSUPP);
    assert_int_equal(get_int(sv[0], SOL_SOCKET, SO_DOMAIN), AF_UNIX);
    assert_int_equal(getpeername(tcp, (struct sockaddr *)&ss, &len), -1);
    assert_int_equal(errno, ENOTCONN);
    assert_int_equal(get_int(tcp, SOL_SOCKET, SO_DOMAIN), AF_INET);
    assert_int_equal(getsockopt(-1, SOL_SOCKET, SO_TYPE, &one, &len), -1);
    assert_int_equal(errno, EBADF);
    close(sv[0]), close(sv[1]), close(tcp);
}

static void test_second_connect_is_eisconn(void **state)
{
    struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(139) };
    int fd = fake_tunnel();

    (void)state;
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(fd, (struct sockaddr *)&sin, sizeof(sin)), -1);
    assert_int_equal(errno, EISCONN);
    close(fd);
}

static void test_lost_tunnel_so_error(void **state)
{
    struct shim_fd_key key;
    int fd = fake_tunnel();

    (void)state;
    assert_int_equal(shim_fd_key_of(fd, &key), 0);
    shim_fdtable_tunnel_ended(&key, -ECONNRESET);
    assert_int_equal(get_int(fd, SOL_SOCKET, SO_ERROR), ECONNRESET);
    assert_int_equal(get_int(fd, SOL_SOCKET, SO_ERROR), 0);
    close(fd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_names, th_fdtable_reset),
        cmocka_unit_test_setup(test_identity, th_fdtable_reset),
        cmocka_unit_test_setup(test_tcp_options, th_fdtable_reset),
        cmocka_unit_test_setup(test_other_sockets_untouched, th_fdtable_reset),
        cmocka_unit_test_setup(test_second_connect_is_eisconn, th_fdtable_reset),
        cmocka_unit_test_setup(test_lost_tunnel_so_error, th_fdtable_reset),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
