/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/sd_pinned.h — the process's registered (pinned) memory, counted against
 * RLIMIT_MEMLOCK. On RDMA hardware and kernel siw/rxe every registered page is pinned and
 * charged to the process's locked-memory limit: a registration past it fails. A process
 * holding CAP_IPC_LOCK (root) is exempt where the kernel pins through ib_umem_get (real
 * NICs, rxe, siw from Linux 6.2), but not on Linux 6.1's siw, and nothing here can tell
 * them apart: the limit is budgeted by for everyone (raise it for full speed). The engine
 * charges every registration on a provider that pins (ops->pins_memory) here first
 * (smbd_pin.c), so it can plan and wait within the limit instead of meeting a refusal.
 * One account for the whole process, safe from any thread. */
#ifndef SMBDIRECT_SD_PINNED_H
#define SMBDIRECT_SD_PINNED_H

#include <stddef.h>
#include <stdint.h>

/* The page size the kernel pins by. */
size_t sd_pinned_page(void);
/* What registering len bytes at base pins: every page the range touches. */
size_t sd_pinned_cost(const void *base, size_t len);
/* The same for a buffer whose address is not known yet (one more page, for alignment). */
size_t sd_pinned_cost_len(size_t len);

/* The process's RLIMIT_MEMLOCK soft limit now, in bytes; UINT64_MAX when unlimited (or
 * unreadable). */
uint64_t sd_pinned_limit(void);
/* Bytes charged now by every connection of the process. */
uint64_t sd_pinned_used(void);
/* sd_pinned_limit() less sd_pinned_used(), never below 0; UINT64_MAX when unlimited. */
uint64_t sd_pinned_room(void);

/* Charges cost bytes: 0, or -ENOMEM (nothing charged) when they would pass the limit. */
int sd_pinned_charge(size_t cost);
void sd_pinned_release(size_t cost);

#endif
