/* SPDX-License-Identifier: BSD-3-Clause */
/* preload/shim_fdtable.c — tunneled fds in a uthash table keyed by (st_dev, st_ino),
 * one mutex around it and an atomic entry count so sockets that are not tunneled
 * cost no system call and no lock. */
#include "shim_fdtable.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uthash.h>

#include "sd_addr.h"
#include "shim_guard.h"



struct shim_opt {
    int level, name, value;
};

struct shim_fd_entry {
    struct shim_fd_key key;
    struct shim_fd_info info;
    int engine_fd;
    struct shim_fd_key engine_key;
    struct shim_opt opts[SHIM_FDTABLE_MAX_OPTS];
    int nopts;
    UT_hash_handle hh;
};

static struct shim_fd_entry *table;
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int table_count;

/* The table's lock, with the shim's guard set while it is held (shim_guard_lock): a
 * signal handler that interrupts the holder and calls an interposed write (tevent's, to
 * its signal pipe) goes straight to libc instead of waiting for this lock for ever. */
static void table_enter(void) { shim_guard_lock(&table_lock); }
static void table_leave(void) { shim_guard_unlock(&table_lock); }

int shim_fd_key_of(int fd, struct shim_fd_key *key)
{
    struct stat st;

    if (fstat(fd, &st) < 0)
        return -1;
    if (!S_ISSOCK(st.st_mode)) {
        errno = ENOTSOCK;
        return -1;
    }
    memset(key, 0, sizeof(*key));
    key->dev = st.st_dev;
    key->ino = st.st_ino;
    return 0;
}

/* Caller holds table_lock. */
static struct shim_fd_entry *find_key(const struct shim_fd_key *key)
{
    struct shim_fd_entry *e;

    HASH_FIND(hh, table, key, sizeof(*key), e);
    return e;
}

/* Locks the table and finds fd's entry; NULL (table unlocked) when not tunneled. */
static struct shim_fd_entry *lock_entry(int fd)
{
    struct shim_fd_key key;
    struct shim_fd_entry *e;
    int saved = errno;

    if (atomic_load(&table_count) == 0 || shim_fd_key_of(fd, &key) < 0) {
        errno = saved;
        return NULL;
    }
    table_enter();
    e = find_key(&key);
    if (!e)
        table_leave();
    return e;
}

/* Caller holds table_lock. */
static void remove_entry(struct shim_fd_entry *e)
{
    HASH_DEL(table, e);
    free(e);
    atomic_fetch_sub(&table_count, 1);
}

/* Caller holds table_lock: keeps LOST entries bounded (oldest first). */
static void trim_lost(void)
{
    struct shim_fd_entry *e, *tmp, *oldest = NULL;
    int lost = 0;

    HASH_ITER(hh, table, e, tmp) {
        if (e->info.state == SHIM_FD_LOST) {
            if (!oldest)
                oldest = e;
            lost++;
        }
    }
    if (lost > SHIM_FDTABLE_MAX_LOST)
        remove_entry(oldest);
}

int shim_fdtable_add(int fd, int engine_fd, const struct shim_fd_info *info)
{
    struct shim_fd_entry *e = calloc(1, sizeof(*e)), *old;

    if (!e)
        return -ENOMEM;
    if (shim_fd_key_of(fd, &e->key) < 0) {
        int err = errno;
        free(e);
        return -err;
    }
    e->info = *info;
    e->engine_fd = -1;
    if (engine_fd >= 0 && shim_fd_key_of(engine_fd, &e->engine_key) == 0)
        e->engine_fd = engine_fd;
    table_enter();
    old = find_key(&e->key); /* only possible after an inode number wrapped */
    if (old)
        remove_entry(old);
    HASH_ADD(hh, table, key, sizeof(e->key), e);
    atomic_fetch_add(&table_count, 1);
    table_leave();
    return 0;
}

int shim_fdtable_lookup(int fd, struct shim_fd_info *out)
{
    struct shim_fd_entry *e = lock_entry(fd);

    if (!e)
        return 0;
    if (out)
        *out = e->info;
    table_leave();
    return 1;
}

