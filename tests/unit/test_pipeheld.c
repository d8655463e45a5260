/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/test_pipeheld.c — RDMA Write payload held in pipes (transport/sd_pipeheld.c),
 * on real pipes and sockets: bytes written in order from offset 0 stay out of memory and
 * come out of sd_pipeheld_emit in order; anything out of order puts what is held into
 * memory first, so memory then holds the last write of every byte; when the budget of
 * pipes is spent the region splits, its head in pipes and its tail in memory; a release
 * drops what is held and a new use of the memory starts over. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "sd_pipeheld.h"
#include "th_sock.h"

#define KIB 1024u
#define MIB (1024u * 1024u)

static uint8_t pattern(size_t i, unsigned seed)
{
    return (uint8_t)((i * 131u + seed * 7u) >> 3);
}

static uint8_t *region(size_t len)
{
    uint8_t *r = malloc(len);

    assert_non_null(r);
    memset(r, 0xee, len);
    return r;
}

/* n bytes of pattern seed written in at offset off of the region, in pieces of step. */
static void write_in(uint8_t *base, size_t len, size_t off, size_t n, unsigned seed, size_t step)
{
    uint8_t *tmp = malloc(step);

    assert_non_null(tmp);
    for (size_t done = 0; done < n; done += step) {
        size_t k = n - done < step ? n - done : step;
        struct sd_pipeheld *h = sd_pipeheld_begin(base, len, off + done);

        for (size_t i = 0; i < k; i++)
            tmp[i] = pattern(off + done + i, seed);
        size_t took = h ? sd_pipeheld_write_in(h, tmp, k) : 0;

        memcpy(base + off + done + took, tmp + took, k - took); /* the provider's part */
    }
    free(tmp);
}

static void assert_pattern(const uint8_t *p, size_t off, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != pattern(off + i, seed))
            fail_msg("byte %zu: 0x%02x, want 0x%02x", off + i, p[i], pattern(off + i, seed));
}

/* Everything emit gives for [base, base+n) read back from a socketpair, then what emit
 * did not take from memory; returns the bytes that came from the pipes. */
static size_t drain(uint8_t *base, size_t n, uint8_t *out)
{
    int sv[2];
    size_t off = 0, from_pipes = 0;

    th_sock_writer_pair(sv, (int)(n + MIB));
    while (off < n) {
        ssize_t k = sd_pipeheld_emit(base + off, n - off, sv[0]);

        if (k == -ENOENT) {
            memcpy(out + off, base + off, n - off);
            break;
        }
        assert_true(k > 0);
        for (size_t got = 0; got < (size_t)k;) {
            ssize_t r = read(sv[1], out + off + got, (size_t)k - got);

            assert_true(r > 0);
            got += (size_t)r;
        }
        off += (size_t)k;
        from_pipes += (size_t)k;
    }
    close(sv[0]);
    close(sv[1]);
    return from_pipes;
}

static void test_in_order_writes_stay_out_of_memory(void **state)
{
    (void)state;
    size_t len = 3 * MIB;
    uint8_t *r = region(len), *out = malloc(len);
    struct sd_pipeheld_stats s0, s1;

    sd_pipeheld_get_stats(&s0);
    write_in(r, len, 0, len, 1, 64 * KIB);
    for (size_t i = 0; i < len; i += 4096)
        assert_int_equal(r[i], 0xee); /* memory untouched */
    assert_int_equal(drain(r, len, out), len);
    assert_pattern(out, 0, len, 1);
    sd_pipeheld_get_stats(&s1);
    assert_int_equal(s1.held - s0.held, len);
    assert_int_equal(s1.copied - s0.copied, 0);
    /* emptied: the same memory's next use starts at 0 in pipes again */
    write_in(r, len, 0, MIB, 2, 64 * KIB);
    assert_int_equal(r[0], 0xee);
    assert_int_equal(drain(r, MIB, out), MIB);
    assert_pattern(out, 0, MIB, 2);
    sd_pipeheld_release(r, len);
    free(out);
    free(r);
}

/* Memory used again and again without a release in between (each use written whole in
 * order from 0 and emitted whole) stays in pipes every time: a use does not leave the
 * holder fewer pipes for the next. */
static void test_every_new_use_of_emptied_memory_is_held(void **state)
{
    (void)state;
    size_t len = 3 * MIB;
    uint8_t *r = region(len), *out = malloc(len);

    for (unsigned use = 0; use < 24; use++) {
        write_in(r, len, 0, len, use, 64 * KIB);
        assert_int_equal(r[len / 2], 0xee);
        assert_int_equal(drain(r, len, out), len);
        assert_pattern(out, 0, len, use);
    }
    sd_pipeheld_release(r, len);
    free(out);
    free(r);
}

static void test_materialize_puts_held_bytes_in_place(void **state)
{
    (void)state;
    size_t len = 2 * MIB;
    uint8_t *r = region(len);
    struct sd_pipeheld_stats s0, s1;

    sd_pipeheld_get_stats(&s0);
    write_in(r, len, 0, len, 3, 60 * KIB);
    sd_pipeheld_materialize(r + len - 1, 1); /* any byte of the region */
    assert_pattern(r, 0, len, 3);
    assert_int_equal(sd_pipeheld_emit(r, len, STDOUT_FILENO), -ENOENT);
    sd_pipeheld_get_stats(&s1);
    assert_int_equal(s1.copied - s0.copied, len);
    sd_pipeheld_release(r, len);
    free(r);
}

