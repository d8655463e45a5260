/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/test_bridge_splice.c — READ data into a local stream by reference
 * (transport/bridge/bridge_splice.c), on real sockets: only AF_UNIX streams splice; the
 * reader gets the buffer's pages, not a copy, so a held buffer goes back to the pool only
 * once the reader is past it, even on a new stream where the socket's count of unread
 * memory exceeds all bytes written so far; at the end what is unread is unmapped, and the
 * reader still reads it whole. */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "bridge_pool.h"
#include "bridge_splice.h"
#include "th_sock.h"

#define BIG (1u << 20)

/* A socketpair whose first end takes BIG bytes at once. */
static void local_pair(int sv[2])
{
    th_sock_writer_pair(sv, 4 * BIG);
}

/* Each splicing test: a local pair (sv[0] the writer's end, -1 once closed), splicing on. */
struct rig {
    int sv[2];
    struct bridge_splice sp;
};

static int rig_setup(void **state)
{
    static struct rig r;

    bridge_pool_ref();
    local_pair(r.sv);
    bridge_splice_init(&r.sp, r.sv[0], 1);
    assert_true(r.sp.on);
    *state = &r;
    return 0;
}

static int rig_teardown(void **state)
{
    struct rig *r = *state;

    if (r->sv[0] >= 0)
        close(r->sv[0]);
    if (r->sv[1] >= 0)
        close(r->sv[1]);
    bridge_pool_unref();
    return 0;
}

/* Splices the whole of a new pool buffer of BIG bytes filled with seed into sv[0]. */
static uint8_t *splice_big(struct bridge_splice *sp, int fd, unsigned seed, size_t *cap)
{
    uint8_t *alloc = bridge_pool_get(BIG, cap);

    assert_non_null(alloc);
    for (size_t i = 0; i < BIG; i++)
        alloc[i] = (uint8_t)(i * 5 + seed);
    assert_int_equal(bridge_splice_out(sp, fd, alloc, BIG), BIG);
    return alloc;
}

static void test_only_local_streams_splice(void **state)
{
    int sv[2], tcp = socket(AF_INET, SOCK_STREAM, 0);

    (void)state;
    assert_true(tcp >= 0);
    assert_int_equal(bridge_splice_usable(tcp), 0);
    close(tcp);
    assert_int_equal(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv), 0);
    assert_int_equal(bridge_splice_usable(sv[0]), 0);
    close(sv[0]);
    close(sv[1]);
    local_pair(sv);
    assert_int_equal(bridge_splice_usable(sv[0]), 1); /* Linux has both since 2.6.38 */
    close(sv[0]);
    close(sv[1]);
}

/* Why a buffer is held: what the reader reads is the page as it is then. */
static void test_the_reader_gets_the_pages(void **state)
{
    static uint8_t got[BIG];
    struct rig *r = *state;
    size_t cap;
    uint8_t *alloc = splice_big(&r->sp, r->sv[0], 1, &cap);

    memset(alloc, 0x42, 4096);
    assert_int_equal(th_sock_drain(r->sv[1], got, sizeof(got)), BIG);
    assert_int_equal(got[0], 0x42);
    assert_int_equal(got[4095], 0x42);
    assert_int_equal(got[4096], (uint8_t)(4096 * 5 + 1));
    bridge_pool_put(alloc, cap);
}

/* A splice that fails (the reader is gone) says why and turns splicing off: the caller
 * writes the bytes by copy from then on, which reports the error as usual. */
static void test_failed_splice_turns_splicing_off(void **state)
{
    struct rig *r = *state;
    size_t cap;
    uint8_t *alloc = bridge_pool_get(BIG, &cap);

    assert_non_null(alloc);
    memset(alloc, 0x55, BIG);
    close(r->sv[1]);
    r->sv[1] = -1;
    assert_int_equal(bridge_splice_out(&r->sp, r->sv[0], alloc, BIG), -EPIPE);
    assert_false(r->sp.on);
    assert_int_equal(r->sp.bytes, 0);
    bridge_pool_put(alloc, cap);
}

/* The first large message of a stream: the socket counts more unread memory (each
 * message at its truesize) than the stream's bytes written so far. Nothing is read, so
 * nothing may be given back. */
