/* tools/relay/relay_status.c — the relay's live status: a UNIX socket (mode 0600: it
 * names every client) where a request line "text" or "json" is answered with one
 * snapshot (each connection's client, state, age, bytes each way, RDMA channel bytes
 * and credits, then the totals) before the relay closes it; and the other end,
 * smbdirect-relay --status. Served on the relay's loop without blocking it. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "log.h"
#include "relay.h"

#define REQUEST_MS 2000   /* a client has this long to ask and take its answer */
#define QUERY_TIMEOUT_S 5 /* --status waits this long for the relay */

struct status_client {
    struct relay_status *s;
    int fd;
    char req[16];
    size_t have;
    char *out;             /* the answer, once asked */
    size_t out_len, out_off;
    int64_t timer;
    struct status_client *prev, *next;
};

struct relay_status {
    struct relay *r;
    int fd;
    char path[SD_PATH_MAX];
    struct status_client *clients;
};

static const char *const state_names[] = {
    [RELAY_CONN_NEGOTIATING] = "negotiating",
    [RELAY_CONN_CONNECTING] = "connecting",
    [RELAY_CONN_BRIDGED] = "bridged",
};

/* ---- the snapshot ---- */

static void conn_json(const struct relay_conn *c, const struct smbd_bridge_stats *st,
                      uint64_t now, FILE *out)
{
    fprintf(out,
            "{\"id\":%u,\"client\":\"%s\",\"state\":\"%s\",\"age_s\":%llu,"
            "\"bytes_from_client\":%llu,\"bytes_to_client\":%llu,"
            "\"bytes_to_backend\":%llu,\"bytes_from_backend\":%llu,"
            "\"rdma_read_bytes\":%llu,\"rdma_write_bytes\":%llu,"
            "\"send_credits\":%u,\"send_credit_target\":%u,"
            "\"receive_credits\":%u,\"receive_credit_max\":%u}",
            c->id, c->peer, state_names[c->state], (unsigned long long)((now - c->start_ms) / 1000),
            (unsigned long long)st->smbd.bytes_delivered, (unsigned long long)st->smbd.bytes_sent,
            (unsigned long long)st->stream_bytes_out, (unsigned long long)st->stream_bytes_in,
            (unsigned long long)st->chan.rdma_read_bytes,
            (unsigned long long)st->chan.rdma_write_bytes, st->params.send_credits,
            st->params.neg.send_credit_target, st->params.receive_credits,
            st->params.neg.receive_credit_max);
}

static void conn_text(const struct relay_conn *c, const struct smbd_bridge_stats *st,
                      uint64_t now, FILE *out)
{
    fprintf(out, "conn %u from %s %s %llu s", c->id, c->peer, state_names[c->state],
            (unsigned long long)((now - c->start_ms) / 1000));
    if (c->state == RELAY_CONN_BRIDGED)
        fprintf(out,
                ": from client %llu bytes, to client %llu bytes, from backend %llu bytes, "
                "to backend %llu bytes, rdma_read %llu bytes, rdma_write %llu bytes, credits "
                "send %u/%u receive %u/%u",
                (unsigned long long)st->smbd.bytes_delivered,
                (unsigned long long)st->smbd.bytes_sent,
                (unsigned long long)st->stream_bytes_in, (unsigned long long)st->stream_bytes_out,
                (unsigned long long)st->chan.rdma_read_bytes,
                (unsigned long long)st->chan.rdma_write_bytes, st->params.send_credits,
                st->params.neg.send_credit_target, st->params.receive_credits,
                st->params.neg.receive_credit_max);
    fputc('\n', out);
}

