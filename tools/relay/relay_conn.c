/* SPDX-License-Identifier: BSD-3-Clause */
/* tools/relay/relay_conn.c — one relayed connection's life on its loop: the accept
 * (onto the loop with the fewest connections, admitted by relay_admit before anything
 * is set up), the passive SMB Direct negotiation, the non-blocking backend connect, the
 * bridge, and its end with the log lines --help documents. No step blocks the other
 * connections. A backend connect that fails marks the backend down (relay_backend.c). */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <utlist.h>

#include "log.h"
#include "relay.h"

/* Unlinks and frees c, which stops counting against the limits. While draining, the
 * last one to go on any loop ends the relay's main loop. */
static void conn_free(struct relay_conn *c)
{
    struct relay *r = c->r;
    struct relay_loop *l = c->l;
    unsigned live;

    DL_DELETE(l->conns, c);
    atomic_fetch_sub(&l->count, 1);
    live = relay_release(c);
    free(c);
    relay_service_changed(r);
    if (live == 0 && atomic_load(&r->draining))
        sd_loop_stop(r->loop);
}

/* The client's address is known once relay_admit has run: a provider that fails a
 * connection before that logs the address itself. */
static void conn_failed(struct relay_conn *c, const char *what)
{
    sd_error("conn %u failed: client %s: %s", c->id, c->peer[0] ? c->peer : "unknown", what);
}

/* ---- bridged ---- */

static void conn_bridge_ended(void *ctx, const struct smbd_bridge_stats *st, int err)
{
    struct relay_conn *c = ctx;
    const struct smbd_stats *s = &st->smbd;

    sd_notice("conn %u closed: smbd_in %llu msgs %llu bytes, smbd_out %llu msgs %llu bytes, "
              "fragments in %llu out %llu, reason %s",
              c->id, (unsigned long long)s->msgs_delivered, (unsigned long long)s->bytes_delivered,
              (unsigned long long)s->msgs_sent, (unsigned long long)s->bytes_sent,
              (unsigned long long)s->fragments_received, (unsigned long long)s->fragments_sent,
              st->reason);
    if (st->chan.rdma_reads || st->chan.rdma_writes)
        sd_notice("conn %u channel: rdma_read %llu ops %llu bytes (WRITE data), rdma_write "
                  "%llu ops %llu bytes (READ data), buffers peak %llu bytes, memory waits %llu "
                  "(%llu ms)",
                  c->id, (unsigned long long)st->chan.rdma_reads,
                  (unsigned long long)st->chan.rdma_read_bytes,
                  (unsigned long long)st->chan.rdma_writes,
                  (unsigned long long)st->chan.rdma_write_bytes,
                  (unsigned long long)st->chan.mem_peak, (unsigned long long)st->chan.mem_waits,
                  (unsigned long long)st->chan.mem_wait_ms);
    if (c->r->log_stats) {
        struct sd_loop_poll_stats poll;

        sd_loop_poll_stats(c->l->loop, &poll); /* its loop's, all connections so far */
        sd_notice("conn %u stats: backend_in %llu bytes backend_out %llu bytes keepalives "
                  "in %llu out %llu credits granted %llu received %llu smbd_out_in_place %llu "
                  "bytes rdma_in_place %llu bytes loop_polls hit %llu ran_out %llu sleeps "
                  "%llu err %d",
                  c->id, (unsigned long long)st->stream_bytes_in,
                  (unsigned long long)st->stream_bytes_out,
                  (unsigned long long)s->keepalives_received,
                  (unsigned long long)s->keepalives_sent, (unsigned long long)s->credits_granted,
                  (unsigned long long)s->credits_received,
                  (unsigned long long)s->bytes_sent_owned,
                  (unsigned long long)st->chan.in_place_bytes, (unsigned long long)poll.hits,
                  (unsigned long long)poll.misses, (unsigned long long)poll.sleeps, err);
    }
    conn_free(c);
}

/* The line names the backend connection's local port: the backend's log (smbd's
 * client port) says which client each of its connections serves. */
