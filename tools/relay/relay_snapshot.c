/* SPDX-License-Identifier: BSD-3-Clause */
/* tools/relay/relay_snapshot.c — one snapshot of the relay for its status socket: each
 * loop copies its own connections' figures on its own thread (nothing is read across
 * threads), the main thread gathers the copies and writes the status as text or JSON,
 * oldest connection first, then hands it to whoever asked. */
#include <stdlib.h>
#include <string.h>
#include <utlist.h>

#include "log.h"
#include "relay.h"
#include "sd_version.h"

/* One connection as its loop saw it. */
struct conn_copy {
    unsigned id, loop;
    enum relay_conn_state state;
    char peer[SD_ADDR_STRLEN];
    uint64_t start_ms;
    struct smbd_bridge_stats st;
};

/* One loop's part: filled on that loop's thread, read on the main thread once the loop
 * has posted it back. */
struct loop_part {
    struct relay_snapshot *snap;
    struct relay_loop *l;
    struct conn_copy *conns;
    size_t n;
};

struct relay_snapshot {
    struct relay *r;
    int json;
    relay_snapshot_done_fn done; /* NULL once forgotten */
    void *ctx;
    unsigned waiting;            /* loops that have not answered, + 1 until start's own
                                    turn has come back */
    struct loop_part self;       /* that turn */
    struct loop_part parts[];
};

static const char *const state_names[] = {
    [RELAY_CONN_NEGOTIATING] = "negotiating",
    [RELAY_CONN_CONNECTING] = "connecting",
    [RELAY_CONN_BRIDGED] = "bridged",
};

/* ---- writing ---- */

static void conn_json(const struct conn_copy *c, uint64_t now, FILE *out)
{
    const struct smbd_bridge_stats *st = &c->st;

    fprintf(out,
            "{\"id\":%u,\"client\":\"%s\",\"state\":\"%s\",\"loop\":%u,\"age_s\":%llu,"
            "\"bytes_from_client\":%llu,\"bytes_to_client\":%llu,"
            "\"bytes_to_backend\":%llu,\"bytes_from_backend\":%llu,"
            "\"rdma_read_bytes\":%llu,\"rdma_write_bytes\":%llu,"
            "\"channel_memory_bytes\":%llu,\"memory_waits\":%llu,\"memory_wait_ms\":%llu,"
            "\"memory_waiting\":%u,"
            "\"send_credits\":%u,\"send_credit_target\":%u,"
            "\"receive_credits\":%u,\"receive_credit_max\":%u}",
            c->id, c->peer, state_names[c->state], c->loop,
            (unsigned long long)((now - c->start_ms) / 1000),
            (unsigned long long)st->smbd.bytes_delivered, (unsigned long long)st->smbd.bytes_sent,
            (unsigned long long)st->stream_bytes_out, (unsigned long long)st->stream_bytes_in,
            (unsigned long long)st->chan.rdma_read_bytes,
            (unsigned long long)st->chan.rdma_write_bytes, (unsigned long long)st->chan.mem_held,
            (unsigned long long)st->chan.mem_waits, (unsigned long long)st->chan.mem_wait_ms,
            st->chan.mem_waiting, st->params.send_credits, st->params.neg.send_credit_target,
            st->params.receive_credits, st->params.neg.receive_credit_max);
}

static void conn_text(const struct conn_copy *c, uint64_t now, FILE *out)
{
    const struct smbd_bridge_stats *st = &c->st;

    fprintf(out, "conn %u from %s %s on loop %u, %llu s", c->id, c->peer, state_names[c->state],
            c->loop, (unsigned long long)((now - c->start_ms) / 1000));
    if (c->state == RELAY_CONN_BRIDGED)
        fprintf(out,
                ": from client %llu bytes, to client %llu bytes, from backend %llu bytes, "
                "to backend %llu bytes, rdma_read %llu bytes, rdma_write %llu bytes, channel "
                "memory %llu bytes, memory waits %llu (%llu ms, %u now), credits send %u/%u "
                "receive %u/%u",
                (unsigned long long)st->smbd.bytes_delivered,
                (unsigned long long)st->smbd.bytes_sent,
                (unsigned long long)st->stream_bytes_in, (unsigned long long)st->stream_bytes_out,
                (unsigned long long)st->chan.rdma_read_bytes,
                (unsigned long long)st->chan.rdma_write_bytes,
                (unsigned long long)st->chan.mem_held, (unsigned long long)st->chan.mem_waits,
                (unsigned long long)st->chan.mem_wait_ms, st->chan.mem_waiting,
                st->params.send_credits, st->params.neg.send_credit_target,
                st->params.receive_credits, st->params.neg.receive_credit_max);
    fputc('\n', out);
}

