/* SPDX-License-Identifier: BSD-3-Clause */
/* preload/shim_guard.h — a per-thread mark on the shim's own work (dialing, the engine
 * thread): an interposed connect() made there goes straight to libc. A safety net,
 * not the mechanism: the shim and the core call libc through sd_libc and never reach
 * the interposers; the guard covers the libraries they call into (rdma-core, libnl,
 * the resolver), whose socket calls do. */
#ifndef SMBDIRECT_SHIM_GUARD_H
#define SMBDIRECT_SHIM_GUARD_H

#include <pthread.h>

/* 1 when the calling thread is inside the shim's own work. */
int shim_guard_active(void);
void shim_guard_enter(void);
void shim_guard_leave(void);

/* A lock of the shim's taken with the guard set, and released with it: a signal handler
 * that interrupts the holder and calls an interposer (tevent's write to its signal pipe,
 * a signing call) is passed straight on instead of waiting for the lock for ever. */
void shim_guard_lock(pthread_mutex_t *m);
void shim_guard_unlock(pthread_mutex_t *m);

#endif
