/* SPDX-License-Identifier: BSD-3-Clause */
/* tools/relay/relay_backend.c — whether the backend answers. A connection whose backend
 * connect fails marks it down: from then on relay_admit refuses new connections before
 * they are accepted (a client gets its refusal at once instead of a negotiated
 * connection that is reset), and the main loop checks the backend with a non-blocking
 * TCP connect every CHECK_MS until one succeeds. Each change is logged once and told to
 * systemd's status line. The connections' backend connects dial the same way
 * (relay_backend_dial). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "relay.h"

#define CHECK_MS 2000 /* between checks while down; also a check's connect bound */

static void check_start(struct relay *r);

/* Main thread: no check in flight, none timed. */
static void check_end(struct relay *r)
{
    struct relay_backend *b = &r->backend;

    if (b->probe_fd >= 0) {
        sd_loop_del_fd(r->loop, b->probe_fd);
        close(b->probe_fd);
        b->probe_fd = -1;
    }
    if (b->probe_timer > 0)
        sd_loop_cancel_timer(r->loop, b->probe_timer);
    b->probe_timer = 0;
}

static void check_next_cb(void *ctx, uint64_t now)
{
    struct relay *r = ctx;

    (void)now;
    r->backend.probe_timer = 0;
    check_start(r);
}

/* Main thread: a check ended with err (0: connected). */
static void check_done(struct relay *r, int err)
{
    struct relay_backend *b = &r->backend;
    uint64_t down_s, refused;

    check_end(r);
    if (err) {
        sd_debug("backend %s check: connect: %s", r->backend_str, strerror(err));
        b->probe_timer = sd_loop_add_timer(r->loop, sd_now_ms() + CHECK_MS, check_next_cb, r);
        if (b->probe_timer > 0)
            return;
        b->probe_timer = 0;
        sd_error("cannot time the next check of backend %s: admitting again", r->backend_str);
    }
    pthread_mutex_lock(&r->admit_lock);
    b->down = 0;
    down_s = (sd_now_ms() - b->down_ms) / 1000;
    refused = r->counts.refused[RELAY_REFUSED_BACKEND_DOWN] - b->refused_before;
    pthread_mutex_unlock(&r->admit_lock);
    sd_notice("backend %s is back; admitting again (down %llu s, %llu connections refused)",
              r->backend_str, (unsigned long long)down_s, (unsigned long long)refused);
    relay_service_changed(r);
}

static void check_writable_cb(void *ctx, int revents)
{
    struct relay *r = ctx;

    (void)revents;
    check_done(r, relay_backend_dialed(r->backend.probe_fd));
}

static void check_timeout_cb(void *ctx, uint64_t now)
{
    struct relay *r = ctx;

    (void)now;
    r->backend.probe_timer = 0;
    check_done(r, ETIMEDOUT);
}

/* Main thread: one check, its connect bounded by CHECK_MS; none while the relay stops
 * (it accepts nothing more). */
static void check_start(struct relay *r)
{
    struct relay_backend *b = &r->backend;
    int rc;

    if (atomic_load(&r->draining))
        return;
    rc = relay_backend_dial(r, &b->probe_fd);
    if (rc != -EINPROGRESS) {
        check_done(r, -rc);
        return;
    }
    rc = sd_loop_add_fd(r->loop, b->probe_fd, SD_EV_OUT, check_writable_cb, r);
    if (rc < 0) {
        close(b->probe_fd);
        b->probe_fd = -1;
        check_done(r, -rc);
        return;
    }
    b->probe_timer = sd_loop_add_timer(r->loop, sd_now_ms() + CHECK_MS, check_timeout_cb, r);
    if (b->probe_timer < 0) {
        b->probe_timer = 0;
        check_done(r, ENOMEM);
    }
}

/* Main thread: the backend was just marked down (one post per time it goes down). */
static void check_posted(void *ctx)
{
    struct relay *r = ctx;

    if (r->backend.probe_fd < 0 && r->backend.probe_timer == 0)
        check_start(r);
}

void relay_backend_failed(struct relay *r, int err)
{
    struct relay_backend *b = &r->backend;
    int was_down;

    pthread_mutex_lock(&r->admit_lock);
    was_down = b->down;
    if (!was_down) {
        b->down = 1;
        b->down_ms = sd_now_ms();
        b->refused_before = r->counts.refused[RELAY_REFUSED_BACKEND_DOWN];
        snprintf(b->why, sizeof(b->why), "connect: %s", strerror(err));
    }
    pthread_mutex_unlock(&r->admit_lock);
    if (was_down)
        return;
    sd_error("backend %s is down (connect: %s); refusing new connections", r->backend_str,
             strerror(err));
    relay_service_changed(r);
    if (sd_loop_post(r->loop, check_posted, r) < 0) {
        pthread_mutex_lock(&r->admit_lock);
        b->down = 0;
        pthread_mutex_unlock(&r->admit_lock);
        sd_error("cannot check backend %s: admitting again", r->backend_str);
    }
}

void relay_backend_stop(struct relay *r) { check_end(r); }

int relay_backend_dial(const struct relay *r, int *fd)
{
    const struct sd_hostport *h = &r->set.backend;

    *fd = socket(h->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (*fd < 0)
        return -errno;
    return connect(*fd, (const struct sockaddr *)&h->addr, h->len) == 0 ? 0 : -errno;
}

int relay_backend_dialed(int fd)
{
    int soerr = 0;
    socklen_t sl = sizeof(soerr);

    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0)
        return errno;
    return soerr;
}
