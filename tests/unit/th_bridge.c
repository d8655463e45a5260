/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/th_bridge.c — two bridges over a soft-iWARP link on loopback (th_bridge.h). */
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
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

#include <cmocka.h>

#include "soft/soft_cm.h"
#include "th_bridge.h"

const struct sd_provider_ops *th_bridge_provider = &sd_soft_provider;
const struct sd_provider_ops *th_bridge_provider_active = &sd_soft_provider;

static void th_accepted(void *ctx, struct smbd_link *k, int err, const char *why)
{
    struct th_bridge_pair *p = ctx;

    if (err)
        fail_msg("accept failed: %s", why);
    p->passive = k;
}

static void th_listener_cb(void *ctx, int revents)
{
    struct th_bridge_pair *p = ctx;
    char why[256];
    int rc;

    (void)revents;
    rc = smbd_link_accept_start(p->loop, p->listener, &p->opts, th_accepted, p, why, sizeof(why));
    if (rc == -EAGAIN) /* the MPA request is not all in yet: wait for more */
        return;
    if (rc < 0)
        fail_msg("accept_start: %s", why);
    assert_int_equal(sd_loop_del_fd(p->loop, sd_soft_provider.listener_fd(p->listener)), 0);
}

static void *th_dial(void *arg)
{
    struct th_bridge_pair *p = arg;
    struct sockaddr_in dst = { .sin_family = AF_INET, .sin_port = htons((uint16_t)p->port),
                               .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    struct smbd_link_opts o = p->opts;
    char why[200];

    smbd_config_default(&o.cfg, SMBD_ROLE_ACTIVE);
    o.provider = th_bridge_provider_active;
    o.io_size = 2u << 20; /* the shim's default channel I/O */
    if (smbd_link_dial((struct sockaddr *)&dst, sizeof(dst), &o, &p->active, why,
                       sizeof(why)) < 0)
        snprintf(p->dial_why, sizeof(p->dial_why), "dial: %s", why); /* checked on join */
    return NULL;
}

static void th_on_end(void *ctx, const struct smbd_bridge_stats *st, int err)
{
    struct th_bridge_side *s = ctx;

    s->chan_mem_peak = st->chan.mem_peak;
    s->rdma_ios = st->chan.rdma_reads + st->chan.rdma_writes;
    s->spliced = st->stream_bytes_spliced;
    s->adopted = st->stream_bytes_adopted;
    s->end_err = err;
    s->ended_at = sd_now_ms();
    snprintf(s->reason, sizeof(s->reason), "%s", st->reason);
    /* Last, released: a test thread that sees ended (acquire) sees all of the above. */
    __atomic_store_n(&s->ended, s->ended + 1, __ATOMIC_RELEASE);
}

/* A connected TCP pair on loopback (the relay's backend stream shape). */
static void th_tcp_pair(int sv[2])
{
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t al = sizeof(a);
    int l = socket(AF_INET, SOCK_STREAM, 0);

    assert_true(l >= 0);
    assert_int_equal(bind(l, (struct sockaddr *)&a, sizeof(a)), 0);
    assert_int_equal(listen(l, 1), 0);
    assert_int_equal(getsockname(l, (struct sockaddr *)&a, &al), 0);
    sv[0] = socket(AF_INET, SOCK_STREAM, 0);
    assert_int_equal(connect(sv[0], (struct sockaddr *)&a, sizeof(a)), 0);
    sv[1] = accept(l, NULL, NULL);
    assert_true(sv[1] >= 0);
    close(l);
}

static void *th_loop_main(void *arg)
{
    struct th_bridge_pair *p = arg;

    assert_int_equal(sd_loop_run(p->loop), 0);
    return NULL;
}

void th_bridge_setup(struct th_bridge_pair *p, int tcp_b, const struct smbd_bridge_opts *oa,
                          const struct smbd_bridge_opts *ob)
{
    struct sockaddr_in any = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    struct sockaddr_in bound;
    socklen_t bl = sizeof(bound);
    pthread_t dialer;
    uint64_t end;
    int err = 0, sa[2], sb[2];

    memset(p, 0, sizeof(*p));
    p->loop = sd_loop_new();
    assert_non_null(p->loop);
    smbd_config_default(&p->opts.cfg, SMBD_ROLE_PASSIVE);
    p->opts.provider = th_bridge_provider;
    p->opts.ird = p->opts.ord = 16;
    p->opts.smbd_ird_ord_header = 1;
    p->opts.timeout_ms = 5000;
    p->listener = sd_soft_provider.listen((struct sockaddr *)&any, sizeof(any),
                                          &(struct sd_listen_params){ 8, 5000 }, &err);
    assert_non_null(p->listener);
    assert_int_equal(sd_soft_listener_addr(p->listener, (struct sockaddr *)&bound, &bl), 0);
    p->port = ntohs(bound.sin_port);
    assert_int_equal(sd_loop_add_fd(p->loop, sd_soft_provider.listener_fd(p->listener), SD_EV_IN,
                                    th_listener_cb, p), 0);
    assert_int_equal(pthread_create(&dialer, NULL, th_dial, p), 0);
    end = sd_now_ms() + 10000;
    while (!p->passive && sd_now_ms() < end)
        assert_true(sd_loop_run_once(p->loop, 50) >= 0);
    pthread_join(dialer, NULL);
    if (p->dial_why[0])
        fail_msg("%s", p->dial_why);
    assert_non_null(p->passive);
    assert_non_null(p->active);

    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sa), 0);
    if (tcp_b)
        th_tcp_pair(sb);
    else
        assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sb), 0);
    p->a.app_fd = sa[0];
    p->b.app_fd = sb[0];
    p->a.stream_fd = sa[1];
    p->b.stream_fd = sb[1];
    p->a.bridge = smbd_bridge_start(p->loop, p->passive, sa[1], oa, th_on_end, &p->a);
    p->b.bridge = smbd_bridge_start(p->loop, p->active, sb[1], ob, th_on_end, &p->b);
    assert_non_null(p->a.bridge);
    assert_non_null(p->b.bridge);
    assert_int_equal(pthread_create(&p->loop_thread, NULL, th_loop_main, p), 0);
}

