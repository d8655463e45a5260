/* SPDX-License-Identifier: BSD-3-Clause */
/* common/sd_clock.h — the one clock of the project: CLOCK_MONOTONIC in milliseconds,
 * for timers, deadlines and timeouts everywhere (engine, providers, loop, programs), and
 * in microseconds for the loop's busy poll; and a wait for one fd until a deadline on it. */
#ifndef SMBDIRECT_SD_CLOCK_H
#define SMBDIRECT_SD_CLOCK_H

#include <stdint.h>

uint64_t sd_now_ms(void);
uint64_t sd_now_us(void);

/* Milliseconds from now until deadline_ms, as a poll()/epoll_wait() timeout: 0 once
 * the deadline has passed, capped at INT32_MAX; -1 (wait forever) for UINT64_MAX. */
int sd_ms_until(uint64_t deadline_ms);

/* Waits until fd is ready for events (poll(2) events) or deadline_ms on this clock
 * (UINT64_MAX: no deadline), retrying after a signal: 0, -ETIMEDOUT, or -errno of a
 * failed poll. */
int sd_poll_fd(int fd, short events, uint64_t deadline_ms);

#endif
