/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/bridge/smbd_bridge.c — the data pump between a Direct-TCP byte stream and an SMB
 * Direct link on an sd_loop (see smbd_bridge.h): starting a bridge, the stream's events,
 * and bridge_sync, which runs after every link event and every stream event, outside
 * engine calls: engine upcalls only record state, bridge_sync applies flow control and
 * moves the bridge towards its end. Receive credits are paused above BRIDGE_STREAM_HIGH
 * bytes queued for the stream and resumed below BRIDGE_STREAM_LOW.
 * The rest of the bridge: bridge_to_stream.c (link -> stream), bridge_from_stream.c
 * (stream -> link), bridge_end.c (half-close, program exit, flushing, disconnect,
 * failure and the end itself), bridge_state.c (its state's changes); bridge_int.h holds
 * the struct. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bridge_framer.h"
#include "bridge_int.h"
#include "bridge_pool.h"
#include "log.h"
#include "sd_libc.h"
#include "smbd_link.h"

void smbd_bridge_get_stats(const struct smbd_bridge *b, struct smbd_bridge_stats *st)
{
    memset(st, 0, sizeof(*st));
    smbd_conn_get_stats(b->conn, &st->smbd);
    smbd_conn_query(b->conn, &st->params);
    st->stream_bytes_in = b->in.bytes;
    st->stream_bytes_fed = b->in.fed;
    st->stream_bytes_out = b->out.bytes;
    st->stream_bytes_spliced = b->out.splice.bytes;
    st->stream_bytes_adopted = b->out.adopted;
    if (b->chan)
        bridge_chan_get_stats(b->chan, sd_now_ms(), &st->chan);
}

static void bridge_host_fail(void *ctx, int err, const char *why)
{
    bridge_fail(ctx, err, "%s", why);
}

static size_t bridge_host_backlog(void *ctx)
{
    struct smbd_bridge *b = ctx;

    return bridge_outq_len(&b->out.queue);
}

static void bridge_host_inline_io(void *ctx)
{
    struct smbd_bridge *b = ctx;

    if (b->on_inline_io)
        b->on_inline_io(b->ctx);
}

static int bridge_host_signing_key(void *ctx, uint64_t session_id, struct smb2_sign_key *key)
{
    struct smbd_bridge *b = ctx;

    return b->signing_key ? b->signing_key(b->ctx, session_id, key) : -1;
}

static const struct smbd_upper bridge_upper = {
    .deliver_fragment = bridge_deliver_fragment,
    .invalidated = bridge_invalidated,
    .rdma_done = bridge_rdma_done,
    .terminated = bridge_terminated,
};

static void bridge_watch_stream(struct smbd_bridge *b);

static void bridge_stream_cb(void *ctx, int revents)
{
    struct smbd_bridge *b = ctx;

    if (b->state == BRIDGE_FLUSHING) {
        bridge_flushing_stream_event(b, revents);
        bridge_sync(b);
        return;
    }
    if (revents & SD_EV_ERR) {
        int soerr = 0;
        socklen_t sl = sizeof(soerr);

        sd_libc()->getsockopt(b->fd, SOL_SOCKET, SO_ERROR, &soerr, &sl);
        bridge_fail(b, soerr ? -soerr : -EIO, "stream error: %s",
                    strerror(soerr ? soerr : EIO));
        return;
    }
    if (revents & SD_EV_OUT) {
        bridge_flush(b);
        if (bridge_ended(b))
            return;
    }
    if (revents & SD_EV_HUP)
        b->hup = 1;
    if ((revents & (SD_EV_IN | SD_EV_HUP)) && (b->watched & SD_EV_IN))
        bridge_read_stream(b);
    bridge_sync(b);
}

static void bridge_watch_stream(struct smbd_bridge *b)
{
    int want = 0, rc = 0;

    if (b->state == BRIDGE_FLUSHING)
        want |= SD_EV_IN; /* read and dropped */
    else if (bridge_reads_stream(b) && !bridge_stream_held(b))
        want |= SD_EV_IN;
    if (bridge_outq_len(&b->out.queue) > 0)
        want |= SD_EV_OUT;
    if (want == 0 && b->hup)
        want = -1; /* a hung-up fd would report HUP forever: stop watching it */
    if (want == b->watched)
        return;
    if (want < 0)
        rc = sd_loop_del_fd(b->loop, b->fd);
    else if (b->watched < 0)
        rc = sd_loop_add_fd(b->loop, b->fd, want, bridge_stream_cb, b);
    else
        rc = sd_loop_mod_fd(b->loop, b->fd, want);
    b->watched = want;
    if (rc < 0)
        bridge_fail(b, rc, "cannot watch the stream: %s", strerror(-rc));
}

/* While the program has BRIDGE_POLL_HOLD_MIN bytes or more of channel I/O in flight, the
 * loop does not busy-poll: what comes next is bulk data and answers a transfer's time away,
 * which a wake-up costs little against, and polling for them only takes the CPU from the
 * threads that move them. The answers to small requests, and to small channel I/O (a small
 * file's READ), are still polled for. Only the client role (the shim) reports I/O busy:
 * the relay's short poll is left as it is. */
static void bridge_poll_hint(struct smbd_bridge *b)
{
    int want = !bridge_ended(b) && b->chan && bridge_chan_busy(b->chan) &&
               bridge_chan_mem_used(b->chan) >= BRIDGE_POLL_HOLD_MIN;

    if (want != b->poll_held) {
        sd_loop_poll_hold(b->loop, want ? 1 : -1);
        b->poll_held = want;
    }
}

static void bridge_sync_state(struct smbd_bridge *b)
{
    uint64_t now = sd_now_ms();
    size_t outq = bridge_outq_len(&b->out.queue);

    if (!bridge_ended(b) && !b->out.blocked && outq > 0) {
        bridge_flush(b); /* fragments gathered during this event, without waiting for POLLOUT */
        outq = bridge_outq_len(&b->out.queue);
    }
    if (bridge_ended(b))
        return;
    if (b->state == BRIDGE_FLUSHING) { /* the link is gone: only the stream's output is left */
        bridge_flush_step(b);
        if (!bridge_ended(b))
            bridge_watch_stream(b);
        return;
    }
    if (!b->out.recv_paused && outq >= BRIDGE_STREAM_HIGH) {
        b->out.recv_paused = 1;
        smbd_conn_pause_receive(b->conn, 1, now);
    } else if (b->out.recv_paused && outq <= BRIDGE_STREAM_LOW) {
        b->out.recv_paused = 0;
        smbd_conn_pause_receive(b->conn, 0, now); /* the credits go out before the loop sleeps */
    }
    if (b->in.send_blocked && smbd_conn_send_queued(b->conn) <= BRIDGE_SEND_LOW) {
        b->in.send_blocked = 0;
        bridge_send_buffered(b, now); /* messages already in the framer need no event */
    }
    bridge_mem_wait(b, now);
    if (b->state == BRIDGE_FINISHING && !bridge_stream_held(b))
        bridge_read_stream(b); /* to the end of what the exiting program wrote */
    bridge_disconnect_when_done(b, now);
    if (!bridge_ended(b))
        bridge_watch_stream(b);
}

void bridge_sync(struct smbd_bridge *b)
{
    bridge_sync_state(b);
    bridge_poll_hint(b);
}

static void bridge_after_link(void *ctx)
{
    bridge_sync(ctx);
}

static uint64_t or_unbounded(uint64_t limit)
{
    return limit ? limit : UINT64_MAX;
}

static int stream_is_tcp(int fd)
{
    int domain = 0;
    socklen_t sl = sizeof(domain);

    return sd_libc()->getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &sl) == 0 &&
           (domain == AF_INET || domain == AF_INET6);
}

