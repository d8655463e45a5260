/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/test_conn_pair.c — two engines (ACTIVE and PASSIVE) back to back over
 * the in-memory provider: randomized upper-layer messages of 0 bytes to 8 MiB in
 * both directions under random configurations (credit targets down to 1, receive
 * sizes down to 128 bytes), random interleaving of wire delivery and completions,
 * receive pauses, and idle periods with keepalives driven by explicit time. Every
 * byte must arrive intact and in order, nothing may deadlock, and both sides must
 * end with matching credit counts. About a third of the messages are sent from memory
 * handed to the engine (smbd_conn_send_owned), which must come back exactly once each.
 * Includes the case that deadlocked Linux: a large fragmented message with very few
 * credits. Also: an owned message's payload is posted from where it lies (not copied),
 * and comes back only once its last fragment is done, or at teardown. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "th_conn.h"

#define MIB (1024u * 1024u)
#define MAX_MSGS 4096

static uint64_t rnd_state;

static uint64_t rnd(void)
{
    rnd_state ^= rnd_state << 13;
    rnd_state ^= rnd_state >> 7;
    rnd_state ^= rnd_state << 17;
    return rnd_state;
}

static uint32_t rnd_range(uint32_t lo, uint32_t hi) /* inclusive */
{
    return lo + (uint32_t)(rnd() % ((uint64_t)hi - lo + 1));
}

/* Message k of a direction has a size from the plan and bytes from its own seed. */
static void fill(uint8_t *p, size_t len, uint64_t seed)
{
    uint64_t x = seed * UINT64_C(0x9E3779B97F4A7C15) + 1;
    size_t i = 0;

    for (; i + 8 <= len; i += 8) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        memcpy(p + i, &x, 8);
    }
    x ^= x << 13;
    for (; i < len; i++)
        p[i] = (uint8_t)(x >> (8 * (i & 7)));
}

struct direction {
    int dir;
    uint32_t sizes[MAX_MSGS];   /* 0 = empty message (delivers nothing) */
    int nmsgs, next_send, next_recv;
    uint64_t bytes;
    uint8_t *scratch;
    int failures;
};

static void on_deliver(struct th_end *e, const uint8_t *data, size_t len)
{
    struct direction *d = e->user;

    while (d->next_recv < d->nmsgs && d->sizes[d->next_recv] == 0)
        d->next_recv++; /* empty messages deliver nothing */
    if (d->next_recv >= d->nmsgs || d->sizes[d->next_recv] != len) {
        if (d->failures++ == 0)
            fprintf(stderr, "# dir %d: message %d has %zu bytes, expected %u\n", d->dir,
                    d->next_recv, len, d->next_recv < d->nmsgs ? d->sizes[d->next_recv] : 0);
        return;
    }
    fill(d->scratch, len, (uint64_t)d->dir << 32 | (uint64_t)d->next_recv);
    if (memcmp(d->scratch, data, len) != 0 && d->failures++ == 0)
        fprintf(stderr, "# dir %d: message %d corrupted\n", d->dir, d->next_recv);
    d->next_recv++;
}

static void plan(struct direction *d, int dir, int nmsgs, int nlarge, uint32_t max_msg)
{
    memset(d, 0, sizeof(*d));
    d->dir = dir;
    d->nmsgs = nmsgs;
    for (int i = 0; i < nmsgs; i++) {
        uint32_t r = rnd_range(0, 999), s;

        if (r < 10)
            s = 0;
        else if (r < 60)
            s = rnd_range(2000, 256 * 1024);
        else
            s = rnd_range(1, 2000);
        d->sizes[i] = s;
    }
    for (int i = 0; i < nlarge; i++)
        d->sizes[rnd_range(0, (uint32_t)nmsgs - 1)] = rnd_range(MIB, 8 * MIB);
    for (int i = 0; i < nmsgs; i++) {
        if (d->sizes[i] > max_msg)
            d->sizes[i] = max_msg;
        d->bytes += d->sizes[i];
    }
    d->scratch = malloc(8 * MIB + 64 * 1024);
    assert_non_null(d->scratch);
}

