/* SPDX-License-Identifier: BSD-3-Clause */
/* tools/relay/relay_drop.c — smbdirect-relay --drop-address IP, the relay's side: every
 * connection a client made to IP ends at once on its loop (an SMB Direct disconnect: on
 * soft-iWARP its TCP connection closes, on verbs rdma_disconnect), so that when a cluster
 * moves IP to another node its clients fail over now instead of at the keepalive. The
 * ended connections are counted in the status; the asker learns how many. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <utlist.h>

#include "log.h"
#include "relay.h"

#define DROP_REASON "its address was dropped (--drop-address)"

struct drop_part {
    struct relay_drop *d;
    struct relay_loop *l;
};

struct relay_drop {
    struct relay *r;
    char addr[SD_ADDR_STRLEN];
    atomic_uint pending;   /* loops that have not run their part yet */
    atomic_uint ended;
    int unreached;         /* main thread: a loop could not be asked */
    relay_drop_done_fn done; /* main thread; NULL once forgotten */
    void *ctx;
    struct drop_part parts[];
};

/* Main loop: every loop has run its part. */
static void drop_finish(void *ctx)
{
    struct relay_drop *d = ctx;
    struct relay *r = d->r;
    unsigned ended = atomic_load(&d->ended);

    pthread_mutex_lock(&r->admit_lock);
    r->counts.dropped += ended;
    pthread_mutex_unlock(&r->admit_lock);
    sd_notice("dropped %u connections made to %s (--drop-address)", ended, d->addr);
    if (d->done)
        d->done(d->ctx, d->unreached ? -1 : (long)ended);
    free(d);
}

/* The last part to finish hands the drop to the main loop. */
static void part_done(struct relay_drop *d)
{
    if (atomic_fetch_sub(&d->pending, 1) != 1)
        return;
    if (sd_loop_post(d->r->loop, drop_finish, d) < 0)
        sd_error("cannot report the end of --drop-address %s to the main loop", d->addr);
}

/* On a loop's thread: ends its connections made to the address. */
static void drop_on_loop(void *ctx)
{
    struct drop_part *p = ctx;
    struct relay_conn *c, *next;
    unsigned n = 0;

    DL_FOREACH_SAFE(p->l->conns, c, next) {
        if (c->ending || strcmp(c->local, p->d->addr) != 0)
            continue;
        n++;
        relay_conn_end(c, DROP_REASON);
    }
    atomic_fetch_add(&p->d->ended, n);
    part_done(p->d);
}

struct relay_drop *relay_drop_start(struct relay *r, const char *addr, relay_drop_done_fn done,
                                    void *ctx)
{
    struct relay_drop *d = calloc(1, sizeof(*d) + r->nloops * sizeof(d->parts[0]));

    if (!d)
        return NULL;
    d->r = r;
    snprintf(d->addr, sizeof(d->addr), "%s", addr);
    d->done = done;
    d->ctx = ctx;
    atomic_init(&d->pending, r->nloops + 1); /* + 1: this call's own, released last */
    atomic_init(&d->ended, 0);
    for (unsigned i = 0; i < r->nloops; i++) {
        d->parts[i] = (struct drop_part){ .d = d, .l = &r->loops[i] };
        if (relay_loop_run_on(&r->loops[i], drop_on_loop, &d->parts[i]) < 0) {
            sd_error("cannot reach event loop %u to end its connections to %s", i, addr);
            d->unreached = 1;
            part_done(d);
        }
    }
    part_done(d);
    return d;
}

void relay_drop_forget(struct relay_drop *d)
{
    d->done = NULL;
}
