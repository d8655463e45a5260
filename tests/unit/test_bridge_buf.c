/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/test_bridge_buf.c — the bridge's growable byte buffer
 * (transport/bridge/bridge_buf.c): lazy allocation, FIFO order across appends and partial
 * consumes, cheap compaction instead of growth, geometric growth, giving memory back only
 * after small traffic, and handing an allocation over with the bytes it holds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bridge_buf.h"

#define BASE 4096u
#define IDLE 16384u

static void append_bytes(struct bridge_buf *b, uint8_t value, size_t len)
{
    uint8_t chunk[1024];
    struct iovec iov = { chunk, len };

    assert_true(len <= sizeof(chunk));
    memset(chunk, value, len);
    assert_int_equal(bridge_buf_append(b, &iov, 1, 0), 0);
}

static void test_lazy_and_fifo(void **state)
{
    struct bridge_buf b;
    uint8_t a[3] = { 1, 2, 3 }, c[4] = { 4, 5, 6, 7 };
    struct iovec iov[2] = { { a, sizeof(a) }, { c, sizeof(c) } };

    (void)state;
    bridge_buf_init(&b, BASE, IDLE);
    assert_null(b.data);
    assert_int_equal(bridge_buf_append(&b, iov, 2, 2), 0); /* skips 1, 2 */
    assert_int_equal(bridge_buf_len(&b), 5);
    assert_int_equal(b.cap, BASE);
    assert_memory_equal(bridge_buf_head(&b), ((uint8_t[]){ 3, 4, 5, 6, 7 }), 5);
    bridge_buf_consume(&b, 2);
    assert_memory_equal(bridge_buf_head(&b), ((uint8_t[]){ 5, 6, 7 }), 3);
    assert_int_equal(bridge_buf_append(&b, iov, 2, 7), 0); /* everything skipped */
    assert_int_equal(bridge_buf_len(&b), 3);
    bridge_buf_consume(&b, 3);
    assert_int_equal(b.head, 0); /* rewound */
    assert_int_equal(b.tail, 0);
    bridge_buf_free(&b);
    assert_null(b.data);
}

static void test_compacts_before_growing(void **state)
{
    struct bridge_buf b;

    (void)state;
    bridge_buf_init(&b, BASE, IDLE);
    for (int i = 0; i < 4; i++)
        append_bytes(&b, (uint8_t)i, 1000);
    bridge_buf_consume(&b, 3000); /* 1000 held at offset 3000 of 4096 */
    append_bytes(&b, 9, 1000);  /* fits only after moving to the front */
    assert_int_equal(b.cap, BASE);
    assert_int_equal(b.head, 0);
    assert_int_equal(bridge_buf_head(&b)[999], 3);
    assert_int_equal(bridge_buf_head(&b)[1000], 9);
    bridge_buf_free(&b);
}

static void test_grows_geometrically_keeping_bytes(void **state)
{
    struct bridge_buf b;
    uint8_t *room;

    (void)state;
    bridge_buf_init(&b, BASE, IDLE);
    append_bytes(&b, 7, 1000);
    room = bridge_buf_reserve(&b, BASE); /* 1000 + 4096 > 4096 */
    assert_non_null(room);
    assert_true(b.cap >= BASE + BASE / 2);
    assert_true(b.cap % 4096 == 0);
    assert_true(bridge_buf_room(&b) >= BASE);
    assert_int_equal(bridge_buf_head(&b)[999], 7);
    assert_ptr_equal(room, bridge_buf_head(&b) + 1000);
    bridge_buf_free(&b);
}

static void test_trim_after_small_traffic_only(void **state)
{
    struct bridge_buf b;

    (void)state;
    bridge_buf_init(&b, BASE, IDLE);
    assert_non_null(bridge_buf_reserve(&b, 4 * IDLE)); /* a large need */
    bridge_buf_commit(&b, 4 * IDLE);
    bridge_buf_consume(&b, 4 * IDLE);
    bridge_buf_trim(&b);
    assert_true(b.cap >= 4 * IDLE); /* large traffic: the buffer stays */
    append_bytes(&b, 1, 100);
    bridge_buf_trim(&b);
    assert_true(b.cap >= 4 * IDLE); /* not empty: nothing happens */
    bridge_buf_consume(&b, 100);
    bridge_buf_trim(&b);
    assert_null(b.data); /* only small needs since the last trim: given back */
    assert_int_equal(b.cap, 0);
    append_bytes(&b, 1, 100);
    assert_int_equal(b.cap, BASE);
    bridge_buf_consume(&b, 100);
    bridge_buf_trim(&b);
    assert_int_equal(b.cap, BASE); /* within idle_cap: kept */
    bridge_buf_free(&b);
}

/* A detached allocation keeps the consumed bytes where they were; the bytes after them
 * carry on in a new buffer. */
static void test_detach_hands_the_allocation_over(void **state)
{
    struct bridge_buf b;
    uint8_t *mem, *old, *first;
    size_t cap;

    (void)state;
    bridge_buf_init(&b, BASE, IDLE);
    append_bytes(&b, 1, 600);
    append_bytes(&b, 2, 50);
    old = b.data;
    first = bridge_buf_head(&b);
    assert_int_equal(bridge_buf_detach(&b, 600, &mem, &cap), 0);
    assert_ptr_equal(mem, old);
    assert_int_equal(cap, BASE);
    for (int i = 0; i < 600; i++)
        assert_int_equal(first[i], 1);
    assert_ptr_not_equal(b.data, old);
    assert_int_equal(bridge_buf_len(&b), 50);
    for (int i = 0; i < 50; i++)
        assert_int_equal(bridge_buf_head(&b)[i], 2);
    free(mem);
    bridge_buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lazy_and_fifo),
        cmocka_unit_test(test_compacts_before_growing),
        cmocka_unit_test(test_grows_geometrically_keeping_bytes),
        cmocka_unit_test(test_trim_after_small_traffic_only),
        cmocka_unit_test(test_detach_hands_the_allocation_over),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
