/* tools/smbdirect-relay.c — an SMB Direct front door for a TCP-only SMB server: accepts
 * SMB Direct connections (soft-iWARP or RDMA) and bridges each to its own TCP
 * connection to the backend (e.g. Samba smbd). One event loop serves every connection:
 * the passive negotiate and the backend connect run on it without blocking the others. */
#include <errno.h>
#include <getopt.h>
#include <malloc.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "log.h"
#include "sd_addr.h"
#include "sd_loop.h"
#include "sd_pinned.h"
#include "sd_settings.h"
#include "smbd_bridge.h"
#include "smbd_link.h"
#include "smbd_memplan.h"

#define RELAY_SHUTDOWN_MS 3000

static const char usage_head[] =
    "Usage: smbdirect-relay --listen HOST:PORT --backend HOST:PORT [OPTION]...\n"
    "\n"
    "Accept SMB Direct (MS-SMBD) connections on HOST:PORT and bridge each one to its own\n"
    "TCP connection to an SMB server that speaks only TCP, such as Samba's smbd.\n"
    "\n"
    "Each accepted connection is negotiated as the SMB Direct passive side, then a TCP\n"
    "connection to the backend is opened and SMB2 messages are carried both ways (the\n"
    "4-byte Direct-TCP prefix on the TCP side, SMB Direct messages on the other). A\n"
    "connection that fails or ends never disturbs the others.\n"
    "\n"
    "Options:\n"
    "  --listen HOST:PORT       address to accept SMB Direct on (iWARP usually uses 5445);\n"
    "                           0.0.0.0 or [::]: every address, on every RDMA device\n"
    "  --backend HOST:PORT      TCP address of the SMB server (usually port 445)\n"
    "  --log-stats              print a second line of counters when a connection ends\n"
    "  --help                   show this help and exit\n"
    "\n";

static const char usage_tail[] =
    "\n"
    "Output (stderr, one line each, stable for scripts):\n"
    "  relay: listening on ADDR (TRANSPORT), backend ADDR\n"
    "  relay: conn N from ADDR established: version 0xVVVV credits T/M send S recv R\n"
    "         frag F peer_frag P rw W ird I ord O\n"
    "  relay: conn N closed: smbd_in M msgs B bytes, smbd_out M msgs B bytes,\n"
    "         fragments in F out F, reason TEXT\n"
    "  relay: conn N channel: rdma_read N ops B bytes (WRITE data), rdma_write N ops B\n"
    "         bytes (READ data), buffers peak B bytes   (when the SMB2 RDMA read/write\n"
    "         channel was used; the peak is bounded by --channel-memory)\n"
    "  relay: conn N failed: TEXT\n"
    "\n"
    "SIGINT or SIGTERM closes every connection and exits 0. Exit status 2 means bad\n"
    "arguments, 1 a failure to start (e.g. the listen address is in use).\n"
    "\n"
    "Example:\n"
    "  smbdirect-relay --listen 127.0.0.1:5445 --backend 127.0.0.1:445\n";

struct relay;

struct relay_conn {
    struct relay *r;
    unsigned id;
    char peer[SD_ADDR_STRLEN];
    struct smbd_link *link;     /* negotiated, waiting for the backend connect */
    int backend_fd;
    int64_t connect_timer;
    struct smbd_bridge *bridge; /* once bridged */
    struct relay_conn *prev, *next;
};

#define RELAY_MMAP_THRESHOLD (256 * 1024)

struct relay {
    struct sd_loop *loop;
    struct sd_listener *listener;
    int listener_fd;
    struct smbd_link_opts opts;
    struct smbd_bridge_opts bridge_opts;
    struct sockaddr_storage backend;
    socklen_t backend_len;
    char backend_str[SD_ADDR_STRLEN];
    int log_stats;
    unsigned next_id;
    unsigned negotiating;       /* accepts whose negotiate is still running */
    struct relay_conn *conns;   /* connecting to the backend or bridged */
    int sigfd;
    int stopping;
};