/* The status as text or JSON: the socket's answer. */
static void status_write(const struct relay *r, FILE *out, int json)
{
    const struct sd_settings *s = &r->set;
    const struct relay_counts *n = &r->counts;
    const struct relay_conn *c = r->conns;
    uint64_t now = sd_now_ms();
    const char *state = r->draining ? "draining" : "accepting";
    int first = 1;

    if (json)
        fprintf(out,
                "{\"listen\":\"%s\",\"backend\":\"%s\",\"transport\":\"%s\",\"state\":\"%s\","
                "\"uptime_s\":%llu,\"live\":%u,\"max_connections\":%u,"
                "\"max_connections_per_client\":%u,\"accepted\":%llu,\"refused_access\":%llu,"
                "\"refused_limit\":%llu,\"connections\":[",
                r->listen_str, r->backend_str, r->opts.provider->name, state,
                (unsigned long long)((now - r->start_ms) / 1000), r->live, s->max_connections,
                s->max_connections_per_client, (unsigned long long)n->accepted,
                (unsigned long long)n->refused_access, (unsigned long long)n->refused_limit);
    else
        fprintf(out,
                "relay on %s (%s), backend %s: %s, up %llu s\n"
                "connections: %u live (max %u, %u per client), %llu accepted, %llu refused by "
                "the access list, %llu by the limits\n",
                r->listen_str, r->opts.provider->name, r->backend_str, state,
                (unsigned long long)((now - r->start_ms) / 1000), r->live, s->max_connections,
                s->max_connections_per_client, (unsigned long long)n->accepted,
                (unsigned long long)n->refused_access, (unsigned long long)n->refused_limit);
    /* oldest first: from the list's tail */
    while (c && c->next)
        c = c->next;
    for (; c; c = c->prev) {
        struct smbd_bridge_stats st;

        memset(&st, 0, sizeof(st));
        if (c->state == RELAY_CONN_BRIDGED)
            smbd_bridge_get_stats(c->bridge, &st);
        if (json) {
            fputs(first ? "" : ",", out);
            conn_json(c, &st, now, out);
        } else {
            conn_text(c, &st, now, out);
        }
        first = 0;
    }
    if (json)
        fputs("]}\n", out);
}

/* ---- the server ---- */

static void client_close(struct status_client *sc)
{
    struct relay_status *s = sc->s;

    sd_loop_del_fd(s->r->loop, sc->fd);
    if (sc->timer > 0)
        sd_loop_cancel_timer(s->r->loop, sc->timer);
    close(sc->fd);
    free(sc->out);
    if (sc->prev)
        sc->prev->next = sc->next;
    else
        s->clients = sc->next;
    if (sc->next)
        sc->next->prev = sc->prev;
    free(sc);
}

static void client_timeout_cb(void *ctx, uint64_t now)
{
    struct status_client *sc = ctx;

    (void)now;
    sc->timer = 0;
    client_close(sc);
}

/* Writes what the socket takes of the answer; closes once it is all out. */
static void client_send(struct status_client *sc)
{
    while (sc->out_off < sc->out_len) {
        ssize_t w = send(sc->fd, sc->out + sc->out_off, sc->out_len - sc->out_off,
                         MSG_NOSIGNAL | MSG_DONTWAIT);

        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (w <= 0)
            break;
        sc->out_off += (size_t)w;
    }
    client_close(sc);
}

static void client_answer(struct status_client *sc)
{
    FILE *f = open_memstream(&sc->out, &sc->out_len);
    int json = strcmp(sc->req, "json") == 0;

    if (!f) {
        client_close(sc);
        return;
    }
    if (json || strcmp(sc->req, "text") == 0)
        status_write(sc->s->r, f, json);
    else
        fprintf(f, "error: unknown request '%s': ask text or json\n", sc->req);
    fclose(f);
    sd_loop_mod_fd(sc->s->r->loop, sc->fd, SD_EV_OUT);
    client_send(sc);
}

static void client_cb(void *ctx, int revents)
{
    struct status_client *sc = ctx;
    char *nl;
    ssize_t n;

    (void)revents;
    if (sc->out) {
        client_send(sc);
        return;
    }
    n = recv(sc->fd, sc->req + sc->have, sizeof(sc->req) - 1 - sc->have, MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n <= 0) {
        client_close(sc);
        return;
    }
    sc->have += (size_t)n;
    sc->req[sc->have] = '\0';
    nl = strchr(sc->req, '\n');
    if (!nl && sc->have < sizeof(sc->req) - 1)
        return;
    if (nl)
        *nl = '\0';
    client_answer(sc);
}

