/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/test_bridge_outq.c — the bridge's stream output queue (transport/bridge/
 * bridge_outq.c): copied pieces and adopted allocations leave in order through a socket
 * that takes a little at a time, nothing is appended into an adopted allocation, and
 * an adopted allocation goes back to bridge_pool once written (or when the queue is freed).
 * Splicing (bridge_splice): adopted bytes go by reference in the same order, their
 * allocation is held until read, and one the socket may still reference is never pooled. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "bridge_outq.h"
#include "bridge_pool.h"
#include "th_sock.h"

#define BIG (1u << 20)

static void append_text(struct bridge_outq *q, const char *text)
{
    struct iovec iov = { (void *)(uintptr_t)text, strlen(text) };

    assert_int_equal(bridge_outq_append(q, &iov, 1, 0), 0);
}

static void test_order_across_copies_and_adoptions(void **state)
{
    static uint8_t got[BIG + 64], want[BIG + 64];
    struct bridge_outq q;
    size_t cap, have = 0, n = 0;
    uint8_t *alloc;
    int sv[2], sndbuf = 4096;

    (void)state;
    bridge_pool_ref();
    th_sock_writer_pair(sv, sndbuf);
    bridge_outq_init(&q, 256, 4096);
    append_text(&q, "head:");
    alloc = bridge_pool_get(BIG + 16, &cap);
    assert_non_null(alloc);
    for (size_t i = 0; i < BIG; i++)
        alloc[16 + i] = (uint8_t)(i * 7 + 1);
    assert_int_equal(bridge_outq_adopt(&q, alloc, cap, alloc + 16, BIG), 0);
    append_text(&q, ":tail"); /* a new copy segment after the adopted one */
    assert_int_equal(bridge_outq_len(&q), 5 + BIG + 5);
    memcpy(want, "head:", 5);
    memcpy(want + 5, alloc + 16, BIG);
    memcpy(want + 5 + BIG, ":tail", 5);
    while (bridge_outq_len(&q) > 0) {
        ssize_t w = bridge_outq_write(&q, sv[0], NULL, 0);

        assert_true(w >= 0);
        have += th_sock_drain(sv[1], got + have, sizeof(got) - have);
        assert_true(++n < 100000);
    }
    have += th_sock_drain(sv[1], got + have, sizeof(got) - have);
    assert_int_equal(have, 10 + BIG);
    assert_memory_equal(got, want, have);
    assert_int_equal(bridge_pool_idle(), cap); /* the adopted allocation went back */
    bridge_outq_free(&q);
    close(sv[0]);
    close(sv[1]);
    bridge_pool_unref();
}

static void test_free_returns_an_unwritten_adoption(void **state)
{
    struct bridge_outq q;
    size_t cap;
    uint8_t *alloc;

    (void)state;
    bridge_pool_ref();
    bridge_outq_init(&q, 256, 4096);
    alloc = bridge_pool_get(BIG, &cap);
    assert_non_null(alloc);
    assert_int_equal(bridge_outq_adopt(&q, alloc, cap, alloc, BIG), 0);
    append_text(&q, "x");
    bridge_outq_free(&q);
    assert_int_equal(bridge_outq_len(&q), 0);
    assert_int_equal(bridge_pool_idle(), cap);
    bridge_pool_unref();
}

static void test_write_error_is_reported(void **state)
{
    struct bridge_outq q;
    int sv[2];

    (void)state;
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    close(sv[1]);
    bridge_outq_init(&q, 256, 4096);
    append_text(&q, "lost");
    assert_int_equal(bridge_outq_write(&q, sv[0], NULL, 0), -EPIPE); /* MSG_NOSIGNAL: no SIGPIPE */
    assert_int_equal(bridge_outq_len(&q), 4);
    bridge_outq_free(&q);
    close(sv[0]);
}

static void fill(uint8_t *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)(i * 13 + seed);
}

