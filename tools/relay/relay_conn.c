/* tools/relay/relay_conn.c — one relayed connection's life on the relay's loop: the
 * accept (admitted by relay_admit before anything is set up), the passive SMB Direct
 * negotiation, the non-blocking backend connect, the bridge, and its end with the
 * log lines --help documents. No step blocks the other connections. */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "relay.h"

static void conn_link(struct relay *r, struct relay_conn *c)
{
    c->next = r->conns;
    if (r->conns)
        r->conns->prev = c;
    r->conns = c;
}

/* Unlinks and frees c, which stops counting against the limits. While draining, the
 * last one to go ends the relay. */
static void conn_free(struct relay_conn *c)
{
    struct relay *r = c->r;

    if (c->prev)
        c->prev->next = c->next;
    else if (r->conns == c)
        r->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    relay_release(c);
    free(c);
    if (r->draining && !r->conns)
        sd_loop_stop(r->loop);
}

static void conn_failed(struct relay_conn *c, const char *what)
{
    fprintf(stderr, "relay: conn %u failed: %s\n", c->id, what);
}

/* ---- bridged ---- */

static void conn_bridge_ended(void *ctx, const struct smbd_bridge_stats *st, int err)
{
    struct relay_conn *c = ctx;
    const struct smbd_stats *s = &st->smbd;

    fprintf(stderr,
            "relay: conn %u closed: smbd_in %llu msgs %llu bytes, smbd_out %llu msgs %llu bytes, "
            "fragments in %llu out %llu, reason %s\n",
            c->id, (unsigned long long)s->msgs_delivered, (unsigned long long)s->bytes_delivered,
            (unsigned long long)s->msgs_sent, (unsigned long long)s->bytes_sent,
            (unsigned long long)s->fragments_received, (unsigned long long)s->fragments_sent,
            st->reason);
    if (st->chan.rdma_reads || st->chan.rdma_writes)
        fprintf(stderr,
                "relay: conn %u channel: rdma_read %llu ops %llu bytes (WRITE data), rdma_write "
                "%llu ops %llu bytes (READ data), buffers peak %llu bytes\n",
                c->id, (unsigned long long)st->chan.rdma_reads,
                (unsigned long long)st->chan.rdma_read_bytes,
                (unsigned long long)st->chan.rdma_writes,
                (unsigned long long)st->chan.rdma_write_bytes,
                (unsigned long long)st->chan.mem_peak);
    if (c->r->log_stats)
        fprintf(stderr,
                "relay: conn %u stats: backend_in %llu bytes backend_out %llu bytes keepalives "
                "in %llu out %llu credits granted %llu received %llu err %d\n",
                c->id, (unsigned long long)st->stream_bytes_in,
                (unsigned long long)st->stream_bytes_out,
                (unsigned long long)s->keepalives_received, (unsigned long long)s->keepalives_sent,
                (unsigned long long)s->credits_granted, (unsigned long long)s->credits_received,
                err);
    conn_free(c);
}

static void conn_print_established(const struct relay_conn *c, const struct smbd_link *k)
{
    const struct sd_cm_result *cm = smbd_link_cm(k);
    struct smbd_params p;

    smbd_conn_query(smbd_link_conn(k), &p);
    fprintf(stderr,
            "relay: conn %u from %s established: version 0x%04x credits %u/%u send %u recv %u "
            "frag %u peer_frag %u rw %u ird %u ord %u\n",
            c->id, c->peer, p.neg.protocol, p.neg.send_credit_target, p.neg.receive_credit_max,
            p.neg.max_send_size, p.neg.max_receive_size, p.neg.max_fragmented_recv_size,
            p.neg.max_fragmented_send_size, p.neg.max_read_write_size, cm->ird, cm->ord);
}

/* ---- backend connect ---- */

static void backend_connect_done(struct relay_conn *c, int err)
{
    struct relay *r = c->r;
    struct smbd_link *k = c->link;
    int fd = c->backend_fd, one = 1;
    char why[256];

    if (fd >= 0)
        sd_loop_del_fd(r->loop, fd);
    if (c->connect_timer > 0)
        sd_loop_cancel_timer(r->loop, c->connect_timer);
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
    conn_print_established(c, k);
    c->state = RELAY_CONN_BRIDGED;
    c->bridge = smbd_bridge_start(r->loop, k, fd, &r->bridge_opts, conn_bridge_ended, c);
    if (!c->bridge) {
        conn_failed(c, "cannot start the bridge");
        conn_free(c);
    }
}

static void backend_writable_cb(void *ctx, int revents)
{
    struct relay_conn *c = ctx;
    int soerr = 0;
    socklen_t sl = sizeof(soerr);

    (void)revents;
    if (getsockopt(c->backend_fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0)
        soerr = errno;
    backend_connect_done(c, soerr);
}

static void backend_timeout_cb(void *ctx, uint64_t now)
{
    struct relay_conn *c = ctx;

    (void)now;
    c->connect_timer = 0;
    backend_connect_done(c, ETIMEDOUT);
}

static void backend_connect_start(struct relay_conn *c)
{
    struct relay *r = c->r;
    const struct sd_hostport *b = &r->set.backend;
    int fd = socket(b->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0), rc = 0;

    c->state = RELAY_CONN_CONNECTING;
    c->backend_fd = fd;
    if (fd < 0) {
        backend_connect_done(c, errno);
        return;
    }
    if (connect(fd, (const struct sockaddr *)&b->addr, b->len) == 0) {
        backend_connect_done(c, 0);
        return;
    }
    if (errno != EINPROGRESS ||
        (rc = sd_loop_add_fd(r->loop, fd, SD_EV_OUT, backend_writable_cb, c)) < 0) {
        backend_connect_done(c, errno != EINPROGRESS ? errno : -rc);
        return;
    }
    c->connect_timer = sd_loop_add_timer(r->loop, sd_now_ms() + (uint64_t)r->opts.timeout_ms,
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
    if (c->r->stopped) { /* relay_conn_stop_all ran while this one negotiated */
        smbd_link_free(k);
        conn_free(c);
        return;
    }
    c->link = k;
    backend_connect_start(c);
}

void relay_conn_accept(void *ctx, int revents)
{
    struct relay *r = ctx;
    struct relay_conn *c = calloc(1, sizeof(*c));
    char why[256];
    int rc;

    (void)revents;
    if (!c) {
        sd_error("relay: out of memory accepting a connection");
        return;
    }
    c->r = r;
    c->id = r->next_id + 1;
    c->backend_fd = -1;
    c->start_ms = sd_now_ms();
    c->state = RELAY_CONN_NEGOTIATING;
    rc = smbd_link_accept_start(r->loop, r->listener, &r->opts, conn_negotiated, c, why,
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
    r->next_id = c->id;
    conn_link(r, c);
}

void relay_conn_stop_all(struct relay *r, const char *reason)
{
    r->stopped = 1;
    for (struct relay_conn *c = r->conns, *next; c; c = next) {
        next = c->next;
        if (c->state == RELAY_CONN_BRIDGED)
            smbd_bridge_stop(c->bridge, reason);
        else if (c->state == RELAY_CONN_CONNECTING)
            backend_connect_done(c, ECANCELED);
    }
}
