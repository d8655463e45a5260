/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/smbd/smbd_memplan.c — the connect-time plan of smbd_memplan.h. */
#include "smbd_memplan.h"

#include "sd_pinned.h"
#include "smbd_conn_int.h"

uint32_t smbd_stride_for(uint32_t size)
{
    return (size + 63u) & ~63u;
}

uint32_t smbd_recv_stride(const struct smbd_config *cfg)
{
    return smbd_stride_for(cfg->max_receive_size);
}

uint32_t smbd_send_stride(const struct smbd_config *cfg)
{
    return smbd_stride_for(cfg->max_send_size);
}

/* Enough send buffers for the whole credit window plus one unsignaled batch, but at
 * most SMBD_POOL_BASE_BYTES of them: with large send sizes that already carries a whole
 * SMB2 READ/WRITE of 1 MiB, and more are added under load. */
uint32_t smbd_send_base_slots(const struct smbd_config *cfg, uint32_t max_send_size)
{
    uint32_t window = (uint32_t)cfg->send_credit_target + SMBD_SIGNAL_EVERY;
    uint32_t cap = SMBD_POOL_BASE_BYTES / smbd_stride_for(max_send_size);

    if (cap < 2 * SMBD_SIGNAL_EVERY)
        cap = 2 * SMBD_SIGNAL_EVERY;
    return window < cap ? window : cap;
}

size_t smbd_memplan_buffers_cost(const struct smbd_config *cfg)
{
    return sd_pinned_cost_len((size_t)cfg->receive_credit_max * smbd_recv_stride(cfg)) +
           sd_pinned_cost_len((size_t)smbd_send_base_slots(cfg, cfg->max_send_size) *
                              smbd_send_stride(cfg));
}

/* What the permanent buffers pin with credits credits (each is one registration), and
 * the device's queues. */
static uint64_t fixed_cost(const struct smbd_config *cfg, uint16_t credits)
{
    struct smbd_config c = *cfg;

    c.receive_credit_max = credits < cfg->receive_credit_max ? credits : cfg->receive_credit_max;
    c.send_credit_target = credits < cfg->send_credit_target ? credits : cfg->send_credit_target;
    return smbd_memplan_buffers_cost(&c) + SMBD_MEMPLAN_QUEUES;
}

/* Gives p the largest I/O, a multiple of 64 KiB and at most io_max, whose reserve fits
 * beside p's permanent buffers in room: 1 when that is at least least, else 0 (p unchanged). */
static int shrink_io(struct smbd_memplan *p, uint64_t room, uint32_t io_max, uint32_t least)
{
    uint64_t page = sd_pinned_page(), io;

    if (room <= p->fixed + page)
        return 0;
    io = (room - p->fixed - page) / SMBD_MEMPLAN_MIN_IO * SMBD_MEMPLAN_MIN_IO;
    if (io > io_max)
        io = io_max;
    if (io < least)
        return 0;
    p->io = (uint32_t)io;
    p->reserve = sd_pinned_cost_len(p->io);
    return 1;
}

enum smbd_memplan_fit smbd_memplan_make(const struct smbd_config *cfg, uint32_t io,
                                        uint64_t room, struct smbd_memplan *p)
{
    uint16_t most = cfg->receive_credit_max > cfg->send_credit_target ? cfg->receive_credit_max
                                                                      : cfg->send_credit_target;
    uint32_t io_first = io < SMBD_MEMPLAN_IO_FIRST ? io : SMBD_MEMPLAN_IO_FIRST;
    uint32_t io_min = io < SMBD_MEMPLAN_MIN_IO ? io : SMBD_MEMPLAN_MIN_IO;
    uint16_t c;

    p->credits = most;
    p->io = io;
    p->fixed = fixed_cost(cfg, most);
    p->full = p->fixed + SMBD_MEMPLAN_FULL_IOS * sd_pinned_cost_len(io);
    p->need_min = fixed_cost(cfg, SMBD_MEMPLAN_MIN_CREDITS) + sd_pinned_cost_len(io_min);
    p->reserve = sd_pinned_cost_len(io);
    if (room >= p->fixed + p->reserve)
        return SMBD_MEMPLAN_FITS;
    if (shrink_io(p, room, io, io_first)) /* 1: the I/O, down to 1 MiB */
        return SMBD_MEMPLAN_SHRUNK;
    /* 2: the credits, down to SMBD_MEMPLAN_MIN_CREDITS, with a 1 MiB I/O */
    p->io = io_first;
    p->reserve = sd_pinned_cost_len(io_first);
    for (c = most; c > SMBD_MEMPLAN_MIN_CREDITS;) {
        c--;
        p->credits = c;
        p->fixed = fixed_cost(cfg, c);
        if (room >= p->fixed + p->reserve)
            return SMBD_MEMPLAN_SHRUNK;
    }
    /* 3: the I/O, down to 64 KiB */
    return shrink_io(p, room, io, io_min) ? SMBD_MEMPLAN_SHRUNK : SMBD_MEMPLAN_REFUSED;
}