static void conn_link(struct relay *r, struct relay_conn *c)
{
    c->next = r->conns;
    if (r->conns)
        r->conns->prev = c;
    r->conns = c;
}

static void conn_unlink_free(struct relay_conn *c)
{
    if (c->prev)
        c->prev->next = c->next;
    else if (c->r->conns == c)
        c->r->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    free(c);
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
    conn_unlink_free(c);
}

static void conn_print_established(const struct relay_conn *c, const struct smbd_link *k)
{
    const struct sd_cm_result *cm = smbd_link_cm(k);
    struct smbd_params p;
    char line[512];

    smbd_conn_query(smbd_link_conn(k), &p);
    snprintf(line, sizeof(line),
             "relay: conn %u from %s established: version 0x%04x credits %u/%u send %u recv %u "
             "frag %u peer_frag %u rw %u ird %u ord %u",
             c->id, c->peer, p.neg.protocol, p.neg.send_credit_target, p.neg.receive_credit_max,
             p.neg.max_send_size, p.neg.max_receive_size, p.neg.max_fragmented_recv_size,
             p.neg.max_fragmented_send_size, p.neg.max_read_write_size, cm->ird, cm->ord);
    fprintf(stderr, "%s\n", line);
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
        conn_unlink_free(c);
        return;
    }
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    conn_print_established(c, k);
    c->bridge = smbd_bridge_start(r->loop, k, fd, &r->bridge_opts, conn_bridge_ended, c);
    if (!c->bridge) {
        conn_failed(c, "cannot start the bridge");
        conn_unlink_free(c);
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
    int fd = socket(r->backend.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0), rc = 0;

    c->backend_fd = fd;
    if (fd < 0) {
        backend_connect_done(c, errno);
        return;
    }
    if (connect(fd, (struct sockaddr *)&r->backend, r->backend_len) == 0) {
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
    struct relay *r = c->r;

    r->negotiating--;
    if (err < 0 || r->stopping) {
        if (err < 0)
            conn_failed(c, why);
        smbd_link_free(k);
        free(c);
        return;
    }
    sd_addr_format((const struct sockaddr *)&smbd_link_cm(k)->peer, c->peer, sizeof(c->peer));
    c->link = k;
    conn_link(r, c);
    backend_connect_start(c);
}

static void listener_cb(void *ctx, int revents)
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
    c->id = ++r->next_id;
    c->backend_fd = -1;
    r->negotiating++;
    rc = smbd_link_accept_start(r->loop, r->listener, &r->opts, conn_negotiated, c, why,
                                sizeof(why));
    if (rc < 0) {
        r->negotiating--;
        if (rc != -EAGAIN) /* EAGAIN: the pending connection was gone already */
            conn_failed(c, why);
        else
            r->next_id--;
        free(c);
    }
}

/* ---- shutdown ---- */

static void signal_cb(void *ctx, int revents)
{
    struct relay *r = ctx;
    struct signalfd_siginfo si;

    (void)revents;
    if (read(r->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
        fprintf(stderr, "relay: %s, closing %s connections\n", strsignal((int)si.ssi_signo),
                r->conns ? "all" : "no");
    r->stopping = 1;
    sd_loop_stop(r->loop);
}

/* Ends every connection and lets the loop run their ends, bounded in time. */
static void relay_shutdown(struct relay *r)
{
    uint64_t end = sd_now_ms() + RELAY_SHUTDOWN_MS;

    sd_loop_del_fd(r->loop, r->listener_fd);
    r->opts.provider->listener_close(r->listener);
    for (struct relay_conn *c = r->conns, *next; c; c = next) {
        next = c->next;
        if (c->bridge)
            smbd_bridge_stop(c->bridge, "relay shutting down");
        else
            backend_connect_done(c, ECANCELED);
    }
    while ((r->conns || r->negotiating) && sd_now_ms() < end)
        if (sd_loop_run_once(r->loop, 100) < 0)
            break;
}

/* ---- arguments ---- */

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "smbdirect-relay: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nTry 'smbdirect-relay --help' for more information.\n");
    return 2;
}