struct smbd_bridge *smbd_bridge_start(struct sd_loop *loop, struct smbd_link *link, int stream_fd,
                                      const struct smbd_bridge_opts *opts, bridge_end_fn on_end,
                                      void *ctx)
{
    struct smbd_bridge *b = calloc(1, sizeof(*b));
    struct smbd_params p;
    int flags = fcntl(stream_fd, F_GETFL), rc;

    if (!b || flags < 0 || fcntl(stream_fd, F_SETFL, flags | O_NONBLOCK) < 0 ||
        smbd_conn_query(smbd_link_conn(link), &p) < 0) {
        sd_error("bridge: cannot start on fd %d", stream_fd);
        goto fail;
    }
    *b = (struct smbd_bridge){ .loop = loop, .link = link, .conn = smbd_link_engine(link),
                               .fd = stream_fd, .is_tcp = stream_is_tcp(stream_fd),
                               .watched = -1, .state = BRIDGE_OPEN,
                               .on_end = on_end, .ctx = ctx,
                               .on_inline_io = opts ? opts->on_inline_io : NULL,
                               .on_request = opts ? opts->on_request : NULL,
                               .signing_key = opts ? opts->signing_key : NULL,
                               .role = opts ? opts->channel : BRIDGE_CHAN_OFF,
                               .half_close_ms = opts && opts->half_close_ms
                                                    ? opts->half_close_ms
                                                    : SMBD_BRIDGE_HALF_CLOSE_MS,
                               .close_ms = opts && opts->close_ms ? opts->close_ms
                                                                  : SMBD_BRIDGE_CLOSE_MS };
    smb2_pending_init(&b->pending);
    bridge_pool_ref(); /* released in the end, or below on failure */
    bridge_outq_init(&b->out.queue, BRIDGE_OUTQ_BASE, BRIDGE_OUTQ_IDLE);
    bridge_out_choose(b, opts && opts->splice_reads);
    bridge_buf_init(&b->out.held, BRIDGE_OUTQ_BASE, BRIDGE_OUTQ_IDLE);
    bridge_buf_init(&b->out.whole, BRIDGE_OUTQ_BASE, BRIDGE_OUTQ_IDLE);
    if (opts && opts->channel != BRIDGE_CHAN_OFF) {
        const struct bridge_chan_host host = { .conn = b->conn, .ctx = b,
                                               .remote_invalidation =
                                                   smbd_link_provider(link)->remote_invalidation,
                                               .to_stream = bridge_host_to_stream,
                                               .fail = bridge_host_fail,
                                               .inline_io = bridge_host_inline_io,
                                               .signing_key = bridge_host_signing_key,
                                               .stream_backlog = bridge_host_backlog,
                                               .take_message = bridge_host_take_message,
                                               .mem_limit = or_unbounded(opts->channel_memory),
                                               .mem_limit_total =
                                                   or_unbounded(opts->channel_memory_total),
                                               .pin_grace_ms = opts->pin_grace_ms
                                                                   ? opts->pin_grace_ms
                                                                   : SMBD_BRIDGE_PIN_GRACE_MS };

        if (!(b->chan = bridge_chan_new(opts->channel, opts->channel_threshold, &host)))
            goto fail;
    }
    /* With the channel a client's large WRITE leaves as a small request: the framer
     * takes any Direct-TCP length, and what still cannot be sent inline is refused by
     * the engine (fail_too_large). */
    rc = bridge_framer_init(&b->in.framer, !b->chan && p.neg.max_fragmented_send_size <
                                                         BRIDGE_FRAMER_MAX_MSG
                                            ? p.neg.max_fragmented_send_size
                                            : BRIDGE_FRAMER_MAX_MSG);
    if (rc < 0 || bridge_end_reserve(b) < 0)
        goto fail;
    smbd_conn_set_send_low_water(b->conn, BRIDGE_SEND_LOW);
    smbd_link_set_upper(link, &bridge_upper, b);
    rc = smbd_link_attach(link, loop, bridge_after_link, b);
    if (rc < 0) {
        smbd_link_set_upper(link, NULL, NULL);
        goto fail;
    }
    if (smbd_conn_is_terminated(b->conn))
        bridge_fail(b, -ECONNRESET, "SMB Direct connection ended before the bridge started");
    bridge_sync(b);
    return b;

fail:
    if (b && b->link) {
        if (b->end_timer > 0)
            sd_loop_cancel_timer(loop, b->end_timer);
        bridge_chan_free(b->chan);
        bridge_pool_unref();
    }
    free(b);
    smbd_link_free(link);
    close(stream_fd);
    return NULL;
}

