/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/test_soft_accept.c — the soft-iWARP listener never waits for a peer's MPA
 * request: a silent TCP client does not delay a real client's accept + SMB Direct
 * negotiate on an event loop; a request dribbled byte by byte is accepted once whole;
 * a client missing the handshake deadline is dropped; a malformed request is dropped
 * without affecting others; the pre_accept hook runs before the reply and can refuse;
 * the admit hook's refusal reaches the dialer named as the server's. */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
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

#include "sd_loop.h"
#include "smbd_link.h"
#include "soft/soft_cm.h"

#define STEP_BOUND_MS 50   /* far above a non-blocking step, far below a stall */

static const struct sd_cm_params sa_params = {.ird = 16, .ord = 16};

/* A loopback listener giving each connection handshake_ms to send its MPA request. */
static struct sd_listener *sa_listen_for(struct sockaddr_in *bound, int handshake_ms)
{
    struct sockaddr_in any = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    struct sd_listen_params lp = {.backlog = 8, .handshake_ms = handshake_ms};
    socklen_t bl = sizeof(*bound);
    int err = 0;
    struct sd_listener *l = sd_soft_provider.listen((struct sockaddr *)&any, sizeof(any), &lp, &err);

    assert_non_null(l);
    assert_int_equal(sd_soft_listener_addr(l, (struct sockaddr *)bound, &bl), 0);
    return l;
}

static struct sd_listener *sa_listen(struct sockaddr_in *bound)
{
    return sa_listen_for(bound, 5000);
}

static int sa_raw_connect(const struct sockaddr_in *a)
{
    int one = 1, fd = socket(AF_INET, SOCK_STREAM, 0);

    assert_true(fd >= 0);
    assert_int_equal(connect(fd, (const struct sockaddr *)a, sizeof(*a)), 0);
    assert_int_equal(setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)), 0);
    return fd;
}

/* A valid MPA request (RFC 5044 7.1.1) with private data "hello". */
static int sa_request(uint8_t *out, size_t cap)
{
    struct sd_cm_params p = sa_params;
    int n;

    p.private_data = "hello";
    p.private_data_len = 5;
    n = sd_soft_mpa_build_request(&p, 0, out, cap);
    assert_true(n > MPA_RR_HDR_LEN);
    return n;
}

static int sa_readable(int fd, int wait_ms)
{
    struct pollfd pf = {.fd = fd, .events = POLLIN};

    return poll(&pf, 1, wait_ms);
}

/* accept(timeout 0) must return at once; the result and *err are the caller's. */
static struct sd_qp *sa_accept_now(struct sd_listener *l, const struct sd_cm_params *p,
                                   struct sd_cm_result *r, int *err)
{
    uint64_t t0 = sd_now_ms();
    struct sd_qp *qp = sd_soft_provider.accept(l, p, 0, r, err);

    assert_true(sd_now_ms() - t0 < STEP_BOUND_MS);
    return qp;
}

/* Client side: 0 when fd was closed by the peer (EOF or reset) within wait_ms. */
static int sa_closed(int fd, int wait_ms)
{
    uint8_t b[64];
    ssize_t n;

    if (sa_readable(fd, wait_ms) != 1)
        return -1;
    n = recv(fd, b, sizeof(b), MSG_DONTWAIT);
    return n == 0 || (n < 0 && errno == ECONNRESET) ? 0 : -1;
}

static int sa_still_open(int fd)
{
    uint8_t b;

    return recv(fd, &b, 1, MSG_DONTWAIT) < 0 && errno == EAGAIN;
}

/* ---- a silent client vs a real one on an event loop (the relay's path) ---- */

struct sa_relay {
    struct sd_loop *loop;
    struct sd_listener *l;
    struct sockaddr_in addr;
    struct smbd_link_opts opts;
    struct smbd_link *passive, *active;
    int callbacks, eagain;
    uint64_t slowest_ms, dial_start, passive_at;
    int dial_rc;
    char dial_why[256];
};

