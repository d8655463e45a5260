/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/test_conn_pinned.c — the engine's registered memory on a provider that pins
 * it (transport/smbd/smbd_pin.c), with the process's RLIMIT_MEMLOCK lowered for real:
 * every registration is charged to the process and given back; the reserve serves one
 * I/O without touching the shared room; past the limit a registration is refused before
 * the provider sees it; a client's receive and send buffers take the sizes its peer
 * negotiates and give back the rest of their plan, a server's send buffers the size its
 * client receives; send buffers that cannot grow make a message wait (-EAGAIN) while
 * earlier sends hold some, and fail it only when nothing would come back. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "sd_pinned.h"
#include "th_conn.h"
#include "th_pinned.h"
#include "smbd_memplan.h"

#define KIB 1024u
#define MIB (1024u * 1024u)

static const struct sd_provider_ops *ops;

/* An established ACTIVE engine on the pinning fake (ksmbd's sizes: 1364-byte receives,
 * 10 credits granted). */
static void open_end(struct th_end *e)
{
    uint8_t m[64];

    ops = th_pinning_ops(&fake_provider);
    th_end_init_ops(e, SMBD_ROLE_ACTIVE, NULL, fake_qp_new(5), ops);
    th_active_establish(e, m, th_negotiate_resp(m, 0x100, 10, 10, 0, MIB, 1364, 1364, MIB));
}

/* open_end at a 64 MiB limit, with a reserve of one 1 MiB I/O (given back with e). */
static void open_end_with_reserve(struct th_end *e)
{
    th_memlock_set(64 * MIB);
    open_end(e);
    assert_int_equal(sd_pinned_charge(sd_pinned_cost_len(MIB)), 0);
    smbd_conn_adopt_reserve(e->conn, sd_pinned_cost_len(MIB), 0);
}

static int teardown(void **state)
{
    (void)state;
    th_memlock_restore();
    assert_int_equal(sd_pinned_used(), 0); /* every connection gave everything back */
    return 0;
}

static void test_registrations_are_charged_and_given_back(void **state)
{
    static uint8_t a[MIB], b[MIB];
    struct smbd_buffer_desc d[4];
    struct smbd_registration *ra, *rb;
    struct th_end e;
    uint64_t base;
    size_t nd;

    (void)state;
    open_end_with_reserve(&e);
    base = sd_pinned_used() - sd_pinned_cost_len(MIB);
    assert_true(base >= th_pinning_live()); /* receives and send buffers, whole pages */
    /* the first I/O draws from the reserve, the second from the process's room */
    assert_int_equal(smbd_conn_register_buffer(e.conn, a, MIB, SMBD_REG_PEER_READ, &ra, d, 4,
                                               &nd), 0);
    assert_int_equal(sd_pinned_used(), base + sd_pinned_cost_len(MIB));
    assert_true(smbd_conn_reserve_in_use(e.conn));
    assert_int_equal(smbd_conn_register_buffer(e.conn, b, MIB, SMBD_REG_PEER_WRITE, &rb, d, 4,
                                               &nd), 0);
    assert_int_equal(sd_pinned_used(), base + sd_pinned_cost_len(MIB) + sd_pinned_cost(b, MIB));
    smbd_conn_deregister_buffer(e.conn, ra);
    smbd_conn_deregister_buffer(e.conn, rb);
    assert_false(smbd_conn_reserve_in_use(e.conn));
    assert_int_equal(sd_pinned_used(), base + sd_pinned_cost_len(MIB));
    th_end_free(&e);
}

static void test_past_the_limit_a_registration_never_reaches_the_provider(void **state)
{
    static uint8_t a[MIB], b[MIB];
    struct smbd_buffer_desc d[4];
    struct smbd_registration *ra, *rb;
    struct th_end e;
    int mrs;
    size_t nd;

    (void)state;
    open_end_with_reserve(&e);
    th_memlock_set(sd_pinned_used() + 256 * KIB); /* room for a quarter of another I/O */
    assert_true(smbd_conn_can_register(e.conn, MIB));  /* the reserve holds one */
    assert_int_equal(smbd_conn_register_buffer(e.conn, a, MIB, SMBD_REG_PEER_READ, &ra, d, 4,
                                               &nd), 0);
    assert_false(smbd_conn_can_register(e.conn, MIB));
    mrs = fake_mr_count(e.qp);
    assert_int_equal(smbd_conn_register_buffer(e.conn, b, MIB, SMBD_REG_PEER_READ, &rb, d, 4,
                                               &nd), -ENOMEM);
    assert_int_equal(fake_mr_count(e.qp), mrs);
    assert_true(sd_pinned_used() <= sd_pinned_limit());
    smbd_conn_deregister_buffer(e.conn, ra);
    assert_true(smbd_conn_can_register(e.conn, MIB)); /* it came back */
    th_end_free(&e);
}

