/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/test_bridge.c — two bridges joined by a real soft-iWARP SMB Direct link on
 * loopback (th_bridge.h: the passive side accepted asynchronously like the relay, the
 * active side dialled like the shim), each fed by a stream: SMB2-framed random messages
 * up to 8 MiB go A -> B and B -> A at once and arrive intact; a link killed mid-transfer
 * resets or closes both streams within a bound; a stream EOF disconnects the link in
 * order. With the READ/WRITE channel (A the relay's server role, B the shim's client
 * role), a channel memory budget holds WRITEs back, in order, instead of failing them: on
 * the client side the program's next request waits in its stream, on the server side the
 * client's next channel WRITE waits for its RDMA Read; the client side's on_request sees
 * each of the program's messages once, however often a wait offers it again. Where registering pins memory
 * (soft-iWARP wrapped to count as a device does, th_pinned.h), pipelined channel READs
 * and WRITEs of every size up to the link's I/O limit all arrive intact, over the
 * channel, both under a low RLIMIT_MEMLOCK (planned at connect) and when registrations
 * are refused past a byte count with no limit set (as a kernel does when something else
 * pinned memory); refused with nothing in flight, a WRITE waits the shortened pin_grace_ms
 * and the bridge ends naming RLIMIT_MEMLOCK. The lifecycle's transitions one by one:
 * test_bridge_lifecycle.c. */
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <poll.h>

#include <cmocka.h>

#include "sd_loop.h"
#include "smbd_bridge.h"
#include "smbd_link.h"
#include "soft/soft_cm.h"
#include "sd_pinned.h"
#include "th_bridge.h"
#include "th_bridge_state.h"
#include "th_pinned.h"
#include "th_smb2.h"

/* ---- traffic ---- */