/* Owned messages handed to engines, and given back (test_release). */
static int owned_sent, owned_released;

static void test_release(uint8_t *alloc, size_t cap)
{
    (void)cap;
    free(alloc);
    owned_released++;
}

/* Sends the next planned message of d from e: a third of the non-empty ones from an
 * allocation handed over (at a random offset in it), the others split over up to three
 * iovecs. */
static void send_next(struct th_end *e, struct direction *d, uint64_t now)
{
    uint32_t len = d->sizes[d->next_send];
    struct iovec iov[3];
    uint32_t a, b;

    if (len > 0 && rnd_range(0, 2) == 0) {
        uint32_t off = rnd_range(0, 64);
        uint8_t *alloc = malloc(off + len + 16);

        assert_non_null(alloc);
        fill(alloc + off, len, (uint64_t)d->dir << 32 | (uint64_t)d->next_send);
        assert_int_equal(smbd_conn_send_owned(e->conn, alloc + off, len, alloc, off + len + 16,
                                              test_release, now), 0);
        owned_sent++;
        d->next_send++;
        return;
    }
    fill(d->scratch, len, (uint64_t)d->dir << 32 | (uint64_t)d->next_send);
    a = len ? rnd_range(0, len) : 0;
    b = rnd_range(a, len);
    iov[0] = (struct iovec){ d->scratch, a };
    iov[1] = (struct iovec){ d->scratch + a, b - a };
    iov[2] = (struct iovec){ d->scratch + b, len - b };
    assert_int_equal(smbd_conn_send(e->conn, iov, 3, now), 0);
    d->next_send++;
}

static void random_config(struct smbd_config *c, enum smbd_role role)
{
    smbd_config_default(c, role);
    c->receive_credit_max = (uint16_t)(rnd() & 1 ? rnd_range(3, 8) : rnd_range(3, 255));
    c->send_credit_target = (uint16_t)(rnd() & 1 ? rnd_range(1, 8) : rnd_range(1, 255));
    c->max_receive_size = rnd() & 1 ? rnd_range(128, 600) : rnd_range(128, 8192);
    c->max_send_size = rnd() & 1 ? rnd_range(128, 1364) : rnd_range(128, 8192);
    c->keepalive_interval_ms = rnd_range(1000, 120000);
    c->keepalive_timeout_ms = rnd_range(100, 5000);
}

struct scenario {
    struct smbd_config ca, cb;
    int nmsgs, nlarge;
    int pauses;
    int idle_phases;
};

static void check_credits_consistent(struct th_end *a, struct th_end *b)
{
    struct smbd_params pa, pb;

    assert_int_equal(smbd_conn_query(a->conn, &pa), 0);
    assert_int_equal(smbd_conn_query(b->conn, &pb), 0);
    assert_int_equal(pa.send_credits, pb.receive_credits);
    assert_int_equal(pb.send_credits, pa.receive_credits);
    assert_true(pa.receive_credits <= pa.neg.receive_credit_max);
    assert_true(pb.receive_credits <= pb.neg.receive_credit_max);
}

/* Lets time pass with nothing to send: each idle timer sends a keepalive that the
 * peer answers; nobody is terminated. */
static void idle_phase(struct th_end *a, struct th_end *b, uint64_t *now)
{
    struct smbd_stats sa0, sb0, sa1, sb1;

    smbd_conn_get_stats(a->conn, &sa0);
    smbd_conn_get_stats(b->conn, &sb0);
    sa1 = sa0;
    sb1 = sb0;
    for (int i = 0; i < 10 && sa1.keepalives_sent + sb1.keepalives_sent <
                                    sa0.keepalives_sent + sb0.keepalives_sent + 2; i++) {
        uint64_t ta = smbd_conn_next_timer(a->conn), tb = smbd_conn_next_timer(b->conn);

        *now = ta < tb ? ta : tb;
        smbd_conn_on_timer(a->conn, *now);
        smbd_conn_on_timer(b->conn, *now);
        th_settle(a, b, *now);
        smbd_conn_get_stats(a->conn, &sa1);
        smbd_conn_get_stats(b->conn, &sb1);
    }
    assert_true(sa1.keepalives_sent + sb1.keepalives_sent > sa0.keepalives_sent + sb0.keepalives_sent);
    assert_int_equal(sa1.keepalives_sent - sa0.keepalives_sent,
                     sb1.keepalives_received - sb0.keepalives_received);
    assert_int_equal(a->terminated_calls + b->terminated_calls, 0);
}

