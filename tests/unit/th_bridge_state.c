/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/th_bridge_state.c — a live bridge's lifecycle seen from the test thread
 * (th_bridge_state.h). */
#include "th_bridge_state.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "log.h"
#include "th_stderr.h"

struct th_peek_req {
    struct th_bridge_side *side;
    struct th_bridge_peek k;
};

static void th_peek_task(void *ctx)
{
    struct th_peek_req *r = ctx;
    const struct smbd_bridge *b = r->side->bridge;

    r->k.ended = r->side->ended; /* on_end runs on this thread: the bridge is live if 0 */
    if (r->k.ended)
        return;
    r->k.state = b->state;
    r->k.deliver = b->out.deliver;
    r->k.queued = bridge_outq_len(&b->out.queue);
    r->k.send_queued = smbd_conn_send_queued(b->conn);
    r->k.recv_paused = b->out.recv_paused;
    r->k.answers_known = smb2_pending_known(&b->pending);
    r->k.answers_due = smb2_pending_count(&b->pending);
    r->k.chan_busy = b->chan && bridge_chan_busy(b->chan);
    r->k.stream_held = bridge_stream_held(b);
    r->k.stream_in = b->in.bytes;
}

struct th_bridge_peek th_bridge_peek(struct th_bridge_pair *p, struct th_bridge_side *s)
{
    struct th_peek_req r = { .side = s };

    th_bridge_on_loop(p, th_peek_task, &r);
    return r.k;
}

int th_bridge_wait_state(struct th_bridge_pair *p, struct th_bridge_side *s,
                         enum bridge_state state, int ms)
{
    uint64_t end = sd_now_ms() + (uint64_t)ms;

    do {
        struct th_bridge_peek k = th_bridge_peek(p, s);

        if (!k.ended && k.state == state)
            return 1;
        usleep(2000);
    } while (sd_now_ms() < end);
    return 0;
}

int th_bridge_wait_ended(struct th_bridge_side *s, int ms)
{
    uint64_t end = sd_now_ms() + (uint64_t)ms;

    while (!__atomic_load_n(&s->ended, __ATOMIC_ACQUIRE) && sd_now_ms() < end)
        usleep(2000);
    return __atomic_load_n(&s->ended, __ATOMIC_ACQUIRE);
}

static void th_finish_task(void *ctx)
{
    struct th_bridge_side *s = ctx;

    if (!s->ended)
        smbd_bridge_finish(s->bridge);
}

void th_bridge_finish(struct th_bridge_pair *p, struct th_bridge_side *s)
{
    th_bridge_on_loop(p, th_finish_task, s);
}

static void th_stop_task(void *ctx)
{
    struct th_bridge_side *s = ctx;

    if (!s->ended)
        smbd_bridge_stop(s->bridge, "stopped by the test");
}

void th_bridge_stop(struct th_bridge_pair *p, struct th_bridge_side *s)
{
    th_bridge_on_loop(p, th_stop_task, s);
}

/* ---- traces ---- */

#define TH_TRACE_CAP (4u << 20)

static struct {
    struct th_stderr cap;
    int capturing;
    enum sd_log_level level;
    char *log;               /* what was captured, once collected */
} th_trace;

int th_bridge_trace_setup(void **state)
{
    (void)state;
    free(th_trace.log);
    th_trace.log = NULL;
    th_trace.level = sd_log_get_level();
    sd_log_set_level(SD_LOG_DEBUG);
    th_stderr_begin(&th_trace.cap);
    th_trace.capturing = 1;
    return 0;
}

void th_bridge_trace_collect(void)
{
    assert_true(th_trace.capturing);
    th_trace.log = malloc(TH_TRACE_CAP);
    assert_non_null(th_trace.log);
    th_stderr_end(&th_trace.cap, th_trace.log, TH_TRACE_CAP);
    th_trace.capturing = 0;
    sd_log_set_level(th_trace.level);
}

int th_bridge_trace_teardown(void **state)
{
    (void)state;
    if (th_trace.capturing) { /* the test failed on the way: show what the bridges said */
        th_bridge_trace_collect();
        fprintf(stderr, "%s", th_trace.log);
    }
    free(th_trace.log);
    th_trace.log = NULL;
    return 0;
}

const char *th_bridge_trace(const struct th_bridge_side *s, char *out, size_t len)
{
    char tag[32], line[512];
    size_t used;

    assert_non_null(th_trace.log);
    snprintf(tag, sizeof(tag), "bridge fd %d: ", s->stream_fd);
    used = (size_t)snprintf(out, len, "OPEN");
    for (const char *at = th_trace.log; *at;) {
        size_t n = strcspn(at, "\n");
        const char *to;

        snprintf(line, sizeof(line), "%.*s", (int)n, at);
        at += n + (at[n] == '\n');
        if (!strstr(line, tag) || strstr(line, " is not a change") ||
            !(to = strstr(line, " -> ")))
            continue;
        to += 4;
        used += (size_t)snprintf(out + used, used < len ? len - used : 0, " %.*s",
                                 (int)strcspn(to, " "), to);
    }
    return out;
}
