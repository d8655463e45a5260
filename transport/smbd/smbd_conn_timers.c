/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/smbd/smbd_conn_timers.c — the Negotiation and Idle Connection timers
 * (MS-SMBD 3.1.2, 3.1.6) as explicit deadlines: the caller passes the time in and
 * asks for the next deadline, so tests drive time without sleeping. */
#include "smbd_conn_int.h"

#include <errno.h>

void smbd_idle_timer_restart(struct smbd_conn *c, uint64_t now_ms)
{
    c->idle_deadline = c->cfg.keepalive_interval_ms ? now_ms + c->cfg.keepalive_interval_ms
                                                    : UINT64_MAX;
}

void smbd_conn_on_timer(struct smbd_conn *c, uint64_t now_ms)
{
    smbd_send_pool_shrink(c, now_ms);
    if (!smbd_is_live(c))
        return;
    if (now_ms >= c->negotiate_deadline) { /* 3.1.6.1 */
        smbd_terminate(c, -ETIMEDOUT, "negotiation did not finish within %u ms (MS-SMBD 3.1.6.1)",
                       (unsigned)c->cfg.negotiate_timeout_ms);
        return;
    }
    if (now_ms >= c->idle_deadline) { /* 3.1.6.2 */
        if (c->keepalive == SMBD_KA_SENT) {
            smbd_terminate(c, -ETIMEDOUT, "the peer did not answer a keepalive within %u ms "
                           "(MS-SMBD 3.1.6.2)", (unsigned)c->cfg.keepalive_timeout_ms);
            return;
        }
        if (c->keepalive == SMBD_KA_PENDING) {
            /* Not sent: the peer holds back our credits, as it does while its reader is
             * paused. That is flow control, not silence: the keepalive goes out with the
             * first credit (a paused peer of ours grants one with its own keepalive, at
             * least every interval). A peer that sends nothing at all for another
             * interval plus the timeout is gone, or starves us on purpose. */
            uint64_t give_up = c->keepalive_due_ms + c->cfg.keepalive_interval_ms +
                               c->cfg.keepalive_timeout_ms;

            if (now_ms >= give_up) {
                smbd_terminate(c, -ETIMEDOUT, "the peer sent nothing for %llu ms and left no "
                               "credit to send a keepalive with (MS-SMBD 3.1.6.2)",
                               (unsigned long long)(now_ms - c->keepalive_due_ms +
                                                    c->cfg.keepalive_interval_ms));
                return;
            }
            c->idle_deadline = now_ms + c->cfg.keepalive_timeout_ms < give_up
                                   ? now_ms + c->cfg.keepalive_timeout_ms : give_up;
            return;
        }
        c->keepalive = SMBD_KA_PENDING;
        c->keepalive_due_ms = now_ms;
        c->idle_deadline = now_ms + c->cfg.keepalive_timeout_ms;
        smbd_send_pump(c, now_ms);
    }
}

uint64_t smbd_conn_next_timer(const struct smbd_conn *c)
{
    uint64_t t = smbd_send_pool_next_shrink(c);

    if (c->negotiate_deadline < t)
        t = c->negotiate_deadline;
    if (c->idle_deadline < t)
        t = c->idle_deadline;
    return t;
}
