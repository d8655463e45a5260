/* SPDX-License-Identifier: BSD-3-Clause */
/* tools/relay/relay_main.c — smbdirect-relay, an SMB Direct front door for a TCP-only
 * SMB server: accepts SMB Direct connections (soft-iWARP or RDMA) and bridges each to
 * its own TCP connection to the backend (e.g. Samba smbd), on one event loop per CPU
 * (relay_loops.c). This file is the program: its settings, its signals (SIGTERM
 * drains, SIGHUP reloads the access list and the limits), --status and --drop-address;
 * relay.h lists the other parts. Every line it logs is "relay: message" at a level (log.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "log.h"
#include "relay.h"
#include "sd_pinned.h"
#include "sd_version.h"
#include "smbd_link_note.h"
#include "smbd_memplan.h"

#define RELAY_SHUTDOWN_MS 3000

static const char usage_head[] =
    "Usage: smbdirect-relay --listen HOST:PORT --backend HOST:PORT [OPTION]...\n"
    "       smbdirect-relay --status [--json] [--status-socket PATH]\n"
    "       smbdirect-relay --drop-address IP [--status-socket PATH]\n"
    "       smbdirect-relay --check-config [FILE] [OPTION]...\n"
    "       smbdirect-relay --help | --version\n"
    "\n"
    "Accept SMB Direct (MS-SMBD) connections on HOST:PORT and bridge each one to its own\n"
    "TCP connection to an SMB server that speaks only TCP, such as Samba's smbd.\n"
    "\n"
    "Each accepted connection is negotiated as the SMB Direct passive side, then a TCP\n"
    "connection to the backend is opened and SMB2 messages are carried both ways (the\n"
    "4-byte Direct-TCP prefix on the TCP side, SMB Direct messages on the other). A\n"
    "connection that fails or ends never disturbs the others.\n"
    "\n"
    "Settings come from the configuration file (/etc/smbdirect/smbdirect.conf, its\n"
    "[relay] section; SMBDIRECT_CONFIG names another), then the environment, then the\n"
    "flags below: --listen and --backend may be given in any of them. A bad line for\n"
    "the relay stops it; another program's is a warning (smbdirect.conf(5)).\n"
    "\n"
    "Options:\n"
    "  --status                 print the live status of the relay serving the status\n"
    "                           socket, and exit (1 when no relay answers)\n"
    "  --json                   with --status: as one JSON object\n"
    "  --drop-address IP        make the relay serving the status socket end at once\n"
    "                           every connection made to its address IP (one a cluster\n"
    "                           moves away), print how many, and exit (1 when no relay\n"
    "                           answers)\n"
    "  --check-config           check the configuration file (FILE, else the one the\n"
    "                           relay reads), print the settings in force with where\n"
    "                           each comes from, and exit (1 when it has an error)\n"
    "  --log-stats              print a second line of counters when a connection ends\n"
    "  -h, --help               show this help and exit\n"
    "  -V, --version            print the version and exit\n"
    "\n";

static const char usage_tail[] =
    "\n"
    "Output (stderr, one line each, stable for scripts; at the log level notice unless\n"
    "said, with its syslog priority in front when stderr is the systemd journal):\n"
    "  relay: smbdirect-relay VERSION listening on ADDR (TRANSPORT), backend ADDR,\n"
    "         N event loops\n"
    "  relay: open files: limit L, P per connection, K kept for the relay:\n"
    "         max_connections N   (at start: what --max-connections 0 gives)\n"
    "  relay: conn N from ADDR established: version 0xVVVV credits T/M send S recv R\n"
    "         frag F peer_frag P rw W ird I ord O, backend ADDR via port N\n"
    "  relay: conn N closed: smbd_in M msgs B bytes, smbd_out M msgs B bytes,\n"
    "         fragments in F out F, reason TEXT\n"
    "  relay: conn N channel: rdma_read N ops B bytes (WRITE data), rdma_write N ops B\n"
    "         bytes (READ data), buffers peak B bytes, memory waits N (T ms)   (when\n"
    "         the SMB2 RDMA read/write channel was used; the peak is bounded by\n"
    "         --channel-memory, past which an I/O waits: N waits, T ms in all)\n"
    "  relay: conn N failed: client ADDR: TEXT   (error)\n"
    "  relay: refused a connection from ADDR: TEXT   (warn; at most once a minute per\n"
    "         ADDR)\n"
    "  relay: backend ADDR is down (connect: TEXT); refusing new connections   (error;\n"
    "         then checked every 2 s)\n"
    "  relay: backend ADDR is back; admitting again (down N s, N connections refused)\n"
    "\n"
    "SIGINT or SIGTERM stops accepting and lets live connections end for up to\n"
    "--drain-time, then ends the rest; a second signal ends them at once; exit status 0.\n"
    "SIGHUP re-reads the configuration: the access list, the connection limits, the\n"
    "drain time and the log level change at once, live connections untouched; other\n"
    "changes are logged as needing a restart. Exit status 2 means bad arguments, 1 a\n"
    "failure to start (e.g. the listen address is in use). Under systemd (Type=notify,\n"
    "$NOTIFY_SOCKET) the relay sends READY=1 once it listens, RELOADING=1 and READY=1\n"
    "around a SIGHUP, STOPPING=1 when it drains, and its live connections as STATUS=.\n"
    "\n"
    "Example:\n"
    "  smbdirect-relay --listen 127.0.0.1:5445 --backend 127.0.0.1:445\n";

#define RELAY_MMAP_THRESHOLD (256 * 1024)

enum { OPT_LOG_STATS = 1, OPT_STATUS, OPT_JSON, OPT_DROP_ADDRESS, OPT_CHECK_CONFIG,
       OPT_HELP = 'h', OPT_VERSION = 'V' };

static const struct option relay_options[] = {
    { "log-stats", no_argument, NULL, OPT_LOG_STATS },
    { "status", no_argument, NULL, OPT_STATUS },
    { "json", no_argument, NULL, OPT_JSON },
    { "drop-address", required_argument, NULL, OPT_DROP_ADDRESS },
    { "help", no_argument, NULL, OPT_HELP },
    { "version", no_argument, NULL, OPT_VERSION },
    { "check-config", no_argument, NULL, OPT_CHECK_CONFIG },
};
#define RELAY_OPTION_COUNT (sizeof(relay_options) / sizeof(relay_options[0]))

/* ---- signals: drain, stop, reload ---- */

