/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/test_bridge_framer.c — the Direct-TCP framer
 * (transport/bridge/bridge_framer.c): message splitting under any chunking, the prefix,
 * malformed streams, and the buffer's memory policy (grow for big messages, back to the
 * base size when traffic is small). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "bridge_framer.h"
#include "bridge_pool.h"

/* Deterministic PRNG so failures reproduce. */
static uint64_t rng_state;
static uint32_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 16);
}

/* A byte stream of framed messages; payload byte j of message i is (i * 31 + j) & 0xFF. */
struct stream {
    uint8_t *bytes;
    size_t len;
    size_t count;
    size_t *msg_len;
};

static uint8_t payload_byte(size_t i, size_t j)
{
    return (uint8_t)(i * 31 + j);
}

static void stream_build(struct stream *s, const size_t *lens, size_t count)
{
    size_t total = 0, pos = 0;
    for (size_t i = 0; i < count; i++)
        total += 4 + lens[i];
    s->bytes = malloc(total ? total : 1);
    s->msg_len = malloc(count * sizeof(*s->msg_len));
    assert_non_null(s->bytes);
    assert_non_null(s->msg_len);
    for (size_t i = 0; i < count; i++) {
        bridge_framer_prefix((uint32_t)lens[i], s->bytes + pos);
        pos += 4;
        for (size_t j = 0; j < lens[i]; j++)
            s->bytes[pos++] = payload_byte(i, j);
        s->msg_len[i] = lens[i];
    }
    s->len = total;
    s->count = count;
}

static void stream_free(struct stream *s)
{
    free(s->bytes);
    free(s->msg_len);
}

static void assert_message(const uint8_t *msg, size_t len, const struct stream *s, size_t i)
{
    assert_true(i < s->count);
    assert_int_equal(len, s->msg_len[i]);
    for (size_t j = 0; j < len; j++)
        if (msg[j] != payload_byte(i, j))
            fail_msg("message %zu byte %zu differs", i, j);
}

/* Feeds the stream in chunks (chunk(n) picks each size, 0 = as much as offered) and
 * checks every message as soon as it pops. Returns the number of messages popped. */
static size_t feed(struct bridge_framer *f, const struct stream *s, size_t (*chunk)(size_t room))
{
    size_t pos = 0, popped = 0;
    while (pos < s->len) {
        uint8_t *dst;
        size_t room, n;
        const uint8_t *msg;
        size_t len;
        const char *why = NULL;
        int r;

        assert_int_equal(bridge_framer_space(f, &dst, &room), 0);
        assert_true(room > 0); /* all messages are popped before asking again */
        n = chunk(room);
        if (n == 0 || n > room)
            n = room;
        if (n > s->len - pos)
            n = s->len - pos;
        memcpy(dst, s->bytes + pos, n);
        bridge_framer_commit(f, n);
        pos += n;
        while ((r = bridge_framer_pop(f, &msg, &len, &why)) == 1)
            assert_message(msg, len, s, popped++);
        assert_int_equal(r, 0);
    }
    assert_int_equal(bridge_framer_buffered(f), 0);
    return popped;
}

static size_t chunk_one(size_t room) { (void)room; return 1; }
static size_t chunk_all(size_t room) { (void)room; return 0; }
static size_t chunk_random(size_t room) { return 1 + rng() % (room < 200000 ? room : 200000); }

/* Commits raw bytes (not necessarily a valid stream). */
static void push(struct bridge_framer *f, const uint8_t *b, size_t n)
{
    uint8_t *dst;
    size_t room;
    assert_int_equal(bridge_framer_space(f, &dst, &room), 0);
    assert_true(room >= n);
    memcpy(dst, b, n);
    bridge_framer_commit(f, n);
}

/* Builds a stream of count messages of the given lengths, feeds it to a framer limited
 * to max_msg in chunk()-sized reads and returns the number of messages popped. */
