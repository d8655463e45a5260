/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/bridge/bridge_chan.c — the channel's entry points (bridge_chan.h): creates
 * the role asked for and hands each call to it (bridge_chan_client.c, the shim's;
 * bridge_chan_server.c, the relay's) through its hooks. */
#include "bridge_chan_int.h"

struct bridge_chan *bridge_chan_new(enum bridge_chan_role role, uint32_t threshold,
                                    const struct bridge_chan_host *host)
{
    struct smbd_params p;
    uint32_t max_io = 0; /* not established: the channel stays unused */

    if (smbd_conn_query(host->conn, &p) == 0)
        max_io = p.neg.max_read_write_size;
    if (role == BRIDGE_CHAN_SERVER)
        return bridge_chan_server_new(max_io, host);
    return bridge_chan_client_new(role == BRIDGE_CHAN_CLIENT ? threshold : 0, max_io, host);
}

void bridge_chan_free(struct bridge_chan *ch)
{
    if (ch)
        ch->ops->free(ch);
}

int bridge_chan_from_stream(struct bridge_chan *ch, const uint8_t *msg, size_t len,
                            uint64_t now_ms)
{
    return ch->ops->from_stream(ch, msg, len, now_ms);
}

int bridge_chan_from_peer(struct bridge_chan *ch, const uint8_t *msg, size_t len,
                          int first_only)
{
    return ch->ops->from_peer(ch, msg, len, first_only);
}

int bridge_chan_wants_whole(const struct bridge_chan *ch, const uint8_t *msg, size_t len)
{
    return ch->ops->wants_whole && ch->ops->wants_whole(ch, msg, len);
}

int bridge_chan_retry(struct bridge_chan *ch)
{
    return ch->ops->retry ? ch->ops->retry(ch) : 0;
}

int bridge_chan_busy(const struct bridge_chan *ch)
{
    return ch->ops->busy && ch->ops->busy(ch);
}

uint64_t bridge_chan_mem_used(const struct bridge_chan *ch)
{
    return ch->mem_used;
}

void bridge_chan_invalidated(struct bridge_chan *ch, uint32_t token)
{
    if (ch->ops->invalidated)
        ch->ops->invalidated(ch, token);
}

void bridge_chan_rdma_done(struct bridge_chan *ch, uint64_t cookie, int status)
{
    if (ch->ops->rdma_done)
        ch->ops->rdma_done(ch, cookie, status);
}

void bridge_chan_get_stats(const struct bridge_chan *ch, uint64_t now,
                           struct bridge_chan_stats *out)
{
    *out = ch->stats;
    out->mem_held = ch->mem_used;
    for (int q = 0; q < BRIDGE_CHAN_QUEUES; q++) {
        out->mem_waiting += ch->mem_waiting[q];
        out->mem_wait_ms += bridge_chan_mem_waited(ch, q, now);
    }
}