static uint64_t bt_rand(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* Message i of a stream seeded with seed: its size and bytes are reproducible. */
static size_t bt_msg_size(uint64_t seed, int i)
{
    uint64_t s = seed * 1000003u + (uint64_t)i + 1;
    uint64_t r = bt_rand(&s);

    if (i % 7 == 3)
        return 8u << 20;                   /* smbclient's inline 8 MiB WRITE */
    if (i % 5 == 1)
        return (size_t)(r % (1u << 20));   /* up to 1 MiB */
    return (size_t)(r % 4000) + (i == 0 ? 0 : 1); /* small; message 0 may be empty */
}

static void bt_msg_fill(uint64_t seed, int i, uint8_t *buf, size_t len)
{
    uint64_t s = seed * 7919u + (uint64_t)i * 31u + 5;

    for (size_t off = 0; off < len; off += 8) {
        uint64_t v = bt_rand(&s);

        memcpy(buf + off, &v, len - off < 8 ? len - off : 8);
    }
}

struct bt_flow {
    int fd;
    uint64_t seed;
    int count;
    int ok;               /* reader: all messages matched */
    uint64_t bytes;
    char error[200];
};

static int bt_write_all(int fd, const uint8_t *p, size_t n)
{
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);

        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static int bt_read_all(int fd, uint8_t *p, size_t n)
{
    while (n > 0) {
        ssize_t r = recv(fd, p, n, 0);

        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

static void *bt_writer(void *arg)
{
    struct bt_flow *f = arg;
    uint8_t *buf = malloc((8u << 20) + 4);

    for (int i = 0; i < f->count && buf; i++) {
        size_t len = bt_msg_size(f->seed, i);

        buf[0] = 0;
        buf[1] = (uint8_t)(len >> 16);
        buf[2] = (uint8_t)(len >> 8);
        buf[3] = (uint8_t)len;
        bt_msg_fill(f->seed, i, buf + 4, len);
        if (bt_write_all(f->fd, buf, len + 4) < 0) {
            snprintf(f->error, sizeof(f->error), "write of message %d: %s", i, strerror(errno));
            break;
        }
        f->bytes += len + 4;
    }
    free(buf);
    return NULL;
}

static void *bt_reader(void *arg)
{
    struct bt_flow *f = arg;
    uint8_t *got = malloc((8u << 20) + 4), *want = malloc(8u << 20), hdr[4];

    f->ok = 0;
    for (int i = 0; i < f->count; i++) {
        size_t len = bt_msg_size(f->seed, i), glen;

        if (bt_read_all(f->fd, hdr, 4) < 0) {
            snprintf(f->error, sizeof(f->error), "stream ended before message %d", i);
            goto out;
        }
        glen = (size_t)hdr[1] << 16 | (size_t)hdr[2] << 8 | hdr[3];
        if (hdr[0] != 0 || glen != len) {
            snprintf(f->error, sizeof(f->error), "message %d: length %zu, expected %zu", i, glen,
                     len);
            goto out;
        }
        if (bt_read_all(f->fd, got, len) < 0) {
            snprintf(f->error, sizeof(f->error), "stream ended inside message %d", i);
            goto out;
        }
        bt_msg_fill(f->seed, i, want, len);
        if (memcmp(got, want, len) != 0) {
            snprintf(f->error, sizeof(f->error), "message %d: bytes differ", i);
            goto out;
        }
        f->bytes += len + 4;
    }
    f->ok = 1;
out:
    free(got);
    free(want);
    return NULL;
}

/* Both directions at once; returns total bytes carried. */
static uint64_t bt_exchange(struct th_bridge_pair *p, int count)
{
    struct bt_flow wa = { .fd = p->a.app_fd, .seed = 11, .count = count };
    struct bt_flow rb = { .fd = p->b.app_fd, .seed = 11, .count = count };
    struct bt_flow wb = { .fd = p->b.app_fd, .seed = 22, .count = count };
    struct bt_flow ra = { .fd = p->a.app_fd, .seed = 22, .count = count };
    pthread_t t[4];

    assert_int_equal(pthread_create(&t[0], NULL, bt_writer, &wa), 0);
    assert_int_equal(pthread_create(&t[1], NULL, bt_reader, &rb), 0);
    assert_int_equal(pthread_create(&t[2], NULL, bt_writer, &wb), 0);
    assert_int_equal(pthread_create(&t[3], NULL, bt_reader, &ra), 0);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    if (!rb.ok)
        fail_msg("A -> B: %s %s", rb.error, wa.error);
    if (!ra.ok)
        fail_msg("B -> A: %s %s", ra.error, wb.error);
    assert_int_equal(wa.bytes, rb.bytes);
    assert_int_equal(wb.bytes, ra.bytes);
    return rb.bytes + ra.bytes;
}

/* ---- tests ---- */

static void test_messages_cross_intact_both_ways(void **state)
{
    struct th_bridge_pair p;
    uint64_t start, bytes, ms;

    (void)state;
    th_bridge_setup(&p, 0, NULL, NULL);
    start = sd_now_ms();
    bytes = bt_exchange(&p, 30);
    ms = sd_now_ms() - start;
    print_message("# %llu bytes both ways in %llu ms (%.1f MB/s)\n", (unsigned long long)bytes,
                  (unsigned long long)ms, ms ? (double)bytes / 1e3 / (double)ms : 0.0);
    th_bridge_teardown(&p);
    /* The streams closed first: one side saw EOF and disconnected in order. */
    assert_true(p.a.end_err == 0 || p.b.end_err == 0);
}

/* The shim's program thread: each message's bytes in random pieces, each handed to the
 * bridge in place first (smbd_bridge_feed, inside the loop) and what it did not take
 * written to the stream after it. */
struct bt_feed {
    struct bt_flow flow;
    struct sd_loop *loop;
    struct smbd_bridge *bridge;
    uint64_t fed, streamed;
};

static void *bt_feeder(void *arg)
{
    struct bt_feed *f = arg;
    uint8_t *buf = malloc((8u << 20) + 4);
    uint64_t rnd = 99;

    for (int i = 0; i < f->flow.count && buf; i++) {
        size_t len = bt_msg_size(f->flow.seed, i), off = 0;

        buf[0] = 0;
        buf[1] = (uint8_t)(len >> 16);
        buf[2] = (uint8_t)(len >> 8);
        buf[3] = (uint8_t)len;
        bt_msg_fill(f->flow.seed, i, buf + 4, len);
        while (off < len + 4) {
            size_t piece = (size_t)(bt_rand(&rnd) % (i % 2 ? 3000 : 600000)) + 1, took;

            if (piece > len + 4 - off)
                piece = len + 4 - off;
            sd_loop_enter(f->loop);
            took = smbd_bridge_feed(f->bridge, &(struct iovec){ buf + off, piece }, 1);
            sd_loop_leave(f->loop);
            f->fed += took;
            if (took < piece && bt_write_all(f->flow.fd, buf + off + took, piece - took) < 0) {
                snprintf(f->flow.error, sizeof(f->flow.error), "write of message %d: %s", i,
                         strerror(errno));
                goto out;
            }
            f->streamed += piece - took;
            off += piece;
        }
        f->flow.bytes += len + 4;
    }
out:
    free(buf);
    return NULL;
}

/* Bytes the shim's program thread hands to its bridge in place and bytes it writes to
 * the stream, in any mix down to parts of a message, reach the peer as one stream: in
 * order and intact, while the engine's own traffic (the other direction) runs. */
static void test_bytes_fed_in_place_and_streamed_arrive_in_order(void **state)
{
    struct th_bridge_pair p;
    struct bt_feed fb = { .flow = { .seed = 44, .count = 60 } };
    struct bt_flow ra = { .seed = 44, .count = 60 };
    struct bt_flow wa = { .seed = 55, .count = 60 };
    struct bt_flow rb = { .seed = 55, .count = 60 };
    struct smbd_bridge_stats st;
    pthread_t t[4];

    (void)state;
    th_bridge_setup(&p, 0, NULL, NULL);
    fb.flow.fd = rb.fd = p.b.app_fd;
    ra.fd = wa.fd = p.a.app_fd;
    fb.loop = p.loop;
    fb.bridge = p.b.bridge;
    assert_int_equal(pthread_create(&t[0], NULL, bt_feeder, &fb), 0);
    assert_int_equal(pthread_create(&t[1], NULL, bt_reader, &ra), 0);
    assert_int_equal(pthread_create(&t[2], NULL, bt_writer, &wa), 0);
    assert_int_equal(pthread_create(&t[3], NULL, bt_reader, &rb), 0);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    if (!ra.ok)
        fail_msg("B -> A: %s %s", ra.error, fb.flow.error);
    if (!rb.ok)
        fail_msg("A -> B: %s %s", rb.error, wa.error);
    sd_loop_enter(p.loop);
    smbd_bridge_get_stats(p.b.bridge, &st);
    sd_loop_leave(p.loop);
    print_message("# %llu bytes handed over in place, %llu through the stream\n",
                  (unsigned long long)fb.fed, (unsigned long long)fb.streamed);
    assert_int_equal(st.stream_bytes_fed, fb.fed);
    assert_int_equal(st.stream_bytes_in, fb.fed + fb.streamed);
    assert_true(fb.fed > 0);
    assert_true(fb.streamed > 0); /* both ways were taken, and mixed */
    th_bridge_teardown(&p);
}

/* Nothing is taken in place once the writer shut its side (its write must fail as the
 * stream's would), nor while the stream still holds bytes it wrote before. */
static void test_nothing_fed_past_unread_bytes_or_the_writers_shutdown(void **state)
{
    struct th_bridge_pair p;
    uint8_t msg[8] = { 0, 0, 0, 4, 1, 2, 3, 4 };
    size_t took;

    (void)state;
    th_bridge_setup(&p, 0, NULL, NULL);
    sd_loop_enter(p.loop); /* the loop cannot read the stream meanwhile */
    assert_int_equal(write(p.b.app_fd, msg, 6), 6);
    took = smbd_bridge_feed(p.b.bridge, &(struct iovec){ msg + 6, 2 }, 1);
    sd_loop_leave(p.loop);
    assert_int_equal(took, 0);
    assert_int_equal(write(p.b.app_fd, msg + 6, 2), 2);
    assert_int_equal(th_bridge_recv_frame(p.a.app_fd, msg, sizeof(msg), 2000), 4);
    /* Shut while the loop is held: it cannot read the EOF and end (free) the bridge
     * before the feed, as the shim's program thread, which feeds only a bridge still on
     * its engine's live list, never races either. */
    sd_loop_enter(p.loop);
    assert_int_equal(shutdown(p.b.app_fd, SHUT_WR), 0);
    took = smbd_bridge_feed(p.b.bridge, &(struct iovec){ msg, 8 }, 1);
    sd_loop_leave(p.loop);
    assert_int_equal(took, 0);
    th_bridge_teardown(&p);
}

static void *bt_blast(void *arg)
{
    struct bt_flow *f = arg;

    bt_writer(f); /* fails once the stream is reset: that is the point */
    return NULL;
}

static void test_link_killed_mid_transfer_closes_streams(void **state)
{
    struct th_bridge_pair p;
    struct bt_flow w = { .seed = 33, .count = 1000 };
    pthread_t t;
    uint64_t end;
    int qp_fd, ms_a, ms_b;

    (void)state;
    th_bridge_setup(&p, 1, NULL, NULL);
    w.fd = p.a.app_fd;
    assert_int_equal(pthread_create(&t, NULL, bt_blast, &w), 0);
    /* traffic flowing A -> B, nobody reading B: queues fill until B pauses its credits */
    end = sd_now_ms() + 5000;
    while (!th_bridge_peek(&p, &p.b).recv_paused) {
        if (sd_now_ms() > end)
            fail_msg("B never paused its receive credits");
        usleep(2000);
    }
    qp_fd = th_bridge_accepted_socket(&p);
    assert_true(qp_fd >= 0);
    assert_int_equal(shutdown(qp_fd, SHUT_RDWR), 0); /* the wire dies under the passive side */
    ms_b = th_bridge_wait_closed(p.b.app_fd, TH_BRIDGE_END_MS, NULL);
    ms_a = th_bridge_wait_closed(p.a.app_fd, TH_BRIDGE_END_MS, NULL);
    print_message("# streams closed %d ms (B, TCP) and %d ms (A) after the kill\n", ms_b, ms_a);
    assert_true(ms_b >= 0);
    assert_true(ms_a >= 0);
    shutdown(p.a.app_fd, SHUT_RDWR); /* unblock the writer if it is still in send() */
    pthread_join(t, NULL);
    th_bridge_teardown(&p);
    assert_true(p.a.end_err < 0);
    assert_true(p.b.end_err < 0);
}

static void test_stream_eof_disconnects_link(void **state)
{
    struct th_bridge_pair p;
    uint64_t closed_at;
    int ms;

    (void)state;
    th_bridge_setup(&p, 0, NULL, NULL);
    bt_exchange(&p, 3);
    closed_at = sd_now_ms();
    shutdown(p.a.app_fd, SHUT_WR); /* the program is done: EOF on A's stream */
    ms = th_bridge_wait_closed(p.b.app_fd, TH_BRIDGE_END_MS, NULL);
    assert_true(ms >= 0);
    th_bridge_teardown(&p);
    assert_int_equal(p.a.end_err, 0);        /* A: orderly disconnect after its stream's EOF */
    assert_true(p.b.end_err < 0);            /* B: the peer went away */
    assert_true(p.a.ended_at - closed_at < TH_BRIDGE_END_MS);
    print_message("# A: %s; B: %s\n", p.a.reason, p.b.reason);
}

/* ---- orderly close ---- */

#define OC_MSGS 16
#define OC_SIZE (1u << 20)

static void *oc_backend(void *arg)
{
    int fd = *(int *)arg;
    uint8_t *buf = malloc(OC_SIZE + 4);

    for (int i = 0; i < OC_MSGS && buf; i++) {
        buf[0] = 0;
        buf[1] = (uint8_t)(OC_SIZE >> 16);
        buf[2] = (uint8_t)(OC_SIZE >> 8);
        buf[3] = (uint8_t)OC_SIZE;
        bt_msg_fill(77, i, buf + 4, OC_SIZE);
        if (bt_write_all(fd, buf, OC_SIZE + 4) < 0)
            break;
    }
    free(buf);
    shutdown(fd, SHUT_WR); /* the backend is done: its side closes at once */
    return NULL;
}

/* A backend writes 16 MiB and closes at once while the program reads 256 KiB every
 * 20 ms: the far bridge disconnects as soon as its last message is sent, and the near
 * bridge still holds megabytes the program has not read. TCP would deliver every byte
 * before the FIN; so must the tunnel, and then the program reads EOF. */
static void test_peer_close_delivers_every_byte_to_a_slow_reader(void **state)
{
    static uint8_t got[OC_MSGS * (OC_SIZE + 4)];
    uint8_t *want = malloc(OC_SIZE);
    struct th_bridge_pair p;
    pthread_t t;
    size_t have = 0;
    ssize_t n;

    (void)state;
    assert_non_null(want);
    th_bridge_setup(&p, 1, NULL, NULL); /* b's stream is TCP, like the relay's backend */
    assert_int_equal(pthread_create(&t, NULL, oc_backend, &p.b.app_fd), 0);
    do {
        usleep(20000);
        n = recv(p.a.app_fd, got + have, sizeof(got) - have < 262144 ? sizeof(got) - have
                                                                      : 262144, 0);
        if (n > 0)
            have += (size_t)n;
    } while (n > 0 && have < sizeof(got));
    if (have == sizeof(got)) /* then EOF, not a reset */
        assert_int_equal(recv(p.a.app_fd, got, 1, 0), 0);
    pthread_join(t, NULL);
    print_message("# the program read %zu of %zu bytes, then %s\n", have, sizeof(got),
                  n < 0 ? strerror(errno) : "EOF");
    assert_int_equal(have, sizeof(got));
    for (int i = 0; i < OC_MSGS; i++) {
        bt_msg_fill(77, i, want, OC_SIZE);
        assert_memory_equal(got + (size_t)i * (OC_SIZE + 4) + 4, want, OC_SIZE);
    }
    free(want);
    th_bridge_teardown(&p);
    print_message("# A: %s; B: %s\n", p.a.reason, p.b.reason);
}

/* ---- the READ/WRITE channel's memory budget ---- */

#define BC_IO     (2u << 20)   /* each WRITE's data: two of them exceed the budget */
#define BC_BUDGET (1u << 20)
#define BC_WRITES 3

struct bc_writer {
    int fd;
    uint8_t *msg;
};

/* The program: BC_WRITES plain WRITEs back to back (blocks while the shim holds them). */
static void *bc_program_writes(void *arg)
{
    struct bc_writer *w = arg;

    for (uint64_t id = 1; id <= BC_WRITES; id++)
        th_bridge_send_frame(w->fd, w->msg, th_smb2_plain_write(w->msg, id, BC_IO));
    return NULL;
}

struct bc_stats_req {
    struct smbd_bridge *bridge;
    struct smbd_bridge_stats st;
};

static void bc_stats_task(void *ctx)
{
    struct bc_stats_req *r = ctx;

    smbd_bridge_get_stats(r->bridge, &r->st);
}

/* A live bridge's counters, read on the loop thread (from the test's). */
static void bc_stats(struct th_bridge_pair *p, struct smbd_bridge *b, struct smbd_bridge_stats *st)
{
    struct bc_stats_req r = { .bridge = b };

    th_bridge_on_loop(p, bc_stats_task, &r);
    *st = r.st;
}

/* The shim holds the program's WRITE id + 1 back while WRITE id's buffer is registered:
 * its id-th wait for memory starts (WRITEs 2..id waited before it) and, by the shim's own
 * count, goes on for 50 ms and more (the shim retries every few ms), and all that while
 * only WRITEs 1..id have left the shim. */
static void bc_expect_held(struct th_bridge_pair *p, uint64_t id)
{
    struct smbd_bridge_stats st;
    uint64_t end = sd_now_ms() + 5000, base;

    do {
        if (sd_now_ms() > end)
            fail_msg("the shim never held WRITE %llu back", (unsigned long long)id + 1);
        bc_stats(p, p->b.bridge, &st);
    } while (st.chan.mem_waits < id);
    base = st.chan.mem_wait_ms; /* the waits before, and this one so far */
    end = sd_now_ms() + 5000;
    while (st.chan.mem_wait_ms < base + 50) {
        if (sd_now_ms() > end)
            fail_msg("WRITE %llu's wait was counted %llu ms in 5 s", (unsigned long long)id + 1,
                     (unsigned long long)(st.chan.mem_wait_ms - base));
        usleep(2000);
        bc_stats(p, p->b.bridge, &st);
    }
    assert_int_equal(st.chan.mem_waits, id);
    assert_int_equal(st.chan.mem_waiting, 1);
    assert_int_equal(st.smbd.msgs_sent, id);
    assert_int_equal(st.chan.rdma_reads, id);
}

/* The backend sees the WRITEs in order, inline, data intact. one_at_a_time: WRITE n+1
 * reaches it only after it answered n (the shim holds n+1 back: n's registered buffer
 * stays until n's response). Otherwise it reads them all, then answers. Returns the
 * relay's channel buffer peak. */
static uint64_t bc_run(const struct smbd_bridge_opts *relay, const struct smbd_bridge_opts *shim,
                       int one_at_a_time)
{
    static uint8_t want[TH_RW_FIXED + BC_IO], got[TH_RW_FIXED + BC_IO + 64];
    struct bc_writer w = { .msg = malloc(TH_RW_FIXED + BC_IO) };
    uint8_t small[256];
    struct th_bridge_pair p;
    pthread_t t;
    long n;

    assert_non_null(w.msg);
    th_smb2_plain_write(want, 0, BC_IO);
    th_bridge_setup(&p, 1, relay, shim);
    w.fd = p.b.app_fd;
    /* the backend answers NEGOTIATE with 3.1.1: the shim's side may use the channel */
    th_bridge_send_frame(p.a.app_fd, small, th_smb2_negotiate_resp(small, 0x0311));
    assert_int_equal(th_bridge_recv_frame(p.b.app_fd, got, sizeof(got), 5000), 129);
    assert_int_equal(pthread_create(&t, NULL, bc_program_writes, &w), 0);
    for (uint64_t id = 1; id <= BC_WRITES; id++) {
        n = th_bridge_recv_frame(p.a.app_fd, got, sizeof(got), 5000);
        assert_int_equal(n, TH_RW_FIXED + BC_IO);
        assert_int_equal(got[24], (uint8_t)id); /* MessageId, in order */
        assert_memory_equal(got + TH_RW_FIXED, want + TH_RW_FIXED, BC_IO);
        if (!one_at_a_time && id < BC_WRITES)
            continue;
        if (id < BC_WRITES) /* the next one is held while this one's buffer is in use */
            bc_expect_held(&p, id);
        for (uint64_t r = one_at_a_time ? id : 1; r <= id; r++) {
            const struct th_hdr h = { .command = 9, .message_id = r };

            th_bridge_send_frame(p.a.app_fd, small, th_smb2_write_resp(small, &h, BC_IO));
            assert_int_equal(th_bridge_recv_frame(p.b.app_fd, got, sizeof(got), 5000), 80);
        }
    }
    pthread_join(t, NULL);
    free(w.msg);
    th_bridge_teardown(&p);
    return p.a.chan_mem_peak;
}

/* The MessageIds of the program's messages the shim's on_request saw (loop thread). */
static struct {
    uint64_t ids[2 * BC_WRITES];
    int n;
} bc_seen;

static void bc_request_seen(void *ctx, const uint8_t *msg, size_t len)
{
    (void)ctx;
    if (len >= 32 && bc_seen.n < 2 * BC_WRITES)
        bc_seen.ids[bc_seen.n++] = msg[24]; /* MessageId's low byte */
}

/* ... and on_request sees each WRITE once, however often a wait offers it again. */
static void test_channel_budget_holds_the_programs_next_write(void **state)
{
    const struct smbd_bridge_opts relay = { .channel = BRIDGE_CHAN_SERVER };
    const struct smbd_bridge_opts shim = { .channel = BRIDGE_CHAN_CLIENT,
                                           .channel_threshold = 4096,
                                           .channel_memory = BC_BUDGET,
                                           .on_request = bc_request_seen };

    (void)state;
    memset(&bc_seen, 0, sizeof(bc_seen));
    bc_run(&relay, &shim, 1);
    assert_int_equal(bc_seen.n, BC_WRITES);
    for (int i = 0; i < BC_WRITES; i++)
        assert_int_equal(bc_seen.ids[i], i + 1);
}

/* The relay's provider for the next test: soft-iWARP whose RDMA Read completions are
 * held back until the relay's engine has taken all BC_WRITES channel requests (data
 * receives; the relay receives nothing else then), so whatever the timing the relay has
 * started every RDMA Read its budget lets it before any buffer comes free. */
static struct {
    struct sd_wc held[64];
    int nheld, out, requests, open;
} bg_gate;
static struct sd_provider_ops bg_ops;

static int bg_poll_cq(struct sd_qp *qp, struct sd_wc *wc, int max)
{
    int n = 0, got;

    if (!bg_gate.open && bg_gate.requests >= BC_WRITES)
        bg_gate.open = 1; /* the engine handled what the last poll returned */
    if (bg_gate.open) {
        while (n < max && bg_gate.out < bg_gate.nheld)
            wc[n++] = bg_gate.held[bg_gate.out++];
        return n > 0 ? n : sd_soft_provider.poll_cq(qp, wc, max);
    }
    got = sd_soft_provider.poll_cq(qp, wc, max);
    for (int i = 0; i < got; i++) {
        if (wc[i].opcode == SD_WC_RDMA_READ && wc[i].status == SD_WC_SUCCESS) {
            assert_true(bg_gate.nheld < 64);
            bg_gate.held[bg_gate.nheld++] = wc[i];
            continue;
        }
        if (wc[i].opcode == SD_WC_RECV && wc[i].status == SD_WC_SUCCESS && wc[i].byte_len > 24)
            bg_gate.requests++; /* more than a credit or keepalive message */
        wc[n++] = wc[i];
    }
    return got < 0 ? got : n;
}

static int bg_teardown(void **state)
{
    (void)state;
    th_bridge_provider = &sd_soft_provider;
    return 0;
}

/* The relay's channel buffers at most, its RDMA Read completions held as bg_poll_cq does. */
static uint64_t bc_run_gated(const struct smbd_bridge_opts *relay,
                             const struct smbd_bridge_opts *shim)
{
    memset(&bg_gate, 0, sizeof(bg_gate));
    bg_ops = sd_soft_provider;
    bg_ops.poll_cq = bg_poll_cq;
    th_bridge_provider = &bg_ops;
    return bc_run(relay, shim, 0);
}

/* The shim sends all three channel WRITEs at once: unbounded, the relay RDMA-reads them
 * side by side; with the budget, one at a time (one I/O always proceeds). */
static void test_channel_budget_serialises_the_relays_rdma_reads(void **state)
{
    struct smbd_bridge_opts relay = { .channel = BRIDGE_CHAN_SERVER };
    const struct smbd_bridge_opts shim = { .channel = BRIDGE_CHAN_CLIENT,
                                           .channel_threshold = 4096 };
    uint64_t unbounded, bounded;

    (void)state;
    unbounded = bc_run_gated(&relay, &shim);
    relay.channel_memory = BC_BUDGET;
    bounded = bc_run_gated(&relay, &shim);
    print_message("# relay channel buffers at most: %llu bytes unbounded, %llu with a %u-byte "
                  "budget\n", (unsigned long long)unbounded, (unsigned long long)bounded,
                  BC_BUDGET);
    assert_int_equal(unbounded, BC_WRITES * BC_IO);
    assert_int_equal(bounded, BC_IO);
    assert_true(bounded < unbounded);
}

static void test_channel_budget_for_the_process_holds_writes_too(void **state)
{
    const struct smbd_bridge_opts relay = { .channel = BRIDGE_CHAN_SERVER };
    const struct smbd_bridge_opts shim = { .channel = BRIDGE_CHAN_CLIENT,
                                           .channel_threshold = 4096,
                                           .channel_memory_total = BC_BUDGET };

    (void)state;
    bc_run(&relay, &shim, 1);
}

/* ---- busy polling while channel I/O is in flight ---- */

struct bp_poll_req {
    struct sd_loop *loop;
    struct sd_loop_poll_stats st;
};

static void bp_poll_task(void *ctx)
{
    struct bp_poll_req *r = ctx;

    sd_loop_set_busy_poll(r->loop, 1000);
    sd_loop_poll_stats(r->loop, &r->st);
}

/* The loop's busy-poll figures (and its poll budget set to 1000 us, as the shim's). */
static struct sd_loop_poll_stats bp_stats(struct th_bridge_pair *p)
{
    struct bp_poll_req r = { .loop = p->loop };

    th_bridge_on_loop(p, bp_poll_task, &r);
    return r.st;
}

/* One WRITE of len bytes from the program, through the shim and the relay to the backend,
 * answered; returns the loop's poll figures taken while the backend held the WRITE
 * unanswered. */
static struct sd_loop_poll_stats bp_write(struct th_bridge_pair *p, uint64_t id, uint32_t len,
                                          uint8_t *msg, uint8_t *got, size_t cap)
{
    const struct th_hdr h = { .command = 9, .message_id = id };
    struct sd_loop_poll_stats during;
    uint8_t small[256];

    th_bridge_send_frame(p->b.app_fd, msg, th_smb2_plain_write(msg, id, len));
    assert_int_equal(th_bridge_recv_frame(p->a.app_fd, got, cap, 5000), TH_RW_FIXED + len);
    during = bp_stats(p);
    th_bridge_send_frame(p->a.app_fd, small, th_smb2_write_resp(small, &h, len));
    assert_int_equal(th_bridge_recv_frame(p->b.app_fd, got, cap, 5000), 80);
    return during;
}

/* While the program's large WRITE is in flight over the channel the shim's loop sleeps
 * instead of polling (bulk data comes a transfer's time apart); a small channel WRITE and
 * the waits after the large one's answer poll as before. */
static void test_large_channel_io_in_flight_holds_the_busy_poll(void **state)
{
    const struct smbd_bridge_opts relay = { .channel = BRIDGE_CHAN_SERVER };
    const struct smbd_bridge_opts shim = { .channel = BRIDGE_CHAN_CLIENT,
                                           .channel_threshold = 4096 };
    static uint8_t msg[TH_RW_FIXED + BC_IO], got[TH_RW_FIXED + BC_IO + 64];
    struct sd_loop_poll_stats before, small, large, after;
    struct th_bridge_pair p;
    uint8_t neg[256];

    (void)state;
    th_bridge_setup(&p, 1, &relay, &shim);
    (void)bp_stats(&p); /* the budget on from here */
    th_bridge_send_frame(p.a.app_fd, neg, th_smb2_negotiate_resp(neg, 0x0311));
    assert_int_equal(th_bridge_recv_frame(p.b.app_fd, got, sizeof(got), 5000), 129);
    before = bp_stats(&p);
    small = bp_write(&p, 1, 8192, msg, got, sizeof(got)); /* by RDMA Read, but small */
    large = bp_write(&p, 2, BC_IO, msg, got, sizeof(got));
    (void)bp_write(&p, 3, 100, msg, got, sizeof(got)); /* inline: the hold is given back */
    after = bp_stats(&p);
    (void)bp_write(&p, 4, 100, msg, got, sizeof(got));
    print_message("# waits held: %llu before, %llu during the small WRITE, %llu during the "
                  "large one, %llu after, %llu at the end; polls that found an event: %llu, "
                  "%llu, %llu, %llu\n",
                  (unsigned long long)before.held, (unsigned long long)small.held,
                  (unsigned long long)large.held, (unsigned long long)after.held,
                  (unsigned long long)bp_stats(&p).held, (unsigned long long)before.hits,
                  (unsigned long long)small.hits, (unsigned long long)large.hits,
                  (unsigned long long)after.hits);
    assert_int_equal(before.held, 0);
    assert_int_equal(small.held, 0);
    assert_true(large.held > 0);
    assert_true(small.hits > before.hits); /* polled for the small one */
    assert_int_equal(bp_stats(&p).held, after.held); /* no hold with nothing large in flight */
    th_bridge_teardown(&p);
}

/* ---- registered memory that pins (RLIMIT_MEMLOCK) ---- */

#define BM_IOS 16

static uint32_t bm_size(int i, uint32_t io_max)
{
    static const uint32_t sizes[] = { 4097, 65536, 300000, 0, 0 }; /* 0: the largest */
    uint32_t s = sizes[i % 5];

    return s == 0 || s > io_max ? io_max : s;
}

static void bm_read_data(uint8_t *b, uint64_t id, uint32_t len)
{
    for (uint32_t k = 0; k < len; k++)
        b[k] = (uint8_t)(id * 13 + k * 3);
}

struct bm_program {
    int fd;
    uint32_t io_max;
    int ok;
    char error[200];
};

/* The program: BM_IOS requests back to back, WRITEs (even) and READs (odd). */
static void *bm_program_requests(void *arg)
{
    struct bm_program *pr = arg;
    uint8_t *m = malloc(TH_RW_FIXED + pr->io_max);

    for (int i = 0; i < BM_IOS && m; i++) {
        uint32_t len = bm_size(i, pr->io_max);

        th_bridge_send_frame(pr->fd, m, i % 2 == 0 ? th_smb2_plain_write(m, (uint64_t)i + 1, len)
                                            : th_smb2_plain_read(m, (uint64_t)i + 1, len));
    }
    free(m);
    return NULL;
}

/* The program's reader: an answer to every request, READ data intact (the server may
 * answer in any order: the relay starts a WRITE's RDMA Read before forwarding it). */
static void *bm_program_answers(void *arg)
{
    struct bm_program *pr = arg;
    uint8_t *got = malloc(80 + pr->io_max + 64), *want = malloc(pr->io_max);
    int seen[BM_IOS] = { 0 };
    long n;

    for (int k = 0; k < BM_IOS; k++) {
        int i;
        uint32_t len;

        n = th_bridge_recv_frame(pr->fd, got, 80 + pr->io_max + 64, 20000);
        if (n < 64 || (i = got[24] - 1) < 0 || i >= BM_IOS || seen[i]++) {
            snprintf(pr->error, sizeof(pr->error), "answer %d missing or unexpected", k);
            goto out;
        }
        len = bm_size(i, pr->io_max);
        if (i % 2 == 1) {
            bm_read_data(want, (uint64_t)i + 1, len);
            if (n != 80 + (long)len || memcmp(got + 80, want, len) != 0) {
                snprintf(pr->error, sizeof(pr->error), "READ %d: %ld bytes, data %s", i, n,
                         n == 80 + (long)len ? "differs" : "short");
                goto out;
            }
        }
    }
    pr->ok = 1;
out:
    free(got);
    free(want);
    return NULL;
}

/* Relay and shim bridges, the shim's channel on: the backend (this thread) sees each
 * WRITE whole with its data and answers it, answers each READ with data; the program
 * sees every answer. Every I/O went by RDMA (none inline, where the larger ones could
 * not go: MaxFragmentedSize). With refuse_after, registrations through th_pinning_ops
 * are refused once they would hold that many bytes more than when the links were up. */
static void bm_run(size_t refuse_after)
{
    const struct smbd_bridge_opts relay = { .channel = BRIDGE_CHAN_SERVER };
    const struct smbd_bridge_opts shim = { .channel = BRIDGE_CHAN_CLIENT,
                                           .channel_threshold = 4096 };
    struct bm_program prog = { 0 }, ans = { 0 };
    uint8_t small[256], *got, *want;
    struct th_bridge_pair p;
    pthread_t tw, tr;
    long n;
    struct smbd_params sp;

    th_bridge_setup(&p, 1, &relay, &shim);
    if (refuse_after)
        th_pinning_refuse_past(th_pinning_live() + refuse_after);
    /* the shim's cap: its channel I/O, the link's limit, the relay's MaxReadWriteSize */
    assert_int_equal(smbd_conn_query(smbd_link_conn(p.active), &sp), 0);
    prog.io_max = smbd_link_io_limit(p.active);
    if (prog.io_max > sp.neg.max_read_write_size)
        prog.io_max = sp.neg.max_read_write_size;
    if (prog.io_max > 2u << 20)
        prog.io_max = 2u << 20;
    print_message("# largest I/O %u bytes\n", prog.io_max);
    got = malloc(TH_RW_FIXED + prog.io_max + 64);
    want = malloc(TH_RW_FIXED + prog.io_max);
    th_bridge_send_frame(p.a.app_fd, small, th_smb2_negotiate_resp(small, 0x0311));
    assert_int_equal(th_bridge_recv_frame(p.b.app_fd, got, 256, 5000), 129);
    prog.fd = ans.fd = p.b.app_fd;
    ans.io_max = prog.io_max;
    assert_int_equal(pthread_create(&tw, NULL, bm_program_requests, &prog), 0);
    assert_int_equal(pthread_create(&tr, NULL, bm_program_answers, &ans), 0);
    for (int k = 0, seen[BM_IOS] = { 0 }; k < BM_IOS; k++) {
        int i;
        uint32_t len;

        n = th_bridge_recv_frame(p.a.app_fd, got, TH_RW_FIXED + prog.io_max + 64, 20000);
        if (n < 0)
            fail_msg("the backend got no request %d (shim: %s; relay: %s)", k, p.b.reason,
                     p.a.reason);
        i = got[24] - 1; /* MessageId: READs reach it before the WRITEs' RDMA Reads end */
        assert_true(i >= 0 && i < BM_IOS && !seen[i]++);
        assert_int_equal(got[12], i % 2 ? 8 : 9);
        len = bm_size(i, prog.io_max);
        const struct th_hdr h = { .command = (uint16_t)(i % 2 ? 8 : 9),
                                  .message_id = (uint64_t)i + 1 };

        if (i % 2 == 0) {
            th_smb2_plain_write(want, 0, len);
            assert_int_equal(n, TH_RW_FIXED + len);
            assert_memory_equal(got + TH_RW_FIXED, want + TH_RW_FIXED, len);
            th_bridge_send_frame(p.a.app_fd, small, th_smb2_write_resp(small, &h, len));
        } else {
            size_t hl = th_smb2_read_resp(want, &h, 80, len, 0);

            bm_read_data(want + hl, (uint64_t)i + 1, len);
            th_bridge_send_frame(p.a.app_fd, want, hl + len);
        }
    }
    pthread_join(tw, NULL);
    pthread_join(tr, NULL);
    free(got);
    free(want);
    th_bridge_teardown(&p);
    if (!ans.ok)
        fail_msg("program: %s", ans.error);
    /* the 4097-byte and larger I/Os all went by RDMA, on both sides */
    assert_int_equal(p.b.rdma_ios, BM_IOS);
    assert_int_equal(p.a.rdma_ios, BM_IOS);
}

static int bm_teardown(void **state)
{
    (void)state;
    th_bridge_provider = th_bridge_provider_active = &sd_soft_provider;
    th_pinning_refuse_past(SIZE_MAX);
    th_memlock_restore();
    assert_int_equal(sd_pinned_used(), 0);
    assert_int_equal(th_pinning_live(), 0);
    return 0;
}

/* Both ends in this process share Debian's default 8 MiB: the relay's link, planned
 * second, gets fewer credits and a smaller I/O, and the pipelined I/O waits its turn
 * instead of failing. */
static void test_pinned_memory_under_debians_default_memlock_moves_every_io(void **state)
{
    (void)state;
    th_bridge_provider = th_bridge_provider_active = th_pinning_ops(&sd_soft_provider);
    th_memlock_set(8u << 20);
    th_pinning_refuse_past(SIZE_MAX);
    bm_run(0);
    print_message("# registered at most %zu bytes of an 8 MiB limit\n", th_pinning_peak());
    assert_true(th_pinning_peak() <= (8u << 20));
}

/* One side's registrations counted as pinned, planned under Debian's default 8 MiB, but
 * refused by the "kernel" past extra bytes beyond its permanent buffers (room for one
 * largest I/O, not two), as Linux 6.1's siw refuses root, or any kernel once something
 * else in the process pinned memory: the refused I/O waits for earlier ones and goes by
 * RDMA. One side at a time: in one process the two sides' memory would wait on each
 * other, which two processes never do. */
static void bm_refused(const struct sd_provider_ops **side, size_t extra)
{
    *side = th_pinning_ops(&sd_soft_provider);
    th_memlock_set(8u << 20);
    th_pinning_refuse_past(SIZE_MAX);
    /* Whether a registration meets the refusal depends on how far the I/Os overlap, which
     * the scheduler decides (the relay's, 1 in ~30 runs, did not): up to four runs, each
     * moving every I/O intact, until one took the wait. */
    for (int run = 0; run < 4; run++) {
        bm_run(extra);
        print_message("# registered at most %zu bytes; %u registrations refused\n",
                      th_pinning_peak(), th_pinning_refused());
        if (th_pinning_refused() > 0)
            break;
    }
    assert_true(th_pinning_refused() > 0); /* the waits were taken */
}

static void test_the_shims_refused_registrations_delay_io_but_lose_none(void **state)
{
    (void)state;
    bm_refused(&th_bridge_provider_active, 3u << 20); /* the shim registers I/Os until answered */
}

static void test_the_relays_refused_registrations_delay_io_but_lose_none(void **state)
{
    (void)state;
    bm_refused(&th_bridge_provider, (1u << 20) + (128u << 10)); /* the relay's I/O: 1 MiB */
}

#define BP_GRACE_MS 50u /* the shim's pin_grace_ms, shortened */

/* The shim's registrations refused from the start (as a kernel does once something else
 * in the process pinned the memory), nothing of the process's channel I/O in flight: the
 * program's large WRITE waits pin_grace_ms for memory to come free, then the bridge ends
 * naming RLIMIT_MEMLOCK, and the WRITE never reached the backend. */
static void test_a_refused_registration_ends_the_bridge_after_pin_grace_ms(void **state)
{
    const struct smbd_bridge_opts relay = { .channel = BRIDGE_CHAN_SERVER };
    const struct smbd_bridge_opts shim = { .channel = BRIDGE_CHAN_CLIENT,
                                           .channel_threshold = 4096,
                                           .pin_grace_ms = BP_GRACE_MS };
    uint8_t *msg = malloc(TH_RW_FIXED + (1u << 20));
    struct th_bridge_pair p;
    uint64_t since;

    (void)state;
    assert_non_null(msg);
    th_bridge_provider_active = th_pinning_ops(&sd_soft_provider);
    th_memlock_set(64u << 20);
    th_pinning_refuse_past(SIZE_MAX);
    th_bridge_setup(&p, 0, &relay, &shim);
    th_bridge_send_frame(p.a.app_fd, msg, th_smb2_negotiate_resp(msg, 0x0311));
    assert_int_equal(th_bridge_recv_frame(p.b.app_fd, msg, 256, 5000), 129);
    th_pinning_refuse_past(th_pinning_live()); /* no registration from now on */
    since = sd_now_ms();
    th_bridge_send_frame(p.b.app_fd, msg, th_smb2_plain_write(msg, 1, 1u << 20));
    free(msg);
    assert_true(th_bridge_wait_ended(&p.b, TH_BRIDGE_END_MS));
    print_message("# ended %llu ms after the WRITE: %s\n",
                  (unsigned long long)(p.b.ended_at - since), p.b.reason);
    assert_true(p.b.ended_at - since >= BP_GRACE_MS);
    assert_int_equal(p.b.end_err, -ENOMEM);
    assert_non_null(strstr(p.b.reason, "RLIMIT_MEMLOCK"));
    assert_non_null(strstr(p.b.reason, "for 50 ms"));
    assert_true(th_pinning_refused() > 0);
    th_bridge_teardown(&p);
    assert_int_equal(p.a.rdma_ios + p.b.rdma_ios, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_messages_cross_intact_both_ways),
        cmocka_unit_test(test_bytes_fed_in_place_and_streamed_arrive_in_order),
        cmocka_unit_test(test_nothing_fed_past_unread_bytes_or_the_writers_shutdown),
        cmocka_unit_test(test_link_killed_mid_transfer_closes_streams),
        cmocka_unit_test(test_stream_eof_disconnects_link),
        cmocka_unit_test(test_peer_close_delivers_every_byte_to_a_slow_reader),
        cmocka_unit_test(test_channel_budget_holds_the_programs_next_write),
        cmocka_unit_test(test_large_channel_io_in_flight_holds_the_busy_poll),
        cmocka_unit_test_teardown(test_channel_budget_serialises_the_relays_rdma_reads,
                                  bg_teardown),
        cmocka_unit_test(test_channel_budget_for_the_process_holds_writes_too),
        cmocka_unit_test_teardown(test_pinned_memory_under_debians_default_memlock_moves_every_io,
                                  bm_teardown),
        cmocka_unit_test_teardown(test_the_shims_refused_registrations_delay_io_but_lose_none,
                                  bm_teardown),
        cmocka_unit_test_teardown(test_the_relays_refused_registrations_delay_io_but_lose_none,
                                  bm_teardown),
        cmocka_unit_test_teardown(test_a_refused_registration_ends_the_bridge_after_pin_grace_ms,
                                  bm_teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
