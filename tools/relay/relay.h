/* SPDX-License-Identifier: BSD-3-Clause */
/* tools/relay/relay.h — smbdirect-relay's parts: its event loops (relay_loops.c: one
 * per thread, each owning the connections it was given), the connections
 * (relay_conn.c: accept, negotiate, backend connect, bridge, end), who may connect
 * (relay_admit.c: the access list and the connection limits), whether the backend
 * answers (relay_backend.c), how many connections the open-file limit allows
 * (relay_fds.c), the live status (relay_status.c: the UNIX socket and --status), what
 * systemd is told (relay_service.c, over relay_notify.c), the command line and the
 * settings it loads (relay_args.c) and the program (relay_main.c: start, signals, drain
 * and reload).
 *
 * Threads: loop 0 is the main thread's; it alone runs the listener, the signals, the
 * status socket and the drain. Every connection lives on one loop, which alone touches
 * it (the status asks each loop for a snapshot). Shared between threads: the admission
 * state (relay_admit.c, under admit_lock), the atomic counters below, and, on the data
 * path, only the process-wide buffer pool and memory accounts of transport/. */
#ifndef SMBDIRECT_RELAY_H
#define SMBDIRECT_RELAY_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>

#include "relay_notify.h"
#include "sd_addr.h"
#include "sd_loop.h"
#include "sd_settings.h"
#include "smbd_bridge.h"
#include "smbd_link.h"

struct relay_client; /* one client address's admission entry (relay_admit.c) */

enum relay_conn_state {
    RELAY_CONN_NEGOTIATING, /* the SMB Direct negotiation runs (smbd_link owns it) */
    RELAY_CONN_CONNECTING,  /* negotiated; the backend connect runs */
    RELAY_CONN_BRIDGED,     /* carrying SMB2 both ways */
};

struct relay_conn {
    struct relay *r;
    struct relay_loop *l;         /* the loop it lives on */
    unsigned id;
    enum relay_conn_state state;
    char peer[SD_ADDR_STRLEN];    /* the client's address and port */
    char local[SD_ADDR_STRLEN];   /* the address it connected to, without the port */
    int ending;                   /* relay_conn_end ran while it negotiated */
    struct relay_client *client;  /* counted against its address's limit */
    uint64_t start_ms;
    struct smbd_link *link;       /* CONNECTING: negotiated, waiting for the backend */
    int backend_fd;
    int64_t connect_timer;
    struct smbd_bridge *bridge;   /* BRIDGED */
    struct relay_conn *prev, *next; /* its loop's list (utlist DL) */
};

/* One event loop and the connections it owns. */
struct relay_loop {
    struct relay *r;
    unsigned index;
    struct sd_loop *loop;         /* loop 0: the relay's main loop */
    pthread_t thread;             /* loops 1..: the thread running it */
    int has_thread;
    struct relay_conn *conns;     /* its connections, oldest first; its thread only */
    atomic_uint count;            /* ... how many (the accept reads it from loop 0) */
    int stopped;                  /* relay_conn_stop_all reached it: what still
                                     negotiates ends */
};

/* Why relay_admit refused a connection: a new reason is one entry here and its name in
 * relay_refusal_names (relay_admit.c); the status counts each. */
enum relay_refusal {
    RELAY_REFUSED_ACCESS_LIST,     /* not in allow */
    RELAY_REFUSED_MAX_CONNECTIONS, /* max_connections were live */
    RELAY_REFUSED_PER_CLIENT,      /* max_connections_per_client were live from its address */
    RELAY_REFUSED_BACKEND_DOWN,    /* the backend did not answer (relay_backend.c) */
    RELAY_REFUSED_NOT_SERVED,      /* made to an address not in serve_addresses */
    RELAY_REFUSAL_REASONS
};

/* Each reason's name in the status, text and JSON ("access_list", ...). */
extern const char *const relay_refusal_names[RELAY_REFUSAL_REASONS];

/* Counters of the admission checks (the status shows them). */
struct relay_counts {
    uint64_t accepted;                        /* connections admitted */
    uint64_t refused[RELAY_REFUSAL_REASONS];  /* connections refused, by reason */
    uint64_t dropped;                         /* ended by --drop-address */
};

/* Whether the backend answers (relay_backend.c). */
struct relay_backend {
    int down;               /* under admit_lock: relay_admit refuses while set */
    uint64_t down_ms;       /* under admit_lock: since when */
    uint64_t refused_before; /* under admit_lock: counts.refused[BACKEND_DOWN] then */
    char why[64];           /* under admit_lock: the connect's error that said so */
    int probe_fd;           /* main thread: the check's connect in flight, or -1 */
    int64_t probe_timer;    /* main thread: its timeout, or the next check */
};