static size_t feed_lengths(const size_t *lens, size_t count, size_t max_msg,
                           size_t (*chunk)(size_t room))
{
    struct bridge_framer f;
    struct stream s;
    size_t popped;

    stream_build(&s, lens, count);
    bridge_framer_init(&f, max_msg);
    popped = feed(&f, &s, chunk);
    bridge_framer_destroy(&f);
    stream_free(&s);
    return popped;
}

/* One framer with the out-parameters of its calls. */
struct rig {
    struct bridge_framer f;
    const uint8_t *msg;
    size_t len;
    const char *why;
    uint8_t *dst;
    size_t room;
};

/* Initializes the framer for max_msg and commits the n raw bytes in (none if n is 0). */
static void rig_start(struct rig *r, size_t max_msg, const uint8_t *in, size_t n)
{
    memset(r, 0, sizeof(*r));
    bridge_framer_init(&r->f, max_msg);
    if (n)
        push(&r->f, in, n);
}

static int rig_pop(struct rig *r)
{
    return bridge_framer_pop(&r->f, &r->msg, &r->len, &r->why);
}

static int rig_space(struct rig *r)
{
    return bridge_framer_space(&r->f, &r->dst, &r->room);
}

/* --- prefix --- */

static void prefix_is_zero_then_24_bit_big_endian(void **state)
{
    uint8_t p[4];
    (void)state;
    bridge_framer_prefix(0x123456, p);
    assert_memory_equal(p, ((uint8_t[]){ 0x00, 0x12, 0x34, 0x56 }), 4);
}

static void prefix_of_empty_message_is_all_zero(void **state)
{
    uint8_t p[4];
    (void)state;
    bridge_framer_prefix(0, p);
    assert_memory_equal(p, ((uint8_t[]){ 0, 0, 0, 0 }), 4);
}

static void prefix_over_24_bits_has_nonzero_first_byte(void **state)
{
    uint8_t p[4];
    (void)state;
    bridge_framer_prefix(0x01000000, p);
    assert_int_not_equal(p[0], 0);
}

/* --- init --- */

static void init_rejects_limit_over_24_bits(void **state)
{
    struct bridge_framer f;
    (void)state;
    assert_int_equal(bridge_framer_init(&f, BRIDGE_FRAMER_MAX_MSG + 1), -EINVAL);
}

static void init_allocates_nothing(void **state)
{
    struct bridge_framer f;
    (void)state;
    assert_int_equal(bridge_framer_init(&f, BRIDGE_FRAMER_MAX_MSG), 0);
    assert_null(f.buf.data);
    assert_int_equal(bridge_framer_buffered(&f), 0);
    bridge_framer_destroy(&f);
}

/* --- splitting --- */

static void pop_on_empty_framer_needs_more(void **state)
{
    struct rig r;
    (void)state;
    rig_start(&r, 1000, NULL, 0);
    assert_int_equal(rig_pop(&r), 0);
    bridge_framer_destroy(&r.f);
}

static void single_message_pops_in_place_without_prefix(void **state)
{
    const uint8_t in[] = { 0x00, 0x00, 0x00, 0x03, 'a', 'b', 'c' };
    struct rig r;
    (void)state;
    rig_start(&r, 1000, in, sizeof(in));
    assert_int_equal(bridge_framer_buffered(&r.f), 7);
    assert_int_equal(rig_pop(&r), 1);
    assert_int_equal(r.len, 3);
    assert_memory_equal(r.msg, "abc", 3);
    assert_ptr_equal(r.msg, r.f.buf.data + 4); /* no copy: the message is in the buffer */
    assert_int_equal(bridge_framer_buffered(&r.f), 0);
    assert_int_equal(rig_pop(&r), 0);
    bridge_framer_destroy(&r.f);
}

