/* SPDX-License-Identifier: BSD-3-Clause */
/* preload/shim_guard.c — the per-thread guard depth (see shim_guard.h). */
#include "shim_guard.h"

static _Thread_local int guard_depth;

int shim_guard_active(void) { return guard_depth > 0; }
void shim_guard_enter(void) { guard_depth++; }
void shim_guard_leave(void) { guard_depth--; }

void shim_guard_lock(pthread_mutex_t *m)
{
    shim_guard_enter();
    pthread_mutex_lock(m);
}

void shim_guard_unlock(pthread_mutex_t *m)
{
    pthread_mutex_unlock(m);
    shim_guard_leave();
}
