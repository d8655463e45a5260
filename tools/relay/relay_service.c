/* SPDX-License-Identifier: BSD-3-Clause */
/* tools/relay/relay_service.c — the relay as a systemd service (Type=notify): READY=1
 * once it serves (listener bound, loops and status socket up), RELOADING=1 and READY=1
 * around a SIGHUP's reload (whether or not it applied: a failed one leaves the old
 * settings in force), STOPPING=1 when it drains, and STATUS= with the live connections
 * and the backend's state, sent when they change, at most once per STATUS_MS. Nothing
 * when $NOTIFY_SOCKET is unset. */
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "relay.h"

#define STATUS_MS 1000

/* Main thread: sends one message; the first failure is logged. */
static void notify(struct relay *r, const char *what, const char *status)
{
    int rc = relay_notify_send(&r->service.notify, "%s%sSTATUS=%s", what, *what ? "\n" : "",
                               status);

    if (rc < 0 && !r->service.failed) {
        r->service.failed = 1;
        sd_warn("cannot notify systemd ($NOTIFY_SOCKET): %s", strerror(-rc));
    }
}

/* The status line: the live connections, and what the relay does with new ones. */
static void status_text(struct relay *r, char *out, size_t len)
{
    unsigned live;
    int down;

    pthread_mutex_lock(&r->admit_lock);
    live = r->live;
    down = r->backend.down;
    pthread_mutex_unlock(&r->admit_lock);
    if (atomic_load(&r->draining))
        snprintf(out, len, "draining, %u connections live", live);
    else if (down)
        snprintf(out, len, "%u connections live; backend %s down, refusing new ones", live,
                 r->backend_str);
    else
        snprintf(out, len, "%u connections live", live);
}

/* Main thread: STATUS= now, if it says something new. */
static void status_send(struct relay *r)
{
    struct relay_service *s = &r->service;
    char text[sizeof(s->status)];

    atomic_store(&s->status_queued, 0); /* a change from now on queues another */
    status_text(r, text, sizeof(text));
    s->status_sent_ms = sd_now_ms();
    if (strcmp(text, s->status) == 0)
        return;
    memcpy(s->status, text, sizeof(text));
    notify(r, "", text);
}

static void status_timer_cb(void *ctx, uint64_t now)
{
    struct relay *r = ctx;

    (void)now;
    r->service.status_timer = 0;
    status_send(r);
}

/* Main thread: a change was posted; sends now or when STATUS_MS have passed. */
static void status_due(void *ctx)
{
    struct relay *r = ctx;
    struct relay_service *s = &r->service;
    uint64_t at = s->status_sent_ms + STATUS_MS;

    if (s->status_timer > 0)
        return;
    if (sd_now_ms() >= at) {
        status_send(r);
        return;
    }
    s->status_timer = sd_loop_add_timer(r->loop, at, status_timer_cb, r);
    if (s->status_timer < 0) {
        s->status_timer = 0;
        status_send(r);
    }
}

void relay_service_open(struct relay *r)
{
    const char *path = getenv("NOTIFY_SOCKET");
    int rc = relay_notify_open(&r->service.notify, path);

    if (rc < 0)
        sd_warn("cannot notify systemd at NOTIFY_SOCKET=%s: %s", path, strerror(-rc));
}

void relay_service_ready(struct relay *r)
{
    struct relay_service *s = &r->service;

    status_text(r, s->status, sizeof(s->status));
    s->status_sent_ms = sd_now_ms();
    notify(r, "READY=1", s->status);
}

void relay_service_reloading(struct relay *r)
{
    char what[64];

    snprintf(what, sizeof(what), "RELOADING=1\nMONOTONIC_USEC=%llu",
             (unsigned long long)sd_now_us());
    notify(r, what, "reloading the configuration");
}

void relay_service_stopping(struct relay *r)
{
    struct relay_service *s = &r->service;

    if (s->stopping)
        return;
    s->stopping = 1;
    status_text(r, s->status, sizeof(s->status));
    notify(r, "STOPPING=1", s->status);
}

void relay_service_changed(struct relay *r)
{
    struct relay_service *s = &r->service;

    if (s->notify.fd < 0 || atomic_exchange(&s->status_queued, 1))
        return;
    if (sd_loop_post(r->loop, status_due, r) < 0)
        atomic_store(&s->status_queued, 0); /* the next change tries again */
}

void relay_service_close(struct relay *r)
{
    struct relay_service *s = &r->service;

    if (s->status_timer > 0)
        sd_loop_cancel_timer(r->loop, s->status_timer);
    s->status_timer = 0;
    relay_notify_close(&s->notify);
}
