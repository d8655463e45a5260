/* SPDX-License-Identifier: BSD-3-Clause */
/* common/sd_clock.c — the monotonic clock (see sd_clock.h). */
#include "sd_clock.h"

#include <errno.h>
#include <poll.h>
#include <time.h>

uint64_t sd_now_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

uint64_t sd_now_ms(void)
{
    return sd_now_us() / 1000u;
}

int sd_ms_until(uint64_t deadline_ms)
{
    uint64_t now;

    if (deadline_ms == UINT64_MAX)
        return -1;
    now = sd_now_ms();
    if (deadline_ms <= now)
        return 0;
    return deadline_ms - now > INT32_MAX ? INT32_MAX : (int)(deadline_ms - now);
}

int sd_poll_fd(int fd, short events, uint64_t deadline_ms)
{
    struct pollfd p = { .fd = fd, .events = events };
    int rc;

    while ((rc = poll(&p, 1, sd_ms_until(deadline_ms))) < 0 && errno == EINTR)
        ;
    return rc > 0 ? 0 : rc == 0 ? -ETIMEDOUT : -errno;
}