/* What systemd is told (relay_service.c). */
struct relay_service {
    struct relay_notify notify;  /* set before the loops' threads start */
    atomic_int status_queued;    /* a STATUS= update is posted or timed */
    uint64_t status_sent_ms;     /* main thread, as the rest */
    int64_t status_timer;
    char status[160];            /* the last STATUS= sent */
    int stopping;                /* STOPPING=1 sent */
    int failed;                  /* a send failed (logged once) */
};

struct relay {
    struct sd_loop *loop;       /* the main thread's (loops[0].loop) */
    struct relay_loop *loops;
    unsigned nloops;
    struct sd_settings set;     /* in force (SIGHUP replaces the reloadable part, under
                                   admit_lock: relay_admit reads it on every loop) */
    struct sd_listener *listener; /* NULL once draining */
    int listener_fd;
    struct relay_loop *listener_lent; /* the loop accepting on the listener now: the
                                         main loop does not watch it meanwhile */
    struct smbd_link_opts opts;
    struct smbd_bridge_opts bridge_opts;
    char listen_str[SD_ADDR_STRLEN], backend_str[SD_ADDR_STRLEN];
    int log_stats;
    uint64_t start_ms;
    atomic_uint next_id;
    pthread_mutex_t admit_lock; /* live, clients, counts and set's reloadable part */
    unsigned live;              /* connections on every loop: each is admitted as it is
                                   accepted and released as it is freed (relay_live) */
    struct relay_client *clients;
    struct relay_counts counts;
    struct relay_backend backend;
    struct relay_service service;
    atomic_int draining;        /* SIGTERM: no new connections, live ones may finish */
    int64_t drain_timer;
    const char *stop_reason;    /* relay_conn_stop_all's, for the loops it posts to */
    int sigfd;
    struct relay_status *status;
    int argc;                   /* the command line, for SIGHUP's reload */
    char **argv;
};

/* ---- relay_args.c ---- */

/* What the command line asks for beside the settings. */
struct relay_args {
    struct relay *r;
    int status, json, check_config;
    int query;                     /* --status or --drop-address: a running relay is asked */
    const char *drop;              /* --drop-address's IP */
    struct sd_settings_report rep; /* where the settings came from, what was wrong */
};

/* Reads the command line into a and the settings it gives (the configuration file, the
 * environment, the flags) into r->set, r->log_stats, r->argc and r->argv, logging other
 * programs' problems as warnings: 0, or the exit status after the usage error (2).
 * --help and --version print and exit. */
int relay_args_parse(int argc, char **argv, struct relay *r, struct relay_args *a);
/* --check-config [FILE]: prints the settings in force and the problems; the exit status. */
int relay_args_check_config(const struct relay *r, const struct relay_args *a);
/* The settings r's command line gives now, for SIGHUP (other programs' problems logged as
 * warnings): 0 with *next, or -1 with why. */
int relay_args_reload(const struct relay *r, struct sd_settings *next, char *why, size_t len);

/* ---- relay_loops.c ---- */

/* Sets up r->loops: loop 0 on r->loop, and n - 1 more, each on a thread of its own
 * (signals stay blocked there: the main thread takes them). -1 with a message on
 * stderr. */
int relay_loops_start(struct relay *r, unsigned n);
/* Stops the threads' loops and waits for them; connections still live are left. */
void relay_loops_stop(struct relay *r);
/* Runs cb(ctx) on l's thread: at once for loop 0 (the caller is the main thread),
 * queued for the others. 0, or -errno when it could not be queued (cb never runs). */
int relay_loop_run_on(struct relay_loop *l, sd_task_cb cb, void *ctx);
/* The loop count a 0 setting means: the CPUs this process may run on. */
unsigned relay_loops_auto(void);

/* ---- relay_conn.c ---- */

/* The listener's readiness callback: accepts one connection (admission through
 * relay_admit, then the negotiation, the backend connect and the bridge). */
void relay_conn_accept(void *ctx, int revents);
/* Main thread: stops accepting; the listener closes (new connects are refused by the
 * system). One lent to a loop closes when it comes back, the drain having begun. */
void relay_conn_stop_listening(struct relay *r);
/* Ends every connection now, on every loop (negotiating ones end as their negotiation
 * does). reason must stay valid: a static string. */
void relay_conn_stop_all(struct relay *r, const char *reason);
/* On c's loop: ends c now (a negotiating one as its negotiation does), reason as for
 * relay_conn_stop_all. */
void relay_conn_end(struct relay_conn *c, const char *reason);

/* ---- relay_drop.c ---- */

/* --drop-address: the number of connections ended, or -1 when not every loop could be
 * reached (some may have ended). */
typedef void (*relay_drop_done_fn)(void *ctx, long ended);
struct relay_drop;
/* Main thread: ends every connection made to addr (relay_addr_key's form) on every
 * loop, counts them in the status and calls done once from the main loop (never inside
 * this call). NULL when out of memory (done never runs). */