static void test_a_charge_past_the_limit_is_refused_whole(void **state)
{
    struct th_end e;
    uint64_t used;

    (void)state;
    th_memlock_set(64 * MIB);
    open_end(&e);
    used = sd_pinned_used();
    th_memlock_set(used + MIB);
    assert_int_equal(sd_pinned_charge(2 * MIB), -ENOMEM);
    assert_int_equal(sd_pinned_used(), used);
    assert_int_equal(sd_pinned_room(), MIB);
    assert_int_equal(sd_pinned_charge(MIB), 0);
    assert_int_equal(sd_pinned_room(), 0);
    sd_pinned_release(MIB);
    th_end_free(&e);
}

/* A reserve given before the start: the permanent buffers draw from it and keep that
 * charge; what is left serves the I/O; all of it goes back with the connection. */
static void test_the_permanent_buffers_draw_from_a_reserve_given_before_start(void **state)
{
    static uint8_t a[MIB];
    struct smbd_buffer_desc d[4];
    struct smbd_registration *ra;
    struct th_end e, probe;
    uint8_t m[64];
    uint64_t fixed;
    size_t nd;

    (void)state;
    th_memlock_set(64 * MIB);
    ops = th_pinning_ops(&fake_provider);
    open_end(&probe); /* what the permanent buffers charge */
    fixed = sd_pinned_used();
    th_end_free(&probe);
    th_memlock_set(fixed + sd_pinned_cost_len(MIB) + 3 * 4096); /* nothing else fits */
    assert_int_equal(sd_pinned_charge(fixed + sd_pinned_cost_len(MIB)), 0);
    th_end_init_ops(&e, SMBD_ROLE_ACTIVE, NULL, fake_qp_new(5), ops);
    smbd_conn_adopt_reserve(e.conn, fixed + sd_pinned_cost_len(MIB), 0);
    th_active_establish(&e, m, th_negotiate_resp(m, 0x100, 10, 10, 0, MIB, 1364, 1364, MIB));
    assert_int_equal(sd_pinned_used(), fixed + sd_pinned_cost_len(MIB)); /* no more */
    assert_false(smbd_conn_reserve_in_use(e.conn));
    assert_int_equal(smbd_conn_register_buffer(e.conn, a, MIB, SMBD_REG_PEER_READ, &ra, d, 4,
                                               &nd), 0);
    assert_int_equal(sd_pinned_used(), fixed + sd_pinned_cost_len(MIB));
    smbd_conn_deregister_buffer(e.conn, ra);
    th_end_free(&e);
}

/* The shim's sizes: receives of 8192 bytes, sends of up to 8136. */
static void shim_sizes(struct smbd_config *cfg)
{
    smbd_config_default(cfg, SMBD_ROLE_ACTIVE);
    cfg->max_send_size = 8136;
}

/* What an established client with the shim's sizes pins without a reserve, its peer's
 * PreferredSendSize pref and MaxReceiveSize max_recv (the pools hold ReceiveCreditMax
 * receives of pref and send buffers of max_recv bytes, at most 8136). */
static size_t established_cost(uint32_t pref, uint32_t max_recv)
{
    struct smbd_config cfg;
    struct th_end e;
    uint8_t m[64];
    size_t used;

    shim_sizes(&cfg);
    th_end_init_ops(&e, SMBD_ROLE_ACTIVE, &cfg, fake_qp_new(5), ops);
    th_active_establish(&e, m, th_negotiate_resp(m, 0x100, 10, 10, 0, MIB, pref, max_recv, MIB));
    assert_int_equal(fake_posted_recvs(e.qp), cfg.receive_credit_max);
    used = sd_pinned_used();
    th_end_free(&e);
    return used;
}

/* A client's buffers take the sizes its peer negotiates (MS-SMBD 3.1.5.7: ksmbd and
 * Windows send and receive 1364 bytes at most, against the 8192 we offer and the 8136 we
 * would send): its receives pin a sixth, its permanent send buffers a third, and what
 * the connection's plan counted for the larger buffers goes back to the process, not
 * kept in the connection's reserve, whose one I/O still fits. */
static void test_a_client_pool_takes_the_size_its_peer_sends(void **state)
{
    static uint8_t a[MIB];
    struct smbd_buffer_desc d[4];
    struct smbd_registration *ra;
    struct smbd_config cfg;
    struct th_end e;
    uint8_t m[64];
    size_t large, small, saved, planned, reserve, nd, page = sd_pinned_page();

    (void)state;
    th_memlock_set(64 * MIB);
    ops = th_pinning_ops(&fake_provider);
    shim_sizes(&cfg);
    planned = smbd_memplan_buffers_cost(&cfg);
    large = established_cost(cfg.max_receive_size, 8192);
    assert_in_range(large, planned - 4 * page, planned);
    small = established_cost(1364, 1364);
    saved = large - small;
    assert_int_equal(smbd_send_base_slots(&cfg, 1364), 271);
    assert_true(saved + 2 * page >= (size_t)cfg.receive_credit_max * (8192 - 1408) +
                                    136 * 8192 - 271 * 1408);
    /* a plan's charge: the permanent buffers at the configured sizes and one 1 MiB I/O */
    reserve = planned + sd_pinned_cost_len(MIB);
    assert_int_equal(sd_pinned_charge(reserve), 0);
    th_end_init_ops(&e, SMBD_ROLE_ACTIVE, &cfg, fake_qp_new(5), ops);
    smbd_conn_adopt_reserve(e.conn, reserve, planned);
    th_active_establish(&e, m, th_negotiate_resp(m, 0x100, 10, 10, 0, MIB, 1364, 1364, MIB));
    assert_in_range(sd_pinned_used(), small + sd_pinned_cost_len(MIB),
                    small + sd_pinned_cost_len(MIB) + 4 * page);
    small = sd_pinned_used();
    assert_int_equal(smbd_conn_register_buffer(e.conn, a, MIB, SMBD_REG_PEER_READ, &ra, d, 4,
                                               &nd), 0);
    assert_int_equal(sd_pinned_used(), small); /* the I/O drew from the reserve */
    smbd_conn_deregister_buffer(e.conn, ra);
    assert_int_equal(e.terminated_calls, 0);
    th_end_free(&e);
}