static void test_out_of_order_write_goes_to_memory_after_what_is_held(void **state)
{
    (void)state;
    size_t len = 2 * MIB;
    uint8_t *r = region(len), *out = malloc(len);

    write_in(r, len, MIB, MIB, 4, 64 * KIB);       /* not at 0: memory */
    assert_pattern(r + MIB, MIB, MIB, 4);
    write_in(r, len, 0, MIB, 5, 64 * KIB);         /* at 0: pipes */
    assert_int_equal(r[0], 0xee);
    write_in(r, len, 256 * KIB, 64 * KIB, 6, 64 * KIB); /* over held bytes: all to memory */
    assert_pattern(r, 0, 256 * KIB, 5);
    assert_pattern(r + 256 * KIB, 256 * KIB, 64 * KIB, 6);
    assert_pattern(r + 320 * KIB, 320 * KIB, MIB - 320 * KIB, 5);
    assert_pattern(r + MIB, MIB, MIB, 4);
    assert_int_equal(drain(r, len, out), 0);       /* nothing left in pipes */
    assert_memory_equal(out, r, len);
    sd_pipeheld_release(r, len);
    free(out);
    free(r);
}

static void test_a_skipped_offset_is_out_of_order(void **state)
{
    (void)state;
    size_t len = MIB;
    uint8_t *r = region(len);

    write_in(r, len, 0, 128 * KIB, 7, 64 * KIB);
    write_in(r, len, 512 * KIB, 64 * KIB, 8, 64 * KIB); /* a gap: what is held is placed */
    assert_pattern(r, 0, 128 * KIB, 7);
    assert_int_equal(r[128 * KIB], 0xee);
    assert_pattern(r + 512 * KIB, 512 * KIB, 64 * KIB, 8);
    sd_pipeheld_release(r, len);
    free(r);
}

static void test_spent_budget_splits_the_region(void **state)
{
    (void)state;
    size_t len = SD_PIPEHELD_BUDGET + 4 * MIB;
    uint8_t *r = region(len), *out = malloc(len);
    size_t from_pipes;

    write_in(r, len, 0, len, 9, 64 * KIB);
    from_pipes = drain(r, len, out);
    assert_true(from_pipes > 0);
    assert_true(from_pipes <= SD_PIPEHELD_BUDGET);
    assert_pattern(out, 0, len, 9);
    assert_pattern(r + from_pipes, from_pipes, len - from_pipes, 9); /* the tail, in memory */
    sd_pipeheld_release(r, len);
    free(out);
    free(r);
}

static void test_release_drops_what_is_held(void **state)
{
    (void)state;
    size_t len = MIB;
    uint8_t *r = region(len), *out = malloc(len);

    write_in(r, len, 0, len, 10, 64 * KIB);
    sd_pipeheld_release(r, len);
    assert_int_equal(sd_pipeheld_emit(r, len, STDOUT_FILENO), -ENOENT);
    assert_int_equal(r[0], 0xee);
    write_in(r, len, 0, len, 11, 64 * KIB); /* a new use of the memory */
    assert_int_equal(drain(r, len, out), len);
    assert_pattern(out, 0, len, 11);
    sd_pipeheld_release(r, len);
    free(out);
    free(r);
}

static void test_splice_in_from_a_socket(void **state)
{
    (void)state;
    size_t len = 2 * MIB, in = 0;
    uint8_t *r = region(len), *src = malloc(len), *out = malloc(len);
    int sv[2];
    struct sd_pipeheld *h;

    for (size_t i = 0; i < len; i++)
        src[i] = pattern(i, 12);
    th_sock_writer_pair(sv, (int)(len + MIB));
    assert_int_equal(write(sv[0], src, len), (ssize_t)len);
    h = sd_pipeheld_begin(r, len, 0);
    assert_non_null(h);
    while (in < len) {
        ssize_t k = sd_pipeheld_splice_in(h, sv[1], len - in);

        assert_true(k > 0);
        in += (size_t)k;
    }
    assert_int_equal(sd_pipeheld_splice_in(h, sv[1], 1), -EAGAIN); /* the socket is empty */
    close(sv[0]);
    assert_int_equal(sd_pipeheld_splice_in(h, sv[1], 1), 0);       /* and at its end */
    close(sv[1]);
    assert_int_equal(r[0], 0xee);
    assert_int_equal(drain(r, len, out), len);
    assert_memory_equal(out, src, len);
    sd_pipeheld_release(r, len);
    free(out);
    free(src);
    free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_in_order_writes_stay_out_of_memory),
        cmocka_unit_test(test_every_new_use_of_emptied_memory_is_held),
        cmocka_unit_test(test_materialize_puts_held_bytes_in_place),
        cmocka_unit_test(test_out_of_order_write_goes_to_memory_after_what_is_held),
        cmocka_unit_test(test_a_skipped_offset_is_out_of_order),
        cmocka_unit_test(test_spent_budget_splits_the_region),
        cmocka_unit_test(test_release_drops_what_is_held),
        cmocka_unit_test(test_splice_in_from_a_socket),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
