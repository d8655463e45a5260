/* SPDX-License-Identifier: BSD-3-Clause */
/* common/sd_loop_prepare.c — the loop's prepare hooks: an array run before each wait
 * (and at sd_loop_leave), again while a hook reports work; a hook deleted while the
 * hooks run is only marked, and the array compacted once none runs. */
#include "sd_loop_int.h"

#include <errno.h>
#include <stdlib.h>

int64_t sd_loop_add_prepare(struct sd_loop *l, sd_prepare_cb cb, void *ctx)
{
    if (l->nprepares == l->prepares_cap) {
        size_t cap = l->prepares_cap ? l->prepares_cap * 2 : 8;
        struct loop_prepare *np = realloc(l->prepares, cap * sizeof(*np));

        if (!np)
            return -ENOMEM;
        l->prepares = np;
        l->prepares_cap = cap;
    }
    l->prepares[l->nprepares] = (struct loop_prepare){ l->next_prepare_id, cb, ctx };
    l->nprepares++;
    return l->next_prepare_id++;
}

/* Drops the entries deleted while hooks ran. */
static void compact_prepares(struct sd_loop *l)
{
    size_t kept = 0;

    for (size_t i = 0; i < l->nprepares; i++)
        if (l->prepares[i].cb)
            l->prepares[kept++] = l->prepares[i];
    l->nprepares = kept;
}

void sd_loop_del_prepare(struct sd_loop *l, int64_t id)
{
    for (size_t i = 0; i < l->nprepares; i++) {
        if (l->prepares[i].id == id)
            l->prepares[i].cb = NULL;
    }
    if (!l->preparing)
        compact_prepares(l);
}

void sd_loop_prepares_run(struct sd_loop *l)
{
    int again = 1;

    l->preparing = 1;
    for (int round = 0; again && round < LOOP_PREPARE_ROUNDS; round++) {
        again = 0;
        /* A hook added by a hook runs in the same pass (the count is re-read). */
        for (size_t i = 0; i < l->nprepares; i++) {
            struct loop_prepare *p = &l->prepares[i];

            if (p->cb && p->cb(p->ctx))
                again = 1;
        }
    }
    l->preparing = 0;
    compact_prepares(l);
}