static void th_nothing(void *ctx)
{
    (void)ctx;
}

static int th_both_ended(const struct th_bridge_pair *p)
{
    return __atomic_load_n(&p->a.ended, __ATOMIC_ACQUIRE) &&
           __atomic_load_n(&p->b.ended, __ATOMIC_ACQUIRE);
}

void th_bridge_teardown(struct th_bridge_pair *p)
{
    uint64_t end = sd_now_ms() + TH_BRIDGE_END_MS;

    close(p->a.app_fd);
    close(p->b.app_fd);
    while (!th_both_ended(p) && sd_now_ms() < end)
        usleep(5000);
    /* A bridge that ended with an error leaves its stream draining on the loop until the
     * other end closes (bridge_end.c). That end is closed above, so the loop's next round
     * reads its EOF and frees the drain, before any task of that round; the second task
     * runs in a round after the one the bridge ended in. */
    if (th_both_ended(p)) {
        th_bridge_on_loop(p, th_nothing, NULL);
        th_bridge_on_loop(p, th_nothing, NULL);
    }
    sd_loop_stop(p->loop);
    pthread_join(p->loop_thread, NULL);
    assert_int_equal(p->a.ended, 1);
    assert_int_equal(p->b.ended, 1);
    sd_soft_provider.listener_close(p->listener);
    sd_loop_free(p->loop);
}

struct th_task {
    void (*fn)(void *ctx);
    void *ctx;
    int done;
};

static void th_task_run(void *ctx)
{
    struct th_task *t = ctx;

    t->fn(t->ctx);
    __atomic_store_n(&t->done, 1, __ATOMIC_RELEASE);
}