static void listener_cb(void *ctx, int revents)
{
    struct relay_status *s = ctx;
    struct status_client *sc;
    int fd = accept4(s->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

    (void)revents;
    if (fd < 0)
        return;
    sc = calloc(1, sizeof(*sc));
    if (!sc || sd_loop_add_fd(s->r->loop, fd, SD_EV_IN, client_cb, sc) < 0) {
        free(sc);
        close(fd);
        return;
    }
    sc->s = s;
    sc->fd = fd;
    sc->next = s->clients;
    if (s->clients)
        s->clients->prev = sc;
    s->clients = sc;
    sc->timer = sd_loop_add_timer(s->r->loop, sd_now_ms() + REQUEST_MS, client_timeout_cb, sc);
}

/* fd's address is path; 0 or -errno. */
static int connect_path(int fd, const char *path)
{
    struct sockaddr_un a = { .sun_family = AF_UNIX };

    snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
    return connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0 ? 0 : -errno;
}

/* Binds fd to path with mode 0600; a socket file nobody answers on is replaced. */
static int bind_path(int fd, const char *path, char *why, size_t whylen)
{
    struct sockaddr_un a = { .sun_family = AF_UNIX };
    mode_t old;
    int rc, probe;

    snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
    for (int attempt = 0;; attempt++) {
        old = umask(0177);
        rc = bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 ? 0 : -errno;
        umask(old);
        if (rc != -EADDRINUSE || attempt)
            break;
        probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (probe >= 0 && connect_path(probe, path) == 0) {
            close(probe);
            snprintf(why, whylen, "another relay serves its status there");
            return -EADDRINUSE;
        }
        if (probe >= 0)
            close(probe);
        unlink(path); /* a relay that ended without removing it */
    }
    return rc;
}

struct relay_status *relay_status_start(struct relay *r, const char *path, char *why,
                                        size_t whylen)
{
    struct relay_status *s = calloc(1, sizeof(*s));
    int rc;

    why[0] = '\0';
    if (!s) {
        snprintf(why, whylen, "out of memory");
        return NULL;
    }
    s->r = r;
    snprintf(s->path, sizeof(s->path), "%s", path);
    s->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (s->fd < 0) {
        snprintf(why, whylen, "%s", strerror(errno));
        free(s);
        return NULL;
    }
    rc = bind_path(s->fd, path, why, whylen);
    if (rc == 0 && listen(s->fd, 8) < 0)
        rc = -errno;
    if (rc == 0)
        rc = sd_loop_add_fd(r->loop, s->fd, SD_EV_IN, listener_cb, s);
    if (rc == 0)
        return s;
    if (!*why)
        snprintf(why, whylen, "%s", strerror(-rc));
    close(s->fd);
    if (rc != -EADDRINUSE)
        unlink(path);
    free(s);
    errno = -rc;
    return NULL;
}

void relay_status_stop(struct relay_status *s)
{
    if (!s)
        return;
    while (s->clients)
        client_close(s->clients);
    sd_loop_del_fd(s->r->loop, s->fd);
    close(s->fd);
    unlink(s->path);
    free(s);
}

/* ---- the client: smbdirect-relay --status ---- */

int relay_status_query(const char *path, int json)
{
    struct timeval tv = { .tv_sec = QUERY_TIMEOUT_S };
    const char *req = json ? "json\n" : "text\n";
    char buf[65536];
    ssize_t n;
    int fd, rc;

    if (!*path) {
        fprintf(stderr, "smbdirect-relay: --status: no status socket is set "
                "(status_socket, SMBDIRECT_STATUS_SOCKET, --status-socket)\n");
        return 1;
    }
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || (rc = connect_path(fd, path)) < 0) {
        fprintf(stderr, "smbdirect-relay: --status: no relay answers at %s: %s\n", path,
                strerror(fd < 0 ? errno : -rc));
        if (fd >= 0)
            close(fd);
        return 1;
    }
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    if (send(fd, req, strlen(req), MSG_NOSIGNAL) != (ssize_t)strlen(req)) {
        fprintf(stderr, "smbdirect-relay: --status: %s: %s\n", path, strerror(errno));
        close(fd);
        return 1;
    }
    while ((n = recv(fd, buf, sizeof(buf), 0)) > 0)
        fwrite(buf, 1, (size_t)n, stdout);
    rc = n < 0 ? errno : 0;
    close(fd);
    if (rc) {
        fprintf(stderr, "smbdirect-relay: --status: %s: %s\n", path, strerror(rc));
        return 1;
    }
    return 0;
}
