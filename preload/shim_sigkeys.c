/* SPDX-License-Identifier: BSD-3-Clause */
/* preload/shim_sigkeys.c — the learned SMB2 signing keys (shim_sigkeys.h): a fixed table
 * (no key ever lies in freed heap memory) under one lock, taken with the shim's guard set
 * like the fd table's, so a signal handler that signs on the thread holding it learns
 * nothing instead of waiting for the lock for ever. */
#include "shim_sigkeys.h"

#include <nettle/memops.h>
#include <pthread.h>
#include <string.h>

#include "log.h"
#include "shim_guard.h"

struct sigkey {
    int used;
    int bound;                 /* proved on tunnel */
    struct shim_fd_key tunnel;
    uint64_t session_id;
    uint64_t order;            /* when it was learned: the oldest unproved goes first */
    struct smb2_sign_key key;
};

static struct sigkey table[SHIM_SIGKEYS_MAX];
static size_t used_count;
static uint64_t learned_count;
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;

static void table_enter(void) { shim_guard_lock(&table_lock); }
static void table_leave(void) { shim_guard_unlock(&table_lock); }

static const char *algo_name(enum smb2_sign_algo algo)
{
    return algo == SMB2_SIGN_HMAC_SHA256 ? "HMAC-SHA256"
           : algo == SMB2_SIGN_AES_CMAC  ? "AES-128-CMAC"
                                         : "AES-128-GMAC";
}

static int same_tunnel(const struct sigkey *e, const struct shim_fd_key *tunnel)
{
    return e->bound && e->tunnel.dev == tunnel->dev && e->tunnel.ino == tunnel->ino;
}

static void wipe(struct sigkey *e)
{
    smb2_sign_key_wipe(&e->key);
    explicit_bzero(e, sizeof(*e));
    used_count--;
}

/* A free entry; when there is none, the oldest key no tunnel has proved, else the oldest
 * of all, wiped. */
static struct sigkey *room(void)
{
    struct sigkey *victim = NULL;

    for (size_t i = 0; i < SHIM_SIGKEYS_MAX; i++) {
        struct sigkey *e = &table[i];

        if (!e->used)
            return e;
        if (!victim || (victim->bound && !e->bound) ||
            (victim->bound == e->bound && e->order < victim->order))
            victim = e;
    }
    sd_debug("signing key of SMB2 session 0x%016llx dropped: %d keys are kept at most",
             (unsigned long long)victim->session_id, SHIM_SIGKEYS_MAX);
    wipe(victim);
    return victim;
}

void shim_sigkeys_learn(uint64_t session_id, const struct smb2_sign_key *k)
{
    struct sigkey *e;

    table_enter();
    for (size_t i = 0; i < SHIM_SIGKEYS_MAX; i++) {
        e = &table[i];
        if (e->used && e->session_id == session_id && e->key.algo == k->algo &&
            memeql_sec(e->key.key, k->key, sizeof(k->key))) {
            table_leave();
            return;
        }
    }
    e = room();
    e->used = 1;
    e->session_id = session_id;
    e->order = ++learned_count;
    e->key = *k;
    used_count++;
    table_leave();
    sd_debug("learned signing key for SMB2 session 0x%016llx (%s)",
             (unsigned long long)session_id, algo_name(k->algo));
}

/* The key bound to tunnel for session_id, or NULL. Under the lock. */
static struct sigkey *bound_key(const struct shim_fd_key *tunnel, uint64_t session_id)
{
    for (size_t i = 0; i < SHIM_SIGKEYS_MAX; i++)
        if (table[i].used && table[i].session_id == session_id && same_tunnel(&table[i], tunnel))
            return &table[i];
    return NULL;
}

int shim_sigkeys_get(const struct shim_fd_key *tunnel, uint64_t session_id,
                     struct smb2_sign_key *k)
{
    struct sigkey *e;

    table_enter();
    e = bound_key(tunnel, session_id);
    if (e)
        *k = e->key;
    table_leave();
    return e ? 0 : -1;
}

static int verifies(const struct sigkey *e, const uint8_t *cmd, size_t len)
{
    return smb2_sign_verify(&e->key, SMB2_SIGN_FROM_CLIENT, cmd, len) == 0;
}

enum shim_sigkeys_verdict shim_sigkeys_verify(const struct shim_fd_key *tunnel,
                                              uint64_t session_id, const uint8_t *cmd,
                                              size_t len)
{
    enum shim_sigkeys_verdict v = SHIM_SIGKEYS_NO_KEY;
    struct sigkey *bound = NULL, *proved = NULL;

    table_enter();
    bound = bound_key(tunnel, session_id);
    if (bound && verifies(bound, cmd, len)) {
        table_leave();
        return SHIM_SIGKEYS_VERIFIED;
    }
    if (bound)
        v = SHIM_SIGKEYS_FAILED;
    for (size_t i = 0; i < SHIM_SIGKEYS_MAX && !proved; i++) {
        struct sigkey *e = &table[i];

        if (!e->used || e->bound || e->session_id != session_id)
            continue;
        v = SHIM_SIGKEYS_FAILED;
        if (verifies(e, cmd, len))
            proved = e;
    }
    if (proved) {
        if (bound)
            wipe(bound);
        proved->bound = 1;
        proved->tunnel = *tunnel;
        v = SHIM_SIGKEYS_VERIFIED;
    }
    table_leave();
    if (proved)
        sd_debug("signing key of SMB2 session 0x%016llx (%s) proved by a request on its tunnel",
                 (unsigned long long)session_id, algo_name(proved->key.algo));
    return v;
}

/* Wipes the keys of session_id (any session: ANY_SESSION) bound to tunnel (any key, bound
 * or not: tunnel NULL). Returns how many. */
#define ANY_SESSION 0 /* no session signs with SessionId 0 (MS-SMB2 3.2.4.1.1) */
static size_t forget(const struct shim_fd_key *tunnel, uint64_t session_id)
{
    size_t n = 0;

    table_enter();
    for (size_t i = 0; i < SHIM_SIGKEYS_MAX; i++) {
        struct sigkey *e = &table[i];

        if (e->used && (!tunnel || same_tunnel(e, tunnel)) &&
            (session_id == ANY_SESSION || e->session_id == session_id)) {
            wipe(e);
            n++;
        }
    }
    table_leave();
    return n;
}

void shim_sigkeys_forget_session(const struct shim_fd_key *tunnel, uint64_t session_id)
{
    if (session_id != ANY_SESSION && forget(tunnel, session_id) > 0)
        sd_debug("signing key of SMB2 session 0x%016llx wiped: the session ended (LOGOFF)",
                 (unsigned long long)session_id);
}

void shim_sigkeys_forget_tunnel(const struct shim_fd_key *tunnel)
{
    size_t n = forget(tunnel, ANY_SESSION);

    if (n > 0)
        sd_debug("%zu signing key(s) wiped: their tunnel ended", n);
}

void shim_sigkeys_wipe_all(void)
{
    size_t n = forget(NULL, ANY_SESSION);

    if (n > 0)
        sd_debug("%zu signing key(s) wiped at exit", n);
}

size_t shim_sigkeys_count(void)
{
    size_t n;

    table_enter();
    n = used_count;
    table_leave();
    return n;
}

void shim_sigkeys_atfork_prepare(void) { pthread_mutex_lock(&table_lock); }
void shim_sigkeys_atfork_parent(void) { pthread_mutex_unlock(&table_lock); }
void shim_sigkeys_atfork_child(void) { pthread_mutex_unlock(&table_lock); }
