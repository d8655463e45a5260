/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/bench/bench_engine.c — throughput of two MS-SMBD engines back to back over
 * the in-memory provider (tests/unit/fake_provider.c), next to memcpy of the same
 * bytes in the same run, and the memory one established connection holds. The
 * provider copies each Send into the peer's receive buffer as a NIC's DMA would: one
 * copy per byte that no engine can avoid; smbd_conn_send copies into its send
 * buffers besides, smbd_conn_send_owned does not (the "owned send" row).
 * Built and run by scripts/bench-engine. Not a test: it prints numbers. */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fake_provider.h"
#include "smbd_conn.h"

struct side {
    struct smbd_conn *conn;
    struct sd_qp *qp;
    uint64_t bytes, msgs;
    int established, terminated;
};

static void on_established(void *ctx) { ((struct side *)ctx)->established = 1; }
static void on_terminated(void *ctx, int err, const char *reason)
{
    (void)err;
    ((struct side *)ctx)->terminated = 1;
    fprintf(stderr, "bench: connection terminated: %s\n", reason);
}
static void on_deliver(void *ctx, const uint8_t *data, size_t len)
{
    struct side *s = ctx;

    (void)data;
    s->bytes += len;
    s->msgs++;
}

static void on_fragment(void *ctx, const uint8_t *data, size_t len, uint32_t remaining, int first)
{
    struct side *s = ctx;

    (void)data;
    (void)first;
    s->bytes += len;
    s->msgs += remaining == 0;
}

static const struct smbd_upper upper = {
    .established = on_established, .deliver = on_deliver, .terminated = on_terminated,
};

/* What the bridge uses: fragments straight from the receive buffers. */
static const struct smbd_upper upper_streaming = {
    .established = on_established, .deliver_fragment = on_fragment, .terminated = on_terminated,
};
static int streaming; /* the receiving side of the next pair delivers by fragments */

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int poll_all(struct side *s)
{
    struct sd_wc wc[64];
    int n, total = 0;

    while ((n = fake_provider.poll_cq(s->qp, wc, 64)) > 0) {
        for (int i = 0; i < n; i++)
            smbd_conn_on_completion(s->conn, &wc[i], 0);
        total += n;
    }
    return total;
}

static void pair_up(struct side *a, struct side *b, const struct smbd_config *ca,
                    const struct smbd_config *cb)
{
    memset(a, 0, sizeof(*a));
    memset(b, 0, sizeof(*b));
    fake_pair_new(&a->qp, &b->qp, 1);
    fake_set_auto_deliver(a->qp, 1);
    fake_set_auto_deliver(b->qp, 1);
    fake_set_random_cq(a->qp, 0);
    fake_set_random_cq(b->qp, 0);
    a->conn = smbd_conn_new(SMBD_ROLE_ACTIVE, ca, &fake_provider, a->qp, &upper, a);
    b->conn = smbd_conn_new(SMBD_ROLE_PASSIVE, cb, &fake_provider, b->qp,
                            streaming ? &upper_streaming : &upper, b);
    if (!a->conn || !b->conn || smbd_conn_start(b->conn, 0) || smbd_conn_start(a->conn, 0))
        exit(1);
    while (poll_all(a) + poll_all(b) > 0)
        ;
    if (!a->established || !b->established)
        exit(1);
}

static void pair_down(struct side *a, struct side *b)
{
    smbd_conn_free(a->conn);
    smbd_conn_free(b->conn);
    fake_provider.destroy(a->qp);
    fake_provider.destroy(b->qp);
}

/* Owned sends (smbd_conn_send_owned, the bridge's path for a large message: the
 * framer's buffer holding it is handed over): buffers holding a copy of the message,
 * filled once, handed to the engine and given back by it. */
#define OWNED_BUFS 16
static int owned;                    /* the next runs send owned */
static uint8_t *owned_free[OWNED_BUFS];
static int owned_nfree;

static void owned_release(uint8_t *alloc, size_t cap)
{
    (void)cap;
    owned_free[owned_nfree++] = alloc;
}

static void owned_fill(const uint8_t *src, size_t len)
{
    for (owned_nfree = 0; owned_nfree < OWNED_BUFS; owned_nfree++) {
        owned_free[owned_nfree] = malloc(len);
        if (!owned_free[owned_nfree])
            exit(1);
        memcpy(owned_free[owned_nfree], src, len);
    }
}

static void owned_drop(void)
{
    while (owned_nfree > 0)
        free(owned_free[--owned_nfree]);
}

/* Sends one message of len bytes from src, or from an owned buffer. 0 or -1 when no
 * owned buffer is free now. */
static int send_one(struct side *a, const uint8_t *src, size_t len)
{
    struct iovec iov = { (void *)(uintptr_t)src, len };
    uint8_t *m;

    if (!owned) {
        if (smbd_conn_send(a->conn, &iov, 1, 0))
            exit(1);
        return 0;
    }
    if (owned_nfree == 0)
        return -1;
    m = owned_free[--owned_nfree];
    if (smbd_conn_send_owned(a->conn, m, len, m, len, owned_release, 0))
        exit(1);
    return 0;
}

/* Moves count messages of len bytes from a to b; returns seconds. */
static double stream(struct side *a, struct side *b, const uint8_t *src, size_t len,
                     uint64_t count, size_t max_queued)
{
    uint64_t sent = 0;
    double t0 = now_s();

    while (b->msgs < count && !a->terminated && !b->terminated) {
        while (sent < count && smbd_conn_send_queued(a->conn) < max_queued) {
            if (send_one(a, src, len) < 0)
                break;
            sent++;
        }
        poll_all(b);
        poll_all(a);
    }
    return now_s() - t0;
}