static void sa_accepted(void *ctx, struct smbd_link *k, int err, const char *why)
{
    struct sa_relay *r = ctx;

    if (err)
        fail_msg("negotiate failed: %s", why);
    r->passive = k;
    r->passive_at = sd_now_ms();
}

static void sa_listener_cb(void *ctx, int revents)
{
    struct sa_relay *r = ctx;
    uint64_t t0 = sd_now_ms(), spent;
    char why[256];
    int rc;

    (void)revents;
    r->callbacks++;
    rc = smbd_link_accept_start(r->loop, r->l, &r->opts, sa_accepted, r, why, sizeof(why));
    spent = sd_now_ms() - t0;
    if (spent > r->slowest_ms)
        r->slowest_ms = spent;
    if (rc == -EAGAIN)
        r->eagain++;
    else if (rc < 0)
        fail_msg("accept_start: %s", why);
}

static void *sa_dial(void *arg)
{
    struct sa_relay *r = arg;
    struct smbd_link_opts o = r->opts;
    char why[200];

    smbd_config_default(&o.cfg, SMBD_ROLE_ACTIVE);
    r->dial_start = sd_now_ms();
    r->dial_rc = smbd_link_dial((struct sockaddr *)&r->addr, sizeof(r->addr), &o, &r->active,
                                why, sizeof(why));
    if (r->dial_rc < 0)
        snprintf(r->dial_why, sizeof(r->dial_why), "dial: %s", why);
    return NULL;
}

static void test_silent_client_does_not_delay_others(void **state)
{
    struct sa_relay r;
    pthread_t dialer;
    uint64_t end;
    int silent;

    (void)state;
    memset(&r, 0, sizeof(r));
    r.loop = sd_loop_new();
    assert_non_null(r.loop);
    smbd_config_default(&r.opts.cfg, SMBD_ROLE_PASSIVE);
    r.opts.provider = &sd_soft_provider;
    r.opts.ird = r.opts.ord = 16;
    r.opts.smbd_ird_ord_header = 1;
    r.opts.timeout_ms = 5000;
    r.l = sa_listen(&r.addr);
    assert_int_equal(sd_loop_add_fd(r.loop, sd_soft_provider.listener_fd(r.l), SD_EV_IN,
                                    sa_listener_cb, &r), 0);
    silent = sa_raw_connect(&r.addr);
    end = sd_now_ms() + 2000;
    while (r.eagain == 0 && sd_now_ms() < end) /* the silent one is TCP-accepted, pending */
        assert_true(sd_loop_run_once(r.loop, 50) >= 0);
    assert_int_equal(r.eagain, 1);
    assert_int_equal(sd_loop_run_once(r.loop, 20), 0); /* and then the fd is quiet */

    assert_int_equal(pthread_create(&dialer, NULL, sa_dial, &r), 0);
    end = sd_now_ms() + 5000;
    while (!r.passive && sd_now_ms() < end)
        assert_true(sd_loop_run_once(r.loop, 50) >= 0);
    pthread_join(dialer, NULL);
    if (r.dial_why[0])
        fail_msg("%s", r.dial_why);
    assert_non_null(r.passive);
    assert_non_null(r.active);
    print_message("# real client accepted + negotiated in %llu ms beside a silent one; "
                  "slowest listener callback %llu ms over %d calls\n",
                  (unsigned long long)(r.passive_at - r.dial_start),
                  (unsigned long long)r.slowest_ms, r.callbacks);
    assert_true(r.passive_at - r.dial_start < 200);
    assert_true(r.slowest_ms < STEP_BOUND_MS);
    assert_true(sa_still_open(silent)); /* still pending, not dropped */

    smbd_link_free(r.active);
    smbd_link_free(r.passive);
    sd_loop_del_fd(r.loop, sd_soft_provider.listener_fd(r.l));
    sd_soft_provider.listener_close(r.l);
    assert_int_equal(sa_closed(silent, 1000), 0); /* closing the listener drops it */
    close(silent);
    sd_loop_free(r.loop);
}