static void drain_timeout_cb(void *ctx, uint64_t now)
{
    struct relay *r = ctx;

    (void)now;
    r->drain_timer = 0;
    sd_warn("drain time over, ending %u connections", relay_live(r));
    sd_loop_stop(r->loop);
}

static void drain_start(struct relay *r, const char *signame)
{
    unsigned live;

    atomic_store(&r->draining, 1);
    relay_service_stopping(r);
    relay_conn_stop_listening(r);
    live = relay_live(r);
    if (!live || r->set.drain_time_s == 0) {
        sd_notice("%s, closing %s connections", signame, live ? "all" : "no");
        sd_loop_stop(r->loop);
        return;
    }
    sd_notice("%s, not accepting; waiting up to %u s for %u connections to end", signame,
              r->set.drain_time_s, live);
    r->drain_timer = sd_loop_add_timer(r->loop, sd_now_ms() + r->set.drain_time_s * 1000ull,
                                       drain_timeout_cb, r);
}

/* The settings SIGHUP applies to a running relay. */
static void copy_reloadable(struct sd_settings *to, const struct sd_settings *from)
{
    to->allow = from->allow;
    to->serve_addresses = from->serve_addresses;
    to->max_connections = from->max_connections;
    to->max_connections_per_client = from->max_connections_per_client;
    to->drain_time_s = from->drain_time_s;
    to->log_level = from->log_level;
}