struct relay_drop *relay_drop_start(struct relay *r, const char *addr, relay_drop_done_fn done,
                                    void *ctx);
/* Whoever asked is gone: done is not called (the connections still end). */
void relay_drop_forget(struct relay_drop *d);

/* ---- relay_admit.c ---- */

/* smbd_link_opts.admit with the relay_conn being accepted as ctx: the access list, the
 * address dialled (serve_addresses), the backend's state, the total and the per-client
 * limit. 0 (the connection now counts) or -EACCES, with a refusal line logged at most
 * once a minute per client address. */
int relay_admit(void *ctx, const struct sockaddr *local, const struct sockaddr *peer);
/* The address of sa without its port, an IPv4-mapped IPv6 address as IPv4 (the form
 * relay_conn.local and --drop-address compare in); "" when sa is neither family. */
void relay_addr_key(const struct sockaddr *sa, char *out, size_t len);
/* The connection no longer counts (it ended, or never got past its accept). Any
 * loop's thread. Returns how many connections still count. */
unsigned relay_release(struct relay_conn *c);
/* How many connections count now (admitted, not released), from any thread. */
unsigned relay_live(struct relay *r);
/* Frees the admission entries. */
void relay_admit_free(struct relay *r);

/* ---- relay_backend.c ---- */

/* A connection's backend connect failed with err (any loop's thread): the backend is
 * down, new connections are refused (relay_admit) and the main loop checks it every
 * 2 s until a connect succeeds. Logged once each way. */
void relay_backend_failed(struct relay *r, int err);
/* Main thread, at exit: ends the check in flight. */
void relay_backend_stop(struct relay *r);
/* A non-blocking TCP connect to the backend on a new socket, *fd (-1 when no socket
 * could be made: that error is the relay's, not the backend's). 0 connected,
 * -EINPROGRESS under way (its outcome: relay_backend_dialed once *fd is writable), or
 * the connect's or socket's -errno. */
int relay_backend_dial(const struct relay *r, int *fd);
/* The outcome of a dial that was under way, once its socket is writable: 0 connected,
 * else the errno it failed with. */
int relay_backend_dialed(int fd);

/* ---- relay_fds.c ---- */

/* Raises the soft RLIMIT_NOFILE to the hard one (where that is denied, as under the
 * unit's system call filter, LimitNOFILE= set both). */
void relay_fds_raise(void);
/* s->max_connections 0 becomes the connections the open-file limit leaves room for (the
 * provider's descriptors and the backend socket each, after the relay's own); an
 * explicit one above that is warned about. at_start: logs the figures too. */
void relay_fds_fit(const struct relay *r, struct sd_settings *s, int at_start);

/* ---- relay_service.c ---- */

/* Notifications to $NOTIFY_SOCKET (none when unset). Main thread, before the loops. */
void relay_service_open(struct relay *r);
/* READY=1 with the status: serving (at start, and after each SIGHUP). */
void relay_service_ready(struct relay *r);
/* RELOADING=1 (SIGHUP's reload begins). */
void relay_service_reloading(struct relay *r);
/* STOPPING=1 (once). */
void relay_service_stopping(struct relay *r);
/* The live connections or the backend's state changed (any thread): STATUS= follows,
 * at most once a second. */
void relay_service_changed(struct relay *r);
/* Main thread, once the loops' threads have stopped. */
void relay_service_close(struct relay *r);

/* ---- relay_snapshot.c ---- */

/* The status as text or JSON, malloc'd, for the callee to free; NULL: out of memory. */
typedef void (*relay_snapshot_done_fn)(void *ctx, char *text, size_t len);
struct relay_snapshot;
/* Main thread: asks every loop for its connections' figures and calls done once with
 * the status, from the main loop (never inside this call), once every loop has
 * answered. Returns the snapshot, for relay_snapshot_forget; NULL when out of memory
 * (done never runs). */
struct relay_snapshot *relay_snapshot_start(struct relay *r, int json,
                                            relay_snapshot_done_fn done, void *ctx);
/* Whoever asked is gone: done is not called. */
void relay_snapshot_forget(struct relay_snapshot *snap);

/* ---- relay_status.c ---- */

/* Serves the status on path (an existing socket there that answers is another relay's:
 * an error; a stale one is replaced). NULL with errno and a reason in why. */
struct relay_status *relay_status_start(struct relay *r, const char *path, char *why,
                                        size_t whylen);
void relay_status_stop(struct relay_status *s);
/* smbdirect-relay --status or --drop-address (flag, for the messages): sends the request
 * line to the relay at path and prints its answer. Exit status: 1 when no relay answers
 * or the answer is an error. */
int relay_status_query(const char *path, const char *flag, const char *request);

#endif