/* HOST:PORT with the port mandatory; prints the error. */
static int parse_hostport(const char *flag, const char *text, struct sockaddr_storage *out,
                          socklen_t *len)
{
    const char *why = NULL;
    char msg[300];

    if (sd_addr_parse(text, 0, out, len, &why) == 0 && sd_addr_port((struct sockaddr *)out) == 0)
        why = "a port is required (HOST:PORT)";
    if (!why)
        return 0;
    snprintf(msg, sizeof(msg), "%s '%s': %s", flag, text, why);
    return usage_error("%s", msg);
}

enum { OPT_LISTEN = 1, OPT_BACKEND, OPT_LOG_STATS, OPT_HELP };

struct relay_args {
    struct relay *r;
    const char *listen, *backend;
};

static int relay_option(void *ctx, int val, const char *arg, char *err, size_t errlen)
{
    struct relay_args *a = ctx;

    (void)err;
    (void)errlen;
    switch (val) {
    case OPT_LISTEN: a->listen = arg; break;
    case OPT_BACKEND: a->backend = arg; break;
    case OPT_LOG_STATS: a->r->log_stats = 1; break;
    case OPT_HELP:
        fputs(usage_head, stdout);
        sd_settings_usage(stdout, SD_PROG_RELAY);
        fputs(usage_tail, stdout);
        exit(0);
    }
    return 0;
}

static int parse_args(int argc, char **argv, struct relay *r, struct sd_settings *set,
                      struct sockaddr_storage *listen_addr, socklen_t *listen_len)
{
    static const struct option own[] = {
        { "listen", required_argument, NULL, OPT_LISTEN },
        { "backend", required_argument, NULL, OPT_BACKEND },
        { "log-stats", no_argument, NULL, OPT_LOG_STATS },
        { "help", no_argument, NULL, OPT_HELP },
    };
    struct relay_args a = { .r = r };
    char err[600];
    int first = sd_settings_from_argv(set, SD_PROG_RELAY, argc, argv, own,
                                      sizeof(own) / sizeof(own[0]), relay_option, &a, err,
                                      sizeof(err));

    if (first < 0)
        return usage_error("%s", err);
    sd_log_set_level(set->log_level);
    if (first < argc)
        return usage_error("unexpected argument '%s'", argv[first]);
    if (!a.listen || !a.backend)
        return usage_error("%s", "--listen HOST:PORT and --backend HOST:PORT are required");
    if (parse_hostport("--listen", a.listen, listen_addr, listen_len) ||
        parse_hostport("--backend", a.backend, &r->backend, &r->backend_len))
        return 2;
    return 0;
}

/* With verbs every registration is pinned and counted against RLIMIT_MEMLOCK: says at
 * start what one connection takes of it (each connection is fitted to what is left when
 * it arrives, smbd_memplan.h, and refused with a log line when nothing fits). */
static void report_memlock(const struct smbd_link_opts *o)
{
    uint64_t limit = sd_pinned_limit();
    struct smbd_memplan p;

    if (!o->provider->pins_memory || limit == UINT64_MAX)
        return;
    if (smbd_memplan_make(&o->cfg, smbd_link_planned_io(o, SMBD_ROLE_PASSIVE), limit, &p) ==
        SMBD_MEMPLAN_REFUSED) {
        fprintf(stderr, "relay: warning: RLIMIT_MEMLOCK is %llu KiB: not even one SMB Direct "
                "connection fits (%llu KiB needed); raise it (ulimit -l, LimitMEMLOCK=)\n",
                (unsigned long long)(limit >> 10), (unsigned long long)(p.need_min >> 10));
        return;
    }
    fprintf(stderr, "relay: RLIMIT_MEMLOCK is %llu KiB: a connection registers %llu KiB for "
            "good and %llu KiB per I/O in flight (%llu KiB gives one connection full speed); "
            "later connections get what is left, then are refused\n",
            (unsigned long long)(limit >> 10), (unsigned long long)(p.fixed >> 10),
            (unsigned long long)(p.reserve >> 10), (unsigned long long)(p.full >> 10));
}

