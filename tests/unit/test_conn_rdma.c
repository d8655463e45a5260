/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/test_conn_rdma.c — Register/Deregister Buffer and its Buffer
 * Descriptor V1 arrays (MS-SMBD 3.1.4.3, 3.1.4.4), RDMA Write/Read at an offset
 * into a descriptor array split across its elements (3.1.4.5, 3.1.4.6), refused
 * accesses, and invalidated-token reporting on receive (3.1.5.8). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "th_conn.h"

#define MIB (1024u * 1024u)

static void test_register_builds_descriptors(void **state)
{
    struct th_end a, b;
    struct smbd_config cb;
    static uint8_t buf[10000];
    struct smbd_buffer_desc d[4];
    struct smbd_registration *reg;
    size_t n;
    int mrs;

    (void)state;
    smbd_config_default(&cb, SMBD_ROLE_PASSIVE);
    cb.max_read_write_size = 4096;
    th_pair_establish(&a, &b, NULL, &cb, 1);
    mrs = fake_mr_count(a.qp);
    assert_int_equal(smbd_conn_register_buffer(a.conn, buf, sizeof(buf), SMBD_REG_PEER_READ,
                                               &reg, d, 2, &n), -ENOSPC);
    assert_int_equal(fake_mr_count(a.qp), mrs);
    assert_int_equal(smbd_conn_register_buffer(a.conn, buf, sizeof(buf), SMBD_REG_PEER_READ,
                                               &reg, d, 4, &n), 0);
    assert_int_equal(n, 3); /* each element at most MaxReadWriteSize (4096) */
    assert_int_equal(d[0].length, 4096);
    assert_int_equal(d[1].length, 4096);
    assert_int_equal(d[2].length, 10000 - 8192);
    assert_int_equal(d[1].offset, d[0].offset + 4096);
    assert_int_equal(d[2].offset, d[0].offset + 8192);
    assert_int_equal(d[0].token, d[1].token);
    assert_int_not_equal(d[0].token, 0);
    assert_int_equal(fake_mr_count(a.qp), mrs + 1);
    assert_int_equal(smbd_conn_deregister_buffer(a.conn, reg), 0);
    assert_int_equal(fake_mr_count(a.qp), mrs);
    assert_int_equal(smbd_conn_register_buffer(a.conn, buf, 0, SMBD_REG_PEER_READ, &reg, d, 4, &n),
                     -EINVAL);
    assert_int_equal(smbd_conn_register_buffer(a.conn, buf, 10, 0, &reg, d, 4, &n), -EINVAL);
    th_end_free(&a);
    th_end_free(&b);
}

/* A registration asks the provider for the rights its access names, no more (3.1.4.3;
 * a peer's RDMA Write needs local write too), and an access bit it does not know is
 * refused. */
static void test_registration_asks_for_exactly_its_rights(void **state)
{
    struct th_end a, b;
    static uint8_t buf[8192];
    struct smbd_buffer_desc d[4];
    struct smbd_registration *reg;
    size_t n;

    (void)state;
    th_pair_establish(&a, &b, NULL, NULL, 1);
    assert_int_equal(smbd_conn_register_buffer(a.conn, buf, sizeof(buf), SMBD_REG_PEER_WRITE,
                                               &reg, d, 4, &n), 0);
    assert_int_equal(fake_mr_access(a.qp, buf), SD_ACCESS_LOCAL_WRITE | SD_ACCESS_REMOTE_WRITE);
    assert_int_equal(smbd_conn_deregister_buffer(a.conn, reg), 0);
    assert_int_equal(smbd_conn_register_buffer(a.conn, buf, sizeof(buf), SMBD_REG_PEER_READ,
                                               &reg, d, 4, &n), 0);
    assert_int_equal(fake_mr_access(a.qp, buf), SD_ACCESS_REMOTE_READ);
    assert_int_equal(smbd_conn_deregister_buffer(a.conn, reg), 0);
    assert_int_equal(smbd_conn_register_buffer(a.conn, buf, sizeof(buf), SMBD_REG_PEER_WRITE | 4,
                                               &reg, d, 4, &n), -EINVAL);
    th_end_free(&a);
    th_end_free(&b);
}

/* Three separate peer buffers form one descriptor array; a write at offset 80 of
 * 200 bytes covers the tail of the first, all of the second and the head of the
 * third, and touches nothing else. */
