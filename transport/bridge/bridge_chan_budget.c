/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/bridge/bridge_chan_budget.c — the channel's buffers and the memory budget
 * they are charged to, per connection and per process (bridge_chan_host.mem_limit,
 * mem_limit_total), and the wait for registered memory (RLIMIT_MEMLOCK) an I/O takes
 * when the kernel refuses its registration. */
#include "bridge_chan_int.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bridge_pool.h"
#include "sd_pinned.h"

/* Buffer bytes of every connection of the process (the engine may run one loop per
 * thread: atomic). */
static _Atomic uint64_t process_mem_used;

uint64_t bridge_chan_process_mem_used(void)
{
    return atomic_load(&process_mem_used);
}

/* The connection's budget counts its buffers and the bytes its stream has not taken yet
 * (channel data moved there stays in memory until the program or backend reads it). A
 * connection holding nothing may exceed its own (one I/O always proceeds), not the
 * process's unless the process holds nothing either: memory that others hold is freed
 * as their I/O completes, whatever this connection does. */
int bridge_chan_budget_allows(const struct bridge_chan *ch, uint64_t len)
{
    uint64_t process = atomic_load(&process_mem_used);
    uint64_t held = ch->mem_used + (ch->host.stream_backlog ? ch->host.stream_backlog(ch->host.ctx)
                                                              : 0);

    if (held > 0 && held + len > ch->host.mem_limit)
        return 0;
    return process == 0 || process + len <= ch->host.mem_limit_total;
}

/* The budget said no (-ENOMEM), or the kernel did (-ENOMEM, -EPERM, -EAGAIN). */
int bridge_chan_refused_for_memory(int rc)
{
    return rc == -ENOMEM || rc == -EPERM || rc == -EAGAIN;
}

/* A wait is counted once, from the first refusal to the I/O getting its memory. */
int bridge_chan_mem_wait(struct bridge_chan *ch, enum bridge_chan_queue q, uint64_t now)
{
    if (!ch->mem_waiting[q]) {
        ch->mem_waiting[q] = 1;
        ch->mem_wait_since[q] = now;
        ch->stats.mem_waits++;
    }
    return BRIDGE_CHAN_WAIT;
}

void bridge_chan_mem_got(struct bridge_chan *ch, enum bridge_chan_queue q, uint64_t now)
{
    ch->pin_wait_since = 0;
    ch->stats.mem_wait_ms += bridge_chan_mem_waited(ch, q, now);
    ch->mem_waiting[q] = 0;
}

/* The I/O waits (BRIDGE_CHAN_WAIT, offered again) while memory may still come free: this
 * connection's or another's channel I/O holds some, or for a grace time (host.pin_grace_ms)
 * in which idle send buffers are given back. With nothing to wait for, the connection ends naming the
 * cause (-1): never a message the peer must reject. */
int bridge_chan_pin_wait(struct bridge_chan *ch, enum bridge_chan_queue q, uint32_t len, int rc,
                         uint64_t now)
{
    char why[400];

    if (!ch->pin_wait_since)
        ch->pin_wait_since = now ? now : 1;
    if (atomic_load(&process_mem_used) > 0 || smbd_conn_reserve_in_use(ch->host.conn) ||
        now < ch->pin_wait_since + ch->host.pin_grace_ms)
        return bridge_chan_mem_wait(ch, q, now);
    snprintf(why, sizeof(why), "RDMA channel: no registered memory for a %u-byte I/O buffer "
             "(%s) with no other I/O in flight for %u ms: the process has %llu bytes "
             "registered, RLIMIT_MEMLOCK allows %llu; raise RLIMIT_MEMLOCK (ulimit -l, "
             "LimitMEMLOCK=, /etc/security/limits.d)", len, strerror(rc ? -rc : ENOMEM),
             ch->host.pin_grace_ms, (unsigned long long)sd_pinned_used(),
             (unsigned long long)sd_pinned_limit());
    ch->host.fail(ch->host.ctx, rc ? rc : -ENOMEM, why);
    return -1;
}

static void charge(struct bridge_chan *ch, const struct bridge_chan_buf *b)
{
    ch->mem_used += b->cap;
    atomic_fetch_add(&process_mem_used, b->cap);
    if (ch->mem_used > ch->stats.mem_peak)
        ch->stats.mem_peak = ch->mem_used;
}

struct bridge_chan_buf *bridge_chan_buf_new_charged(struct bridge_chan *ch, uint32_t len)
{
    struct bridge_chan_buf *b = calloc(1, sizeof(*b));

    if (!b)
        return NULL;
    if (!(b->alloc = bridge_pool_get(len, &b->cap))) {
        free(b);
        return NULL;
    }
    b->mem = b->alloc;
    b->len = len;
    charge(ch, b);
    return b;
}

struct bridge_chan_buf *bridge_chan_buf_new(struct bridge_chan *ch, uint32_t len, int *busy)
{
    *busy = !bridge_chan_budget_allows(ch, len);
    return *busy ? NULL : bridge_chan_buf_new_charged(ch, len);
}

/* No copy: the message stays where it is until the buffer is freed. */
struct bridge_chan_buf *bridge_chan_buf_take_message(struct bridge_chan *ch, const uint8_t *data,
                                                     uint32_t len)
{
    struct bridge_chan_buf *b = calloc(1, sizeof(*b));

    if (!b)
        return NULL;
    if (ch->host.take_message(ch->host.ctx, &b->alloc, &b->cap) < 0) {
        free(b);
        return NULL;
    }
    b->mem = (uint8_t *)(uintptr_t)data;
    b->len = len;
    b->taken = 1;
    charge(ch, b);
    return b;
}

int bridge_chan_takes_message(const struct bridge_chan *ch, uint32_t len)
{
    return len >= BRIDGE_POOL_MIN && ch->host.take_message;
}

struct bridge_chan_buf *bridge_chan_buf_from_stream(struct bridge_chan *ch, const uint8_t *data,
                                                    uint32_t len)
{
    struct bridge_chan_buf *b;

    if (bridge_chan_takes_message(ch, len))
        return bridge_chan_buf_take_message(ch, data, len);
    if ((b = bridge_chan_buf_new_charged(ch, len)))
        memcpy(b->mem, data, len);
    return b;
}

/* MS-SMBD 3.1.4.4: remote access ends before the memory is reused or freed. */
void bridge_chan_buf_free(struct bridge_chan *ch, struct bridge_chan_buf *b)
{
    if (!b)
        return;
    if (b->reg)
        smbd_conn_deregister_buffer(ch->host.conn, b->reg);
    ch->mem_used -= b->cap;
    atomic_fetch_sub(&process_mem_used, b->cap);
    bridge_pool_put(b->alloc, b->cap);
    free(b);
}

void bridge_chan_free_released(struct bridge_chan *ch, struct chan_table *t)
{
    struct chan_released r;

    while (chan_table_take_released(t, &r))
        bridge_chan_buf_free(ch, r.cookie);
}

/* When the bridge takes the memory over, b no longer owns it (bridge_chan_buf_free then
 * only uncharges). */
int bridge_chan_to_stream_buf(struct bridge_chan *ch, const struct iovec *iov, int iovcnt,
                              struct bridge_chan_buf *b)
{
    int rc = ch->host.to_stream(ch->host.ctx, iov, iovcnt, b->alloc, b->cap);

    if (rc == 1)
        b->alloc = NULL;
    return rc;
}
