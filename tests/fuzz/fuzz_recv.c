/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/fuzz/fuzz_recv.c — libFuzzer target for the MS-SMBD state machine's receive
 * path: an smbd_conn (ACTIVE or PASSIVE) runs over the unit tests' fake provider and
 * harness (th_conn) and the input is a program of peer events: arbitrary received
 * messages, well-formed Data Transfers with arbitrary fields, completion polling,
 * timer jumps, upper-layer sends, pauses, disconnects and connection loss. Checked: no
 * crash or sanitizer report; every message the engine sends after negotiation is a
 * Data Transfer the peer accepts (valid layout, within its MaxReceiveSize, at least
 * one credit requested: MS-SMBD 3.1.5.8); deliveries respect MaxFragmentedRecvSize;
 * termination is reported once; freeing the connection deregisters all memory.
 * fuzz-sources: common/log.c common/sd_libc.c common/sd_fsm.c transport/smbd/smbd_wire.c
 * fuzz-sources: transport/smbd/smbd_conn*.c
 * fuzz-sources: transport/smbd/smbd_credits.c transport/smbd/smbd_send_pool.c
 * fuzz-sources: transport/smbd/smbd_pin.c transport/smbd/smbd_memplan.c transport/sd_pinned.c
 * fuzz-sources: transport/provider.c tests/unit/fake_provider.c tests/unit/th_conn.c
 * fuzz-libs: -lcmocka */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "smbd_wire.h"
#include "th_conn.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* --- the harness --- */

struct fz_input {
    const uint8_t *p;
    size_t left;
};

static unsigned take(struct fz_input *in)
{
    if (!in->left)
        return 0;
    in->left--;
    return *in->p++;
}

struct fz_run {
    struct th_end e;
    uint64_t now;
    size_t sends_seen;
    uint32_t peer_max_receive; /* UINT32_MAX when the harness did not negotiate */
};

/* Every message after the first (the Negotiate Request or Response) must be a Data
 * Transfer the peer accepts (MS-SMBD 3.1.5.8) and fit its MaxReceiveSize. */
static void check_sent(struct fz_run *r)
{
    for (size_t i = 0; i < fake_sent_count(r->e.qp); i++) {
        const struct fake_sent *m = fake_sent_get(r->e.qp, i);
        struct smbd_data_hdr h;
        const char *why = NULL;

        if (r->sends_seen++ == 0)
            continue;
        if (m->len > r->peer_max_receive || smbd_decode_data_hdr(m->data, m->len, &h, &why) ||
            h.credits_requested == 0)
            abort();
    }
    fake_sent_clear(r->e.qp);
}

/* Delivered messages respect MaxFragmentedRecvSize; ASan checks they are readable. */
static void check_delivered(struct th_end *e, const uint8_t *data, size_t len)
{
    const struct smbd_config *cfg = e->user;
    volatile uint8_t sink = 0;

    if (len > cfg->max_fragmented_recv_size)
        abort();
    if (len) {
        sink ^= data[0];
        sink ^= data[len - 1];
    }
    (void)sink;
}

/* The peer's Send lands in the oldest posted receive (the fake breaks the connection
 * when there is none or it is too small); unless deferred, completions are polled. */
static void peer_send(struct fz_run *r, const uint8_t *msg, size_t len, uint32_t inval,
                      int defer)
{
    fake_inject(r->e.qp, msg, len, inval);
    if (!defer)
        th_poll(&r->e, r->now, INT32_MAX);
}

static void negotiate(struct fz_run *r, enum smbd_role role, const struct smbd_config *cfg)
{
    uint8_t b[SMBD_NEGOTIATE_RESP_SIZE];
    int n;

    if (role == SMBD_ROLE_PASSIVE) {
        struct smbd_negotiate_req q = { SMBD_VERSION_1_0, SMBD_VERSION_1_0, 10, 1024, 1024,
                                        1u << 20 };
        n = smbd_encode_negotiate_req(&q, b, sizeof(b));
        r->peer_max_receive = q.max_receive_size;
    } else {
        struct smbd_negotiate_resp p = { SMBD_VERSION_1_0, SMBD_VERSION_1_0, SMBD_VERSION_1_0,
                                         10, 10, SMBD_STATUS_SUCCESS, 1u << 20,
                                         cfg->max_receive_size, 1024, 1u << 20 };
        n = smbd_encode_negotiate_resp(&p, b, sizeof(b));
        r->peer_max_receive = p.max_receive_size;
    }
    peer_send(r, b, (size_t)n, 0, 0);
}