static void zero_length_message_pops_with_len_0(void **state)
{
    const uint8_t in[] = { 0, 0, 0, 0, 0, 0, 0, 1, 'x' };
    struct rig r;
    (void)state;
    rig_start(&r, 1000, in, sizeof(in));
    r.len = 99;
    assert_int_equal(rig_pop(&r), 1);
    assert_int_equal(r.len, 0);
    assert_int_equal(rig_pop(&r), 1);
    assert_int_equal(r.len, 1);
    assert_int_equal(r.msg[0], 'x');
    bridge_framer_destroy(&r.f);
}

static void incomplete_prefix_needs_more(void **state)
{
    const uint8_t in[] = { 0, 0, 0 };
    struct rig r;
    (void)state;
    rig_start(&r, 1000, in, sizeof(in));
    assert_int_equal(rig_pop(&r), 0);
    assert_int_equal(bridge_framer_buffered(&r.f), 3);
    bridge_framer_destroy(&r.f);
}

static void incomplete_body_needs_more(void **state)
{
    const uint8_t in[] = { 0, 0, 0, 5, 1, 2, 3, 4 };
    struct rig r;
    (void)state;
    rig_start(&r, 1000, in, sizeof(in));
    assert_int_equal(rig_pop(&r), 0);
    push(&r.f, (const uint8_t *)"\x05", 1);
    assert_int_equal(rig_pop(&r), 1);
    assert_memory_equal(r.msg, ((uint8_t[]){ 1, 2, 3, 4, 5 }), 5);
    bridge_framer_destroy(&r.f);
}

static void byte_by_byte_stream_yields_every_message(void **state)
{
    const size_t lens[] = { 0, 1, 2, 3, 4, 5, 100, 0, 4096, 70000, 7, 0 };
    const size_t count = sizeof(lens) / sizeof(lens[0]);
    (void)state;
    assert_int_equal(feed_lengths(lens, count, 100000, chunk_one), count);
}

static void coalesced_messages_all_pop_from_one_read(void **state)
{
    size_t lens[2000];
    struct stream s;
    struct rig r;
    size_t n = 0;
    (void)state;
    for (size_t i = 0; i < 2000; i++)
        lens[i] = i % 23;
    stream_build(&s, lens, 2000);
    assert_true(s.len < BRIDGE_FRAMER_MIN_ROOM);
    rig_start(&r, 1000, s.bytes, s.len);
    while (rig_pop(&r) == 1)
        assert_message(r.msg, r.len, &s, n++);
    assert_int_equal(n, 2000);
    bridge_framer_destroy(&r.f);
    stream_free(&s);
}

/* Popped messages stay valid until the next bridge_framer_space(). */
static void earlier_pops_stay_valid_until_space(void **state)
{
    const size_t lens[] = { 10, 20, 30 };
    struct stream s;
    struct rig r;
    const uint8_t *m[3];
    size_t len[3];
    (void)state;
    stream_build(&s, lens, 3);
    rig_start(&r, 1000, s.bytes, s.len);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(rig_pop(&r), 1);
        m[i] = r.msg;
        len[i] = r.len;
    }
    for (int i = 0; i < 3; i++)
        assert_message(m[i], len[i], &s, (size_t)i);
    bridge_framer_destroy(&r.f);
    stream_free(&s);
}

static void maximum_size_message_in_random_chunks(void **state)
{
    const size_t lens[] = { 5, BRIDGE_FRAMER_MAX_MSG, 5 };
    (void)state;
    rng_state = 0x9E3779B97F4A7C15ull;
    assert_int_equal(feed_lengths(lens, 3, BRIDGE_FRAMER_MAX_MSG, chunk_random), 3);
}

static void huge_stream_read_whole_room_at_a_time(void **state)
{
    size_t lens[64];
    (void)state;
    rng_state = 42;
    for (size_t i = 0; i < 64; i++)
        lens[i] = rng() % (i % 8 ? 3000 : 2u << 20);
    assert_int_equal(feed_lengths(lens, 64, 2u << 20, chunk_all), 64);
}