static int ignore_own_option(void *ctx, int val, const char *arg, char *err, size_t errlen)
{
    (void)ctx, (void)val, (void)arg, (void)err, (void)errlen;
    return 0;
}

/* The warnings of r (other programs' bad lines), and its errors too when as_warnings. */
static void print_problems(const struct sd_settings_report *r, int as_warnings)
{
    for (unsigned i = 0; i < r->kept; i++)
        if (as_warnings || !r->problem[i].is_error)
            sd_warn("warning: %s", r->problem[i].text);
}

static void reload(struct relay *r)
{
    struct sd_settings next, rest;
    struct sd_settings_flags flags;
    struct sd_settings_report rep;
    char err[600], allow[1024], serve[1024];
    const char *why = err;
    int others;

    if (sd_settings_parse_argv(SD_PROG_RELAY, r->argc, r->argv, relay_options,
                               RELAY_OPTION_COUNT, ignore_own_option, NULL, &flags, err,
                               sizeof(err)) >= 0) {
        why = sd_settings_load(&next, SD_PROG_RELAY, NULL, &flags, &rep) < 0 ? rep.error : NULL;
        print_problems(&rep, 0);
    }
    if (why) {
        sd_error("SIGHUP: configuration not reloaded, the settings in force stay: %s", why);
        return;
    }
    relay_fds_fit(r, &next, 0);
    rest = next; /* the new file's other settings beside the reloadable ones in force */
    copy_reloadable(&rest, &r->set);
    others = memcmp(&rest, &r->set, sizeof(rest)) != 0;
    pthread_mutex_lock(&r->admit_lock); /* the loops' relay_admit reads them */
    copy_reloadable(&r->set, &next);
    pthread_mutex_unlock(&r->admit_lock);
    sd_log_set_level(r->set.log_level);
    sd_notice("SIGHUP: reloaded: allow %s, serve_addresses %s, max_connections %u, "
              "max_connections_per_client %u, drain_time %u s (live connections untouched)",
              sd_prefix_list_format(&r->set.allow, allow, sizeof(allow)),
              sd_prefix_list_format(&r->set.serve_addresses, serve, sizeof(serve)),
              r->set.max_connections,
              r->set.max_connections_per_client, r->set.drain_time_s);
    if (others)
        sd_warn("SIGHUP: other settings changed too; they take effect when the relay restarts");
}

static void signal_cb(void *ctx, int revents)
{
    struct relay *r = ctx;
    struct signalfd_siginfo si;
    const char *name;

    (void)revents;
    if (read(r->sigfd, &si, sizeof(si)) != (ssize_t)sizeof(si))
        return;
    name = strsignal((int)si.ssi_signo);
    if (si.ssi_signo == SIGHUP) {
        /* READY=1 whether or not it applied: the relay serves either way */
        relay_service_reloading(r);
        reload(r);
        relay_service_ready(r);
    } else if (!atomic_load(&r->draining)) {
        drain_start(r, name);
    } else {
        sd_notice("%s again, ending %u connections now", name, relay_live(r));
        sd_loop_stop(r->loop);
    }
}

/* Ends every connection and lets the loops run their ends, bounded in time (a listener
 * lent to a loop comes back meanwhile and closes); then stops the loops' threads. */
static void relay_shutdown(struct relay *r)
{
    uint64_t end = sd_now_ms() + RELAY_SHUTDOWN_MS;

    atomic_store(&r->draining, 1);
    relay_service_stopping(r);
    relay_conn_stop_listening(r);
    relay_backend_stop(r);
    if (r->drain_timer > 0)
        sd_loop_cancel_timer(r->loop, r->drain_timer);
    relay_conn_stop_all(r, "relay shutting down");
    while ((relay_live(r) || r->listener_lent) && sd_now_ms() < end)
        if (sd_loop_run_once(r->loop, 100) < 0)
            break;
    relay_loops_stop(r);
}