/* Allocates one direction's state (planned by plan()). */
static struct direction *direction_new(void)
{
    struct direction *d = malloc(sizeof(*d));

    assert_non_null(d);
    return d;
}

/* Checks every delivery: a receives what ba plans, b what ab plans. */
static void watch_deliveries(struct th_end *a, struct th_end *b, struct direction *ab,
                             struct direction *ba)
{
    b->user = ab;
    b->on_deliver = on_deliver;
    a->user = ba;
    a->on_deliver = on_deliver;
}

/* Frees both directions and both engines. */
static void pair_free(struct th_end *a, struct th_end *b, struct direction *ab,
                      struct direction *ba)
{
    free(ab->scratch);
    free(ba->scratch);
    free(ab);
    free(ba);
    th_end_free(a);
    th_end_free(b);
}

static void run(const struct scenario *sc, uint64_t seed)
{
    struct th_end a, b;
    struct direction *ab = direction_new(), *ba = direction_new();
    struct smbd_params pa, pb;
    struct smbd_stats sa, sb;
    uint64_t now = 0;
    int paused_a = 0, paused_b = 0, pauses_left = sc->pauses, idle_left = sc->idle_phases;

    th_pair_establish(&a, &b, &sc->ca, &sc->cb, seed);
    assert_int_equal(a.established + b.established, 2);
    assert_int_equal(smbd_conn_query(a.conn, &pa), 0);
    assert_int_equal(smbd_conn_query(b.conn, &pb), 0);
    plan(ab, 0, sc->nmsgs, sc->nlarge, pa.neg.max_fragmented_send_size);
    plan(ba, 1, sc->nmsgs, sc->nlarge, pb.neg.max_fragmented_send_size);
    watch_deliveries(&a, &b, ab, ba);

    while (ab->next_send < ab->nmsgs || ba->next_send < ba->nmsgs) {
        switch (rnd_range(0, 9)) {
        case 0: case 1:
            if (ab->next_send < ab->nmsgs && smbd_conn_send_queued(a.conn) < 16 * MIB)
                send_next(&a, ab, now);
            break;
        case 2: case 3:
            if (ba->next_send < ba->nmsgs && smbd_conn_send_queued(b.conn) < 16 * MIB)
                send_next(&b, ba, now);
            break;
        case 4: fake_deliver(a.qp, (int)rnd_range(1, 64)); break;
        case 5: fake_deliver(b.qp, (int)rnd_range(1, 64)); break;
        case 6: th_poll(&a, now, (int)rnd_range(1, 64)); break;
        case 7: th_poll(&b, now, (int)rnd_range(1, 64)); break;
        case 8:
            if (pauses_left == 0 && (paused_a || paused_b)) { /* no toggle left to end it */
                smbd_conn_pause_receive(a.conn, paused_a = 0, now);
                smbd_conn_pause_receive(b.conn, paused_b = 0, now);
            } else if (pauses_left > 0 && rnd_range(0, 99) == 0) {
                pauses_left--;
                if (rnd() & 1)
                    smbd_conn_pause_receive(a.conn, paused_a = !paused_a, now);
                else
                    smbd_conn_pause_receive(b.conn, paused_b = !paused_b, now);
            }
            break;
        case 9:
            if (idle_left > 0 && rnd_range(0, 499) == 0) {
                idle_left--;
                smbd_conn_pause_receive(a.conn, paused_a = 0, now);
                smbd_conn_pause_receive(b.conn, paused_b = 0, now);
                th_settle(&a, &b, now);
                idle_phase(&a, &b, &now);
            }
            break;
        }
        assert_int_equal(a.terminated_calls + b.terminated_calls, 0);
    }
    smbd_conn_pause_receive(a.conn, 0, now);
    smbd_conn_pause_receive(b.conn, 0, now);
    th_settle(&a, &b, now);
    while (idle_left-- > 0)
        idle_phase(&a, &b, &now);

    /* Everything arrived, intact and in order; nothing is stuck. */
    assert_int_equal(ab->failures + ba->failures, 0);
    while (ab->next_recv < ab->nmsgs && ab->sizes[ab->next_recv] == 0)
        ab->next_recv++;
    while (ba->next_recv < ba->nmsgs && ba->sizes[ba->next_recv] == 0)
        ba->next_recv++;
    if (ab->next_recv != ab->nmsgs || ba->next_recv != ba->nmsgs)
        fail_msg("deadlock: A->B %d/%d, B->A %d/%d delivered; queued %zu/%zu", ab->next_recv,
                 ab->nmsgs, ba->next_recv, ba->nmsgs, smbd_conn_send_queued(a.conn),
                 smbd_conn_send_queued(b.conn));
    assert_int_equal(smbd_conn_send_queued(a.conn) + smbd_conn_send_queued(b.conn), 0);
    assert_int_equal(fake_wire_pending(a.qp) + fake_wire_pending(b.qp), 0);
    check_credits_consistent(&a, &b);
    smbd_conn_get_stats(a.conn, &sa);
    smbd_conn_get_stats(b.conn, &sb);
    assert_int_equal(sa.bytes_sent, ab->bytes);
    assert_int_equal(sb.bytes_delivered, ab->bytes);
    assert_int_equal(sb.bytes_sent, ba->bytes);
    assert_int_equal(sa.bytes_delivered, ba->bytes);
    assert_int_equal(sa.fragments_sent, sb.fragments_received);
    assert_int_equal(sb.fragments_sent, sa.fragments_received);
    assert_int_equal(sa.credits_granted, sb.credits_received);
    assert_int_equal(sb.credits_granted, sa.credits_received);
    assert_int_equal(a.terminated_calls + b.terminated_calls, 0);

    /* An orderly disconnect ends both sides exactly once. */
    smbd_conn_disconnect(a.conn);
    th_settle(&a, &b, now);
    assert_int_equal(a.terminated_calls, 1);
    assert_int_equal(a.term_err, 0);
    assert_int_equal(b.terminated_calls, 1);
    assert_int_equal(b.term_err, -ECONNRESET);
    pair_free(&a, &b, ab, ba);
    assert_int_equal(owned_released, owned_sent); /* every owned message came back once */
}