static void test_splicing_keeps_order_and_holds_the_buffer_until_read(void **state)
{
    static uint8_t got[BIG + 64], want[BIG + 64];
    struct bridge_splice sp;
    struct bridge_outq q;
    size_t cap, have = 0, n = 0;
    uint64_t pos = 0;
    uint8_t *alloc;
    int sv[2], sndbuf = 4096;

    (void)state;
    bridge_pool_ref();
    th_sock_writer_pair(sv, sndbuf);
    bridge_splice_init(&sp, sv[0], 1);
    assert_true(sp.on);
    bridge_outq_init(&q, 256, 4096);
    append_text(&q, "head:");
    alloc = bridge_pool_get(BIG + 16, &cap);
    assert_non_null(alloc);
    fill(alloc + 16, BIG, 1);
    assert_int_equal(bridge_outq_adopt(&q, alloc, cap, alloc + 16, BIG), 0);
    append_text(&q, ":tail");
    memcpy(want, "head:", 5);
    memcpy(want + 5, alloc + 16, BIG);
    memcpy(want + 5 + BIG, ":tail", 5);
    while (bridge_outq_len(&q) > 0) {
        ssize_t w = bridge_outq_write(&q, sv[0], &sp, pos);

        assert_true(w >= 0);
        pos += (uint64_t)w;
        if (bridge_outq_len(&q) < 5) /* spliced whole, the reader not yet past it: held */
            assert_int_equal(bridge_splice_held(&sp), 1);
        have += th_sock_drain(sv[1], got + have, sizeof(got) - have);
        assert_true(++n < 100000);
    }
    have += th_sock_drain(sv[1], got + have, sizeof(got) - have);
    assert_int_equal(have, 10 + BIG);
    assert_memory_equal(got, want, have);
    assert_int_equal(sp.bytes, BIG);        /* every adopted byte by reference */
    assert_int_equal(bridge_pool_idle(), 0); /* held, not pooled, until a reap */
    bridge_splice_reap(&sp, sv[0], pos);
    assert_int_equal(bridge_splice_held(&sp), 0);
    assert_int_equal(bridge_pool_idle(), cap);
    bridge_outq_free(&q);
    bridge_splice_end(&sp, sv[0], pos);
    close(sv[0]);
    close(sv[1]);
    bridge_pool_unref();
}

/* A queue freed while its adopted message is partly spliced and unread: the allocation is
 * unmapped, not pooled, so a buffer taken from the pool next cannot be written over the
 * bytes the reader still has to read. */
static void test_free_never_pools_a_partly_spliced_buffer(void **state)
{
    static uint8_t got[BIG], want[BIG];
    struct bridge_splice sp;
    struct bridge_outq q;
    size_t cap, cap2, have;
    uint8_t *alloc, *next;
    ssize_t w;
    int sv[2], sndbuf = 65536;

    (void)state;
    bridge_pool_ref();
    th_sock_writer_pair(sv, sndbuf);
    bridge_splice_init(&sp, sv[0], 1);
    bridge_outq_init(&q, 256, 4096);
    alloc = bridge_pool_get(BIG, &cap);
    fill(alloc, BIG, 7);
    memcpy(want, alloc, BIG);
    assert_int_equal(bridge_outq_adopt(&q, alloc, cap, alloc, BIG), 0);
    w = bridge_outq_write(&q, sv[0], &sp, 0);
    assert_true(w > 0 && (size_t)w < BIG); /* the socket took a part */
    bridge_outq_free(&q);
    bridge_splice_end(&sp, sv[0], (uint64_t)w);
    assert_int_equal(bridge_pool_idle(), 0);
    next = bridge_pool_get(BIG, &cap2);
    memset(next, 0xee, cap2);
    have = th_sock_drain(sv[1], got, sizeof(got));
    assert_int_equal(have, (size_t)w);
    assert_memory_equal(got, want, have);
    bridge_pool_put(next, cap2);
    close(sv[0]);
    close(sv[1]);
    bridge_pool_unref();
}

/* Splicing into a socket whose reader is gone fails like a write (EPIPE), raises no
 * SIGPIPE (it would end this test), and leaves the bytes queued. */
static void test_splice_into_a_closed_socket_is_an_error(void **state)
{
    struct bridge_splice sp;
    struct bridge_outq q;
    size_t cap;
    uint8_t *alloc;
    int sv[2];

    (void)state;
    bridge_pool_ref();
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    bridge_splice_init(&sp, sv[0], 1);
    close(sv[1]);
    bridge_outq_init(&q, 256, 4096);
    alloc = bridge_pool_get(BIG, &cap);
    fill(alloc, BIG, 3);
    assert_int_equal(bridge_outq_adopt(&q, alloc, cap, alloc, BIG), 0);
    assert_int_equal(bridge_outq_write(&q, sv[0], &sp, 0), -EPIPE);
    assert_int_equal(bridge_outq_len(&q), BIG);
    bridge_outq_free(&q);
    bridge_splice_end(&sp, sv[0], 0);
    close(sv[0]);
    bridge_pool_unref();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_order_across_copies_and_adoptions),
        cmocka_unit_test(test_free_returns_an_unwritten_adoption),
        cmocka_unit_test(test_write_error_is_reported),
        cmocka_unit_test(test_splicing_keeps_order_and_holds_the_buffer_until_read),
        cmocka_unit_test(test_free_never_pools_a_partly_spliced_buffer),
        cmocka_unit_test(test_splice_into_a_closed_socket_is_an_error),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
