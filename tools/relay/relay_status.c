/* SPDX-License-Identifier: BSD-3-Clause */
/* tools/relay/relay_status.c — the relay's live status: a UNIX socket (mode 0600: it
 * names every client) where a request line "text" or "json" is answered with one
 * snapshot (relay_snapshot.c: the relay's version and totals, then each connection's
 * client, state, loop, age, bytes each way, RDMA channel bytes and credits), and a line
 * "drop ADDR" by ending every connection made to ADDR (relay_drop.c) and saying how many,
 * before the relay closes it; and the other end, smbdirect-relay --status and
 * --drop-address. Served on the relay's main loop without blocking it. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <utlist.h>

#include "log.h"
#include "relay.h"

#define REQUEST_MS 2000   /* a client has this long to ask and take its answer */
#define QUERY_TIMEOUT_S 5 /* --status waits this long for the relay */

struct status_client {
    struct relay_status *s;
    int fd;
    char req[64];          /* "drop " and an IPv6 address fit */
    size_t have;
    struct relay_snapshot *snap; /* the answer being gathered */
    struct relay_drop *drop;     /* ... or the drop being done */
    char *out;             /* the answer, once gathered */
    size_t out_len, out_off;
    int64_t timer;
    struct status_client *prev, *next; /* utlist DL */
};

struct relay_status {
    struct relay *r;
    int fd;
    char path[SD_PATH_MAX];
    struct status_client *clients;
};

/* ---- the server ---- */

static void client_close(struct status_client *sc)
{
    struct relay_status *s = sc->s;

    sd_loop_del_fd(s->r->loop, sc->fd);
    if (sc->timer > 0)
        sd_loop_cancel_timer(s->r->loop, sc->timer);
    close(sc->fd);
    if (sc->snap)
        relay_snapshot_forget(sc->snap);
    if (sc->drop)
        relay_drop_forget(sc->drop);
    free(sc->out);
    DL_DELETE(s->clients, sc);
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

static void client_answered(void *ctx, char *text, size_t len)
{
    struct status_client *sc = ctx;

    sc->snap = NULL;
    if (!text) {
        client_close(sc);
        return;
    }
    sc->out = text;
    sc->out_len = len;
    sd_loop_mod_fd(sc->s->r->loop, sc->fd, SD_EV_OUT);
    client_send(sc);
}

/* Answers sc with line. */
static void client_say(struct status_client *sc, const char *line)
{
    char *out = strdup(line);

    client_answered(sc, out, out ? strlen(out) : 0);
}

static void client_dropped(void *ctx, long ended)
{
    struct status_client *sc = ctx;
    char line[128];

    sc->drop = NULL;
    if (ended < 0)
        snprintf(line, sizeof(line), "error: not every event loop could end its connections "
                 "to %s\n", sc->req + 5);
    else
        snprintf(line, sizeof(line), "dropped %ld connections made to %s\n", ended,
                 sc->req + 5);
    client_say(sc, line);
}

/* "drop ADDR": ADDR is an IPv4 or IPv6 address, compared in relay_addr_key's form. */
static void client_drop(struct status_client *sc)
{
    char *addr = sc->req + 5;
    struct sockaddr_storage ss = { 0 };
    struct sockaddr_in *in = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;

    if (inet_pton(AF_INET, addr, &in->sin_addr) == 1)
        ss.ss_family = AF_INET;
    else if (inet_pton(AF_INET6, addr, &in6->sin6_addr) == 1)
        ss.ss_family = AF_INET6;
    else {
        char line[128];

        snprintf(line, sizeof(line), "error: not an IP address: '%s'\n", addr);
        client_say(sc, line);
        return;
    }
    relay_addr_key((struct sockaddr *)&ss, addr, sizeof(sc->req) - 5);
    sc->drop = relay_drop_start(sc->s->r, addr, client_dropped, sc);
    if (!sc->drop)
        client_close(sc);
}

static void client_answer(struct status_client *sc)
{
    int json = strcmp(sc->req, "json") == 0;
    char line[128];

    sd_loop_mod_fd(sc->s->r->loop, sc->fd, 0); /* nothing more to read */
    if (json || strcmp(sc->req, "text") == 0) {
        sc->snap = relay_snapshot_start(sc->s->r, json, client_answered, sc);
        if (!sc->snap)
            client_close(sc);
        return;
    }
    if (strncmp(sc->req, "drop ", 5) == 0) {
        client_drop(sc);
        return;
    }
    snprintf(line, sizeof(line), "error: unknown request '%s': ask text, json or drop ADDR\n",
             sc->req);
    client_say(sc, line);
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
    if (sc->snap || sc->drop) { /* not read meanwhile: an error or a hang-up */
        client_close(sc);
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
    DL_APPEND(s->clients, sc);
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

/* ---- the client: smbdirect-relay --status and --drop-address ---- */

int relay_status_query(const char *path, const char *flag, const char *request)
{
    struct timeval tv = { .tv_sec = QUERY_TIMEOUT_S };
    char buf[65536];
    ssize_t n;
    int fd, rc, refused = -1;

    if (!*path) {
        fprintf(stderr, "smbdirect-relay: %s: no status socket is set "
                "(status_socket, SMBDIRECT_STATUS_SOCKET, --status-socket)\n", flag);
        return 1;
    }
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || (rc = connect_path(fd, path)) < 0) {
        fprintf(stderr, "smbdirect-relay: %s: no relay answers at %s: %s\n", flag, path,
                strerror(fd < 0 ? errno : -rc));
        if (fd >= 0)
            close(fd);
        return 1;
    }
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    if (send(fd, request, strlen(request), MSG_NOSIGNAL) != (ssize_t)strlen(request)) {
        fprintf(stderr, "smbdirect-relay: %s: %s: %s\n", flag, path, strerror(errno));
        close(fd);
        return 1;
    }
    while ((n = recv(fd, buf, sizeof(buf), 0)) > 0) {
        if (refused < 0) /* the answer's first bytes say whether it is an error */
            refused = n >= 6 && memcmp(buf, "error:", 6) == 0;
        fwrite(buf, 1, (size_t)n, stdout);
    }
    rc = n < 0 ? errno : 0;
    close(fd);
    if (rc || refused < 0) {
        fprintf(stderr, "smbdirect-relay: %s: %s: %s\n", flag, path,
                rc ? strerror(rc) : "the relay closed without an answer");
        return 1;
    }
    return refused;
}