/* ---- arguments ---- */

static int usage_error(const char *fmt, const char *arg)
{
    char msg[700];

    /* As every program says it, and at error priority for the journal (a unit's bad
     * setting); the relay's own lines say "relay:" again after it. */
    snprintf(msg, sizeof(msg), fmt, arg);
    sd_log_set_program("smbdirect-relay");
    sd_error("%s", msg);
    sd_log_set_program("relay");
    fputs("Try 'smbdirect-relay --help' for more information.\n", stderr);
    return 2;
}

struct relay_args {
    struct relay *r;
    int status, json, check_config;
    int query;                     /* --status or --drop-address: a running relay is asked */
    const char *drop;              /* --drop-address's IP */
    struct sd_settings_report rep; /* where the settings came from, what was wrong */
};

static int relay_option(void *ctx, int val, const char *arg, char *err, size_t errlen)
{
    struct relay_args *a = ctx;

    struct in6_addr ip;

    switch (val) {
    case OPT_LOG_STATS: a->r->log_stats = 1; break;
    case OPT_STATUS: a->status = 1; break;
    case OPT_JSON: a->json = 1; break;
    case OPT_DROP_ADDRESS:
        if (inet_pton(AF_INET, arg, &ip) != 1 && inet_pton(AF_INET6, arg, &ip) != 1) {
            snprintf(err, errlen, "--drop-address: '%s' is not an IPv4 or IPv6 address", arg);
            return -1;
        }
        a->drop = arg;
        break;
    case OPT_CHECK_CONFIG: a->check_config = 1; break;
    case OPT_HELP:
        fputs(usage_head, stdout);
        sd_settings_usage(stdout, SD_PROG_RELAY);
        fputs(usage_tail, stdout);
        exit(0);
    case OPT_VERSION:
        printf("smbdirect-relay %s\n", sd_version());
        exit(0);
    }
    return 0;
}

/* What the relay needs to start that the settings lack, or NULL. */
static const char *relay_missing(const struct sd_settings *s)
{
    if (s->listen.len && s->backend.len)
        return NULL;
    return "--listen HOST:PORT and --backend HOST:PORT are required (or listen and backend "
           "in the configuration file, SMBDIRECT_LISTEN and SMBDIRECT_BACKEND)";
}

/* --check-config [FILE]: the settings in force and the problems; the exit status. */
static int check_config(const struct relay *r, const struct sd_settings_report *rep)
{
    const char *missing = relay_missing(&r->set);

    if (sd_settings_check_config(stdout, stderr, &r->set, rep) != 0)
        return 1;
    if (!missing)
        return 0;
    fprintf(stderr, "smbdirect-relay: %s\n", missing);
    return 1;
}

static int parse_args(int argc, char **argv, struct relay *r, struct relay_args *a)
{
    struct sd_settings_flags flags;
    char err[600];
    int first = sd_settings_parse_argv(SD_PROG_RELAY, argc, argv, relay_options,
                                       RELAY_OPTION_COUNT, relay_option, a, &flags, err,
                                       sizeof(err));
    const char *file = NULL;

    if (first < 0)
        return usage_error("%s", err);
    if (a->check_config && first < argc)
        file = argv[first++];
    if (first < argc)
        return usage_error("unexpected argument '%s'", argv[first]);
    if (a->json && !a->status)
        return usage_error("%s", "--json goes with --status");
    if (a->drop && (a->status || a->check_config))
        return usage_error("%s", "--drop-address goes alone (with --status-socket)");
    a->query = a->status || a->drop;
    if (sd_settings_load(&r->set, SD_PROG_RELAY, file, &flags, &a->rep) < 0 && !a->query &&
        !a->check_config)
        return usage_error("%s", a->rep.error);
    sd_log_set_level(r->set.log_level);
    if (a->check_config)
        return 0;
    /* --status and --drop-address only need the status socket: a broken file must not
     * keep them from reaching the relay that serves (the path from a flag, the
     * environment, the file's line if right, else the default). */
    print_problems(&a->rep, a->query);
    if (!a->query && relay_missing(&r->set))
        return usage_error("%s", relay_missing(&r->set));
    r->argc = argc;
    r->argv = argv;
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
        sd_warn("RLIMIT_MEMLOCK is %llu KiB: not even one SMB Direct connection fits (%llu KiB "
                "needed); raise it (ulimit -l, LimitMEMLOCK=)",
                (unsigned long long)(limit >> 10), (unsigned long long)(p.need_min >> 10));
        return;
    }
    sd_notice("RLIMIT_MEMLOCK is %llu KiB: a connection registers %llu KiB for good and %llu KiB "
              "per I/O in flight (%llu KiB gives one connection full speed); later connections "
              "get what is left, then are refused",
              (unsigned long long)(limit >> 10), (unsigned long long)(p.fixed >> 10),
              (unsigned long long)(p.reserve >> 10), (unsigned long long)(p.full >> 10));
}

