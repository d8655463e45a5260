/* SPDX-License-Identifier: BSD-3-Clause */
/* common/sd_loop_poll.c — the loop's adaptive busy poll: before a wait that would sleep,
 * epoll is looked at without sleeping for up to a budget that follows how long events
 * take to come (sd_loop_set_busy_poll in sd_loop.h says how), unless a hold is taken. */
#include "sd_loop_int.h"

#include <sched.h>

void sd_loop_set_busy_poll(struct sd_loop *l, unsigned max_us)
{
    l->poll_max_us = max_us;
    l->poll_budget_us = max_us;
}

void sd_loop_poll_hold(struct sd_loop *l, int delta)
{
    if (delta > 0)
        l->poll_holds++;
    else if (delta < 0 && l->poll_holds > 0)
        l->poll_holds--;
}

void sd_loop_poll_stats(const struct sd_loop *l, struct sd_loop_poll_stats *st)
{
    *st = l->poll;
    st->budget_us = l->poll_budget_us;
}

/* The next budget from how long the wait that just ended took (waited_us) and whether
 * it found an event (sd_loop_set_busy_poll says why). */
static void poll_adapt(struct sd_loop *l, uint64_t waited_us, int found)
{
    unsigned b = l->poll_budget_us;

    if (found && waited_us <= l->poll_max_us) {
        b -= b / 8;
        if (2 * waited_us > b)
            b = 2 * waited_us > l->poll_max_us ? l->poll_max_us : (unsigned)(2 * waited_us);
    } else {
        b /= 2;
    }
    l->poll_budget_us = b < LOOP_POLL_MIN_US ? 0 : b;
}

int sd_loop_wait(struct sd_loop *l, struct epoll_event *evs, int wait, int held)
{
    uint64_t t0;
    int n = 0;

    if (!l->poll_max_us || wait == 0)
        return epoll_wait(l->epfd, evs, LOOP_MAX_EVENTS, wait);
    if (held) {
        l->poll.held++;
        return epoll_wait(l->epfd, evs, LOOP_MAX_EVENTS, wait);
    }
    t0 = sd_now_us();
    if (l->poll_budget_us) {
        uint64_t spin = l->poll_budget_us;
        int whole = wait > 0 && (uint64_t)wait * 1000 <= spin; /* the poll is the wait */

        if (whole)
            spin = (uint64_t)wait * 1000;
        while ((n = epoll_wait(l->epfd, evs, LOOP_MAX_EVENTS, 0)) == 0 && sd_now_us() - t0 < spin)
            sched_yield();
        if (n > 0)
            l->poll.hits++;
        else if (n == 0)
            l->poll.misses++;
        if (n == 0 && whole) {
            poll_adapt(l, sd_now_us() - t0, 0);
            return 0;
        }
    }
    if (n == 0) {
        l->poll.sleeps++;
        n = epoll_wait(l->epfd, evs, LOOP_MAX_EVENTS, wait);
    }
    if (n >= 0)
        poll_adapt(l, sd_now_us() - t0, n > 0);
    return n;
}
