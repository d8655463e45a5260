/* SPDX-License-Identifier: BSD-3-Clause */
/* tools/relay/relay_admit.c — who may connect to the relay: the access list
 * (SMBDIRECT_ALLOW), the addresses of its own it serves (SMBDIRECT_SERVE_ADDRESSES,
 * for a wildcard listen), the backend's state (none while it is down: relay_backend.c), the
 * total and the per-client connection limits (0: none), asked by the provider before
 * anything is set up for a connection. The backend sees every client as the relay's own
 * address, so this is where clients are told apart. Refusals are counted by reason; each
 * client address gets at most one refusal line per REFUSAL_LOG_MS, the next one saying
 * how many went unlogged. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>

#include "log.h"
#include "relay.h"
#include "sd_prefix.h"

#define REFUSAL_LOG_MS 60000
/* Past this many entries, those with no connection and no recent refusal are dropped
 * (a scan from many addresses cannot grow the table without bound). */
#define CLIENTS_PRUNE_AT 4096

struct relay_client {
    char addr[INET6_ADDRSTRLEN]; /* the key: the address without its port */
    unsigned live;               /* admitted connections not ended yet */
    uint64_t last_log_ms;        /* last refusal line (0: none yet) */
    uint64_t unlogged;           /* refusals since that line */
    UT_hash_handle hh;
};

void relay_addr_key(const struct sockaddr *sa, char *out, size_t len)
{
    const void *a = NULL;
    int family = sa->sa_family;

    if (family == AF_INET) {
        a = &((const struct sockaddr_in *)sa)->sin_addr;
    } else if (family == AF_INET6) {
        const struct in6_addr *a6 = &((const struct sockaddr_in6 *)sa)->sin6_addr;

        a = a6;
        if (IN6_IS_ADDR_V4MAPPED(a6)) {
            family = AF_INET;
            a = &a6->s6_addr[12];
        }
    }
    if (!a || !inet_ntop(family, a, out, (socklen_t)len))
        out[0] = '\0';
}

/* The address of sa without its port, for the log and the admission table. */
static void client_key(const struct sockaddr *sa, char *out, size_t len)
{
    relay_addr_key(sa, out, len);
    if (!out[0])
        snprintf(out, len, "an unknown address");
}

static void prune(struct relay *r, uint64_t now)
{
    struct relay_client *e, *tmp;

    HASH_ITER(hh, r->clients, e, tmp) {
        if (e->live == 0 && (e->last_log_ms == 0 || now - e->last_log_ms >= REFUSAL_LOG_MS)) {
            HASH_DEL(r->clients, e);
            free(e);
        }
    }
}

static struct relay_client *client_get(struct relay *r, const char *key)
{
    struct relay_client *e;

    HASH_FIND_STR(r->clients, key, e);
    if (e)
        return e;
    if (HASH_COUNT(r->clients) >= CLIENTS_PRUNE_AT)
        prune(r, sd_now_ms());
    e = calloc(1, sizeof(*e));
    if (!e)
        return NULL;
    snprintf(e->addr, sizeof(e->addr), "%s", key);
    HASH_ADD_STR(r->clients, addr, e);
    return e;
}

const char *const relay_refusal_names[RELAY_REFUSAL_REASONS] = {
    [RELAY_REFUSED_ACCESS_LIST] = "access_list",
    [RELAY_REFUSED_MAX_CONNECTIONS] = "max_connections",
    [RELAY_REFUSED_PER_CLIENT] = "max_connections_per_client",
    [RELAY_REFUSED_BACKEND_DOWN] = "backend_down",
    [RELAY_REFUSED_NOT_SERVED] = "serve_addresses",
};

/* Counts a refusal of e's address for reason; logs it unless one was logged in the last
 * minute. */
static int refuse(struct relay *r, struct relay_client *e, enum relay_refusal reason,
                  const char *why)
{
    uint64_t now = sd_now_ms();

    r->counts.refused[reason]++;
    if (e->last_log_ms && now - e->last_log_ms < REFUSAL_LOG_MS) {
        e->unlogged++;
        return -EACCES;
    }
    if (e->unlogged)
        sd_warn("refused a connection from %s: %s (and %llu more since the last line)", e->addr,
                why, (unsigned long long)e->unlogged);
    else
        sd_warn("refused a connection from %s: %s", e->addr, why);
    e->last_log_ms = now;
    e->unlogged = 0;
    return -EACCES;
}

/* relay_admit's decision, under admit_lock. */
static int admit_locked(struct relay_conn *c, const struct sockaddr *local,
                        const struct sockaddr *peer)
{
    struct relay *r = c->r;
    const struct sd_settings *s = &r->set;
    char key[INET6_ADDRSTRLEN], why[160];
    struct relay_client *e;

    client_key(peer, key, sizeof(key));
    e = client_get(r, key);
    if (!e) {
        sd_error("out of memory admitting a connection from %s", key);
        return -ENOMEM;
    }
    if (!sd_prefix_list_match(&s->allow, peer))
        return refuse(r, e, RELAY_REFUSED_ACCESS_LIST, "not in the access list (allow)");
    relay_addr_key(local, c->local, sizeof(c->local));
    if (!sd_prefix_list_match(&s->serve_addresses, local)) {
        snprintf(why, sizeof(why), "made to %s, which is not in serve_addresses",
                 c->local[0] ? c->local : "an unknown address");
        return refuse(r, e, RELAY_REFUSED_NOT_SERVED, why);
    }
    if (r->backend.down) {
        snprintf(why, sizeof(why), "backend %s is down (%s)", r->backend_str, r->backend.why);
        return refuse(r, e, RELAY_REFUSED_BACKEND_DOWN, why);
    }
    if (r->live >= s->max_connections) {
        snprintf(why, sizeof(why), "%u connections are live (max_connections %u)", r->live,
                 s->max_connections);
        return refuse(r, e, RELAY_REFUSED_MAX_CONNECTIONS, why);
    }
    if (s->max_connections_per_client && e->live >= s->max_connections_per_client) {
        snprintf(why, sizeof(why), "%u connections from it are live "
                 "(max_connections_per_client %u)", e->live, s->max_connections_per_client);
        return refuse(r, e, RELAY_REFUSED_PER_CLIENT, why);
    }
    e->live++;
    r->live++;
    r->counts.accepted++;
    c->client = e;
    sd_addr_format(peer, c->peer, sizeof(c->peer));
    return 0;
}

int relay_admit(void *ctx, const struct sockaddr *local, const struct sockaddr *peer)
{
    struct relay_conn *c = ctx;
    int rc;

    pthread_mutex_lock(&c->r->admit_lock);
    rc = admit_locked(c, local, peer);
    pthread_mutex_unlock(&c->r->admit_lock);
    return rc;
}

unsigned relay_release(struct relay_conn *c)
{
    unsigned live;

    pthread_mutex_lock(&c->r->admit_lock);
    if (c->client) {
        c->client->live--;
        c->r->live--;
        c->client = NULL;
    }
    live = c->r->live;
    pthread_mutex_unlock(&c->r->admit_lock);
    return live;
}

unsigned relay_live(struct relay *r)
{
    unsigned live;

    pthread_mutex_lock(&r->admit_lock);
    live = r->live;
    pthread_mutex_unlock(&r->admit_lock);
    return live;
}

void relay_admit_free(struct relay *r)
{
    struct relay_client *e, *tmp;

    HASH_ITER(hh, r->clients, e, tmp) {
        HASH_DEL(r->clients, e);
        free(e);
    }
}
