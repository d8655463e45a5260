/* SPDX-License-Identifier: BSD-3-Clause */
/* tools/relay/relay_loops.c — the relay's event loops: loop 0 is the main thread's,
 * the others each run on a thread of their own until relay_loops_stop. A connection
 * is accepted onto one loop and lives there (relay_conn.c); work for another loop's
 * connections is queued onto that loop (sd_loop_post), never done across threads. */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "relay.h"

static void *loop_thread(void *arg)
{
    struct relay_loop *l = arg;
    int rc = sd_loop_run(l->loop);

    if (rc < 0)
        sd_error("event loop %u failed: %s", l->index, strerror(-rc));
    return NULL;
}

unsigned relay_loops_auto(void)
{
    cpu_set_t set;
    int n;

    if (sched_getaffinity(0, sizeof(set), &set) < 0 || (n = CPU_COUNT(&set)) < 1)
        return 1;
    return (unsigned)n;
}

int relay_loops_start(struct relay *r, unsigned n)
{
    int rc;

    r->loops = calloc(n, sizeof(*r->loops));
    if (!r->loops) {
        sd_error("out of memory for %u event loops", n);
        return -1;
    }
    for (unsigned i = 0; i < n; i++) {
        struct relay_loop *l = &r->loops[i];

        l->r = r;
        l->index = i;
        l->loop = i ? sd_loop_new() : r->loop;
        if (!l->loop) {
            sd_error("cannot set up event loop %u", i);
            return -1;
        }
        sd_loop_set_busy_poll(l->loop, r->set.busy_poll_us); /* before its thread runs */
        r->nloops = i + 1;
        if (i && (rc = pthread_create(&l->thread, NULL, loop_thread, l)) != 0) {
            sd_error("cannot start the thread of event loop %u: %s", i, strerror(rc));
            return -1;
        }
        l->has_thread = i > 0;
    }
    return 0;
}

void relay_loops_stop(struct relay *r)
{
    for (unsigned i = 1; i < r->nloops; i++) {
        struct relay_loop *l = &r->loops[i];

        if (!l->has_thread)
            continue;
        sd_loop_stop(l->loop);
        pthread_join(l->thread, NULL);
        l->has_thread = 0;
    }
}

int relay_loop_run_on(struct relay_loop *l, sd_task_cb cb, void *ctx)
{
    if (l->index == 0) {
        cb(ctx);
        return 0;
    }
    return sd_loop_post(l->loop, cb, ctx);
}
