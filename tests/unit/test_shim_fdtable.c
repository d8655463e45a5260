/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/test_shim_fdtable.c — the table of tunneled fds cannot go stale: a close
 * the shim never saw (close, dup2 over it, close_range) and the reuse of the fd number
 * never make another socket look tunneled; dup'ed copies and fork children still see
 * the tunnel; fork children drop their copy of the engine's end, and only that. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shim_fdtable.h"
#include "th_shim.h"

static void test_lookup_copies_info(void **state)
{
    struct shim_fd_info got;
    int fd = th_fake_tunnel(NULL);

    (void)state;
    assert_int_equal(shim_fdtable_count(), 1);
    assert_int_equal(shim_fdtable_lookup(fd, &got), 1);
    assert_int_equal(got.family, AF_INET);
    assert_int_equal(ntohs(((struct sockaddr_in *)&got.peer)->sin_port), 445);
    assert_int_equal(got.state, SHIM_FD_CONNECTED);
    close(fd);
}

static void test_not_tunneled(void **state)
{
    int fd = th_fake_tunnel(NULL), other = socket(AF_INET, SOCK_STREAM, 0), p[2];

    (void)state;
    assert_true(other >= 0);
    assert_int_equal(shim_fdtable_lookup(other, NULL), 0);
    assert_int_equal(pipe(p), 0);
    assert_int_equal(shim_fdtable_lookup(p[0], NULL), 0);
    errno = 1234;
    assert_int_equal(shim_fdtable_lookup(-1, NULL), 0);
    assert_int_equal(shim_fdtable_lookup(4000, NULL), 0);
    assert_int_equal(errno, 1234); /* lookups never clobber the program's errno */
    close(fd), close(other), close(p[0]), close(p[1]);
}

static void test_dup_is_the_same_tunnel(void **state)
{
    int fd = th_fake_tunnel(NULL), copy = dup(fd);

    (void)state;
    assert_int_equal(shim_fdtable_lookup(copy, NULL), 1);
    close(fd);
    assert_int_equal(shim_fdtable_lookup(copy, NULL), 1);
    close(copy);
}

/* close() the shim never saw, then a new socket gets the same number. */
static void test_closed_number_reused(void **state)
{
    int fd = th_fake_tunnel(NULL), again;

    (void)state;
    close(fd);
    again = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_int_equal(again, fd);
    assert_int_equal(shim_fdtable_lookup(again, NULL), 0);
    close(again);
}

static void test_dup2_over_tunnel(void **state)
{
    int fd = th_fake_tunnel(NULL), other = socket(AF_INET, SOCK_STREAM, 0);

    (void)state;
    assert_int_equal(dup2(other, fd), fd);
    assert_int_equal(shim_fdtable_lookup(fd, NULL), 0);
    close(fd), close(other);
}

static void test_close_range_then_reuse(void **state)
{
    int fd = th_fake_tunnel(NULL), again;

    (void)state;
    assert_int_equal(close_range((unsigned)fd, (unsigned)fd, 0), 0);
    again = socket(AF_INET6, SOCK_STREAM, 0);
    assert_int_equal(again, fd);
    assert_int_equal(shim_fdtable_lookup(again, NULL), 0);
    close(again);
}

static void test_end_by_program_drops_entry(void **state)
{
    struct shim_fd_key key;
    int fd = th_fake_tunnel(NULL);

    (void)state;
    assert_int_equal(shim_fd_key_of(fd, &key), 0);
    shim_fdtable_tunnel_ended(&key, 0);
    assert_int_equal(shim_fdtable_count(), 0);
    assert_int_equal(shim_fdtable_lookup(fd, NULL), 0);
    close(fd);
}

static void test_lost_link_reports_error_once(void **state)
{
    struct shim_fd_info got;
    struct shim_fd_key key;
    int fd = th_fake_tunnel(NULL);

    (void)state;
    assert_int_equal(shim_fdtable_take_error(fd), 0);
    assert_int_equal(shim_fd_key_of(fd, &key), 0);
    shim_fdtable_tunnel_ended(&key, -ECONNRESET);
    assert_int_equal(shim_fdtable_lookup(fd, &got), 1); /* still looks like TCP */
    assert_int_equal(got.state, SHIM_FD_LOST);
    assert_int_equal(shim_fdtable_take_error(fd), ECONNRESET);
    assert_int_equal(shim_fdtable_take_error(fd), 0);
    close(fd);
    assert_int_equal(shim_fdtable_take_error(fd), -1);
}