static void test_random_scenarios(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 16; seed++) {
        struct scenario sc = { .nmsgs = 1000, .nlarge = seed % 4 == 0 ? 2 : seed % 2, .pauses = 8,
                               .idle_phases = 2 };

        rnd_state = seed * UINT64_C(0x2545F4914F6CDD1D);
        random_config(&sc.ca, SMBD_ROLE_ACTIVE);
        random_config(&sc.cb, SMBD_ROLE_PASSIVE);
        if (seed % 4 == 1) /* the smallest receive size the protocol allows */
            (seed % 8 == 1 ? &sc.ca : &sc.cb)->max_receive_size = 128;
        run(&sc, seed);
    }
}

/* Many small messages, default configuration. */
static void test_many_small_messages(void **state)
{
    struct scenario sc = { .nmsgs = MAX_MSGS, .nlarge = 0, .pauses = 20, .idle_phases = 3 };

    (void)state;
    rnd_state = 77;
    smbd_config_default(&sc.ca, SMBD_ROLE_ACTIVE);
    smbd_config_default(&sc.cb, SMBD_ROLE_PASSIVE);
    run(&sc, 77);
}

/* The Linux deadlock: a large fragmented message in each direction with a credit
 * maximum of 3, credit target 1 and tiny receives. Receives are reposted as soon as
 * each fragment is copied out, so credits keep flowing. */