static void test_a_new_stream_holds_what_is_unread(void **state)
{
    static uint8_t got[BIG];
    struct rig *r = *state;
    size_t cap;
    uint8_t *alloc;

    assert_int_equal(send(r->sv[0], "hello", 5, 0), 5);
    assert_int_equal(th_sock_drain(r->sv[1], got, 5), 5);
    alloc = splice_big(&r->sp, r->sv[0], 2, &cap);
    assert_int_equal(bridge_splice_hold(&r->sp, alloc, cap, 5 + BIG), 0);
    bridge_splice_reap(&r->sp, r->sv[0], 5 + BIG);
    assert_int_equal(bridge_splice_held(&r->sp), 1);
    assert_int_equal(th_sock_drain(r->sv[1], got, BIG / 2), BIG / 2);
    bridge_splice_reap(&r->sp, r->sv[0], 5 + BIG);
    assert_int_equal(bridge_splice_held(&r->sp), 1);
    assert_int_equal(bridge_pool_idle(), 0);
    assert_int_equal(th_sock_drain(r->sv[1], got + BIG / 2, BIG / 2), BIG / 2);
    for (size_t i = 0; i < BIG; i++)
        assert_int_equal(got[i], (uint8_t)(i * 5 + 2));
    bridge_splice_reap(&r->sp, r->sv[0], 5 + BIG);
    assert_int_equal(bridge_splice_held(&r->sp), 0);
    assert_int_equal(bridge_pool_idle(), cap);
}

/* Two buffers: reading past the first gives back the first only. */
static void test_buffers_go_back_in_order(void **state)
{
    static uint8_t got[2 * BIG];
    struct rig *r = *state;
    size_t cap1, cap2;
    uint8_t *a1 = splice_big(&r->sp, r->sv[0], 3, &cap1), *a2;

    assert_int_equal(bridge_splice_hold(&r->sp, a1, cap1, BIG), 0);
    a2 = splice_big(&r->sp, r->sv[0], 4, &cap2);
    assert_int_equal(bridge_splice_hold(&r->sp, a2, cap2, 2 * BIG), 0);
    assert_int_equal(r->sp.bytes, 2 * BIG);
    assert_int_equal(th_sock_drain(r->sv[1], got, BIG + BIG / 2), BIG + BIG / 2);
    bridge_splice_reap(&r->sp, r->sv[0], 2 * BIG);
    assert_int_equal(bridge_splice_held(&r->sp), 1);
    assert_int_equal(bridge_pool_idle(), cap1);
    assert_int_equal(th_sock_drain(r->sv[1], got + BIG + BIG / 2, BIG / 2), BIG / 2);
    bridge_splice_end(&r->sp, r->sv[0], 2 * BIG);
    assert_int_equal(bridge_splice_held(&r->sp), 0);
    assert_int_equal(bridge_pool_idle(), cap1 + cap2);
}

/* The stream ends before the reader read: the buffer is unmapped, and a buffer the pool
 * hands out next, written all over, does not change what the reader reads. */
static void test_the_end_unmaps_what_is_unread(void **state)
{
    static uint8_t got[BIG];
    struct rig *r = *state;
    size_t cap, cap2;
    uint8_t *alloc = splice_big(&r->sp, r->sv[0], 6, &cap), *next;

    assert_int_equal(bridge_splice_hold(&r->sp, alloc, cap, BIG), 0);
    bridge_splice_end(&r->sp, r->sv[0], BIG);
    assert_int_equal(bridge_splice_held(&r->sp), 0);
    assert_int_equal(bridge_pool_idle(), 0);
    close(r->sv[0]); /* the reader still gets every byte, then EOF */
    r->sv[0] = -1;
    next = bridge_pool_get(BIG, &cap2);
    memset(next, 0xee, cap2);
    assert_int_equal(th_sock_drain(r->sv[1], got, sizeof(got)), BIG);
    for (size_t i = 0; i < BIG; i++)
        assert_int_equal(got[i], (uint8_t)(i * 5 + 6));
    assert_int_equal(recv(r->sv[1], got, 1, 0), 0);
    bridge_pool_put(next, cap2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_only_local_streams_splice),
        cmocka_unit_test_setup_teardown(test_the_reader_gets_the_pages, rig_setup, rig_teardown),
        cmocka_unit_test_setup_teardown(test_failed_splice_turns_splicing_off, rig_setup,
                                        rig_teardown),
        cmocka_unit_test_setup_teardown(test_a_new_stream_holds_what_is_unread, rig_setup,
                                        rig_teardown),
        cmocka_unit_test_setup_teardown(test_buffers_go_back_in_order, rig_setup, rig_teardown),
        cmocka_unit_test_setup_teardown(test_the_end_unmaps_what_is_unread, rig_setup,
                                        rig_teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