/* ---- a request dribbled byte by byte ---- */

static void test_dribbled_request_accepted_when_whole(void **state)
{
    struct sockaddr_in addr;
    struct sd_listener *l = sa_listen(&addr);
    int lfd = sd_soft_provider.listener_fd(l), fd = sa_raw_connect(&addr), err = 0, n;
    uint8_t req[SD_SOFT_MPA_FRAME_MAX], rep[MPA_RR_HDR_LEN + 4];
    struct sd_cm_result res;
    struct sd_qp *qp = NULL;

    (void)state;
    n = sa_request(req, sizeof(req));
    for (int i = 0; i < n; i++) {
        assert_int_equal(send(fd, req + i, 1, 0), 1);
        assert_int_equal(sa_readable(lfd, 1000), 1);  /* progress is possible */
        qp = sa_accept_now(l, &sa_params, &res, &err);
        if (i < n - 1) {
            assert_null(qp);
            assert_int_equal(err, -EAGAIN);
            assert_int_equal(sa_readable(lfd, 0), 0); /* nothing left to do: no busy loop */
        }
    }
    assert_non_null(qp);
    assert_int_equal(err, 0);
    assert_int_equal(res.peer_private_data_len, 5);
    assert_memory_equal(res.peer_private_data, "hello", 5);
    assert_int_equal(recv(fd, rep, sizeof(rep), MSG_WAITALL), (ssize_t)sizeof(rep));
    assert_memory_equal(rep, MPA_KEY_REP, MPA_KEY_LEN);
    assert_int_equal(rep[16] & MPA_FLAG_REJECT, 0);
    sd_soft_provider.destroy(qp);
    close(fd);
    sd_soft_provider.listener_close(l);
}

/* ---- the handshake deadline ---- */

static void test_handshake_deadline_drops_pending(void **state)
{
    struct sockaddr_in addr;
    struct sd_listener *l;
    struct sd_cm_result res;
    uint8_t req[SD_SOFT_MPA_FRAME_MAX];
    uint64_t t0;
    int lfd, silent, partial, err = 0, n = sa_request(req, sizeof(req));

    (void)state;
    l = sa_listen_for(&addr, 150);
    lfd = sd_soft_provider.listener_fd(l);
    silent = sa_raw_connect(&addr);
    partial = sa_raw_connect(&addr);
    assert_int_equal(send(partial, req, (size_t)n - 1, 0), n - 1); /* all but the last byte */
    t0 = sd_now_ms();
    while (sd_now_ms() - t0 < 100) { /* take both in, read what there is */
        assert_null(sa_accept_now(l, &sa_params, &res, &err));
        assert_int_equal(err, -EAGAIN);
        sa_readable(lfd, 10);
    }
    assert_true(sa_still_open(silent));
    assert_true(sa_still_open(partial));
    assert_int_equal(sa_readable(lfd, 1000), 1); /* the deadline wakes the listener fd */
    assert_true(sd_now_ms() - t0 >= 140);
    assert_null(sa_accept_now(l, &sa_params, &res, &err));
    assert_int_equal(err, -EAGAIN);
    assert_int_equal(sa_closed(silent, 1000), 0);
    assert_int_equal(sa_closed(partial, 1000), 0);
    assert_int_equal(sa_readable(lfd, 0), 0); /* nothing pending, timer disarmed */
    close(silent);
    close(partial);
    sd_soft_provider.listener_close(l);

    /* A handshake time must be given (the settings bound it: test_settings). */
    for (int ms = -1; ms <= 0; ms++) {
        struct sd_listen_params lp = {.backlog = 8, .handshake_ms = ms};

        err = 0;
        assert_null(sd_soft_provider.listen((struct sockaddr *)&addr, sizeof(addr), &lp, &err));
        assert_int_equal(err, -EINVAL);
    }
    err = 0;
    assert_null(sd_soft_provider.listen((struct sockaddr *)&addr, sizeof(addr), NULL, &err));
    assert_int_equal(err, -EINVAL);
}