/* Bytes an established server with the shim's send size registers (the fake provider
 * pins nothing) once a client receiving max_recv bytes negotiated with it. */
static size_t server_mr_bytes(uint32_t max_recv)
{
    struct smbd_config cfg;
    struct th_end e;
    uint8_t msg[64];
    size_t bytes;

    smbd_config_default(&cfg, SMBD_ROLE_PASSIVE);
    cfg.max_send_size = 8136;
    th_end_init(&e, SMBD_ROLE_PASSIVE, &cfg, fake_qp_new(4));
    assert_int_equal(smbd_conn_start(e.conn, 0), 0);
    fake_inject(e.qp, msg, th_negotiate_req(msg, 0x0100, 0x0100, 255, 1364, max_recv, MIB), 0);
    th_poll(&e, 0, 100);
    assert_int_equal(e.established, 1);
    /* the receives and the base send chunk: the Negotiate Response's chunk is gone */
    assert_int_equal(fake_mr_count(e.qp), 2);
    bytes = fake_mr_bytes(e.qp);
    th_end_free(&e);
    return bytes;
}

/* A server (the relay) makes its permanent send buffers once negotiated too, at the size
 * its client receives (kernel cifs: 1364 bytes): 271 of 1408 bytes instead of 136 of
 * 8192. */
static void test_a_server_sends_from_buffers_of_the_size_its_client_receives(void **state)
{
    (void)state;
    assert_int_equal(server_mr_bytes(8192) - server_mr_bytes(1364), 136 * 8192 - 271 * 1408);
}

/* ksmbd's 1364-byte receives: each permanent send buffer carries 1340 bytes. */
static void test_send_buffers_that_cannot_grow_make_a_message_wait(void **state)
{
    static uint8_t msg[MIB];
    struct smbd_config def;
    struct iovec first, second, huge = { msg, 0 };
    struct th_end e;
    size_t queued, cap;

    (void)state;
    smbd_config_default(&def, SMBD_ROLE_ACTIVE);
    th_memlock_set(64 * MIB);
    open_end(&e);
    cap = smbd_conn_send_capacity(e.conn);
    assert_int_equal(cap, (size_t)smbd_send_base_slots(&def, 1364) * 1340);
    huge.iov_len = cap + 1;
    first = (struct iovec){ msg, cap / 4 };
    second = (struct iovec){ msg, cap * 7 / 8 };
    th_memlock_set(sd_pinned_used()); /* no room for one more send buffer */
    /* nothing is in flight: a message the permanent buffers can never hold fails */
    assert_int_equal(smbd_conn_send(e.conn, &huge, 1, 1), -ENOMEM);
    assert_int_equal(smbd_conn_send(e.conn, &first, 1, 1), 0); /* 10 credits: most waits */
    queued = smbd_conn_send_queued(e.conn);
    assert_true(queued > 0);
    /* the second needs more buffers than are free: it waits for the first's to come back */
    assert_int_equal(smbd_conn_send(e.conn, &second, 1, 1), -EAGAIN);
    assert_int_equal(smbd_conn_send_queued(e.conn), queued); /* nothing of it was queued */
    assert_int_equal(e.terminated_calls, 0);
    th_memlock_set(64 * MIB); /* room again: it goes */
    assert_int_equal(smbd_conn_send(e.conn, &second, 1, 2), 0);
    assert_int_equal(smbd_conn_send_queued(e.conn), queued + second.iov_len);
    th_end_free(&e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_registrations_are_charged_and_given_back, teardown),
        cmocka_unit_test_teardown(test_past_the_limit_a_registration_never_reaches_the_provider,
                                  teardown),
        cmocka_unit_test_teardown(test_a_charge_past_the_limit_is_refused_whole, teardown),
        cmocka_unit_test_teardown(test_the_permanent_buffers_draw_from_a_reserve_given_before_start,
                                  teardown),
        cmocka_unit_test_teardown(test_a_client_pool_takes_the_size_its_peer_sends, teardown),
        cmocka_unit_test_teardown(test_a_server_sends_from_buffers_of_the_size_its_client_receives,
                                  teardown),
        cmocka_unit_test_teardown(test_send_buffers_that_cannot_grow_make_a_message_wait,
                                  teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