static void conn_print_established(const struct relay_conn *c, const struct smbd_link *k,
                                   int backend_fd)
{
    const struct sd_cm_result *cm = smbd_link_cm(k);
    struct sockaddr_storage local;
    socklen_t len = sizeof(local);
    struct smbd_params p;

    if (getsockname(backend_fd, (struct sockaddr *)&local, &len) < 0)
        memset(&local, 0, sizeof(local));
    smbd_conn_query(smbd_link_conn(k), &p);
    sd_notice("conn %u from %s established: version 0x%04x credits %u/%u send %u recv %u "
              "frag %u peer_frag %u rw %u ird %u ord %u, backend %s via port %d",
              c->id, c->peer, p.neg.protocol, p.neg.send_credit_target, p.neg.receive_credit_max,
              p.neg.max_send_size, p.neg.max_receive_size, p.neg.max_fragmented_recv_size,
              p.neg.max_fragmented_send_size, p.neg.max_read_write_size, cm->ird, cm->ord,
              c->r->backend_str, sd_addr_port((struct sockaddr *)&local));
}

/* ---- backend connect ---- */

static void backend_connect_done(struct relay_conn *c, int err)
{
    struct relay *r = c->r;
    struct sd_loop *loop = c->l->loop;
    struct smbd_link *k = c->link;
    int fd = c->backend_fd, one = 1;
    char why[256];

    if (fd >= 0)
        sd_loop_del_fd(loop, fd);
    if (c->connect_timer > 0)
        sd_loop_cancel_timer(loop, c->connect_timer);
    c->connect_timer = 0;
    c->link = NULL;
    c->backend_fd = -1;
    if (err) {
        snprintf(why, sizeof(why), "backend %s: %s", r->backend_str, strerror(err));
        conn_failed(c, why);
        if (fd >= 0)
            close(fd);
        smbd_link_free(k);
        conn_free(c);
        return;
    }
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    conn_print_established(c, k, fd);
    c->state = RELAY_CONN_BRIDGED;
    c->bridge = smbd_bridge_start(loop, k, fd, &r->bridge_opts, conn_bridge_ended, c);
    if (!c->bridge) {
        conn_failed(c, "cannot start the bridge");
        conn_free(c);
    }
}

/* The connect to the backend failed with err: c ends, and the backend is down. */
static void backend_unreachable(struct relay_conn *c, int err)
{
    struct relay *r = c->r;

    backend_connect_done(c, err);
    relay_backend_failed(r, err);
}

static void backend_writable_cb(void *ctx, int revents)
{
    struct relay_conn *c = ctx;
    int soerr = relay_backend_dialed(c->backend_fd);

    (void)revents;
    if (soerr)
        backend_unreachable(c, soerr);
    else
        backend_connect_done(c, 0);
}

static void backend_timeout_cb(void *ctx, uint64_t now)
{
    struct relay_conn *c = ctx;

    (void)now;
    c->connect_timer = 0;
    backend_unreachable(c, ETIMEDOUT);
}

static void backend_connect_start(struct relay_conn *c)
{
    struct relay *r = c->r;
    int rc;

    c->state = RELAY_CONN_CONNECTING;
    rc = relay_backend_dial(r, &c->backend_fd);
    if (rc == 0 || c->backend_fd < 0) { /* connected, or no socket: not the backend's */
        backend_connect_done(c, -rc);
        return;
    }
    if (rc != -EINPROGRESS) {
        backend_unreachable(c, -rc);
        return;
    }
    rc = sd_loop_add_fd(c->l->loop, c->backend_fd, SD_EV_OUT, backend_writable_cb, c);
    if (rc < 0) {
        backend_connect_done(c, -rc);
        return;
    }
    c->connect_timer = sd_loop_add_timer(c->l->loop,
                                         sd_now_ms() + (uint64_t)r->opts.timeout_ms,
                                         backend_timeout_cb, c);
}

/* ---- accept ---- */

static void conn_negotiated(void *ctx, struct smbd_link *k, int err, const char *why)
{
    struct relay_conn *c = ctx;

    if (err < 0) {
        conn_failed(c, why);
        conn_free(c);
        return;
    }
    if (c->l->stopped || c->ending) { /* ended while this one negotiated */
        smbd_link_free(k);
        conn_free(c);
        return;
    }
    c->link = k;
    backend_connect_start(c);
}