int shim_fdtable_connected(int fd, struct shim_fd_key *key)
{
    struct shim_fd_entry *e = lock_entry(fd);
    int connected;

    if (!e)
        return 0;
    connected = e->info.state == SHIM_FD_CONNECTED;
    *key = e->key;
    table_leave();
    return connected;
}

int shim_fdtable_find_by_names(const struct sockaddr_storage *local,
                               const struct sockaddr_storage *peer, struct shim_fd_info *out)
{
    struct shim_fd_entry *e, *tmp;
    int found = 0;

    if (atomic_load(&table_count) == 0)
        return 0;
    table_enter();
    HASH_ITER(hh, table, e, tmp) {
        if (e->info.state == SHIM_FD_CONNECTED &&
            sd_addr_equal((const struct sockaddr *)&e->info.local,
                          (const struct sockaddr *)local) &&
            sd_addr_equal((const struct sockaddr *)&e->info.peer,
                          (const struct sockaddr *)peer)) {
            *out = e->info;
            found = 1;
            break;
        }
    }
    table_leave();
    return found;
}

void shim_fdtable_set_inline_only(const struct shim_fd_key *key)
{
    struct shim_fd_entry *e;

    table_enter();
    if ((e = find_key(key)) != NULL)
        e->info.io.inline_only = 1;
    table_leave();
}

int shim_fdtable_take_error(int fd)
{
    struct shim_fd_entry *e = lock_entry(fd);
    int err;

    if (!e)
        return -1;
    err = e->info.pending_error;
    e->info.pending_error = 0;
    table_leave();
    return err;
}

int shim_fdtable_set_opt(int fd, int level, int name, int value)
{
    struct shim_fd_entry *e = lock_entry(fd);
    int i, rc = 0;

    if (!e)
        return -ENOENT;
    for (i = 0; i < e->nopts; i++)
        if (e->opts[i].level == level && e->opts[i].name == name)
            break;
    if (i < SHIM_FDTABLE_MAX_OPTS) {
        e->opts[i] = (struct shim_opt){ level, name, value };
        if (i == e->nopts)
            e->nopts++;
    } else {
        rc = -ENOSPC;
    }
    table_leave();
    return rc;
}

int shim_fdtable_get_opt(int fd, int level, int name, int *value)
{
    struct shim_fd_entry *e = lock_entry(fd);
    int rc = -ENOENT;

    if (!e)
        return rc;
    for (int i = 0; i < e->nopts; i++) {
        if (e->opts[i].level == level && e->opts[i].name == name) {
            *value = e->opts[i].value;
            rc = 0;
        }
    }
    table_leave();
    return rc;
}

void shim_fdtable_tunnel_ended(const struct shim_fd_key *key, int err)
{
    struct shim_fd_entry *e;

    table_enter();
    e = find_key(key);
    if (e && err == 0) {
        remove_entry(e);
    } else if (e) {
        e->info.state = SHIM_FD_LOST;
        e->info.pending_error = err < 0 ? -err : err;
        e->engine_fd = -1;
        trim_lost();
    }
    table_leave();
}

int shim_fdtable_count(void) { return atomic_load(&table_count); }

void shim_fdtable_atfork_prepare(void) { pthread_mutex_lock(&table_lock); }
void shim_fdtable_atfork_parent(void) { pthread_mutex_unlock(&table_lock); }

void shim_fdtable_atfork_child(void)
{
    struct shim_fd_entry *e, *tmp;
    struct shim_fd_key now;

    /* The parent's engine serves these tunnels; a copy of its end kept here would
     * hide the end of a tunnel from the program (no EOF while the child lives). The
     * key check makes sure a number the parent reused is never closed. */
    HASH_ITER(hh, table, e, tmp) {
        if (e->engine_fd >= 0 && shim_fd_key_of(e->engine_fd, &now) == 0 &&
            memcmp(&now, &e->engine_key, sizeof(now)) == 0)
            close(e->engine_fd);
        e->engine_fd = -1;
    }
    pthread_mutex_unlock(&table_lock); /* taken by atfork_prepare */
}

void shim_fdtable_clear(void)
{
    struct shim_fd_entry *e, *tmp;

    table_enter();
    HASH_ITER(hh, table, e, tmp)
        remove_entry(e);
    table_leave();
}