static void random_sizes_and_random_chunking(void **state)
{
    size_t lens[3000];
    (void)state;
    rng_state = 7;
    for (size_t i = 0; i < 3000; i++) {
        uint32_t k = rng() % 100;
        lens[i] = k < 70 ? rng() % 200 : k < 95 ? rng() % 70000 : rng() % 600000;
    }
    assert_int_equal(feed_lengths(lens, 3000, 600000, chunk_random), 3000);
}

/* --- space --- */

static void space_offers_a_full_read_when_empty(void **state)
{
    struct rig r;
    (void)state;
    rig_start(&r, 1000, NULL, 0);
    assert_int_equal(rig_space(&r), 0);
    assert_non_null(r.dst);
    assert_true(r.room >= BRIDGE_FRAMER_MIN_ROOM);
    bridge_framer_destroy(&r.f);
}

/* The whole rest of a big message fits in one read: one recv() can complete it. */
static void space_covers_the_rest_of_a_big_message(void **state)
{
    const uint8_t in[] = { 0x00, 0x80, 0x00, 0x00, 1, 2, 3 }; /* 8 MiB message */
    struct rig r;
    (void)state;
    rig_start(&r, BRIDGE_FRAMER_MAX_MSG, in, sizeof(in));
    assert_int_equal(rig_space(&r), 0);
    assert_true(r.room >= (8u << 20) - 3);
    bridge_framer_destroy(&r.f);
}

/* A partial message near the end of the buffer is moved to the front so that a full
 * read fits again, and it keeps its bytes. */
static void space_compacts_a_small_partial_message(void **state)
{
    struct rig r;
    (void)state;
    rig_start(&r, 1u << 20, NULL, 0);
    assert_int_equal(rig_space(&r), 0);
    /* one message filling all but 10 bytes, then 10 bytes of the next */
    size_t first = r.room - 10 - 4;
    bridge_framer_prefix((uint32_t)first, r.dst);
    memset(r.dst + 4, 0x11, first);
    bridge_framer_prefix(100, r.dst + 4 + first);
    memset(r.dst + 8 + first, 0x22, 6);
    bridge_framer_commit(&r.f, r.room);
    assert_int_equal(rig_pop(&r), 1);
    assert_int_equal(r.len, first);
    assert_int_equal(rig_space(&r), 0);
    assert_true(r.room >= BRIDGE_FRAMER_MIN_ROOM);
    assert_int_equal(bridge_framer_buffered(&r.f), 10);
    memset(r.dst, 0x22, 94);
    bridge_framer_commit(&r.f, 94);
    assert_int_equal(rig_pop(&r), 1);
    assert_int_equal(r.len, 100);
    for (size_t i = 0; i < 100; i++)
        assert_int_equal(r.msg[i], 0x22);
    bridge_framer_destroy(&r.f);
}

/* When the free room covers the rest of the message but is below a full read, a
 * small partial message is still moved to the front so the next read is a big one. */
static void space_compacts_early_when_cheap(void **state)
{
    struct rig r;
    (void)state;
    rig_start(&r, 1u << 20, NULL, 0);
    assert_int_equal(rig_space(&r), 0);
    size_t first = r.room - 1000 - 14 - 4;
    bridge_framer_prefix((uint32_t)first, r.dst);
    bridge_framer_prefix(100, r.dst + 4 + first);
    memset(r.dst + 8 + first, 0x44, 10);
    bridge_framer_commit(&r.f, r.room - 1000);
    assert_int_equal(rig_pop(&r), 1);
    assert_int_equal(rig_space(&r), 0);
    assert_true(r.room >= BRIDGE_FRAMER_MIN_ROOM);
    assert_int_equal(bridge_framer_buffered(&r.f), 14);
    bridge_framer_destroy(&r.f);
}