/* The listen address's provider and whether it is iWARP; prints the error. */
static int relay_provider(struct relay *r)
{
    const struct sd_provider_ops *provider = sd_settings_provider(r->set.transport);
    const struct sd_hostport *l = &r->set.listen;
    int iwarp = 1, rc = 0;

    if (sd_addr_is_any((const struct sockaddr *)&l->addr))
        /* Every device at once, of any kind: no one device to ask. The verbs provider adds
         * the Appendix A header on the connections of iWARP devices only. */
        r->opts.provider = provider;
    else
        rc = sd_settings_reach(r->set.transport, provider, (const struct sockaddr *)&l->addr,
                               l->len, &r->opts.provider, &iwarp);
    if (rc < 0) {
        sd_error("no %s device serves %s: %s", provider->name, r->listen_str, strerror(-rc));
        return -1;
    }
    r->opts.smbd_ird_ord_header = iwarp; /* MS-SMBD Appendix A: iWARP only */
    return 0;
}

/* The status socket; a missing folder for the default path is no error (a relay run by
 * hand, without the service's /run/smbdirect). */
static int relay_status_open(struct relay *r)
{
    const char *path = r->set.status_socket;
    int is_default = strcmp(path, sd_settings_table[SD_SET_STATUS_SOCKET].def[SD_PROG_RELAY]) == 0;
    char why[256];

    if (!*path)
        return 0;
    r->status = relay_status_start(r, path, why, sizeof(why));
    if (r->status)
        return 0;
    if (is_default && (errno == ENOENT || errno == EACCES)) {
        sd_info("no status socket: %s: %s", path, why);
        return 0;
    }
    sd_error("cannot serve the status at %s (status_socket): %s", path, why);
    return -1;
}

static int relay_signals(struct relay *r)
{
    sigset_t sigs;

    signal(SIGPIPE, SIG_IGN);
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGHUP);
    sigprocmask(SIG_BLOCK, &sigs, NULL);
    r->sigfd = signalfd(-1, &sigs, SFD_CLOEXEC | SFD_NONBLOCK);
    return r->sigfd < 0 ? -1 : sd_loop_add_fd(r->loop, r->sigfd, SD_EV_IN, signal_cb, r);
}

/* What each connection's reply says of the relay (smbd_link_note.h). */
static uint8_t keyless_note[SMBD_LINK_NOTE_LEN];