static void test_write_split_across_elements(void **state)
{
    struct th_end a, b;
    static uint8_t b0[100], b1[50], b2[300], src[200];
    struct smbd_buffer_desc d[3];
    struct smbd_registration *r[3];
    size_t n;

    (void)state;
    th_pair_establish(&a, &b, NULL, NULL, 2);
    memset(b0, 0xEE, sizeof(b0));
    memset(b1, 0xEE, sizeof(b1));
    memset(b2, 0xEE, sizeof(b2));
    for (size_t i = 0; i < sizeof(src); i++)
        src[i] = (uint8_t)i;
    assert_int_equal(smbd_conn_register_buffer(b.conn, b0, sizeof(b0), SMBD_REG_PEER_WRITE, &r[0], &d[0], 1, &n), 0);
    assert_int_equal(smbd_conn_register_buffer(b.conn, b1, sizeof(b1), SMBD_REG_PEER_WRITE, &r[1], &d[1], 1, &n), 0);
    assert_int_equal(smbd_conn_register_buffer(b.conn, b2, sizeof(b2), SMBD_REG_PEER_WRITE, &r[2], &d[2], 1, &n), 0);
    assert_int_equal(smbd_conn_rdma_write(a.conn, 77, src, sizeof(src), d, 3, 80), 0);
    assert_int_equal(fake_wire_pending(a.qp), 3); /* one RDMA Write per element */
    th_settle(&a, &b, 0);
    assert_int_equal(a.rdma_done_calls, 1);
    assert_int_equal(a.rdma_cookie, 77);
    assert_int_equal(a.rdma_status, 0);
    for (int i = 0; i < 80; i++)
        assert_int_equal(b0[i], 0xEE);
    assert_memory_equal(b0 + 80, src, 20);
    assert_memory_equal(b1, src + 20, 50);
    assert_memory_equal(b2, src + 70, 130);
    for (size_t i = 130; i < sizeof(b2); i++)
        assert_int_equal(b2[i], 0xEE);
    for (int i = 0; i < 3; i++)
        assert_int_equal(smbd_conn_deregister_buffer(b.conn, r[i]), 0);
    th_end_free(&a);
    th_end_free(&b);
}

/* A read at an offset inside one large registration split into elements. */
static void test_read_split_across_elements(void **state)
{
    struct th_end a, b;
    struct smbd_config cb;
    static uint8_t peer[3 * 4096], dst[5000];
    struct smbd_buffer_desc d[3];
    struct smbd_registration *reg;
    size_t n;

    (void)state;
    smbd_config_default(&cb, SMBD_ROLE_PASSIVE);
    cb.max_read_write_size = 8192;
    th_pair_establish(&a, &b, NULL, &cb, 3);
    for (size_t i = 0; i < sizeof(peer); i++)
        peer[i] = (uint8_t)(i * 31 + 7);
    assert_int_equal(smbd_conn_register_buffer(b.conn, peer, sizeof(peer), SMBD_REG_PEER_READ,
                                               &reg, d, 3, &n), 0);
    assert_int_equal(n, 2); /* 8192 + 4096 */
    assert_int_equal(smbd_conn_rdma_read(a.conn, 5, dst, sizeof(dst), d, n, 6000), 0);
    th_settle(&a, &b, 0);
    assert_int_equal(a.rdma_done_calls, 1);
    assert_int_equal(a.rdma_status, 0);
    assert_memory_equal(dst, peer + 6000, sizeof(dst));
    assert_int_equal(smbd_conn_deregister_buffer(b.conn, reg), 0);
    th_end_free(&a);
    th_end_free(&b);
}

static void test_rdma_argument_checks(void **state)
{
    struct th_end a, b;
    struct smbd_config cb;
    uint8_t buf[64];
    struct smbd_buffer_desc d = { .offset = 0x1000, .token = 0x1234, .length = 64 };

    (void)state;
    smbd_config_default(&cb, SMBD_ROLE_PASSIVE);
    cb.max_read_write_size = 32;
    th_pair_establish(&a, &b, NULL, &cb, 4);
    assert_int_equal(smbd_conn_rdma_write(a.conn, 1, buf, 33, &d, 1, 0), -EMSGSIZE);
    assert_int_equal(smbd_conn_rdma_write(a.conn, 1, buf, 32, &d, 1, 33), -EINVAL);
    assert_int_equal(smbd_conn_rdma_read(a.conn, 1, buf, 0, &d, 1, 0), -EINVAL);
    assert_int_equal(a.rdma_done_calls, 0);
    assert_int_equal(fake_wire_pending(a.qp), 0);
    th_end_free(&a);
    th_end_free(&b);
}

/* A write into a buffer the peer registered for reading only is refused by the
 * provider: the operation fails and the connection is lost on both sides. */
static void test_write_without_rights_fails(void **state)
{
    struct th_end a, b;
    static uint8_t peer[256], src[16];
    struct smbd_buffer_desc d;
    struct smbd_registration *reg;
    size_t n;

    (void)state;
    th_pair_establish(&a, &b, NULL, NULL, 5);
    assert_int_equal(smbd_conn_register_buffer(b.conn, peer, sizeof(peer), SMBD_REG_PEER_READ,
                                               &reg, &d, 1, &n), 0);
    assert_int_equal(smbd_conn_rdma_write(a.conn, 9, src, sizeof(src), &d, 1, 0), 0);
    th_settle(&a, &b, 0);
    assert_int_equal(a.rdma_done_calls, 1);
    assert_int_equal(a.rdma_cookie, 9);
    assert_int_equal(a.rdma_status, -EACCES);
    assert_int_equal(a.terminated_calls, 1);
    assert_int_equal(a.term_err, -ECONNRESET);
    assert_int_equal(b.terminated_calls, 1);
    for (size_t i = 0; i < sizeof(peer); i++)
        assert_int_equal(peer[i], 0);
    th_end_free(&a);
    th_end_free(&b);
}

