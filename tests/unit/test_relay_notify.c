/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/test_relay_notify.c — the relay's sd_notify(3) protocol
 * (tools/relay/relay_notify.c) against a datagram socket standing in for systemd's:
 * a path and an abstract name, each message one datagram with exactly its text, the
 * socket's credentials naming the sender, and the names and messages it refuses. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "relay_notify.h"

/* systemd's side: a datagram socket at name ("@..." abstract), asking for credentials. */
static int manager_socket(const char *name)
{
    struct sockaddr_un a = { .sun_family = AF_UNIX };
    size_t len = strlen(name);
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0), one = 1;

    assert_true(fd >= 0);
    memcpy(a.sun_path, name, len);
    if (name[0] == '@')
        a.sun_path[0] = '\0';
    assert_int_equal(bind(fd, (struct sockaddr *)&a,
                          (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len)), 0);
    assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)), 0);
    return fd;
}

/* Receives one datagram (non-blocking: it was sent already) into out; returns the
 * sender's PID from its credentials. */
static pid_t receive(int fd, char *out, size_t outlen)
{
    union {
        struct cmsghdr h;
        char buf[CMSG_SPACE(sizeof(struct ucred))];
    } ctl;
    struct iovec iov = { .iov_base = out, .iov_len = outlen - 1 };
    struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = &ctl,
                        .msg_controllen = sizeof(ctl) };
    struct ucred cred;
    ssize_t n = recvmsg(fd, &m, MSG_DONTWAIT);

    assert_true(n >= 0);
    out[n] = '\0';
    assert_non_null(CMSG_FIRSTHDR(&m));
    assert_int_equal(CMSG_FIRSTHDR(&m)->cmsg_type, SCM_CREDENTIALS);
    memcpy(&cred, CMSG_DATA(CMSG_FIRSTHDR(&m)), sizeof(cred));
    return cred.pid;
}

static void nothing_waiting(int fd)
{
    char b[8];

    assert_int_equal(recv(fd, b, sizeof(b), MSG_DONTWAIT), -1);
    assert_int_equal(errno, EAGAIN);
}

static void test_a_path_gets_each_message_as_one_datagram(void **state)
{
    char path[] = "/tmp/smbdirect-notify.XXXXXX", sock[64], got[2048];
    struct relay_notify n;
    int fd;

    (void)state;
    assert_non_null(mkdtemp(path));
    snprintf(sock, sizeof(sock), "%s/notify", path);
    fd = manager_socket(sock);
    assert_int_equal(relay_notify_open(&n, sock), 0);
    assert_int_equal(relay_notify_send(&n, "READY=1\nSTATUS=%u connections", 3u), 0);
    assert_int_equal(relay_notify_send(&n, "RELOADING=1\nMONOTONIC_USEC=%llu", 12345ull), 0);
    assert_int_equal(receive(fd, got, sizeof(got)), getpid());
    assert_string_equal(got, "READY=1\nSTATUS=3 connections");
    assert_int_equal(receive(fd, got, sizeof(got)), getpid());
    assert_string_equal(got, "RELOADING=1\nMONOTONIC_USEC=12345");
    nothing_waiting(fd);
    relay_notify_close(&n);
    assert_int_equal(n.fd, -1);
    close(fd);
    unlink(sock);
    rmdir(path);
}

static void test_an_abstract_name_starts_with_at(void **state)
{
    char name[64], got[64];
    struct relay_notify n;
    int fd;

    (void)state;
    snprintf(name, sizeof(name), "@smbdirect-test-notify-%d", (int)getpid());
    fd = manager_socket(name);
    assert_int_equal(relay_notify_open(&n, name), 0);
    assert_int_equal(relay_notify_send(&n, "STOPPING=1"), 0);
    assert_int_equal(receive(fd, got, sizeof(got)), getpid());
    assert_string_equal(got, "STOPPING=1");
    relay_notify_close(&n);
    close(fd);
}

static void test_no_socket_named_means_off(void **state)
{
    struct relay_notify n;

    (void)state;
    assert_int_equal(relay_notify_open(&n, NULL), 0);
    assert_int_equal(n.fd, -1);
    assert_int_equal(relay_notify_send(&n, "READY=1"), 0);
    assert_int_equal(relay_notify_open(&n, ""), 0);
    assert_int_equal(n.fd, -1);
    relay_notify_close(&n);
}

static void test_bad_names_and_messages_are_refused(void **state)
{
    char longname[200], big[1100];
    struct relay_notify n;

    (void)state;
    assert_int_equal(relay_notify_open(&n, "run/systemd/notify"), -EINVAL);
    assert_int_equal(n.fd, -1);
    assert_int_equal(relay_notify_open(&n, "@"), -EINVAL);
    memset(longname, 'a', sizeof(longname) - 1);
    longname[0] = '/';
    longname[sizeof(longname) - 1] = '\0';
    assert_int_equal(relay_notify_open(&n, longname), -EINVAL);
    /* a name nobody serves: the send fails with the socket's error */
    assert_int_equal(relay_notify_open(&n, "/nonexistent/notify"), 0);
    assert_int_equal(relay_notify_send(&n, "READY=1"), -ENOENT);
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    assert_int_equal(relay_notify_send(&n, "STATUS=%s", big), -EMSGSIZE);
    relay_notify_close(&n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_path_gets_each_message_as_one_datagram),
        cmocka_unit_test(test_an_abstract_name_starts_with_at),
        cmocka_unit_test(test_no_socket_named_means_off),
        cmocka_unit_test(test_bad_names_and_messages_are_refused),
    };
    return cmocka_run_group_tests_name("relay notify", tests, NULL, NULL);
}