static int by_id(const void *a, const void *b)
{
    unsigned x = ((const struct conn_copy *)a)->id, y = ((const struct conn_copy *)b)->id;

    return (x > y) - (x < y);
}

/* The refusals by reason: "refused":{"access_list":N,...}, or a line "refused: N by
 * access_list, ...". */
static void refused_write(const struct relay_counts *counts, int json, FILE *out)
{
    fputs(json ? "\"refused\":{" : "refused:", out);
    for (int i = 0; i < RELAY_REFUSAL_REASONS; i++) {
        unsigned long long k = counts->refused[i];

        if (json)
            fprintf(out, "%s\"%s\":%llu", i ? "," : "", relay_refusal_names[i], k);
        else
            fprintf(out, "%s %llu by %s", i ? "," : "", k, relay_refusal_names[i]);
    }
    fputs(json ? "}," : "\n", out);
}

/* The whole status: the relay's version and own figures (read under admit_lock: the
 * loops change them), then the connections of every part, oldest first. */
static void snapshot_write(const struct relay_snapshot *snap, struct conn_copy *all, size_t n,
                           FILE *out)
{
    struct relay *r = snap->r;
    struct relay_counts counts;
    unsigned live, max, max_client;
    uint64_t now = sd_now_ms(), held = bridge_chan_process_mem_used(), down_s;
    const char *state = atomic_load(&r->draining) ? "draining" : "accepting";
    char down_why[sizeof(r->backend.why)];
    int down;
    char per_client[32] = "no per-client limit";

    pthread_mutex_lock(&r->admit_lock);
    counts = r->counts;
    live = r->live;
    max = r->set.max_connections;
    max_client = r->set.max_connections_per_client;
    down = r->backend.down;
    down_s = (now - r->backend.down_ms) / 1000;
    memcpy(down_why, r->backend.why, sizeof(down_why));
    pthread_mutex_unlock(&r->admit_lock);
    qsort(all, n, sizeof(*all), by_id);
    if (max_client)
        snprintf(per_client, sizeof(per_client), "%u per client", max_client);
    if (snap->json)
        fprintf(out,
                "{\"version\":\"%s\",\"listen\":\"%s\",\"backend\":\"%s\",\"transport\":\"%s\","
                "\"state\":\"%s\","
                "\"uptime_s\":%llu,\"loops\":%u,\"live\":%u,\"max_connections\":%u,"
                "\"max_connections_per_client\":%u,\"accepted\":%llu,",
                sd_version(), r->listen_str, r->backend_str, r->opts.provider->name, state,
                (unsigned long long)((now - r->start_ms) / 1000), r->nloops, live, max,
                max_client, (unsigned long long)counts.accepted);
    else
        fprintf(out,
                "smbdirect-relay %s on %s (%s), backend %s: %s, up %llu s, %u event loops\n"
                "connections: %u live (max %u, %s), %llu accepted\n",
                sd_version(), r->listen_str, r->opts.provider->name, r->backend_str, state,
                (unsigned long long)((now - r->start_ms) / 1000), r->nloops, live, max,
                per_client, (unsigned long long)counts.accepted);
    refused_write(&counts, snap->json, out);
    fprintf(out, snap->json ? "\"dropped\":%llu," : "dropped: %llu by --drop-address\n",
            (unsigned long long)counts.dropped);
    if (snap->json)
        fprintf(out, "\"backend_state\":\"%s\",\"channel_memory_bytes\":%llu,"
                "\"channel_memory_per_connection\":%u,\"channel_memory_total\":%u,"
                "\"connections\":[",
                down ? "down" : "up", (unsigned long long)held, r->set.channel_memory,
                r->set.channel_memory_total);
    else if (down)
        fprintf(out, "backend: down for %llu s (%s), refusing new connections\n",
                (unsigned long long)down_s, down_why);
    else
        fputs("backend: up\n", out);
    if (!snap->json)
        fprintf(out, "channel memory: %llu bytes held (max %u per connection, %u in all)\n",
                (unsigned long long)held, r->set.channel_memory, r->set.channel_memory_total);
    for (size_t i = 0; i < n; i++) {
        if (snap->json) {
            fputs(i ? "," : "", out);
            conn_json(&all[i], now, out);
        } else {
            conn_text(&all[i], now, out);
        }
    }
    if (snap->json)
        fputs("]}\n", out);
}

