/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/test_conf_smbd.c — the conformance client's raw SMB Direct session
 * (conformance/cf_smbd.c) over the in-memory fake provider, the test playing the server:
 * receives posted at connect, the Negotiate Request sent and a Response of any Status
 * decoded (MS-SMBD 3.1.5.2, 3.1.5.7), fragmentation to the negotiated send size with
 * RemainingDataLength and credits (3.1.5.1, 3.1.5.9: never a send without a credit),
 * fragments and credit grants a case chooses,
 * reassembly with the Send with Invalidate seen (3.1.5.8), the keepalive answer,
 * a malformed message, and the connection's loss; what the cases set and read: a
 * fragment plan with empty fragments, junk padding, keepalives held back or sent,
 * the counters of the server's messages, and raw Data Transfer messages (cf_send_dt). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "cf_fixture.h"
#include "cf_smbd.h"
#include "sd_bytes.h"
#include "fake_provider.h"

static struct sd_qp *next_qp; /* what the test's connect hands out */

static struct sd_qp *test_connect(const struct sockaddr *addr, socklen_t addrlen,
                                  const struct sd_cm_params *params, int timeout_ms,
                                  struct sd_cm_result *result, int *err)
{
    (void)addr, (void)addrlen, (void)params, (void)timeout_ms, (void)result, (void)err;
    return next_qp;
}

static struct sd_provider_ops ops;
static struct cf_target target;

static int setup(void **state)
{
    (void)state;
    ops = fake_provider;
    ops.connect = test_connect;
    target = (struct cf_target){ .provider = &ops, .ird = 1, .ord = 1, .timeout_ms = 50,
                                 .credits = 4, .max_send_size = 1024, .max_receive_size = 1024,
                                 .max_fragmented_size = 131072 };
    next_qp = fake_qp_new(1);
    return 0;
}

/* Plays the server's Negotiate Response granting credits, with MaxReceiveSize mrs. */
static void inject_negotiate(uint16_t credits, uint32_t mrs, uint32_t status)
{
    struct smbd_negotiate_resp p = { .min_version = 0x0100, .max_version = 0x0100,
                                     .negotiated_version = 0x0100, .credits_requested = 10,
                                     .credits_granted = credits, .status = status,
                                     .max_read_write_size = 1048576, .preferred_send_size = 1024,
                                     .max_receive_size = mrs, .max_fragmented_size = 131072 };
    uint8_t b[SMBD_NEGOTIATE_RESP_SIZE];

    smbd_encode_negotiate_resp(&p, b, sizeof(b));
    assert_int_equal(fake_inject(next_qp, b, sizeof(b), 0), 0);
}

/* Plays a Data Transfer message of the server. */
static void inject_data(uint16_t granted, uint16_t flags, uint32_t remaining, const char *data,
                        uint32_t inv)
{
    uint32_t n = data ? (uint32_t)strlen(data) : 0;
    struct smbd_data_hdr h = { .credits_requested = 10, .credits_granted = granted,
                               .flags = flags, .remaining_data_length = remaining,
                               .data_offset = n ? SMBD_DATA_OFFSET : 0, .data_length = n };
    uint8_t b[256];
    int hl = smbd_encode_data_hdr(&h, b, sizeof(b));

    memcpy(b + hl, data ? data : "", n);
    assert_int_equal(fake_inject(next_qp, b, (size_t)hl + n, inv), 0);
}

static void connect_and_negotiate(struct cf_smbd *s, uint16_t credits, uint32_t mrs)
{
    struct smbd_negotiate_req q;

    assert_int_equal(cf_smbd_connect(s, &target), 0);
    assert_int_equal(fake_posted_recvs(next_qp), 4);
    inject_negotiate(credits, mrs, 0);
    cf_smbd_default_negotiate(&target, &q);
    assert_int_equal(cf_smbd_negotiate(s, &q), 0);
}

/* The same, with the Negotiate Request forgotten: fake_sent starts empty. */
static void negotiated(struct cf_smbd *s, uint16_t credits, uint32_t mrs)
{
    connect_and_negotiate(s, credits, mrs);
    fake_sent_clear(next_qp);
}

/* The header of the i-th message sent (it must decode). */
static struct smbd_data_hdr sent_hdr(size_t i)
{
    const struct fake_sent *m = fake_sent_get(next_qp, i);
    struct smbd_data_hdr h;
    const char *why;

    assert_int_equal(smbd_decode_data_hdr(m->data, m->len, &h, &why), 0);
    return h;
}

