/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/sd_pinned.c — the process-wide account of sd_pinned.h. The limit is read at
 * each charge, so a program that changes its RLIMIT_MEMLOCK is followed at once. */
#include "sd_pinned.h"

#include <errno.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <unistd.h>

static _Atomic uint64_t pinned_used;

size_t sd_pinned_page(void)
{
    static _Atomic size_t cached; /* any thread may be first */
    long p;

    if (!cached) {
        p = sysconf(_SC_PAGESIZE);
        cached = p > 0 ? (size_t)p : 4096;
    }
    return cached;
}

size_t sd_pinned_cost(const void *base, size_t len)
{
    size_t pg = sd_pinned_page();
    uintptr_t start = (uintptr_t)base / pg * pg, end = ((uintptr_t)base + len + pg - 1) / pg * pg;

    return len ? (size_t)(end - start) : 0;
}

size_t sd_pinned_cost_len(size_t len)
{
    size_t pg = sd_pinned_page();

    return len ? (len + pg - 1) / pg * pg + pg : 0;
}

uint64_t sd_pinned_limit(void)
{
    struct rlimit rl;

    if (getrlimit(RLIMIT_MEMLOCK, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY)
        return UINT64_MAX;
    return (uint64_t)rl.rlim_cur;
}

uint64_t sd_pinned_used(void)
{
    return atomic_load(&pinned_used);
}

uint64_t sd_pinned_room(void)
{
    uint64_t limit = sd_pinned_limit(), used = atomic_load(&pinned_used);

    if (limit == UINT64_MAX)
        return UINT64_MAX;
    return used < limit ? limit - used : 0;
}

int sd_pinned_charge(size_t cost)
{
    uint64_t limit = sd_pinned_limit(), used = atomic_load(&pinned_used);

    do {
        if (limit != UINT64_MAX && (cost > limit || used > limit - cost))
            return -ENOMEM;
    } while (!atomic_compare_exchange_weak(&pinned_used, &used, used + cost));
    return 0;
}

void sd_pinned_release(size_t cost)
{
    atomic_fetch_sub(&pinned_used, cost);
}
