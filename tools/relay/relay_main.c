/* SPDX-License-Identifier: BSD-3-Clause */
/* tools/relay/relay_main.c — smbdirect-relay, an SMB Direct front door for a TCP-only
 * SMB server: accepts SMB Direct connections (soft-iWARP or RDMA) and bridges each to
 * its own TCP connection to the backend (e.g. Samba smbd), on one event loop per CPU
 * (relay_loops.c). This file is the program: its start, its signals (SIGTERM drains,
 * SIGHUP reloads the access list and the limits), --status and --drop-address; its
 * command line and settings are relay_args.c's, relay.h lists the other parts. Every line it logs is "relay: message" at a level (log.h). */
#include <errno.h>
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
#define RELAY_MMAP_THRESHOLD (256 * 1024)

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

static void reload(struct relay *r)
{
    struct sd_settings next, rest;
    char why[600], allow[1024], serve[1024];
    int others;

    if (relay_args_reload(r, &next, why, sizeof(why)) < 0) {
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
    if ((rc = relay_args_parse(argc, argv, &r, &a)) != 0)
        return rc;
    if (a.check_config)
        return relay_args_check_config(&r, &a);
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