static void negotiate_sends_the_request_and_applies_the_response(void **state)
{
    struct smbd_negotiate_req q;
    struct cf_smbd s;
    const char *why;

    (void)state;
    connect_and_negotiate(&s, 3, 200);
    assert_int_equal(fake_sent_count(next_qp), 1);
    assert_int_equal(fake_sent_get(next_qp, 0)->len, SMBD_NEGOTIATE_REQ_SIZE);
    assert_int_equal(smbd_decode_negotiate_req(fake_sent_get(next_qp, 0)->data, 20, &q, &why), 0);
    assert_int_equal(q.credits_requested, 4);
    assert_int_equal(q.max_receive_size, 1024);
    assert_int_equal(s.send_credits, 3);
    assert_int_equal(s.max_send, 200); /* the server's MaxReceiveSize */
    assert_int_equal(fake_posted_recvs(next_qp), 4); /* the response's receive reposted */
    cf_smbd_close(&s);
}

static void a_refusal_is_decoded_then_reported(void **state)
{
    struct smbd_negotiate_req q;
    struct cf_smbd s;

    (void)state;
    assert_int_equal(cf_smbd_connect(&s, &target), 0);
    inject_negotiate(0, 1024, SMBD_STATUS_NOT_SUPPORTED);
    cf_smbd_default_negotiate(&target, &q);
    assert_int_equal(cf_smbd_negotiate(&s, &q), -EPROTO);
    assert_int_equal(s.neg.status, SMBD_STATUS_NOT_SUPPORTED);
    assert_non_null(strstr(s.why, "0xc00000bb"));
    cf_smbd_close(&s);
}

static void no_answer_times_out(void **state)
{
    struct cf_smbd s;

    (void)state;
    assert_int_equal(cf_smbd_connect(&s, &target), 0);
    assert_int_equal(cf_smbd_send_raw(&s, "x", 1), 0);
    assert_int_equal(cf_smbd_wait_negotiate(&s, 20), -ETIMEDOUT);
    cf_smbd_close(&s);
}

static void messages_are_fragmented_within_credits(void **state)
{
    uint8_t msg[300];
    struct smbd_data_hdr h;
    struct cf_smbd s;
    const char *why;

    (void)state;
    for (size_t i = 0; i < sizeof(msg); i++)
        msg[i] = (uint8_t)i;
    connect_and_negotiate(&s, 2, 128); /* 104 payload bytes per fragment, 2 credits */
    fake_sent_clear(next_qp);
    /* three fragments are needed, two may go: the third waits for a credit */
    assert_int_equal(cf_smbd_send_msg(&s, msg, sizeof(msg)), -ETIMEDOUT);
    assert_int_equal(fake_sent_count(next_qp), 2);
    assert_int_equal(smbd_decode_data_hdr(fake_sent_get(next_qp, 0)->data, 128, &h, &why), 0);
    assert_int_equal(h.data_length, 104);
    assert_int_equal(h.remaining_data_length, 196);
    assert_int_equal(h.credits_granted, 4);  /* every posted receive */
    assert_memory_equal(fake_sent_get(next_qp, 0)->data + 24, msg, 104);
    assert_int_equal(smbd_decode_data_hdr(fake_sent_get(next_qp, 1)->data, 128, &h, &why), 0);
    assert_int_equal(h.remaining_data_length, 92);
    assert_int_equal(h.credits_granted, 0);  /* nothing new to grant */
    assert_int_equal(s.send_credits, 0);
    cf_smbd_close(&s);
}

static void cases_choose_fragments_and_hold_credits(void **state)
{
    struct smbd_data_hdr h;
    struct cf_smbd s;
    const char *why;

    (void)state;
    negotiated(&s, 10, 1024);
    s.hold_credits = 1;
    assert_int_equal(cf_smbd_send_frags(&s, "abc", 3, 1), 0);
    assert_int_equal(fake_sent_count(next_qp), 3);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(smbd_decode_data_hdr(fake_sent_get(next_qp, (size_t)i)->data, 25, &h,
                                              &why), 0);
        assert_int_equal(h.data_length, 1);
        assert_int_equal(h.remaining_data_length, 2 - i);
        assert_int_equal(h.credits_granted, 0); /* held back */
        assert_int_equal(fake_sent_get(next_qp, (size_t)i)->data[24], "abc"[i]);
    }
    assert_int_equal(cf_smbd_grant(&s, 3), 0);
    assert_int_equal(smbd_decode_data_hdr(fake_sent_get(next_qp, 3)->data, 20, &h, &why), 0);
    assert_int_equal(h.credits_granted, 3);
    assert_int_equal(h.data_length, 0);
    assert_int_equal(cf_smbd_grant(&s, 100), 0); /* no more than the receives posted */
    assert_int_equal(smbd_decode_data_hdr(fake_sent_get(next_qp, 4)->data, 20, &h, &why), 0);
    assert_int_equal(h.credits_granted, 1);
    cf_smbd_close(&s);
}