/* ---- a malformed request among good ones ---- */

static void test_malformed_request_dropped_alone(void **state)
{
    struct sockaddr_in addr;
    struct sd_listener *l = sa_listen(&addr);
    int lfd = sd_soft_provider.listener_fd(l), bad = sa_raw_connect(&addr), good, err = 0;
    int n, errors = 0, eproto = 0;
    uint8_t req[SD_SOFT_MPA_FRAME_MAX], junk[MPA_RR_HDR_LEN], rep[MPA_RR_HDR_LEN];
    struct sd_cm_result res;
    struct sd_qp *qp = NULL;
    uint64_t end = sd_now_ms() + 2000;

    (void)state;
    memset(junk, 'G', sizeof(junk)); /* "GGGG...": an HTTP-ish client, no MPA key */
    assert_int_equal(send(bad, junk, sizeof(junk), 0), (ssize_t)sizeof(junk));
    good = sa_raw_connect(&addr);
    n = sa_request(req, sizeof(req));
    assert_int_equal(send(good, req, (size_t)n, 0), n);
    while (!qp && sd_now_ms() < end) {
        sa_readable(lfd, 50);
        qp = sa_accept_now(l, &sa_params, &res, &err);
        if (!qp && err != -EAGAIN) {
            errors++;
            eproto += err == -EPROTO;
        }
    }
    assert_non_null(qp);
    while (errors == 0 && sd_now_ms() < end) { /* the bad one, if not handled yet */
        sa_readable(lfd, 50);
        assert_null(sa_accept_now(l, &sa_params, &res, &err));
        if (err != -EAGAIN) {
            errors++;
            eproto += err == -EPROTO;
        }
    }
    assert_int_equal(errors, 1);
    assert_int_equal(eproto, 1);
    assert_int_equal(sa_closed(bad, 1000), 0); /* no reply for a non-MPA peer: closed */
    assert_int_equal(recv(good, rep, sizeof(rep), MSG_WAITALL), (ssize_t)sizeof(rep));
    assert_memory_equal(rep, MPA_KEY_REP, MPA_KEY_LEN);
    sd_soft_provider.destroy(qp);
    close(bad);
    close(good);
    sd_soft_provider.listener_close(l);
}

/* ---- the pre_accept hook ---- */

struct sa_hook {
    int client_fd, calls, reply_seen, rc, posted;
    uint8_t buf[64];
    struct sd_mr mr;
};

static int sa_pre_accept(struct sd_qp *qp, void *arg)
{
    struct sa_hook *h = arg;
    uint8_t b;
    struct sd_sge sge;

    h->calls++;
    h->reply_seen = recv(h->client_fd, &b, 1, MSG_DONTWAIT | MSG_PEEK) > 0;
    if (h->rc < 0)
        return h->rc;
    assert_int_equal(sd_soft_provider.reg_mr(qp, h->buf, sizeof(h->buf), SD_ACCESS_LOCAL_WRITE,
                                             &h->mr), 0);
    sge = (struct sd_sge){.addr = h->buf, .length = sizeof(h->buf), .mr = &h->mr};
    h->posted = sd_soft_provider.post_recv(qp, 7, &sge) == 0;
    return 0;
}