/* A Data Transfer with a valid layout and fuzzed field values. */
static void peer_data_transfer(struct fz_run *r, struct fz_input *in, int defer)
{
    static uint8_t msg[SMBD_DATA_OFFSET + 0xFFFF];
    struct smbd_data_hdr h;
    uint32_t len;
    int n;

    h.credits_requested = (uint16_t)take(in);
    h.credits_granted = (uint16_t)take(in);
    h.flags = (uint16_t)(take(in) & 3);
    h.remaining_data_length = take(in) << 16 | take(in) << 8;
    len = take(in) << 8 | take(in);
    h.data_length = len;
    h.data_offset = len ? SMBD_DATA_OFFSET : 0;
    n = smbd_encode_data_hdr(&h, msg, sizeof(msg));
    memset(msg + n, 0xA5, len);
    peer_send(r, msg, (size_t)n + len, 0, defer);
}

static void upper_send(struct fz_run *r, size_t len)
{
    static uint8_t buf[1u << 18];
    struct iovec iov = { buf, len < sizeof(buf) ? len : sizeof(buf) };

    smbd_conn_send(r->e.conn, &iov, 1, r->now);
}

static void config(struct smbd_config *cfg, enum smbd_role role, unsigned flags)
{
    smbd_config_default(cfg, role);
    if (flags & 4) { /* few credits and small messages: the credit edge cases */
        cfg->receive_credit_max = 4;
        cfg->send_credit_target = 4;
        cfg->max_send_size = 1024;
        cfg->max_receive_size = 1024;
        cfg->max_fragmented_recv_size = 131072;
    }
}

/* Input: a flags byte (role, harness-made negotiation, small config, completion
 * order), then operations, each an opcode byte and its arguments. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fz_input in = { data, size };
    unsigned flags = take(&in);
    enum smbd_role role = flags & 1 ? SMBD_ROLE_ACTIVE : SMBD_ROLE_PASSIVE;
    struct smbd_config cfg;
    struct fz_run r = { .now = 1000, .peer_max_receive = UINT32_MAX };
    struct smbd_conn *c;
    struct sd_qp *qp;

    sd_log_set_level(SD_LOG_OFF);
    config(&cfg, role, flags);
    qp = fake_qp_new(flags >> 4);
    fake_set_random_cq(qp, flags & 8);
    th_end_init(&r.e, role, &cfg, qp);
    r.e.on_deliver = check_delivered;
    r.e.user = &cfg;
    c = r.e.conn;
    smbd_conn_start(c, r.now);
    th_poll(&r.e, r.now, INT32_MAX);
    if (flags & 2)
        negotiate(&r, role, &cfg);

    while (in.left) {
        unsigned op = take(&in), n;
        int defer = op & 0x20;

        switch (op % 8) {
        case 0:
        case 1: {
            uint32_t inval = op & 0x40 ? take(&in) : 0;
            n = take(&in) | take(&in) << 8;
            if (n > in.left)
                n = (unsigned)in.left;
            peer_send(&r, in.p, n, inval, defer);
            in.p += n, in.left -= n;
            break;
        }
        case 2: peer_data_transfer(&r, &in, defer); break;
        case 3: th_poll(&r.e, r.now, (int)(take(&in) % 32 + 1)); break;
        case 4:
            r.now += (uint64_t)take(&in) * (op & 0x80 ? 60000 : 100);
            smbd_conn_on_timer(c, r.now);
            break;
        case 5: upper_send(&r, (size_t)take(&in) << (op >> 5)); break;
        case 6: smbd_conn_pause_receive(c, op & 0x10, r.now); break;
        default:
            if (op & 0x10)
                smbd_conn_disconnect(c);
            else
                fake_break(qp, SD_WC_FATAL);
            th_poll(&r.e, r.now, INT32_MAX);
        }
        check_sent(&r);
        if (r.e.terminated_calls > 1)
            abort(); /* termination is reported once */
    }
    smbd_conn_free(c);
    r.e.conn = NULL;
    if (fake_mr_count(qp) != 0)
        abort(); /* smbd_conn_free deregisters everything */
    th_end_free(&r.e);
    return 0;
}