int main(int argc, char **argv)
{
    struct relay r = { .listener_fd = -1, .sigfd = -1 };
    struct sd_settings set;
    struct sd_listen_params lp;
    const struct sd_provider_ops *provider;
    struct sockaddr_storage listen_addr;
    socklen_t listen_len = 0;
    char listen_str[SD_ADDR_STRLEN];
    sigset_t sigs;
    int rc, err = 0, iwarp;

    if ((rc = parse_args(argc, argv, &r, &set, &listen_addr, &listen_len)) != 0)
        return rc;
    /* Channel buffers and stream queues of megabytes come and go with each client's I/O:
     * a fixed mmap threshold gives each back to the system when freed (glibc's dynamic
     * threshold would rise past them and keep the freed memory in the heap, so a
     * long-running relay's RSS would only grow). */
    mallopt(M_MMAP_THRESHOLD, RELAY_MMAP_THRESHOLD);
    sd_settings_link_opts(&set, SMBD_ROLE_PASSIVE, &r.opts);
    r.bridge_opts = (struct smbd_bridge_opts){ .channel = BRIDGE_CHAN_SERVER,
                                               .channel_memory = set.channel_memory,
                                               .channel_memory_total = set.channel_memory_total };
    sd_addr_format((struct sockaddr *)&r.backend, r.backend_str, sizeof(r.backend_str));
    sd_addr_format((struct sockaddr *)&listen_addr, listen_str, sizeof(listen_str));
    provider = sd_settings_provider(set.transport);
    if (sd_addr_is_any((struct sockaddr *)&listen_addr)) {
        /* Every device at once, of any kind: no one device to ask. The verbs provider adds
         * the Appendix A header on the connections of iWARP devices only. */
        r.opts.provider = provider;
        iwarp = 1;
        rc = 0;
    } else {
        rc = sd_settings_reach(set.transport, provider, (struct sockaddr *)&listen_addr,
                               listen_len, &r.opts.provider, &iwarp);
    }
    if (rc < 0) {
        fprintf(stderr, "smbdirect-relay: no %s device serves %s: %s\n", provider->name,
                listen_str, strerror(-rc));
        return 1;
    }
    r.opts.smbd_ird_ord_header = iwarp; /* MS-SMBD Appendix A: iWARP only */

    signal(SIGPIPE, SIG_IGN);
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGTERM);
    sigprocmask(SIG_BLOCK, &sigs, NULL);
    r.sigfd = signalfd(-1, &sigs, SFD_CLOEXEC | SFD_NONBLOCK);
    r.loop = sd_loop_new();
    sd_settings_listen_params(&set, 128, &lp);
    r.listener = r.opts.provider->listen((struct sockaddr *)&listen_addr, listen_len, &lp, &err);
    if (!r.loop || r.sigfd < 0 || !r.listener) {
        fprintf(stderr, "smbdirect-relay: cannot listen on %s (%s): %s\n", listen_str,
                r.opts.provider->name, strerror(err ? -err : ENOMEM));
        return 1;
    }
    r.listener_fd = r.opts.provider->listener_fd(r.listener);
    if (sd_loop_add_fd(r.loop, r.listener_fd, SD_EV_IN, listener_cb, &r) < 0 ||
        sd_loop_add_fd(r.loop, r.sigfd, SD_EV_IN, signal_cb, &r) < 0) {
        fprintf(stderr, "smbdirect-relay: cannot set up the event loop\n");
        return 1;
    }
    fprintf(stderr, "relay: listening on %s (%s), backend %s\n", listen_str, r.opts.provider->name,
            r.backend_str);
    report_memlock(&r.opts);
    rc = sd_loop_run(r.loop);
    if (rc < 0)
        fprintf(stderr, "smbdirect-relay: event loop failed: %s\n", strerror(-rc));
    relay_shutdown(&r);
    sd_loop_del_fd(r.loop, r.sigfd);
    close(r.sigfd);
    if (!r.conns && !r.negotiating)
        sd_loop_free(r.loop); /* else connections still reference it: exit leaves them */
    return rc < 0 ? 1 : 0;
}
