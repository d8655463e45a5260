/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/test_channel_table.c — the channel's outstanding-I/O table and released
 * queue (transport/channel/chan_table.c) and descriptor lists (chan_desc.c): lookup by
 * MessageId, duplicates, release, each cookie taken exactly once, teardown drain. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "chan_desc.h"
#include "chan_table.h"
#include "th_smb2.h"

static void add_find_and_duplicate(void **state)
{
    struct chan_table t;
    struct chan_io *io, *again;

    (void)state;
    chan_table_init(&t);
    assert_int_equal(chan_table_add(&t, 7, 3, &io), 0);
    assert_true(io->message_id == 7);
    assert_int_equal(io->ndescs, 3);
    assert_non_null(io->descs);
    assert_int_equal(io->kind, CHAN_PASS);
    assert_null(io->cookie);
    io->descs[2].length = 9; /* room for three */
    assert_ptr_equal(chan_table_find(&t, 7), io);
    assert_null(chan_table_find(&t, 8));
    assert_int_equal(chan_table_add(&t, 7, 0, &again), -EEXIST);
    assert_int_equal(chan_table_add(&t, 8, 0, &again), 0);
    assert_null(again->descs);
    assert_int_equal(chan_table_outstanding(&t), 2);
    chan_table_fini(&t);
}

static void released_cookies_come_out_once(void **state)
{
    struct chan_table t;
    struct chan_io *a, *b;
    struct chan_released r;
    int ca, cb;

    (void)state;
    chan_table_init(&t);
    assert_int_equal(chan_table_add(&t, 1, 0, &a), 0);
    assert_int_equal(chan_table_add(&t, 2, 0, &b), 0);
    a->cookie = &ca;
    b->cookie = &cb;
    b->invalidated = 1;
    assert_int_equal(chan_table_take_released(&t, &r), 0);
    chan_table_release(&t, b);
    assert_ptr_equal(b->cookie, &cb); /* readable until taken */
    assert_null(chan_table_find(&t, 2));
    assert_int_equal(chan_table_outstanding(&t), 1);
    assert_int_equal(chan_table_take_released(&t, &r), 1);
    assert_ptr_equal(r.cookie, &cb);
    assert_int_equal(r.invalidated, 1);
    assert_int_equal(chan_table_take_released(&t, &r), 0);
    /* the MessageId may be used again once released */
    assert_int_equal(chan_table_add(&t, 2, 0, &b), 0);
    chan_table_fini(&t);
}

static void release_all_drains_every_cookie(void **state)
{
    struct chan_table t;
    struct chan_io *io;
    struct chan_released r;
    int cookies[50], seen[50] = { 0 };

    (void)state;
    chan_table_init(&t);
    for (int i = 0; i < 50; i++) {
        assert_int_equal(chan_table_add(&t, (uint64_t)i * 1000, 1, &io), 0);
        io->cookie = &cookies[i];
    }
    chan_table_release(&t, chan_table_find(&t, 3000));
    chan_table_release_all(&t);
    assert_int_equal(chan_table_outstanding(&t), 0);
    while (chan_table_take_released(&t, &r))
        seen[(int *)r.cookie - cookies]++;
    for (int i = 0; i < 50; i++)
        assert_int_equal(seen[i], 1);
    chan_table_fini(&t);
}

static void fini_frees_what_was_not_taken(void **state)
{
    struct chan_table t;
    struct chan_io *io;

    (void)state;
    chan_table_init(&t);
    assert_int_equal(chan_table_add(&t, 1, 2, &io), 0);
    assert_int_equal(chan_table_add(&t, 2, 0, &io), 0);
    chan_table_release(&t, io);
    chan_table_fini(&t); /* the sanitizer build checks nothing leaks */
    assert_int_equal(chan_table_outstanding(&t), 0);
}

static void desc_list_round_trips_at_2_2_3_1_offsets(void **state)
{
    const struct smbd_buffer_desc d[2] = {
        { .offset = 0x0102030405060708ull, .token = 0x0A0B0C0D, .length = 0x11121314 },
        { .offset = 0xF0E0D0C0B0A09080ull, .token = 0x01010101, .length = 0x20 },
    };
    uint8_t out[32], exp[32];
    struct smbd_buffer_desc back;

    (void)state;
    chan_desc_put(out, d, 2);
    th_smb2_desc(exp, d[0].offset, d[0].token, d[0].length);
    th_smb2_desc(exp + 16, d[1].offset, d[1].token, d[1].length);
    assert_memory_equal(out, exp, sizeof(exp));
    chan_desc_get(out, 1, &back);
    assert_true(back.offset == d[1].offset);
    assert_int_equal(back.token, d[1].token);
    assert_int_equal(back.length, d[1].length);
    assert_int_equal(CHAN_MAX_DESCS, 4095);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(add_find_and_duplicate),
        cmocka_unit_test(released_cookies_come_out_once),
        cmocka_unit_test(release_all_drains_every_cookie),
        cmocka_unit_test(fini_frees_what_was_not_taken),
        cmocka_unit_test(desc_list_round_trips_at_2_2_3_1_offsets),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
