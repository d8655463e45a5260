/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/smbd/smbd_credits.c — receive-credit management before each send (MS-SMBD
 * 3.1.5.9). Every receive buffer of the pool stays posted (fragments are copied out
 * and the buffer reposted at once), so granting a credit means handing the peer
 * one of the posted receives it does not hold a credit for yet. */
#include "smbd_conn_int.h"

/* Credits the peer should hold: what it asked for, within ReceiveCreditMax, and at
 * least SMBD_MIN_PEER_CREDITS. A peer holding one credit may spend it only on a
 * message that grants credits back (3.1.5.1); three credits let a refill at one
 * credit left never be triggered again by the peer's own credit-only answer. */
static uint32_t peer_target(const struct smbd_conn *c)
{
    uint32_t t = c->receive_credit_target;

    if (t < SMBD_MIN_PEER_CREDITS)
        t = SMBD_MIN_PEER_CREDITS;
    return t > c->neg.receive_credit_max ? c->neg.receive_credit_max : t;
}

/* 3.1.5.9: while we hold our last send credit with messages queued, offer one
 * more credit than the target so our next message may spend that credit. */
static uint32_t grant_target(const struct smbd_conn *c)
{
    uint32_t t = peer_target(c);

    if (c->send_credits <= 1 && c->send_queue.head && t <= c->receive_credits)
        t = c->receive_credits + 1;
    return t > c->neg.receive_credit_max ? c->neg.receive_credit_max : t;
}

uint32_t smbd_credits_peek_grant(const struct smbd_conn *c)
{
    uint32_t target = grant_target(c), ungranted = c->recv_posted - c->receive_credits, n;

    if (c->recv_paused)
        /* 3.1.6.2 while paused: a keepalive asks the peer to answer, which it can do only
         * holding a credit; one credit per keepalive bounds what may arrive meanwhile. */
        return c->keepalive == SMBD_KA_PENDING && c->receive_credits == 0 && ungranted > 0;
    if (target <= c->receive_credits)
        return 0;
    n = target - c->receive_credits;
    return n < ungranted ? n : ungranted;
}

uint16_t smbd_credits_take_grant(struct smbd_conn *c)
{
    uint32_t n = smbd_credits_peek_grant(c);

    c->receive_credits += n;
    c->stats.credits_granted += n;
    return (uint16_t)n;
}

/* 3.1.5.8 asks for a prompt credit message whenever credits can be added; we batch:
 * a credit-only message goes out once the peer is down to below half its target.
 * The refill lifts it to the target T, and the peer's own credit-only answer costs
 * one credit, leaving T - 1 > (T - 1) / 2: refills can never ping-pong. */
int smbd_credits_refill_due(const struct smbd_conn *c)
{
    return c->receive_credits <= (peer_target(c) - 1) / 2 && smbd_credits_peek_grant(c) > 0;
}
