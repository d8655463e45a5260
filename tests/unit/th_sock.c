/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/th_sock.c — local stream sockets for the bridge's output tests (th_sock.h). */
#include "th_sock.h"

#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <sys/socket.h>

#include <cmocka.h>

void th_sock_writer_pair(int sv[2], int sndbuf)
{
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    assert_int_equal(setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf)), 0);
    assert_int_equal(fcntl(sv[0], F_SETFL, O_NONBLOCK), 0);
}

size_t th_sock_drain(int fd, uint8_t *to, size_t cap)
{
    size_t got = 0;
    ssize_t n;

    while (got < cap && (n = recv(fd, to + got, cap - got, MSG_DONTWAIT)) > 0)
        got += (size_t)n;
    return got;
}