static void space_may_be_zero_only_with_a_message_ready(void **state)
{
    struct rig r;
    (void)state;
    rig_start(&r, BRIDGE_FRAMER_MAX_MSG, NULL, 0);
    assert_int_equal(rig_space(&r), 0);
    bridge_framer_prefix((uint32_t)(r.room - 4), r.dst);
    bridge_framer_commit(&r.f, r.room); /* exactly fills the buffer */
    assert_int_equal(rig_space(&r), 0);
    assert_int_equal(r.room, 0);
    assert_int_equal(rig_pop(&r), 1);
    assert_int_equal(rig_space(&r), 0);
    assert_true(r.room >= BRIDGE_FRAMER_MIN_ROOM);
    bridge_framer_destroy(&r.f);
}

/* --- malformed streams --- */

static void nonzero_first_byte_is_rejected_at_once(void **state)
{
    const uint8_t in[] = { 0x01 };
    struct rig r;
    (void)state;
    rig_start(&r, 1000, in, sizeof(in));
    assert_int_equal(rig_pop(&r), -EPROTO);
    assert_non_null(r.why);
    assert_non_null(strstr(r.why, "zero byte"));
    bridge_framer_destroy(&r.f);
}

static void nonzero_first_byte_after_good_message_is_rejected(void **state)
{
    const uint8_t in[] = { 0, 0, 0, 1, 'a', 0xFE, 0, 0, 1, 'b' };
    struct rig r;
    (void)state;
    rig_start(&r, 1000, in, sizeof(in));
    assert_int_equal(rig_pop(&r), 1);
    assert_int_equal(rig_pop(&r), -EPROTO);
    assert_non_null(r.why);
    bridge_framer_destroy(&r.f);
}

static void length_over_limit_is_rejected(void **state)
{
    const uint8_t in[] = { 0x00, 0x00, 0x03, 0xE9 }; /* 1001 */
    struct rig r;
    (void)state;
    rig_start(&r, 1000, in, sizeof(in));
    assert_int_equal(rig_pop(&r), -EPROTO);
    assert_non_null(strstr(r.why, "exceeds"));
    bridge_framer_destroy(&r.f);
}

static void length_at_limit_is_accepted(void **state)
{
    uint8_t in[4 + 1000] = { 0x00, 0x00, 0x03, 0xE8 };
    struct rig r;
    (void)state;
    rig_start(&r, 1000, in, sizeof(in));
    assert_int_equal(rig_pop(&r), 1);
    assert_int_equal(r.len, 1000);
    bridge_framer_destroy(&r.f);
}

static void stream_error_is_sticky_for_pop_and_space(void **state)
{
    const uint8_t in[] = { 0x00, 0x01, 0x00, 0x00 }; /* 65536 > 1000 */
    struct rig r;
    (void)state;
    rig_start(&r, 1000, in, sizeof(in));
    assert_int_equal(rig_pop(&r), -EPROTO);
    r.why = NULL;
    assert_int_equal(rig_pop(&r), -EPROTO);
    assert_non_null(r.why);
    assert_int_equal(rig_space(&r), -EPROTO);
    bridge_framer_destroy(&r.f);
}

/* An over-limit prefix must not make the framer allocate for the claimed length. */
static void over_limit_prefix_does_not_grow_buffer(void **state)
{
    const uint8_t in[] = { 0x00, 0xFF, 0xFF, 0xFF };
    struct rig r;
    (void)state;
    rig_start(&r, 1000, in, sizeof(in));
    assert_int_equal(rig_space(&r), -EPROTO);
    assert_int_equal(r.f.buf.cap, BRIDGE_FRAMER_BASE_CAP);
    bridge_framer_destroy(&r.f);
}

/* --- memory --- */

static void buffer_starts_at_base_capacity(void **state)
{
    struct rig r;
    (void)state;
    rig_start(&r, BRIDGE_FRAMER_MAX_MSG, NULL, 0);
    assert_int_equal(rig_space(&r), 0);
    assert_int_equal(r.f.buf.cap, BRIDGE_FRAMER_BASE_CAP);
    bridge_framer_destroy(&r.f);
}