int main(int argc, char **argv)
{
    struct relay r = { .listener_fd = -1, .sigfd = -1, .admit_lock = PTHREAD_MUTEX_INITIALIZER,
                       .backend = { .probe_fd = -1 } };
    struct relay_args a = { .r = &r };
    struct sd_listen_params lp;
    int rc, err = 0;

    sd_log_set_program("relay");
    if ((rc = parse_args(argc, argv, &r, &a)) != 0)
        return rc;
    if (a.check_config)
        return check_config(&r, &a.rep);
    if (a.status)
        return relay_status_query(r.set.status_socket, "--status", a.json ? "json\n" : "text\n");
    if (a.drop) {
        char req[64];

        snprintf(req, sizeof(req), "drop %s\n", a.drop);
        return relay_status_query(r.set.status_socket, "--drop-address", req);
    }
    relay_fds_raise();
    relay_service_open(&r);
    /* Channel buffers and stream queues of megabytes come and go with each client's I/O:
     * a fixed mmap threshold gives each back to the system when freed (glibc's dynamic
     * threshold would rise past them and keep the freed memory in the heap, so a
     * long-running relay's RSS would only grow). */
    mallopt(M_MMAP_THRESHOLD, RELAY_MMAP_THRESHOLD);
    r.start_ms = sd_now_ms();
    sd_settings_link_opts(&r.set, SMBD_ROLE_PASSIVE, &r.opts);
    r.opts.admit = relay_admit;
    /* The relay holds no session keys: its clients learn so with each connection's reply
     * and keep a signed session's I/O inline instead of being refused. */
    smbd_link_note_encode(keyless_note, SMBD_LINK_NOTE_KEYLESS);
    r.opts.private_data = keyless_note;
    r.opts.private_data_len = sizeof(keyless_note);
    r.bridge_opts = (struct smbd_bridge_opts){ .channel = BRIDGE_CHAN_SERVER,
                                               .channel_memory = r.set.channel_memory,
                                               .channel_memory_total =
                                                   r.set.channel_memory_total };
    sd_addr_format((struct sockaddr *)&r.set.backend.addr, r.backend_str, sizeof(r.backend_str));
    sd_addr_format((struct sockaddr *)&r.set.listen.addr, r.listen_str, sizeof(r.listen_str));
    if (relay_provider(&r) < 0)
        return 1;
    r.loop = sd_loop_new();
    if (!r.loop || relay_signals(&r) < 0) {
        sd_error("cannot set up the event loop");
        return 1;
    }
    sd_settings_listen_params(&r.set, 128, &lp);
    r.listener = r.opts.provider->listen((struct sockaddr *)&r.set.listen.addr, r.set.listen.len,
                                         &lp, &err);
    if (!r.listener) {
        sd_error("cannot listen on %s (%s): %s", r.listen_str, r.opts.provider->name,
                 strerror(err ? -err : ENOMEM));
        return 1;
    }
    r.listener_fd = r.opts.provider->listener_fd(r.listener);
    if (sd_loop_add_fd(r.loop, r.listener_fd, SD_EV_IN, relay_conn_accept, &r) < 0) {
        sd_error("cannot set up the event loop");
        return 1;
    }
    if (relay_loops_start(&r, r.set.loops ? r.set.loops : relay_loops_auto()) < 0 ||
        relay_status_open(&r) < 0) {
        relay_loops_stop(&r);
        return 1;
    }
    sd_notice("smbdirect-relay %s listening on %s (%s), backend %s, %u event loops",
              sd_version(), r.listen_str, r.opts.provider->name, r.backend_str, r.nloops);
    relay_fds_fit(&r, &r.set, 1);
    report_memlock(&r.opts);
    relay_service_ready(&r);
    rc = sd_loop_run(r.loop);
    if (rc < 0)
        sd_error("event loop failed: %s", strerror(-rc));
    relay_shutdown(&r);
    relay_service_close(&r);
    relay_status_stop(r.status);
    sd_loop_del_fd(r.loop, r.sigfd);
    close(r.sigfd);
    if (!relay_live(&r)) {
        relay_admit_free(&r);
        for (unsigned i = 1; i < r.nloops; i++)
            sd_loop_free(r.loops[i].loop);
        sd_loop_free(r.loop); /* else connections still reference them: exit leaves them */
        free(r.loops);
    }
    return rc < 0 ? 1 : 0;
}
