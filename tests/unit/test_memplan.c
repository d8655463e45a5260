/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/test_memplan.c — the connect-time plan that fits a connection into what the
 * process may still pin (transport/smbd/smbd_memplan.c): as configured when it fits;
 * the I/O first, then the credits, then the I/O again shrink when it does not, each plan
 * within the room it was made for; refused exactly below the smallest connection. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "sd_pinned.h"
#include "smbd_memplan.h"

#define KIB 1024u
#define MIB (1024u * 1024u)

/* The shim's defaults: 255 credits, 8136-byte sends, 8 KiB receives. */
static struct smbd_config shim_cfg(void)
{
    struct smbd_config c;

    smbd_config_default(&c, SMBD_ROLE_ACTIVE);
    c.receive_credit_max = c.send_credit_target = 255;
    c.max_send_size = 8136;
    c.max_receive_size = 8192;
    c.max_read_write_size = 8 * MIB;
    return c;
}

static void assert_within(const struct smbd_memplan *p, uint64_t room)
{
    assert_true(p->fixed + p->reserve <= room);
    assert_true(p->reserve >= sd_pinned_cost_len(p->io));
    assert_true(p->credits >= SMBD_MEMPLAN_MIN_CREDITS);
}

static void test_layout_of_the_defaults(void **state)
{
    struct smbd_config c = shim_cfg();

    (void)state;
    assert_int_equal(smbd_recv_stride(&c), 8192);
    assert_int_equal(smbd_send_stride(&c), 8192);
    assert_int_equal(smbd_send_base_slots(&c, c.max_send_size), 136); /* 1088 KiB of 8 KiB */
    /* negotiated with ksmbd's 1364-byte receives: the window, 255 + one batch of 16 */
    assert_int_equal(smbd_send_base_slots(&c, 1364), 271);
    c.send_credit_target = 16;
    assert_int_equal(smbd_send_base_slots(&c, c.max_send_size), 32); /* 16 + one batch */
}

static void test_unlimited_and_debian_default_fit_as_configured(void **state)
{
    struct smbd_config c = shim_cfg();
    struct smbd_memplan p;

    (void)state;
    assert_int_equal(smbd_memplan_make(&c, 2 * MIB, UINT64_MAX, &p), SMBD_MEMPLAN_FITS);
    assert_int_equal(p.credits, 255);
    assert_int_equal(p.io, 2 * MIB);
    /* 255 receives of 8 KiB and 136 send buffers, plus one 2 MiB I/O, fit 8 MiB */
    assert_int_equal(smbd_memplan_make(&c, 2 * MIB, 8 * MIB, &p), SMBD_MEMPLAN_FITS);
    assert_within(&p, 8 * MIB);
    /* 2040 KiB of receives, 1088 KiB of send buffers, 512 KiB for the device's queues */
    assert_true(p.fixed > 3 * MIB + 512 * KIB && p.fixed < 3 * MIB + 768 * KIB);
    assert_true(p.full > 8 * MIB); /* eight I/Os in flight need more */
}

static void test_the_io_shrinks_first_then_the_credits_then_the_io(void **state)
{
    struct smbd_config c = shim_cfg();
    struct smbd_memplan p;

    (void)state;
    /* 5 MiB: the credits stay, the I/O shrinks (but not below 1 MiB) */
    assert_int_equal(smbd_memplan_make(&c, 2 * MIB, 5 * MIB, &p), SMBD_MEMPLAN_SHRUNK);
    assert_int_equal(p.credits, 255);
    assert_true(p.io >= MIB && p.io < 2 * MIB && p.io % (64 * KIB) == 0);
    assert_within(&p, 5 * MIB);
    /* 3 MiB: a 1 MiB I/O with fewer credits */
    assert_int_equal(smbd_memplan_make(&c, 2 * MIB, 3 * MIB, &p), SMBD_MEMPLAN_SHRUNK);
    assert_int_equal(p.io, MIB);
    assert_true(p.credits < 255);
    assert_within(&p, 3 * MIB);
    /* 1 MiB: the fewest credits and what is left for the I/O */
    assert_int_equal(smbd_memplan_make(&c, 2 * MIB, MIB, &p), SMBD_MEMPLAN_SHRUNK);
    assert_int_equal(p.credits, SMBD_MEMPLAN_MIN_CREDITS);
    assert_true(p.io >= 64 * KIB && p.io < MIB);
    assert_within(&p, MIB);
}

static void test_refused_exactly_below_the_smallest_connection(void **state)
{
    struct smbd_config c = shim_cfg();
    struct smbd_memplan p;
    uint64_t min;

    (void)state;
    smbd_memplan_make(&c, 2 * MIB, 0, &p);
    min = p.need_min;
    assert_true(min > SMBD_MEMPLAN_QUEUES && min < MIB);
    assert_int_equal(smbd_memplan_make(&c, 2 * MIB, min - 1, &p), SMBD_MEMPLAN_REFUSED);
    assert_int_equal(smbd_memplan_make(&c, 2 * MIB, min, &p), SMBD_MEMPLAN_SHRUNK);
    assert_within(&p, min);
    assert_int_equal(p.io, 64 * KIB);
}

/* Every room from nothing to 12 MiB: a plan fits its room, never asks for a larger I/O
 * than wanted, and gives no less I/O or credits to a larger room. */
static void test_every_room_gets_a_plan_within_it(void **state)
{
    struct smbd_config c = shim_cfg();
    struct smbd_memplan p, prev = { 0 };
    int had = 0;

    (void)state;
    for (uint64_t room = 0; room <= 12 * MIB; room += 37 * KIB) {
        enum smbd_memplan_fit fit = smbd_memplan_make(&c, 2 * MIB, room, &p);

        if (fit == SMBD_MEMPLAN_REFUSED) {
            assert_true(room < p.need_min);
            assert_false(had);
            continue;
        }
        assert_within(&p, room);
        assert_true(p.io <= 2 * MIB && p.io >= 64 * KIB);
        if (had)
            assert_true(p.credits > prev.credits ||
                        (p.credits == prev.credits && p.io >= prev.io));
        prev = p;
        had = 1;
    }
    assert_true(had);
}

/* The relay offers MaxReadWriteSize 8 MiB: at 8 MiB it offers less, never more than fits. */
static void test_the_relays_io_at_the_debian_default(void **state)
{
    struct smbd_config c = shim_cfg();
    struct smbd_memplan p;

    (void)state;
    assert_int_equal(smbd_memplan_make(&c, 8 * MIB, 8 * MIB, &p), SMBD_MEMPLAN_SHRUNK);
    assert_int_equal(p.credits, 255);
    assert_true(p.io >= MIB && p.io < 8 * MIB);
    assert_within(&p, 8 * MIB);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layout_of_the_defaults),
        cmocka_unit_test(test_unlimited_and_debian_default_fit_as_configured),
        cmocka_unit_test(test_the_io_shrinks_first_then_the_credits_then_the_io),
        cmocka_unit_test(test_refused_exactly_below_the_smallest_connection),
        cmocka_unit_test(test_every_room_gets_a_plan_within_it),
        cmocka_unit_test(test_the_relays_io_at_the_debian_default),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