static double memcpy_time(uint8_t *dst, size_t dst_len, const uint8_t *src, size_t len,
                          uint64_t count)
{
    size_t off = 0;
    double t0 = now_s();

    for (uint64_t i = 0; i < count; i++) {
        if (off + len > dst_len)
            off = 0;
        memcpy(dst + off, src, len);
        off += len;
        __asm__ __volatile__("" : : "r"(dst) : "memory"); /* keep every copy */
    }
    return now_s() - t0;
}

static long rss_kib(void)
{
    long pages = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");

    if (f) {
        if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
            resident = 0;
        fclose(f);
    }
    return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

/* Best of ROUNDS for both, alternating, so a busy neighbour on the machine
 * disturbs the ratio as little as possible. */
#define ROUNDS 5

static void run_throughput(const char *label, const struct smbd_config *ca,
                           const struct smbd_config *cb, size_t len, uint64_t count)
{
    struct side a, b;
    size_t dst_len = len < (1u << 20) ? (1u << 20) : len;
    uint8_t *src = malloc(len), *dst = malloc(dst_len);
    double t_engine = 1e9, t_memcpy = 1e9, gbytes = (double)len * (double)count / 1e9;

    if (!src || !dst)
        exit(1);
    for (size_t i = 0; i < len; i++)
        src[i] = (uint8_t)(i * 7 + 3);
    memset(dst, 0, dst_len);
    if (owned)
        owned_fill(src, len);
    pair_up(&a, &b, ca, cb);
    stream(&a, &b, src, len, count / 10 + 1, len + 65536); /* warm up */
    for (int r = 0; r < ROUNDS; r++) {
        double te, tm;

        a.bytes = b.bytes = a.msgs = b.msgs = 0;
        te = stream(&a, &b, src, len, count, len + 65536);
        if (b.bytes != (uint64_t)len * count) {
            printf("  ERROR: delivered %llu of %llu bytes\n", (unsigned long long)b.bytes,
                   (unsigned long long)len * count);
            exit(1);
        }
        tm = memcpy_time(dst, dst_len, src, len, count);
        t_engine = te < t_engine ? te : t_engine;
        t_memcpy = tm < t_memcpy ? tm : t_memcpy;
    }
    printf("%-34s engine %6.2f GB/s %10.0f msgs/s | memcpy %6.2f GB/s | ratio %.2fx\n", label,
           gbytes / t_engine, (double)count / t_engine, gbytes / t_memcpy, t_memcpy / t_engine);
    pair_down(&a, &b);
    owned_drop();
    free(src);
    free(dst);
}

static void run_memory(uint32_t max_send_size)
{
    struct smbd_config ca, cb;
    struct side a, b;
    struct mallinfo2 m0, m1;
    long r0, r1;
    uint8_t msg[100] = { 0 };
    struct iovec iov = { msg, sizeof(msg) };

    smbd_config_default(&ca, SMBD_ROLE_ACTIVE);
    smbd_config_default(&cb, SMBD_ROLE_PASSIVE);
    ca.max_send_size = cb.max_send_size = max_send_size;
    malloc_trim(0);
    m0 = mallinfo2();
    r0 = rss_kib();
    pair_up(&a, &b, &ca, &cb);
    for (int i = 0; i < 1000; i++) { /* touch the receive ring as traffic would */
        smbd_conn_send(a.conn, &iov, 1, 0);
        smbd_conn_send(b.conn, &iov, 1, 0);
        poll_all(&b);
        poll_all(&a);
    }
    m1 = mallinfo2();
    r1 = rss_kib();
    printf("memory per established connection at 255 credits (MaxSendSize %u both ways: the "
           "client's receives of that size, the server's of 8192 bytes): %.2f MiB allocated, "
           "%.2f MiB resident (pair / 2, fake provider included)\n", (unsigned)max_send_size, (double)((m1.uordblks + m1.hblkhd) - (m0.uordblks + m0.hblkhd)) / 2 / 1048576.0,
           (double)(r1 - r0) / 2 / 1024.0);
    pair_down(&a, &b);
}

int main(int argc, char **argv)
{
    struct smbd_config ca, cb;
    double scale = argc > 1 ? atof(argv[1]) : 1.0;

    smbd_config_default(&ca, SMBD_ROLE_ACTIVE);
    smbd_config_default(&cb, SMBD_ROLE_PASSIVE);
    run_throughput("1 MiB messages (defaults)", &ca, &cb, 1u << 20, (uint64_t)(512 * scale));
    run_throughput("100-byte messages (defaults)", &ca, &cb, 100, (uint64_t)(2000000 * scale));
    ca.max_send_size = cb.max_send_size = 8136; /* the programs' default (settings table) */
    run_throughput("1 MiB messages (MaxSendSize 8136)", &ca, &cb, 1u << 20, (uint64_t)(512 * scale));
    streaming = 1;
    run_throughput("1 MiB, 8136, streaming delivery", &ca, &cb, 1u << 20, (uint64_t)(512 * scale));
    owned = 1;
    run_throughput("1 MiB, 8136, streaming, owned send", &ca, &cb, 1u << 20,
                   (uint64_t)(512 * scale));
    owned = 0;
    smbd_config_default(&ca, SMBD_ROLE_ACTIVE);
    smbd_config_default(&cb, SMBD_ROLE_PASSIVE);
    run_throughput("1 MiB, defaults, streaming delivery", &ca, &cb, 1u << 20, (uint64_t)(512 * scale));
    run_throughput("100-byte, defaults, streaming", &ca, &cb, 100, (uint64_t)(2000000 * scale));
    streaming = 0;
    run_memory(1364);
    run_memory(8136);
    return 0;
}
