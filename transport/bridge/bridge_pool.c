/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/bridge/bridge_pool.c — the bridge's buffer cache (see bridge_pool.h). The idle
 * buffers are a short list (at most BRIDGE_POOL_IDLE_MAX / BRIDGE_POOL_MIN entries, in
 * practice a few 8 MiB ones) under one mutex: a process may run several loop threads.
 * An idle buffer holds its own list entry in its first bytes. Large buffers are mappings
 * of their own (never malloc's heap), so one whose pages a socket still references can be
 * unmapped (bridge_pool_drop) with no other memory ever landing on those pages, between
 * guard pages. */
#include "bridge_pool.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

struct idle_buf {
    struct idle_buf *next;
    size_t cap;
};

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static struct idle_buf *idle_list;
static size_t idle_bytes;
static unsigned users;

/* A large buffer: its own mapping, with an inaccessible page on either side, so a run
 * past either end faults at once (the sanitizers do not watch mappings). */
static void *large_alloc(size_t len, size_t *cap)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t size = (len + page - 1) / page * page;
    uint8_t *map = mmap(NULL, size + 2 * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

    if (map == MAP_FAILED)
        return NULL;
    if (mprotect(map + page, size, PROT_READ | PROT_WRITE) < 0) {
        munmap(map, size + 2 * page);
        return NULL;
    }
    *cap = size;
    return map + page;
}

static void large_free(void *mem, size_t cap)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);

    munmap((uint8_t *)mem - page, cap + 2 * page);
}

static void free_idle_locked(void)
{
    while (idle_list) {
        struct idle_buf *b = idle_list;

        idle_list = b->next;
        large_free(b, b->cap);
    }
    idle_bytes = 0;
}

void bridge_pool_ref(void)
{
    pthread_mutex_lock(&pool_lock);
    users++;
    pthread_mutex_unlock(&pool_lock);
}

void bridge_pool_unref(void)
{
    pthread_mutex_lock(&pool_lock);
    if (users > 0 && --users == 0)
        free_idle_locked();
    pthread_mutex_unlock(&pool_lock);
}

void *bridge_pool_get(size_t len, size_t *cap)
{
    struct idle_buf **best = NULL, *b;
    void *mem;

    if (len >= BRIDGE_POOL_MIN) {
        pthread_mutex_lock(&pool_lock);
        for (struct idle_buf **p = &idle_list; *p; p = &(*p)->next)
            if ((*p)->cap >= len && (*p)->cap / 2 <= len && (!best || (*p)->cap < (*best)->cap))
                best = p;
        if (best) {
            b = *best;
            *best = b->next;
            idle_bytes -= b->cap;
            pthread_mutex_unlock(&pool_lock);
            *cap = b->cap;
            return b;
        }
        pthread_mutex_unlock(&pool_lock);
        return large_alloc(len, cap);
    }
    mem = malloc(len ? len : 1);
    if (mem)
        *cap = len;
    return mem;
}

void bridge_pool_put(void *mem, size_t cap)
{
    struct idle_buf *b = mem;

    if (!mem || cap < BRIDGE_POOL_MIN) {
        free(mem);
        return;
    }
    pthread_mutex_lock(&pool_lock);
    if (users > 0 && idle_bytes + cap <= BRIDGE_POOL_IDLE_MAX) {
        b->cap = cap;
        b->next = idle_list;
        idle_list = b;
        idle_bytes += cap;
        mem = NULL;
    }
    pthread_mutex_unlock(&pool_lock);
    if (mem)
        large_free(mem, cap);
}

void bridge_pool_drop(void *mem, size_t cap)
{
    if (!mem || cap < BRIDGE_POOL_MIN)
        free(mem);
    else
        large_free(mem, cap);
}

size_t bridge_pool_idle(void)
{
    size_t n;

    pthread_mutex_lock(&pool_lock);
    n = idle_bytes;
    pthread_mutex_unlock(&pool_lock);
    return n;
}
