/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/smbd/smbd_pin.c — every provider registration of a connection, charged to the
 * process's pinned-memory account (sd_pinned.h) when the provider pins memory
 * (ops->pins_memory: the kernel counts it against RLIMIT_MEMLOCK). A connection may hold a
 * reserve, charged before it is set up: its permanent buffers draw from it as the
 * connection starts, and what is left serves one I/O at a time (a channel buffer, or
 * send buffers beyond the permanent ones), so that I/O never has to find room in the
 * process's account later, whatever other connections hold then. */
#include "smbd_conn_int.h"

#include <errno.h>

#include "log.h"
#include "sd_pinned.h"

int smbd_reg(struct smbd_conn *c, void *base, size_t len, int access, int from_reserve,
             struct sd_mr *mr, size_t *drawn)
{
    size_t cost = c->ops->pins_memory ? sd_pinned_cost(base, len) : 0, from = 0;
    int err;

    if (cost && from_reserve && cost <= c->pin_reserve_free)
        from = cost;
    else if (cost && sd_pinned_charge(cost) < 0)
        return -ENOMEM;
    c->pin_reserve_free -= from;
    err = c->ops->reg_mr(c->qp, base, len, access, mr);
    if (err) {
        c->pin_reserve_free += from;
        if (cost && !from)
            sd_pinned_release(cost);
        return err;
    }
    *drawn = from;
    return 0;
}

int smbd_dereg(struct smbd_conn *c, struct sd_mr *mr, size_t drawn)
{
    size_t cost = c->ops->pins_memory ? sd_pinned_cost(mr->base, mr->length) : 0;
    int err = c->ops->dereg_mr(c->qp, mr);

    c->pin_reserve_free += drawn;
    if (cost > drawn)
        sd_pinned_release(cost - drawn);
    return err;
}

void smbd_conn_adopt_reserve(struct smbd_conn *c, size_t bytes, size_t buffers_planned)
{
    c->pin_buffers_planned += buffers_planned;
    c->pin_reserve += bytes;
    c->pin_reserve_free += bytes;
}

void smbd_pin_settle_reserve(struct smbd_conn *c, size_t drawn)
{
    c->pin_reserve -= drawn;
}

void smbd_pin_return_reserve(struct smbd_conn *c, size_t bytes)
{
    if (bytes > c->pin_reserve_free)
        bytes = c->pin_reserve_free;
    c->pin_reserve -= bytes;
    c->pin_reserve_free -= bytes;
    sd_pinned_release(bytes);
}

void smbd_pin_return_unplanned(struct smbd_conn *c)
{
    /* Counted as the plan counts (sd_pinned_cost_len): the page of slack each permanent
     * buffer was planned with stays in the reserve, whose I/O may need it. The negotiate
     * message's buffer gives what it drew back to the reserve itself. */
    size_t used = sd_pinned_cost_len(c->recv_mr.length) + sd_pinned_cost_len(c->chunks->mr.length);
    if (c->pin_buffers_planned >= used + sd_pinned_page()) {
        sd_info("the peer receives messages of at most %u bytes and sends at most %u: %zu KiB "
                "of registered memory planned for buffers is left to I/O",
                (unsigned)c->neg.max_send_size, (unsigned)c->neg.max_receive_size,
                (c->pin_buffers_planned - used) / 1024);
        smbd_pin_return_reserve(c, c->pin_buffers_planned - used);
    }
    c->pin_buffers_planned = 0;
}

void smbd_pin_release_reserve(struct smbd_conn *c)
{
    sd_pinned_release(c->pin_reserve);
    c->pin_reserve = c->pin_reserve_free = 0;
}

void smbd_pin_make_room(struct smbd_conn *c, size_t len)
{
    if (c->ops->pins_memory && sd_pinned_cost_len(len) > c->pin_reserve_free)
        smbd_send_pool_shrink(c, UINT64_MAX);
}

int smbd_conn_can_register(const struct smbd_conn *c, size_t len)
{
    size_t cost = sd_pinned_cost_len(len);

    return !c->ops->pins_memory || cost <= c->pin_reserve_free || cost <= sd_pinned_room();
}

int smbd_conn_reserve_in_use(const struct smbd_conn *c)
{
    return c->pin_reserve_free < c->pin_reserve;
}