static void fragments_reassemble_with_the_invalidation(void **state)
{
    const struct cf_msg *m;
    struct cf_smbd s;
    struct sd_mr mr;
    uint8_t buf[64];

    (void)state;
    connect_and_negotiate(&s, 5, 1024);
    assert_int_equal(cf_smbd_reg(&s, buf, sizeof(buf),
                                 SD_ACCESS_LOCAL_WRITE | SD_ACCESS_REMOTE_WRITE, &mr), 0);
    inject_data(1, 0, 5, "hello", 0);
    inject_data(1, 0, 0, "world", mr.rkey);
    assert_int_equal(cf_smbd_recv_msg(&s, 50, &m), 0);
    assert_int_equal(m->len, 10);
    assert_memory_equal(m->data, "helloworld", 10);
    assert_true(m->invalidate);
    assert_int_equal(m->inv_rkey, mr.rkey);
    /* 5 + 1 + 1 granted; one spent on an empty message granting the server the
     * credits it had none of (3.1.5.9) */
    assert_int_equal(s.send_credits, 6);
    assert_int_equal(fake_sent_count(next_qp), 2);
    assert_int_equal(fake_sent_get(next_qp, 1)->len, SMBD_DATA_HEADER_SIZE);
    assert_int_equal(cf_smbd_recv_msg(&s, 10, &m), -ETIMEDOUT);
    cf_smbd_close(&s);
}

static void a_keepalive_is_answered(void **state)
{
    const struct fake_sent *last;
    const struct cf_msg *m;
    struct smbd_data_hdr h;
    struct cf_smbd s;
    const char *why;

    (void)state;
    negotiated(&s, 2, 1024);
    inject_data(1, SMBD_FLAG_RESPONSE_REQUESTED, 0, NULL, 0);
    assert_int_equal(cf_smbd_recv_msg(&s, 20, &m), -ETIMEDOUT);
    assert_int_equal(fake_sent_count(next_qp), 1);
    last = fake_sent_get(next_qp, 0);
    assert_int_equal(last->len, SMBD_DATA_HEADER_SIZE);
    assert_int_equal(smbd_decode_data_hdr(last->data, last->len, &h, &why), 0);
    assert_int_equal(h.data_length, 0);
    assert_true(h.credits_granted > 0);
    cf_smbd_close(&s);
}

static void a_malformed_message_and_the_loss_are_reported(void **state)
{
    const struct cf_msg *m;
    struct cf_smbd s;
    uint8_t bad[19] = { 0 };

    (void)state;
    connect_and_negotiate(&s, 2, 1024);
    assert_int_equal(fake_inject(next_qp, bad, sizeof(bad), 0), 0);
    assert_int_equal(cf_smbd_recv_msg(&s, 20, &m), -EPROTO);
    assert_non_null(strstr(s.why, "does not decode"));
    cf_smbd_close(&s);

    next_qp = fake_qp_new(2);
    connect_and_negotiate(&s, 2, 1024);
    fake_break(next_qp, SD_WC_REMOTE_OP);
    assert_int_equal(cf_smbd_recv_msg(&s, 20, &m), -ENOTCONN);
    assert_int_equal(cf_smbd_wait_lost(&s, 0), 0);
    assert_true(s.lost);
    cf_smbd_close(&s);
}

static void a_plan_cuts_fragments_and_padding_fills_messages(void **state)
{
    static const uint32_t plan[] = { 2, 0, 1 };
    static const uint32_t want_len[] = { 2, 0, 1, 2, 0, 1 }, want_rem[] = { 4, 4, 3, 1, 1, 0 };
    struct cf_smbd s;

    (void)state;
    negotiated(&s, 10, 1024);
    s.frag_plan = plan;
    s.frag_plan_n = 3;
    assert_int_equal(cf_smbd_send_msg(&s, "abcdef", 6), 0);
    assert_int_equal(fake_sent_count(next_qp), 6);
    for (size_t i = 0; i < 6; i++) {
        const struct smbd_data_hdr h = sent_hdr(i);

        assert_int_equal(h.data_length, want_len[i]);
        assert_int_equal(h.remaining_data_length, want_rem[i]);
        assert_int_equal(h.data_offset, want_len[i] ? SMBD_DATA_OFFSET : 0); /* 2.2.3 */
        assert_int_equal(fake_sent_get(next_qp, i)->len,
                         want_len[i] ? SMBD_DATA_OFFSET + want_len[i] : 20);
    }
    /* junk after the payload up to pad_to, DataLength unchanged */
    s.frag_plan = NULL;
    s.pad_to = 100;
    fake_sent_clear(next_qp);
    assert_int_equal(cf_smbd_send_msg(&s, "xyz", 3), 0);
    assert_int_equal(fake_sent_count(next_qp), 1);
    assert_int_equal(fake_sent_get(next_qp, 0)->len, 100);
    assert_int_equal(sent_hdr(0).data_length, 3);
    assert_memory_equal(fake_sent_get(next_qp, 0)->data + 24, "xyz", 3);
    assert_int_equal(fake_sent_get(next_qp, 0)->data[99], 0xA5);
    cf_smbd_close(&s);
}