static void test_pre_accept_runs_before_reply(void **state)
{
    struct sockaddr_in addr;
    struct sd_listener *l = sa_listen(&addr);
    struct sd_cm_params p = sa_params;
    struct sa_hook h = {.rc = 0};
    struct sd_cm_result res;
    struct sd_qp *qp;
    uint8_t req[SD_SOFT_MPA_FRAME_MAX], rep[MPA_RR_HDR_LEN];
    int n = sa_request(req, sizeof(req)), err = 0;

    (void)state;
    p.pre_accept = sa_pre_accept;
    p.pre_accept_arg = &h;
    h.client_fd = sa_raw_connect(&addr);
    assert_int_equal(send(h.client_fd, req, (size_t)n, 0), n);
    qp = sd_soft_provider.accept(l, &p, 2000, &res, &err);
    assert_non_null(qp);
    assert_int_equal(h.calls, 1);
    assert_int_equal(h.reply_seen, 0);
    assert_int_equal(h.posted, 1);
    assert_int_equal(recv(h.client_fd, rep, sizeof(rep), MSG_WAITALL), (ssize_t)sizeof(rep));
    assert_int_equal(rep[16] & MPA_FLAG_REJECT, 0);
    sd_soft_provider.destroy(qp);
    close(h.client_fd);

    /* A refusing hook: the peer gets a reject frame, accept the hook's error. */
    h = (struct sa_hook){.rc = -EPERM};
    h.client_fd = sa_raw_connect(&addr);
    assert_int_equal(send(h.client_fd, req, (size_t)n, 0), n);
    assert_null(sd_soft_provider.accept(l, &p, 2000, &res, &err));
    assert_int_equal(err, -EPERM);
    assert_int_equal(h.calls, 1);
    assert_int_equal(recv(h.client_fd, rep, sizeof(rep), MSG_WAITALL), (ssize_t)sizeof(rep));
    assert_memory_equal(rep, MPA_KEY_REP, MPA_KEY_LEN);
    assert_true(rep[16] & MPA_FLAG_REJECT);
    close(h.client_fd);
    sd_soft_provider.listener_close(l);
}

static int sa_refuse(const struct sockaddr *local, const struct sockaddr *peer, void *arg)
{
    (void)local;
    (void)peer;
    ++*(int *)arg;
    return -EACCES;
}

/* The relay's refusal (its admit hook) fails the client's dial with ECONNREFUSED, as a
 * TCP server's refusal would, and the reason names it; a dial where nothing listens
 * fails the same way without naming one. */
static void test_admit_refusal_named_at_the_dialer(void **state)
{
    static const char named[] = "refused by the server (its access policy or connection limits)";
    struct sd_cm_params p = sa_params;
    struct sd_cm_result res;
    struct sa_relay r;
    pthread_t dialer;
    int asked = 0, err = 0;

    (void)state;
    memset(&r, 0, sizeof(r));
    r.opts.provider = &sd_soft_provider;
    r.opts.ird = r.opts.ord = 16;
    r.opts.timeout_ms = 5000;
    r.l = sa_listen(&r.addr);
    p.admit = sa_refuse;
    p.admit_arg = &asked;
    assert_int_equal(pthread_create(&dialer, NULL, sa_dial, &r), 0);
    assert_null(sd_soft_provider.accept(r.l, &p, 5000, &res, &err));
    pthread_join(dialer, NULL);
    assert_int_equal(err, -EACCES);
    assert_int_equal(asked, 1);
    assert_null(r.active);
    assert_int_equal(r.dial_rc, -ECONNREFUSED);
    if (!strstr(r.dial_why, named))
        fail_msg("the dial's reason does not name the refusal: '%s'", r.dial_why);

    sd_soft_provider.listener_close(r.l);
    r.dial_why[0] = '\0';
    sa_dial(&r);
    assert_null(r.active);
    assert_int_equal(r.dial_rc, -ECONNREFUSED);
    if (strstr(r.dial_why, named) || !strstr(r.dial_why, "Connection refused"))
        fail_msg("a dial where nothing listens: '%s'", r.dial_why);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_silent_client_does_not_delay_others),
        cmocka_unit_test(test_dribbled_request_accepted_when_whole),
        cmocka_unit_test(test_handshake_deadline_drops_pending),
        cmocka_unit_test(test_malformed_request_dropped_alone),
        cmocka_unit_test(test_pre_accept_runs_before_reply),
        cmocka_unit_test(test_admit_refusal_named_at_the_dialer),
    };

    return cmocka_run_group_tests_name("soft-iWARP non-blocking accept", tests, NULL, NULL);
}
