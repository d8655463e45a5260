/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/test_shim_epoll.c — epoll registrations made before connect() follow the
 * socket into the tunnel (preload/shim_epoll.c): the registrations of a TCP socket are
 * found in every epoll instance of the process (and only that socket's), and after a
 * dup3 swap like the tunnel's they are made again on the new end with the same events
 * and data; an instance closed meanwhile is not touched. */
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "shim_epoll.h"

static int tcp_socket(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    assert_true(fd >= 0);
    return fd;
}

static void add(int epfd, int fd, uint32_t events, uint64_t data)
{
    struct epoll_event ev = { .events = events, .data.u64 = data };

    assert_int_equal(epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev), 0);
}

/* Swaps fd for one end of a socketpair as the tunnel does; returns the other end. */
static int swap_like_the_tunnel(int fd)
{
    int sv[2];

    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    assert_true(dup3(sv[0], fd, 0) == fd);
    close(sv[0]);
    return sv[1];
}

static void registrations_of_the_socket_are_found_in_each_instance(void **state)
{
    int ep1 = epoll_create1(0), ep2 = epoll_create1(0), fd = tcp_socket(), other = tcp_socket();
    struct shim_epoll_reg regs[SHIM_EPOLL_MAX_REGS];
    struct shim_fd_key key;
    int n, seen1 = 0, seen2 = 0;

    (void)state;
    add(ep1, fd, EPOLLIN | EPOLLOUT | EPOLLET, 0x1234567890abcdefull);
    add(ep2, fd, EPOLLOUT, 42);
    add(ep1, other, EPOLLIN, 7); /* another socket: not this one's */
    assert_int_equal(shim_fd_key_of(fd, &key), 0);
    n = shim_epoll_find(fd, &key, regs, SHIM_EPOLL_MAX_REGS);
    assert_int_equal(n, 2);
    for (int i = 0; i < n; i++) {
        if (regs[i].epfd == ep1) {
            seen1 = 1;
            /* the kernel always adds EPOLLERR | EPOLLHUP, which it always reports */
            assert_int_equal(regs[i].ev.events & ~(uint32_t)(EPOLLERR | EPOLLHUP),
                             EPOLLIN | EPOLLOUT | EPOLLET);
            assert_true(regs[i].ev.data.u64 == 0x1234567890abcdefull);
        } else {
            seen2 = regs[i].epfd == ep2 &&
                    (regs[i].ev.events & ~(uint32_t)(EPOLLERR | EPOLLHUP)) == EPOLLOUT &&
                    regs[i].ev.data.u64 == 42;
        }
    }
    assert_true(seen1 && seen2);
    close(fd);
    close(other);
    close(ep1);
    close(ep2);
}

static void a_swapped_socket_keeps_its_registration_events_and_data(void **state)
{
    int ep = epoll_create1(0), fd = tcp_socket(), peer, n;
    struct shim_epoll_reg regs[SHIM_EPOLL_MAX_REGS];
    struct epoll_event got;
    struct shim_fd_key key;

    (void)state;
    add(ep, fd, EPOLLIN | EPOLLOUT, 0x5eed);
    assert_int_equal(shim_fd_key_of(fd, &key), 0);
    n = shim_epoll_find(fd, &key, regs, SHIM_EPOLL_MAX_REGS);
    assert_int_equal(n, 1);
    peer = swap_like_the_tunnel(fd);
    /* the kernel dropped the registration with the old socket */
    assert_int_equal(epoll_wait(ep, &got, 1, 0), 0);
    assert_int_equal(shim_epoll_restore(fd, regs, n), 1);
    assert_int_equal(epoll_wait(ep, &got, 1, 1000), 1);
    assert_true(got.events & EPOLLOUT);
    assert_true(got.data.u64 == 0x5eed);
    assert_int_equal(write(peer, "x", 1), 1);
    assert_int_equal(epoll_wait(ep, &got, 1, 1000), 1);
    assert_true(got.events & EPOLLIN);
    close(peer);
    close(fd);
    close(ep);
}

static void a_socket_registered_nowhere_has_nothing_to_carry(void **state)
{
    int ep = epoll_create1(0), fd = tcp_socket();
    struct shim_epoll_reg regs[SHIM_EPOLL_MAX_REGS];
    struct shim_fd_key key;

    (void)state;
    add(ep, fd, EPOLLIN, 1);
    close(ep); /* the instance is gone, and its registration with it */
    assert_int_equal(shim_fd_key_of(fd, &key), 0);
    assert_int_equal(shim_epoll_find(fd, &key, regs, SHIM_EPOLL_MAX_REGS), 0);
    close(fd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(registrations_of_the_socket_are_found_in_each_instance),
        cmocka_unit_test(a_swapped_socket_keeps_its_registration_events_and_data),
        cmocka_unit_test(a_socket_registered_nowhere_has_nothing_to_carry),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