static void test_large_message_few_credits(void **state)
{
    struct scenario sc = { .nmsgs = 3, .nlarge = 0, .pauses = 0, .idle_phases = 1 };

    (void)state;
    rnd_state = 99;
    smbd_config_default(&sc.ca, SMBD_ROLE_ACTIVE);
    smbd_config_default(&sc.cb, SMBD_ROLE_PASSIVE);
    sc.ca.receive_credit_max = sc.cb.receive_credit_max = 3;
    sc.ca.send_credit_target = sc.cb.send_credit_target = 1;
    sc.ca.max_receive_size = sc.cb.max_receive_size = 512;
    sc.ca.max_send_size = sc.cb.max_send_size = 512;
    {
        struct th_end a, b;
        struct direction *ab = direction_new(), *ba = direction_new();

        th_pair_establish(&a, &b, &sc.ca, &sc.cb, 99);
        plan(ab, 0, 2, 0, UINT32_MAX);
        plan(ba, 1, 2, 0, UINT32_MAX);
        ab->sizes[0] = ba->sizes[0] = 8 * MIB;
        ab->sizes[1] = ba->sizes[1] = 100;
        ab->bytes = ba->bytes = 8 * MIB + 100;
        watch_deliveries(&a, &b, ab, ba);
        send_next(&a, ab, 0);
        send_next(&b, ba, 0);
        send_next(&a, ab, 0);
        send_next(&b, ba, 0);
        th_settle(&a, &b, 0);
        assert_int_equal(ab->failures + ba->failures, 0);
        assert_int_equal(ab->next_recv, 2);
        assert_int_equal(ba->next_recv, 2);
        check_credits_consistent(&a, &b);
        assert_int_equal(a.terminated_calls + b.terminated_calls, 0);
        pair_free(&a, &b, ab, ba);
    }
}

/* A message larger than the peer's MaxFragmentedSize is refused locally; the
 * connection stays up and the next message goes through. */
static void test_message_too_large_is_local_error(void **state)
{
    struct th_end a, b;
    struct smbd_config cb;
    static uint8_t buf[131073];
    struct iovec iov = { buf, sizeof(buf) };

    (void)state;
    smbd_config_default(&cb, SMBD_ROLE_PASSIVE);
    cb.max_fragmented_recv_size = 131072;
    th_pair_establish(&a, &b, NULL, &cb, 5);
    assert_int_equal(smbd_conn_send(a.conn, &iov, 1, 0), -EMSGSIZE);
    assert_true(smbd_conn_is_established(a.conn));
    iov.iov_len = 131072;
    assert_int_equal(smbd_conn_send(a.conn, &iov, 1, 0), 0);
    th_settle(&a, &b, 0);
    assert_int_equal(b.delivered, 1);
    assert_int_equal(b.last_len, 131072);
    assert_int_equal(a.terminated_calls + b.terminated_calls, 0);
    th_end_free(&a);
    th_end_free(&b);
}

/* The engine posts an owned message's payload from the caller's memory: bytes changed
 * after smbd_conn_send_owned but before the wire carries them are what the peer gets
 * (the fake provider reads the memory at delivery, as a NIC's DMA would), and the
 * memory comes back once the last fragment's Send completed, not before. Only the
 * message's bytes are registered, not the rest of the allocation around them; the
 * engine counts them as sent from where they lay (bytes_sent_owned). */