void th_bridge_on_loop(struct th_bridge_pair *p, void (*fn)(void *ctx), void *ctx)
{
    struct th_task t = { .fn = fn, .ctx = ctx };

    assert_int_equal(sd_loop_post(p->loop, th_task_run, &t), 0);
    while (!__atomic_load_n(&t.done, __ATOMIC_ACQUIRE))
        usleep(1000);
}

/* The socket whose local port is the listener's, connected. */
int th_bridge_accepted_socket(const struct th_bridge_pair *p)
{
    int port = p->port, listener_fd = sd_soft_provider.listener_fd(p->listener);
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    int found = -1;

    assert_non_null(d);
    while ((e = readdir(d))) {
        int fd = atoi(e->d_name);
        struct sockaddr_in la, pa;
        socklen_t ll = sizeof(la), pl = sizeof(pa);

        if (e->d_name[0] == '.' || fd == listener_fd || fd == dirfd(d))
            continue;
        if (getsockname(fd, (struct sockaddr *)&la, &ll) == 0 && la.sin_family == AF_INET &&
            ntohs(la.sin_port) == port && getpeername(fd, (struct sockaddr *)&pa, &pl) == 0)
            found = fd;
    }
    closedir(d);
    return found;
}

int th_bridge_wait_closed(int fd, int bound_ms, int *reset)
{
    uint64_t start = sd_now_ms();
    static uint8_t sink[1 << 16];

    while (sd_now_ms() - start < (uint64_t)bound_ms) {
        struct pollfd pfd = { .fd = fd, .events = POLLIN };
        ssize_t r;

        if (poll(&pfd, 1, 100) <= 0)
            continue;
        r = recv(fd, sink, sizeof(sink), MSG_DONTWAIT);
        if (r == 0 || (r < 0 && errno == ECONNRESET)) {
            if (reset)
                *reset = r < 0;
            return (int)(sd_now_ms() - start);
        }
    }
    return -1;
}

/* Writes one Direct-TCP frame (blocking). */
void th_bridge_send_frame(int fd, const uint8_t *msg, size_t len)
{
    uint8_t prefix[4] = { 0, (uint8_t)(len >> 16), (uint8_t)(len >> 8), (uint8_t)len };

    assert_int_equal(send(fd, prefix, 4, MSG_NOSIGNAL), 4);
    for (size_t off = 0; off < len;) {
        ssize_t n = send(fd, msg + off, len - off, MSG_NOSIGNAL);

        assert_true(n > 0);
        off += (size_t)n;
    }
}

/* Reads exactly len bytes within timeout_ms: 0, or -1 when they did not all come. */
int th_bridge_read_exact(int fd, uint8_t *buf, size_t len, int timeout_ms)
{
    uint64_t end = sd_now_ms() + (uint64_t)timeout_ms;

    for (size_t off = 0; off < len;) {
        struct pollfd pfd = { .fd = fd, .events = POLLIN };
        int left = (int)sd_ms_until(end);
        ssize_t n;

        if (left <= 0 || poll(&pfd, 1, left) <= 0)
            return -1;
        n = recv(fd, buf + off, len - off, 0);
        if (n <= 0)
            return -1;
        off += (size_t)n;
    }
    return 0;
}

/* One frame within timeout_ms into buf (cap bytes): its length, or -1 when none came. */
long th_bridge_recv_frame(int fd, uint8_t *buf, size_t cap, int timeout_ms)
{
    uint8_t prefix[4];
    size_t len;

    if (th_bridge_read_exact(fd, prefix, 4, timeout_ms) < 0)
        return -1;
    len = (size_t)prefix[1] << 16 | (size_t)prefix[2] << 8 | prefix[3];
    assert_true(prefix[0] == 0 && len <= cap);
    assert_int_equal(th_bridge_read_exact(fd, buf, len, 5000), 0);
    return (long)len;
}