/* 3.1.5.8: a Send with Invalidate reports the token to the upper layer before the
 * message it completed, once. */
static void test_invalidated_token_reported(void **state)
{
    struct th_end e;
    uint8_t m[64], region[512];
    struct smbd_buffer_desc d;
    struct smbd_registration *reg;
    size_t n;

    (void)state;
    th_end_init(&e, SMBD_ROLE_ACTIVE, NULL, fake_qp_new(6));
    smbd_conn_start(e.conn, 0);
    fake_inject(e.qp, m, th_negotiate_resp(m, 0x100, 10, 10, 0, MIB, 1364, 8192, MIB), 0);
    th_poll(&e, 0, 100);
    assert_int_equal(smbd_conn_register_buffer(e.conn, region, sizeof(region),
                                               SMBD_REG_PEER_WRITE, &reg, &d, 1, &n), 0);
    /* First fragment carries the invalidation, the second completes the message. */
    assert_int_equal(fake_inject(e.qp, m, th_data_msg(m, 10, 0, 0, 3, 24, 3, "abc", 3), d.token), 0);
    th_poll(&e, 0, 100);
    assert_int_equal(e.ninvalidated, 0);
    assert_int_equal(fake_inject(e.qp, m, th_data_msg(m, 10, 0, 0, 0, 24, 3, "def", 3), 0), 0);
    th_poll(&e, 0, 100);
    assert_int_equal(e.ninvalidated, 1);
    assert_int_equal(e.invalidated[0], d.token);
    assert_int_equal(e.delivered, 1);
    assert_memory_equal(e.last, "abcdef", 6);
    assert_int_equal(fake_inject(e.qp, m, th_data_msg(m, 10, 0, 0, 0, 24, 1, "g", 1), 0), 0);
    th_poll(&e, 0, 100);
    assert_int_equal(e.ninvalidated, 1);
    assert_int_equal(smbd_conn_deregister_buffer(e.conn, reg), 0);
    th_end_free(&e);
}

/* 3.1.4.2 / 3.1.5.4: a message sent with a token to invalidate carries it on exactly
 * one fragment, its first; the peer reports it once, before delivering the message. */
static void test_send_invalidate_rides_the_first_fragment(void **state)
{
    struct th_end a, b;
    uint8_t region[512], msg[3000];
    struct smbd_buffer_desc d;
    struct smbd_registration *reg;
    struct iovec iov = { msg, sizeof(msg) };
    size_t n, sends = 0;

    (void)state;
    memset(msg, 0x5a, sizeof(msg));
    th_pair_establish(&a, &b, NULL, NULL, 11);
    assert_int_equal(smbd_conn_register_buffer(b.conn, region, sizeof(region),
                                               SMBD_REG_PEER_WRITE, &reg, &d, 1, &n), 0);
    assert_int_equal(smbd_conn_send_invalidate(a.conn, &iov, 1, 0, 0), -EINVAL);
    fake_set_record(a.qp, 1);
    assert_int_equal(smbd_conn_send_invalidate(a.conn, &iov, 1, d.token, 0), 0);
    th_settle(&a, &b, 0);
    for (size_t i = 0; i < fake_sent_count(a.qp); i++) {
        const struct fake_sent *s = fake_sent_get(a.qp, i);

        if (sd_le32(s->data + 16) == 0) /* credit-only message */
            continue;
        assert_int_equal(s->invalidate_rkey, sends == 0 ? d.token : 0);
        sends++;
    }
    assert_true(sends >= 3); /* 3000 bytes at MaxSendSize 1364: three fragments */
    assert_int_equal(b.ninvalidated, 1);
    assert_int_equal(b.invalidated[0], d.token);
    assert_int_equal(b.delivered, 1);
    assert_int_equal(smbd_conn_deregister_buffer(b.conn, reg), 0);
    th_end_free(&a);
    th_end_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_register_builds_descriptors),
        cmocka_unit_test(test_registration_asks_for_exactly_its_rights),
        cmocka_unit_test(test_write_split_across_elements),
        cmocka_unit_test(test_read_split_across_elements),
        cmocka_unit_test(test_rdma_argument_checks),
        cmocka_unit_test(test_write_without_rights_fails),
        cmocka_unit_test(test_invalidated_token_reported),
        cmocka_unit_test(test_send_invalidate_rides_the_first_fragment),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
