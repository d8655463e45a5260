/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/th_pinned.h — registered memory as a real RDMA device makes it, for tests on
 * providers that pin nothing (the fake provider, soft-iWARP): a provider wrapper that
 * declares pins_memory (so the engine budgets against RLIMIT_MEMLOCK) and can refuse
 * registrations past a byte count of its own, as a kernel does when something else in
 * the process pinned memory; and the process's RLIMIT_MEMLOCK lowered for real, restored
 * after. */
#ifndef TH_PINNED_H
#define TH_PINNED_H

#include <stddef.h>
#include <stdint.h>

#include "provider.h"

/* base with pins_memory set and reg_mr/dereg_mr counted (one wrapper: a later call
 * wraps another base instead). */
const struct sd_provider_ops *th_pinning_ops(const struct sd_provider_ops *base);
/* The wrappers refuse (-ENOMEM) a registration that would take the live registered bytes
 * of all of them past bytes (SIZE_MAX: never). */
void th_pinning_refuse_past(size_t bytes);
size_t th_pinning_live(void);  /* bytes registered through the wrappers now */
size_t th_pinning_peak(void);  /* ... at most since th_pinning_refuse_past */
unsigned th_pinning_refused(void); /* registrations refused since th_pinning_refuse_past */

/* RLIMIT_MEMLOCK's soft limit set to bytes (at most the hard limit). */
void th_memlock_set(uint64_t bytes);
/* As it was before the first th_memlock_set. */
void th_memlock_restore(void);

#endif