/* Main thread, every part in: writes the status and hands it over (or drops it). */
static void snapshot_finish(struct relay_snapshot *snap)
{
    struct conn_copy *all;
    size_t n = 0, at = 0, len = 0;
    char *text = NULL;
    FILE *f;

    for (unsigned i = 0; i < snap->r->nloops; i++)
        n += snap->parts[i].n;
    all = calloc(n ? n : 1, sizeof(*all));
    if (snap->done && all && (f = open_memstream(&text, &len))) {
        for (unsigned i = 0; i < snap->r->nloops; i++) {
            memcpy(all + at, snap->parts[i].conns, snap->parts[i].n * sizeof(*all));
            at += snap->parts[i].n;
        }
        snapshot_write(snap, all, n, f);
        fclose(f);
    }
    if (snap->done)
        snap->done(snap->ctx, text, len);
    else
        free(text);
    free(all);
    for (unsigned i = 0; i < snap->r->nloops; i++)
        free(snap->parts[i].conns);
    free(snap);
}

/* Main thread: one loop's part is in. */
static void part_in(void *ctx)
{
    struct loop_part *p = ctx;

    if (--p->snap->waiting == 0)
        snapshot_finish(p->snap);
}

/* On the part's loop's thread: copies its connections, then posts the part back. */
static void part_fill(void *ctx)
{
    struct loop_part *p = ctx;
    struct relay_loop *l = p->l;
    struct relay_conn *c;
    size_t n = 0;

    DL_COUNT(l->conns, c, n);
    p->conns = calloc(n ? n : 1, sizeof(*p->conns));
    if (p->conns) {
        DL_FOREACH(l->conns, c) {
            struct conn_copy *k = &p->conns[p->n++];

            k->id = c->id;
            k->loop = l->index;
            k->state = c->state;
            memcpy(k->peer, c->peer, sizeof(k->peer));
            k->start_ms = c->start_ms;
            if (c->state == RELAY_CONN_BRIDGED)
                smbd_bridge_get_stats(c->bridge, &k->st);
        }
    }
    if (l->index == 0)
        part_in(p);
    else if (sd_loop_post(l->r->loop, part_in, p) < 0)
        sd_error("a status snapshot lost loop %u's answer", l->index);
}

struct relay_snapshot *relay_snapshot_start(struct relay *r, int json,
                                            relay_snapshot_done_fn done, void *ctx)
{
    struct relay_snapshot *snap =
        calloc(1, sizeof(*snap) + r->nloops * sizeof(snap->parts[0]));

    if (!snap)
        return NULL;
    snap->r = r;
    snap->json = json;
    snap->done = done;
    snap->ctx = ctx;
    snap->waiting = r->nloops + 1;
    snap->self.snap = snap;
    for (unsigned i = 0; i < r->nloops; i++) {
        snap->parts[i] = (struct loop_part){ .snap = snap, .l = &r->loops[i] };
        if (relay_loop_run_on(&r->loops[i], part_fill, &snap->parts[i]) < 0)
            snap->waiting--; /* that loop's part stays empty */
    }
    /* done runs from the loop, never inside this call */
    if (sd_loop_post(r->loop, part_in, &snap->self) < 0) {
        snap->done = NULL; /* finishes, unheard, once the parts asked for are in */
        part_in(&snap->self);
        return NULL;
    }
    return snap;
}

void relay_snapshot_forget(struct relay_snapshot *snap)
{
    snap->done = NULL;
}