/* Pushes one framed message of len bytes and pops it; returns the framer's cap
 * afterwards. */
static size_t pass_message(struct rig *r, size_t len)
{
    uint8_t prefix[4];
    size_t done = 0;

    bridge_framer_prefix((uint32_t)len, prefix);
    push(&r->f, prefix, 4);
    while (done < len) {
        assert_int_equal(rig_space(r), 0);
        size_t n = len - done < r->room ? len - done : r->room;
        memset(r->dst, 0x33, n);
        bridge_framer_commit(&r->f, n);
        done += n;
    }
    assert_int_equal(rig_pop(r), 1);
    assert_int_equal(r->len, len);
    return r->f.buf.cap;
}

static void big_message_grows_buffer_and_it_stays_for_the_next_big_one(void **state)
{
    struct rig r;
    size_t cap;
    (void)state;
    rig_start(&r, BRIDGE_FRAMER_MAX_MSG, NULL, 0);
    cap = pass_message(&r, 8u << 20);
    assert_true(cap >= (8u << 20) + 4); /* the message plus at most one read and rounding */
    assert_true(cap <= (8u << 20) + 4 + BRIDGE_FRAMER_MIN_ROOM + 4096);
    assert_int_equal(rig_space(&r), 0);
    assert_int_equal(r.f.buf.cap, cap); /* no shrink/regrow churn between big messages */
    assert_int_equal(pass_message(&r, 8u << 20), cap);
    bridge_framer_destroy(&r.f);
}

static void buffer_shrinks_back_after_small_traffic(void **state)
{
    struct rig r;
    (void)state;
    rig_start(&r, BRIDGE_FRAMER_MAX_MSG, NULL, 0);
    assert_true(pass_message(&r, BRIDGE_FRAMER_MAX_MSG) > BRIDGE_FRAMER_BASE_CAP);
    pass_message(&r, 100);
    assert_int_equal(rig_space(&r), 0);
    assert_int_equal(r.f.buf.cap, BRIDGE_FRAMER_BASE_CAP);
    assert_true(r.room >= BRIDGE_FRAMER_MIN_ROOM);
    bridge_framer_destroy(&r.f);
}

/* take: the peeked message keeps its place in the handed-over buffer; what followed it
 * in the stream is framed on from the new one. */
static void take_hands_the_message_over_and_framing_goes_on(void **state)
{
    static const uint8_t in[] = { 0, 0, 0, 3, 'a', 'b', 'c', 0, 0, 0, 2, 'd' };
    struct rig r;
    uint8_t *mem;
    size_t cap;

    (void)state;
    rig_start(&r, 1000, in, sizeof(in));
    assert_int_equal(bridge_framer_peek(&r.f, &r.msg, &r.len, &r.why), 1);
    assert_int_equal(r.len, 3);
    assert_int_equal(bridge_framer_take(&r.f, r.len, &mem, &cap), 0);
    assert_true(r.msg > mem && r.msg + r.len <= mem + cap);
    assert_memory_equal(r.msg, "abc", 3);
    assert_int_equal(bridge_framer_buffered(&r.f), 5);
    assert_int_equal(rig_pop(&r), 0); /* 'e' has not come yet */
    push(&r.f, (const uint8_t *)"e", 1);
    assert_int_equal(rig_pop(&r), 1);
    assert_memory_equal(r.msg, "de", 2);
    assert_memory_equal(mem + 4, "abc", 3); /* untouched by the framing that went on */
    free(mem);
    bridge_framer_destroy(&r.f);
}

/* A message of BRIDGE_POOL_MIN bytes or more is read up to its end and no further: the
 * room offered is exactly what it lacks, so taking its buffer moves nothing, and the
 * next message starts in a new one. A smaller message leaves the whole room. */