static void test_owned_message_is_sent_from_where_it_lies(void **state)
{
    struct smbd_config ca, cb;
    struct th_end a, b;
    const size_t len = 64 * 1024, before = 4096, cap = before + len + 8192;
    uint8_t *alloc = malloc(cap), *msg = alloc + before;
    struct smbd_stats st;
    size_t mr_bytes0;
    int released0;

    (void)state;
    smbd_config_default(&ca, SMBD_ROLE_ACTIVE);
    smbd_config_default(&cb, SMBD_ROLE_PASSIVE);
    th_pair_establish(&a, &b, &ca, &cb, 5);
    assert_non_null(alloc);
    memset(msg, 'x', len);
    released0 = owned_released;
    mr_bytes0 = fake_mr_bytes(a.qp);
    assert_int_equal(smbd_conn_send_owned(a.conn, msg, len, alloc, cap, test_release, 0), 0);
    assert_int_equal(fake_mr_bytes(a.qp), mr_bytes0 + len);
    memset(msg, 'y', len); /* after the call: a copy would still carry 'x' */
    assert_int_equal(owned_released, released0); /* posted, not completed */
    th_settle(&a, &b, 0);
    assert_int_equal(owned_released, released0 + 1);
    assert_int_equal(fake_mr_bytes(a.qp), mr_bytes0);
    assert_int_equal(b.delivered, 1);
    assert_int_equal(b.last_len, len);
    for (size_t i = 0; i < len; i++)
        if (b.last[i] != 'y')
            fail_msg("byte %zu is 0x%02x: the payload was copied at post time", i, b.last[i]);
    smbd_conn_get_stats(a.conn, &st); /* counted as sent from where it lay */
    assert_true(st.bytes_sent_owned == len && st.bytes_sent == len);
    th_end_free(&a);
    th_end_free(&b);
}

/* Memory handed over stays the caller's when the call fails (bad range, registration
 * refused), and goes back at teardown when the connection ends with the message still
 * queued. */
static void test_owned_message_failures_and_teardown(void **state)
{
    struct smbd_config ca, cb;
    struct th_end a, b;
    static uint8_t outside[16];
    uint8_t *alloc = malloc(256 * 1024);
    int released0;

    (void)state;
    smbd_config_default(&ca, SMBD_ROLE_ACTIVE);
    smbd_config_default(&cb, SMBD_ROLE_PASSIVE);
    ca.send_credit_target = 1; /* the message waits in the queue for credits */
    th_pair_establish(&a, &b, &ca, &cb, 9);
    assert_non_null(alloc);
    released0 = owned_released;
    assert_int_equal(smbd_conn_send_owned(a.conn, outside, 16, alloc, 1024, test_release, 0),
                     -EINVAL);
    assert_int_equal(smbd_conn_send_owned(a.conn, alloc + 1000, 100, alloc, 1024, test_release, 0),
                     -EINVAL);
    assert_int_equal(smbd_conn_send_owned(a.conn, alloc, 0, alloc, 1024, test_release, 0), -EINVAL);
    fake_fail_reg_mr(a.qp, -ENOMEM); /* e.g. RLIMIT_MEMLOCK on verbs */
    assert_int_equal(smbd_conn_send_owned(a.conn, alloc, 100, alloc, 1024, test_release, 0),
                     -ENOMEM);
    fake_fail_reg_mr(a.qp, 0);
    assert_int_equal(smbd_conn_send_queued(a.conn), 0);
    assert_int_equal(owned_released, released0); /* nothing taken */
    memset(alloc, 'z', 256 * 1024);
    assert_int_equal(smbd_conn_send_owned(a.conn, alloc, 256 * 1024, alloc, 256 * 1024,
                                          test_release, 0), 0);
    assert_true(smbd_conn_send_queued(a.conn) > 0);
    th_end_free(&a); /* queued and posted fragments go; the memory comes back once */
    assert_int_equal(owned_released, released0 + 1);
    th_end_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_scenarios),
        cmocka_unit_test(test_many_small_messages),
        cmocka_unit_test(test_large_message_few_credits),
        cmocka_unit_test(test_message_too_large_is_local_error),
        cmocka_unit_test(test_owned_message_is_sent_from_where_it_lies),
        cmocka_unit_test(test_owned_message_failures_and_teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