/* Accepts one connection onto l (on l's thread); the caller holds the listener. */
static void accept_on(struct relay_loop *l)
{
    struct relay *r = l->r;
    struct relay_conn *c = calloc(1, sizeof(*c));
    char why[256];
    int rc;

    if (!c) {
        sd_error("out of memory accepting a connection");
        return;
    }
    c->r = r;
    c->l = l;
    c->id = atomic_load(&r->next_id) + 1;
    c->backend_fd = -1;
    c->start_ms = sd_now_ms();
    c->state = RELAY_CONN_NEGOTIATING;
    rc = smbd_link_accept_start(l->loop, r->listener, &r->opts, conn_negotiated, c, why,
                                sizeof(why));
    if (rc < 0) {
        /* EAGAIN: the pending connection was gone already; EACCES: relay_admit refused
         * it and said so */
        if (rc != -EAGAIN && rc != -EACCES)
            conn_failed(c, why);
        relay_release(c);
        free(c);
        return;
    }
    atomic_store(&r->next_id, c->id); /* only the listener's holder numbers connections */
    atomic_fetch_add(&l->count, 1);
    DL_APPEND(l->conns, c);
    relay_service_changed(r);
}

static void listener_watch(struct relay *r)
{
    if (r->listener && sd_loop_add_fd(r->loop, r->listener_fd, SD_EV_IN, relay_conn_accept, r) < 0)
        sd_error("cannot watch the listener again: not accepting");
}

void relay_conn_stop_listening(struct relay *r)
{
    if (!r->listener || r->listener_lent)
        return;
    sd_loop_del_fd(r->loop, r->listener_fd); /* -ENOENT when it was not watched */
    r->opts.provider->listener_close(r->listener);
    r->listener = NULL;
}

/* Main thread: the lending loop has accepted; the listener is the main loop's again
 * (closed now if the drain began meanwhile). */
static void listener_returned(void *ctx)
{
    struct relay *r = ctx;

    r->listener_lent = NULL;
    if (atomic_load(&r->draining))
        relay_conn_stop_listening(r);
    else
        listener_watch(r);
}

/* On a lent loop's thread: accepts, then gives the listener back. */
static void accept_lent(void *ctx)
{
    struct relay_loop *l = ctx;

    accept_on(l);
    if (sd_loop_post(l->r->loop, listener_returned, l->r) < 0)
        sd_error("cannot give the listener back to the main loop: not accepting");
}

/* The loop a new connection goes to: the one with the fewest, the lowest index on a tie. */
static struct relay_loop *pick_loop(struct relay *r)
{
    struct relay_loop *best = &r->loops[0];
    unsigned least = atomic_load(&best->count);

    for (unsigned i = 1; i < r->nloops && least; i++) {
        unsigned n = atomic_load(&r->loops[i].count);

        if (n < least) {
            least = n;
            best = &r->loops[i];
        }
    }
    return best;
}

void relay_conn_accept(void *ctx, int revents)
{
    struct relay *r = ctx;
    struct relay_loop *l = pick_loop(r);

    (void)revents;
    if (l->index == 0) {
        accept_on(l);
        return;
    }
    /* Lend the listener to l: its accept, and the qp's setup, run on l's thread. */
    sd_loop_del_fd(r->loop, r->listener_fd);
    r->listener_lent = l;
    if (sd_loop_post(l->loop, accept_lent, l) < 0) {
        r->listener_lent = NULL;
        accept_on(&r->loops[0]);
        listener_watch(r);
    }
}

void relay_conn_end(struct relay_conn *c, const char *reason)
{
    if (c->state == RELAY_CONN_BRIDGED)
        smbd_bridge_stop(c->bridge, reason);
    else if (c->state == RELAY_CONN_CONNECTING)
        backend_connect_done(c, ECANCELED);
    else
        c->ending = 1;
}

static void stop_on_loop(void *ctx)
{
    struct relay_loop *l = ctx;
    struct relay_conn *c, *next;

    l->stopped = 1;
    DL_FOREACH_SAFE(l->conns, c, next)
        relay_conn_end(c, l->r->stop_reason);
}

void relay_conn_stop_all(struct relay *r, const char *reason)
{
    r->stop_reason = reason;
    for (unsigned i = 0; i < r->nloops; i++)
        if (relay_loop_run_on(&r->loops[i], stop_on_loop, &r->loops[i]) < 0)
            sd_error("cannot reach event loop %u to end its connections", i);
}