static void space_ends_at_a_large_message_s_end(void **state)
{
    const size_t big = BRIDGE_POOL_MIN + 100;
    uint8_t prefix[4];
    struct rig r;
    uint8_t *mem;
    size_t cap;

    (void)state;
    bridge_framer_prefix((uint32_t)big, prefix);
    rig_start(&r, 1u << 20, prefix, 4);
    push(&r.f, (const uint8_t *)"abc", 3);
    assert_int_equal(rig_space(&r), 0);
    assert_int_equal(r.room, big - 3); /* not a byte past the message */
    memset(r.dst, 'm', r.room);
    bridge_framer_commit(&r.f, r.room);
    assert_int_equal(bridge_framer_peek(&r.f, &r.msg, &r.len, &r.why), 1);
    assert_int_equal(bridge_framer_take(&r.f, r.len, &mem, &cap), 0);
    assert_int_equal(bridge_framer_buffered(&r.f), 0); /* nothing followed it */
    assert_memory_equal(r.msg, "abcm", 4);
    bridge_pool_put(mem, cap);
    bridge_framer_prefix(1000, prefix); /* a small one: the read may run past it */
    push(&r.f, prefix, 4);
    assert_int_equal(rig_space(&r), 0);
    assert_true(r.room > 1000);
    bridge_framer_destroy(&r.f);
}

static void destroy_releases_buffer(void **state)
{
    struct rig r;
    (void)state;
    rig_start(&r, 1000, NULL, 0);
    assert_int_equal(rig_space(&r), 0);
    bridge_framer_destroy(&r.f);
    assert_null(r.f.buf.data);
    assert_int_equal(r.f.buf.cap, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(prefix_is_zero_then_24_bit_big_endian),
        cmocka_unit_test(prefix_of_empty_message_is_all_zero),
        cmocka_unit_test(prefix_over_24_bits_has_nonzero_first_byte),
        cmocka_unit_test(init_rejects_limit_over_24_bits),
        cmocka_unit_test(init_allocates_nothing),
        cmocka_unit_test(pop_on_empty_framer_needs_more),
        cmocka_unit_test(single_message_pops_in_place_without_prefix),
        cmocka_unit_test(zero_length_message_pops_with_len_0),
        cmocka_unit_test(incomplete_prefix_needs_more),
        cmocka_unit_test(incomplete_body_needs_more),
        cmocka_unit_test(byte_by_byte_stream_yields_every_message),
        cmocka_unit_test(coalesced_messages_all_pop_from_one_read),
        cmocka_unit_test(earlier_pops_stay_valid_until_space),
        cmocka_unit_test(maximum_size_message_in_random_chunks),
        cmocka_unit_test(huge_stream_read_whole_room_at_a_time),
        cmocka_unit_test(random_sizes_and_random_chunking),
        cmocka_unit_test(space_offers_a_full_read_when_empty),
        cmocka_unit_test(space_covers_the_rest_of_a_big_message),
        cmocka_unit_test(space_compacts_a_small_partial_message),
        cmocka_unit_test(space_compacts_early_when_cheap),
        cmocka_unit_test(space_may_be_zero_only_with_a_message_ready),
        cmocka_unit_test(nonzero_first_byte_is_rejected_at_once),
        cmocka_unit_test(nonzero_first_byte_after_good_message_is_rejected),
        cmocka_unit_test(length_over_limit_is_rejected),
        cmocka_unit_test(length_at_limit_is_accepted),
        cmocka_unit_test(stream_error_is_sticky_for_pop_and_space),
        cmocka_unit_test(over_limit_prefix_does_not_grow_buffer),
        cmocka_unit_test(buffer_starts_at_base_capacity),
        cmocka_unit_test(big_message_grows_buffer_and_it_stays_for_the_next_big_one),
        cmocka_unit_test(buffer_shrinks_back_after_small_traffic),
        cmocka_unit_test(take_hands_the_message_over_and_framing_goes_on),
        cmocka_unit_test(space_ends_at_a_large_message_s_end),
        cmocka_unit_test(destroy_releases_buffer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
