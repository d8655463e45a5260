/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/test_bridge_pool.c — the bridge's large-buffer cache (transport/bridge/
 * bridge_pool.c): a large buffer given back is handed out again, small ones and ones far
 * larger than asked for are not, the idle bytes stay within BRIDGE_POOL_IDLE_MAX, nothing
 * is kept without a user, and the last user's going frees everything idle. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "bridge_pool.h"

#define MIB (1024u * 1024u)

static void test_large_buffer_is_reused(void **state)
{
    size_t cap, cap2;
    void *a, *b;

    (void)state;
    bridge_pool_ref();
    a = bridge_pool_get(8 * MIB, &cap);
    assert_non_null(a);
    assert_int_equal(cap, 8 * MIB);
    memset(a, 1, cap);
    bridge_pool_put(a, cap);
    assert_int_equal(bridge_pool_idle(), 8 * MIB);
    b = bridge_pool_get(5 * MIB, &cap2); /* within twice: the idle one */
    assert_ptr_equal(b, a);
    assert_int_equal(cap2, 8 * MIB);
    assert_int_equal(bridge_pool_idle(), 0);
    bridge_pool_put(b, cap2);
    b = bridge_pool_get(1 * MIB, &cap2); /* 8 MiB for 1 MiB would waste the budget */
    assert_ptr_not_equal(b, a);
    assert_int_equal(cap2, 1 * MIB);
    bridge_pool_put(b, cap2);
    assert_int_equal(bridge_pool_idle(), 9 * MIB);
    bridge_pool_unref();
    assert_int_equal(bridge_pool_idle(), 0); /* the last user took the idle memory along */
}

static void test_small_buffers_are_not_kept(void **state)
{
    size_t cap;
    void *a;

    (void)state;
    bridge_pool_ref();
    a = bridge_pool_get(BRIDGE_POOL_MIN - 1, &cap);
    assert_non_null(a);
    assert_int_equal(cap, BRIDGE_POOL_MIN - 1);
    bridge_pool_put(a, cap);
    assert_int_equal(bridge_pool_idle(), 0);
    bridge_pool_unref();
}

static void test_idle_bytes_are_bounded(void **state)
{
    enum { N = BRIDGE_POOL_IDLE_MAX / (8 * MIB) + 2 };
    void *bufs[N];
    size_t cap;

    (void)state;
    bridge_pool_ref();
    for (int i = 0; i < N; i++)
        assert_non_null(bufs[i] = bridge_pool_get(8 * MIB, &cap));
    for (int i = 0; i < N; i++)
        bridge_pool_put(bufs[i], 8 * MIB);
    assert_int_equal(bridge_pool_idle(), BRIDGE_POOL_IDLE_MAX);
    bridge_pool_unref();
    assert_int_equal(bridge_pool_idle(), 0);
}

static void test_nothing_kept_without_a_user(void **state)
{
    size_t cap;
    void *a = bridge_pool_get(BRIDGE_POOL_MIN, &cap);

    (void)state;
    assert_non_null(a);
    bridge_pool_put(a, cap);
    assert_int_equal(bridge_pool_idle(), 0);
}

/* In a child (SIGSEGV at its default, not cmocka's or a sanitizer's handler): writes the
 * byte at offset off from the end (off >= 0) or start (off < 0) of a new large buffer,
 * after all of it. Returns the signal that ended the child, 0 when the write went through. */
static int child_writes_at(ptrdiff_t off)
{
    pid_t pid = fork();
    int status = 0;

    assert_true(pid >= 0);
    if (pid == 0) {
        size_t cap;
        uint8_t *a = bridge_pool_get(BRIDGE_POOL_MIN + 1, &cap);

        signal(SIGSEGV, SIG_DFL);
        memset(a, 1, cap); /* all of cap is the caller's */
        a[off < 0 ? off : (ptrdiff_t)cap + off] = 2;
        _exit(0);
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return WIFSIGNALED(status) ? WTERMSIG(status) : 0;
}

/* A large buffer lies between inaccessible pages: a run past either end faults at once
 * instead of landing on other memory (the sanitizers do not watch mappings). */
static void test_a_run_past_a_large_buffer_faults(void **state)
{
    (void)state;
    assert_int_equal(child_writes_at(0), SIGSEGV);
    assert_int_equal(child_writes_at(-1), SIGSEGV);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_large_buffer_is_reused),
        cmocka_unit_test(test_small_buffers_are_not_kept),
        cmocka_unit_test(test_idle_bytes_are_bounded),
        cmocka_unit_test(test_nothing_kept_without_a_user),
        cmocka_unit_test(test_a_run_past_a_large_buffer_faults),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
