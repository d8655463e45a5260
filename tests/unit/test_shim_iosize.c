/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/test_shim_iosize.c — the READ/WRITE sizes the shim lets Samba's client use
 * on a tunnel (preload/shim_iosize.c): inline I/O fits the receiver's MaxFragmentedSize
 * with headers (transform, SMB2 header, WRITE body) to spare, channel I/O is bounded by
 * MaxReadWriteSize and the channel's own I/O size, and a server's smaller value is never
 * raised. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "shim_iosize.h"

#define KSMBD_FRAG 173910u  /* ksmbd's MaxFragmentedSize (seen in the VM tier) */
#define OUR_FRAG   8454144u /* the shim's default */
#define EIGHT_MIB  8388608u

/* The largest message a READ/WRITE of n bytes makes, sealed: transform 52 + header 64 +
 * WRITE body 48 (MS-SMB2 2.2.41, 2.2.1, 2.2.21). */
static uint32_t worst_message(uint32_t n)
{
    return 52 + 64 + 48 + n;
}

static void signed_session_writes_fit_the_peers_fragmented_size(void **state)
{
    struct shim_iosize_limits l = { .peer_max_fragmented = KSMBD_FRAG,
                                    .own_max_fragmented = OUR_FRAG,
                                    .max_read_write = EIGHT_MIB,
                                    .channel_threshold = 4096,
                                    .inline_only = 1 };
    uint32_t w = shim_iosize_cap(&l, SHIM_IO_WRITE, EIGHT_MIB);
    uint32_t r = shim_iosize_cap(&l, SHIM_IO_READ, EIGHT_MIB);

    (void)state;
    assert_true(worst_message(w) <= KSMBD_FRAG);
    assert_true(w > KSMBD_FRAG - 8192);      /* not needlessly small ... */
    assert_int_equal(w % 4096, 0);            /* ... and page-sized */
    /* the shim's default MaxFragmentedSize holds Samba's 8 MiB signed READ response */
    assert_int_equal(r, EIGHT_MIB);
    assert_true(worst_message(r) <= OUR_FRAG);
}

static void channel_io_is_bounded_by_max_read_write(void **state)
{
    struct shim_iosize_limits l = { .peer_max_fragmented = KSMBD_FRAG,
                                    .own_max_fragmented = 131072,
                                    .max_read_write = 1048576,
                                    .channel_io_size = EIGHT_MIB,
                                    .channel_threshold = 4096 };

    (void)state;
    assert_int_equal(shim_iosize_cap(&l, SHIM_IO_WRITE, EIGHT_MIB), 1048576);
    assert_int_equal(shim_iosize_cap(&l, SHIM_IO_READ, EIGHT_MIB), 1048576);
    /* the server's own smaller limit stays */
    assert_int_equal(shim_iosize_cap(&l, SHIM_IO_WRITE, 65536), 65536);
    /* requests the channel never carries stay inline both ways */
    assert_true(worst_message(shim_iosize_cap(&l, SHIM_IO_TRANS, EIGHT_MIB)) <= 131072);
    /* MaxReadWriteSize below the inline limit: I/O keeps the channel at that size rather
     * than going inline at the larger size (the channel's size, not the inline limit) */
    l.max_read_write = 65536;
    assert_int_equal(shim_iosize_cap(&l, SHIM_IO_WRITE, EIGHT_MIB), 65536);
    /* ... unless no I/O above the threshold fits it: then the inline limit */
    l.max_read_write = 4096;
    assert_int_equal(shim_iosize_cap(&l, SHIM_IO_WRITE, EIGHT_MIB),
                     shim_iosize_cap(&(struct shim_iosize_limits){
                                         .peer_max_fragmented = KSMBD_FRAG,
                                         .inline_only = 1 },
                                     SHIM_IO_WRITE, EIGHT_MIB));
}

/* SMBDIRECT_CHANNEL_IO_SIZE bounds the READs and WRITEs the channel carries, and nothing
 * else: not other requests, not I/O that stays inline, and never above MaxReadWriteSize. */
