/* tools/relay/relay.h — smbdirect-relay's parts around one event loop: the
 * connections (relay_conn.c: accept, negotiate, backend connect, bridge, end), who may
 * connect (relay_admit.c: the access list and the connection limits), the live status
 * (relay_status.c: the UNIX socket and --status) and the program (relay_main.c:
 * settings, signals, drain and reload). */
#ifndef SMBDIRECT_RELAY_H
#define SMBDIRECT_RELAY_H

#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>

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
    unsigned id;
    enum relay_conn_state state;
    char peer[SD_ADDR_STRLEN];    /* the client's address and port */
    struct relay_client *client;  /* counted against its address's limit */
    uint64_t start_ms;
    struct smbd_link *link;       /* CONNECTING: negotiated, waiting for the backend */
    int backend_fd;
    int64_t connect_timer;
    struct smbd_bridge *bridge;   /* BRIDGED */
    struct relay_conn *prev, *next;
};

/* Counters of the admission checks (the status shows them). */
struct relay_counts {
    uint64_t accepted;       /* connections admitted */
    uint64_t refused_access; /* refused by the access list */
    uint64_t refused_limit;  /* refused by a connection limit */
};

struct relay {
    struct sd_loop *loop;
    struct sd_settings set;     /* in force (SIGHUP replaces the reloadable part) */
    struct sd_listener *listener; /* NULL once draining */
    int listener_fd;
    struct smbd_link_opts opts;
    struct smbd_bridge_opts bridge_opts;
    char listen_str[SD_ADDR_STRLEN], backend_str[SD_ADDR_STRLEN];
    int log_stats;
    uint64_t start_ms;
    unsigned next_id;
    struct relay_conn *conns;   /* every admitted connection, newest first */
    unsigned live;              /* ... how many */
    struct relay_client *clients;
    struct relay_counts counts;
    int draining;               /* SIGTERM: no new connections, live ones may finish */
    int64_t drain_timer;
    int stopped;                /* relay_conn_stop_all ran: what still negotiates ends */
    int sigfd;
    struct relay_status *status;
    int argc;                   /* the command line, for SIGHUP's reload */
    char **argv;
};

/* ---- relay_conn.c ---- */

/* The listener's readiness callback: accepts one connection (admission through
 * relay_admit, then the negotiation, the backend connect and the bridge). */
void relay_conn_accept(void *ctx, int revents);
/* Ends every connection now (negotiating ones end as their negotiation does). */
void relay_conn_stop_all(struct relay *r, const char *reason);

/* ---- relay_admit.c ---- */

/* smbd_link_opts.admit with the relay_conn being accepted as ctx: the access list, the
 * total and the per-client limit. 0 (the connection now counts) or -EACCES, with a
 * refusal line logged at most once a minute per client address. */
int relay_admit(void *ctx, const struct sockaddr *peer);
/* The connection no longer counts (it ended, or never got past its accept). */
void relay_release(struct relay_conn *c);
/* Frees the admission entries. */
void relay_admit_free(struct relay *r);

/* ---- relay_status.c ---- */

/* Serves the status on path (an existing socket there that answers is another relay's:
 * an error; a stale one is replaced). NULL with errno and a reason in why. */
struct relay_status *relay_status_start(struct relay *r, const char *path, char *why,
                                        size_t whylen);
void relay_status_stop(struct relay_status *s);
/* smbdirect-relay --status: asks the relay at path and prints its answer. Exit status. */
int relay_status_query(const char *path, int json);

#endif
