/* SPDX-License-Identifier: BSD-3-Clause */
/* common/sd_loop_timer.c — the loop's one-shot timers: a binary heap ordered by
 * (time, id), with an id index (uthash) for cancel and re-arm; how long the loop may wait
 * before the first of them. */
#include "sd_loop_int.h"

#include <errno.h>
#include <stdlib.h>

static int timer_before(const struct loop_timer *a, const struct loop_timer *b)
{
    return a->at_ms < b->at_ms || (a->at_ms == b->at_ms && a->id < b->id);
}

static void heap_set(struct sd_loop *l, size_t i, struct loop_timer *t)
{
    l->heap[i] = t;
    t->heap_index = i;
}

static void heap_up(struct sd_loop *l, size_t i)
{
    struct loop_timer *t = l->heap[i];

    while (i > 0 && timer_before(t, l->heap[(i - 1) / 2])) {
        heap_set(l, i, l->heap[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
    heap_set(l, i, t);
}

static void heap_down(struct sd_loop *l, size_t i)
{
    struct loop_timer *t = l->heap[i];

    for (;;) {
        size_t c = 2 * i + 1;

        if (c >= l->heap_len)
            break;
        if (c + 1 < l->heap_len && timer_before(l->heap[c + 1], l->heap[c]))
            c++;
        if (!timer_before(l->heap[c], t))
            break;
        heap_set(l, i, l->heap[c]);
        i = c;
    }
    heap_set(l, i, t);
}

static void heap_remove(struct sd_loop *l, struct loop_timer *t)
{
    size_t i = t->heap_index;
    struct loop_timer *last = l->heap[--l->heap_len];

    if (last == t)
        return;
    heap_set(l, i, last);
    heap_up(l, i);
    heap_down(l, last->heap_index);
}

int64_t sd_loop_add_timer(struct sd_loop *l, uint64_t at_ms, sd_timer_cb cb, void *ctx)
{
    struct loop_timer *t;

    if (!cb)
        return -EINVAL;
    if (l->heap_len == l->heap_cap) {
        size_t cap = l->heap_cap ? 2 * l->heap_cap : 16;
        struct loop_timer **h = realloc(l->heap, cap * sizeof(*h));

        if (!h)
            return -ENOMEM;
        l->heap = h;
        l->heap_cap = cap;
    }
    t = calloc(1, sizeof(*t));
    if (!t)
        return -ENOMEM;
    *t = (struct loop_timer){ .id = l->next_timer_id++, .at_ms = at_ms, .cb = cb, .ctx = ctx };
    HASH_ADD(hh, l->timers_by_id, id, sizeof(t->id), t);
    heap_set(l, l->heap_len++, t);
    heap_up(l, t->heap_index);
    return t->id;
}

void sd_loop_cancel_timer(struct sd_loop *l, int64_t id)
{
    struct loop_timer *t;

    HASH_FIND(hh, l->timers_by_id, &id, sizeof(id), t);
    if (!t)
        return;
    HASH_DEL(l->timers_by_id, t);
    heap_remove(l, t);
    free(t);
}

int sd_loop_rearm_timer(struct sd_loop *l, int64_t id, uint64_t at_ms)
{
    struct loop_timer *t;

    HASH_FIND(hh, l->timers_by_id, &id, sizeof(id), t);
    if (!t)
        return -ENOENT;
    t->at_ms = at_ms;
    heap_up(l, t->heap_index);
    heap_down(l, t->heap_index);
    return 0;
}

int sd_loop_timers_run(struct sd_loop *l, uint64_t now)
{
    int64_t last_id = l->next_timer_id - 1;
    int ran = 0;

    while (l->heap_len > 0 && l->heap[0]->at_ms <= now && l->heap[0]->id <= last_id) {
        struct loop_timer *t = l->heap[0];
        sd_timer_cb cb = t->cb;
        void *ctx = t->ctx;

        HASH_DEL(l->timers_by_id, t);
        heap_remove(l, t);
        free(t);
        cb(ctx, now);
        ran++;
    }
    return ran;
}

int sd_loop_timers_wait_ms(const struct sd_loop *l, int timeout_ms, uint64_t now)
{
    uint64_t next;

    if (l->heap_len == 0)
        return timeout_ms;
    next = l->heap[0]->at_ms;
    if (next <= now)
        return 0;
    if (timeout_ms >= 0 && (uint64_t)timeout_ms < next - now)
        return timeout_ms;
    return next - now > (uint64_t)INT32_MAX ? INT32_MAX : (int)(next - now);
}

int sd_loop_timers_due_before(const struct sd_loop *l, uint64_t t)
{
    return l->heap_len > 0 && l->heap[0]->at_ms < t;
}

void sd_loop_timers_free(struct sd_loop *l)
{
    struct loop_timer *t, *tmp;

    HASH_ITER(hh, l->timers_by_id, t, tmp) {
        HASH_DEL(l->timers_by_id, t);
        free(t);
    }
    free(l->heap);
}