static void channel_io_takes_its_own_smaller_size(void **state)
{
    struct shim_iosize_limits l = { .peer_max_fragmented = KSMBD_FRAG,
                                    .own_max_fragmented = 131072,
                                    .max_read_write = EIGHT_MIB,
                                    .channel_io_size = 2097152,
                                    .channel_threshold = 4096 };

    (void)state;
    assert_int_equal(shim_iosize_cap(&l, SHIM_IO_READ, EIGHT_MIB), 2097152);
    assert_int_equal(shim_iosize_cap(&l, SHIM_IO_WRITE, EIGHT_MIB), 2097152);
    assert_int_equal(shim_iosize_cap(&l, SHIM_IO_READ, 1048576), 1048576);
    assert_true(worst_message(shim_iosize_cap(&l, SHIM_IO_TRANS, EIGHT_MIB)) <= 131072);
    l.channel_io_size = 16777216; /* above MaxReadWriteSize: that stays the bound */
    assert_int_equal(shim_iosize_cap(&l, SHIM_IO_READ, 16777216), EIGHT_MIB);
    assert_int_equal(shim_iosize_cap(&l, SHIM_IO_WRITE, 16777216), EIGHT_MIB);
    l.channel_io_size = 65536;    /* below the inline limit too */
    assert_int_equal(shim_iosize_cap(&l, SHIM_IO_WRITE, EIGHT_MIB), 65536);
    /* MaxReadWriteSize smaller than it (a server's, or SMBDIRECT_MAX_READ_WRITE_SIZE):
     * that, not the larger inline limit, which would send the I/O inline */
    l.own_max_fragmented = OUR_FRAG;
    l.channel_io_size = EIGHT_MIB;
    l.max_read_write = 4194304;
    assert_int_equal(shim_iosize_cap(&l, SHIM_IO_READ, EIGHT_MIB), 4194304);
    /* the inline limit above the channel's sizes (the shim's default MaxFragmentedSize
     * for READs): I/O above the threshold takes the channel all the same, so the bound
     * holds */
    l.max_read_write = EIGHT_MIB;
    l.channel_io_size = 2097152;
    assert_int_equal(shim_iosize_cap(&l, SHIM_IO_READ, EIGHT_MIB), 2097152);
    l.inline_only = 1;            /* I/O inline for good: the inline limits, not it */
    assert_true(shim_iosize_cap(&l, SHIM_IO_READ, EIGHT_MIB) > 2097152);
    assert_true(worst_message(shim_iosize_cap(&l, SHIM_IO_READ, EIGHT_MIB)) <= OUR_FRAG);
    assert_true(worst_message(shim_iosize_cap(&l, SHIM_IO_WRITE, EIGHT_MIB)) <= KSMBD_FRAG);
}

static void channel_off_or_threshold_above_inline_limit_stays_inline(void **state)
{
    struct shim_iosize_limits l = { .peer_max_fragmented = KSMBD_FRAG,
                                    .own_max_fragmented = OUR_FRAG,
                                    .max_read_write = EIGHT_MIB,
                                    .channel_threshold = 0 };
    uint32_t w;

    (void)state;
    w = shim_iosize_cap(&l, SHIM_IO_WRITE, EIGHT_MIB);
    assert_true(worst_message(w) <= KSMBD_FRAG);
    /* I/O at or below a 1 MiB threshold goes inline: 1 MiB would not fit ksmbd */
    l.channel_threshold = 1048576;
    assert_int_equal(shim_iosize_cap(&l, SHIM_IO_WRITE, EIGHT_MIB), w);
}

static void tiny_peer_limit_still_leaves_a_positive_size(void **state)
{
    struct shim_iosize_limits l = { .peer_max_fragmented = 100, .own_max_fragmented = 100,
                                    .inline_only = 1 };

    (void)state;
    assert_true(shim_iosize_cap(&l, SHIM_IO_WRITE, EIGHT_MIB) >= 1);
    l.peer_max_fragmented = 8192;
    assert_true(worst_message(shim_iosize_cap(&l, SHIM_IO_WRITE, EIGHT_MIB)) <= 8192);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(signed_session_writes_fit_the_peers_fragmented_size),
        cmocka_unit_test(channel_io_is_bounded_by_max_read_write),
        cmocka_unit_test(channel_io_takes_its_own_smaller_size),
        cmocka_unit_test(channel_off_or_threshold_above_inline_limit_stays_inline),
        cmocka_unit_test(tiny_peer_limit_still_leaves_a_positive_size),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