static void the_servers_messages_are_counted(void **state)
{
    const struct cf_msg *m;
    struct cf_smbd s;

    (void)state;
    negotiated(&s, 2, 1024);
    s.hold_acks = 1;
    s.hold_credits = 1;
    /* no credit granted to the server yet: beyond its credits */
    inject_data(1, SMBD_FLAG_RESPONSE_REQUESTED, 0, NULL, 0);
    assert_int_equal(cf_smbd_wait_count(&s, &s.keepalives, 1, 20), 0);
    assert_int_equal(s.over_credit, 1);
    assert_int_equal(s.empty_grants, 1);
    assert_int_equal(cf_smbd_wait_count(&s, &s.keepalives, 2, 10), -ETIMEDOUT);
    assert_int_equal(fake_sent_count(next_qp), 0); /* held: not answered */
    /* a keepalive of ours; the fragments of a message and its first header */
    assert_int_equal(cf_smbd_keepalive(&s), 0);
    assert_int_equal(fake_sent_count(next_qp), 1);
    assert_int_equal(sent_hdr(0).flags, SMBD_FLAG_RESPONSE_REQUESTED);
    inject_data(0, 0, 3, "ab", 0);
    inject_data(0, 0, 0, "cde", 0);
    assert_int_equal(cf_smbd_recv_msg(&s, 20, &m), 0);
    assert_int_equal(m->frags, 2);
    assert_int_equal(m->first.remaining_data_length, 3);
    assert_int_equal(m->first.data_length, 2);
    assert_int_equal(s.over_credit, 3); /* both fragments too: our keepalive granted nothing */
    assert_int_equal(s.zero_requested, 0);
    cf_smbd_close(&s);
}

static void raw_data_transfer_messages_carry_any_fields(void **state)
{
    const struct cf_dt past = { 10, 3, 0, 0, SMBD_DATA_OFFSET, CF_DT_PAST_END, CF_DT_MAX_SEND };
    const struct cf_dt mfs = { 0, 0, 1, CF_DT_MFS_PLUS_1, 23, 0, 19 };
    const struct fake_sent *m;
    struct cf_smbd s;

    (void)state;
    negotiated(&s, 10, 200);
    assert_int_equal(cf_send_dt(&s, &past), 0);
    m = fake_sent_get(next_qp, 0);
    assert_int_equal(m->len, 200); /* the negotiated send size */
    assert_int_equal(sd_le16(m->data), 10);
    assert_int_equal(sd_le16(m->data + 2), 3);
    assert_int_equal(sd_le32(m->data + 12), SMBD_DATA_OFFSET);
    assert_int_equal(sd_le32(m->data + 16), 200 - SMBD_DATA_OFFSET + 1);
    assert_int_equal(sd_le16(m->data + 24 + 12), SMB2_NEGOTIATE); /* SMB2 bytes */
    assert_int_equal(cf_send_dt(&s, &mfs), 0);
    m = fake_sent_get(next_qp, 1);
    assert_int_equal(m->len, 19);
    assert_int_equal(sd_le16(m->data + 4), 1);
    assert_int_equal(sd_le32(m->data + 8), 131072 + 1);
    assert_int_equal(sd_le32(m->data + 12), 23);
    cf_smbd_close(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(negotiate_sends_the_request_and_applies_the_response, setup),
        cmocka_unit_test_setup(a_refusal_is_decoded_then_reported, setup),
        cmocka_unit_test_setup(no_answer_times_out, setup),
        cmocka_unit_test_setup(messages_are_fragmented_within_credits, setup),
        cmocka_unit_test_setup(cases_choose_fragments_and_hold_credits, setup),
        cmocka_unit_test_setup(fragments_reassemble_with_the_invalidation, setup),
        cmocka_unit_test_setup(a_keepalive_is_answered, setup),
        cmocka_unit_test_setup(a_malformed_message_and_the_loss_are_reported, setup),
        cmocka_unit_test_setup(a_plan_cuts_fragments_and_padding_fills_messages, setup),
        cmocka_unit_test_setup(the_servers_messages_are_counted, setup),
        cmocka_unit_test_setup(raw_data_transfer_messages_carry_any_fields, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