static void test_lost_entries_are_bounded(void **state)
{
    struct shim_fd_key key;
    int fds[SHIM_FDTABLE_MAX_LOST + 2];

    (void)state;
    for (int i = 0; i < SHIM_FDTABLE_MAX_LOST + 2; i++) {
        fds[i] = th_fake_tunnel(NULL);
        assert_int_equal(shim_fd_key_of(fds[i], &key), 0);
        shim_fdtable_tunnel_ended(&key, -EPROTO);
    }
    assert_int_equal(shim_fdtable_count(), SHIM_FDTABLE_MAX_LOST);
    assert_int_equal(shim_fdtable_lookup(fds[0], NULL), 0); /* the oldest went first */
    assert_int_equal(shim_fdtable_lookup(fds[SHIM_FDTABLE_MAX_LOST + 1], NULL), 1);
    for (int i = 0; i < SHIM_FDTABLE_MAX_LOST + 2; i++)
        close(fds[i]);
}

static void test_options_remembered(void **state)
{
    int fd = th_fake_tunnel(NULL), v = -1, other = socket(AF_INET, SOCK_STREAM, 0);

    (void)state;
    assert_int_equal(shim_fdtable_get_opt(fd, IPPROTO_TCP, 1, &v), -ENOENT);
    assert_int_equal(shim_fdtable_set_opt(fd, IPPROTO_TCP, 1, 1), 0);
    assert_int_equal(shim_fdtable_set_opt(fd, IPPROTO_TCP, 1, 7), 0); /* replaces */
    assert_int_equal(shim_fdtable_get_opt(fd, IPPROTO_TCP, 1, &v), 0);
    assert_int_equal(v, 7);
    for (int name = 100; name < 100 + SHIM_FDTABLE_MAX_OPTS - 1; name++)
        assert_int_equal(shim_fdtable_set_opt(fd, IPPROTO_IP, name, name), 0);
    assert_int_equal(shim_fdtable_set_opt(fd, IPPROTO_IP, 999, 1), -ENOSPC);
    assert_int_equal(shim_fdtable_set_opt(other, IPPROTO_TCP, 1, 1), -ENOENT);
    close(fd), close(other);
}

/* Runs check() in a fork child set up the way pthread_atfork does it. */
static int in_fork_child(int (*check)(int app_fd, int engine_fd), int app_fd, int engine_fd)
{
    int status;
    pid_t pid;

    shim_fdtable_atfork_prepare();
    pid = fork();
    if (pid == 0) {
        shim_fdtable_atfork_child();
        _exit(check(app_fd, engine_fd));
    }
    shim_fdtable_atfork_parent();
    assert_true(pid > 0);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    return WEXITSTATUS(status);
}

static int child_sees_tunnel_without_engine_end(int app_fd, int engine_fd)
{
    if (shim_fdtable_lookup(app_fd, NULL) != 1)
        return 1;
    if (fcntl(engine_fd, F_GETFD) != -1 || errno != EBADF)
        return 2;
    return 0;
}

static void test_fork_child_drops_engine_end(void **state)
{
    int engine_fd, fd = th_fake_tunnel(&engine_fd);

    (void)state;
    assert_int_equal(in_fork_child(child_sees_tunnel_without_engine_end, fd, engine_fd), 0);
    assert_true(fcntl(engine_fd, F_GETFD) >= 0); /* the parent's engine keeps it */
    close(fd), close(engine_fd);
}

static int child_keeps_reused_number(int app_fd, int engine_fd)
{
    (void)app_fd;
    return fcntl(engine_fd, F_GETFD) >= 0 ? 0 : 1;
}

/* The engine closed its end and the program reused the number before fork(): the
 * child must not close the program's new fd. */
static void test_fork_child_spares_reused_number(void **state)
{
    int engine_fd, fd = th_fake_tunnel(&engine_fd), p[2];

    (void)state;
    close(engine_fd);
    assert_int_equal(pipe(p), 0);
    if (p[0] != engine_fd) {
        assert_int_equal(dup2(p[0], engine_fd), engine_fd);
        close(p[0]);
    }
    assert_int_equal(in_fork_child(child_keeps_reused_number, fd, engine_fd), 0);
    close(fd), close(engine_fd), close(p[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_lookup_copies_info, th_fdtable_reset),
        cmocka_unit_test_setup(test_not_tunneled, th_fdtable_reset),
        cmocka_unit_test_setup(test_dup_is_the_same_tunnel, th_fdtable_reset),
        cmocka_unit_test_setup(test_closed_number_reused, th_fdtable_reset),
        cmocka_unit_test_setup(test_dup2_over_tunnel, th_fdtable_reset),
        cmocka_unit_test_setup(test_close_range_then_reuse, th_fdtable_reset),
        cmocka_unit_test_setup(test_end_by_program_drops_entry, th_fdtable_reset),
        cmocka_unit_test_setup(test_lost_link_reports_error_once, th_fdtable_reset),
        cmocka_unit_test_setup(test_lost_entries_are_bounded, th_fdtable_reset),
        cmocka_unit_test_setup(test_options_remembered, th_fdtable_reset),
        cmocka_unit_test_setup(test_fork_child_drops_engine_end, th_fdtable_reset),
        cmocka_unit_test_setup(test_fork_child_spares_reused_number, th_fdtable_reset),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
