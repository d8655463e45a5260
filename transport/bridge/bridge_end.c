/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/bridge/bridge_end.c — how a bridge ends: the stream's EOF (the program's
 * half-close, whose answers are still awaited), the program's exit (smbd_bridge_finish),
 * the orderly disconnect of the link, the peer's orderly close (flushing what it
 * delivered), failures, and the end itself: everything freed, the stream closed (with
 * EOF, a reset, or drained of what the program still writes) and on_end called. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bridge_int.h"
#include "bridge_pool.h"
#include "log.h"
#include "sd_libc.h"
#include "smbd_link.h"

/* After a failed end of a local (AF_UNIX) stream the program reads EOF, and what it
 * still writes is read and discarded until it closes: it sees an ordinary end of
 * the connection and an error from its protocol layer, not SIGPIPE/EPIPE. */
struct bridge_drain {
    struct sd_loop *loop;
    int fd;
};

/* Reads and drops what fd holds: 1 while it stays open (nothing more now), 0 at its EOF
 * or error. */
static int discard_input(int fd)
{
    char scratch[65536];
    ssize_t n;

    while ((n = read(fd, scratch, sizeof(scratch))) > 0)
        ;
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR);
}

/* The drain's end: at the stream's EOF, or when its loop is freed first (the relay
 * exiting while smbd has not yet closed its side). */
static void bridge_drain_release(void *ctx)
{
    struct bridge_drain *d = ctx;

    close(d->fd);
    free(d);
}

static void bridge_drain_cb(void *ctx, int revents)
{
    struct bridge_drain *d = ctx;

    (void)revents;
    if (discard_input(d->fd))
        return;
    sd_loop_del_fd(d->loop, d->fd);
    bridge_drain_release(d);
}

static void bridge_close_stream(struct smbd_bridge *b)
{
    struct bridge_drain *d;

    if (b->state == BRIDGE_FAILED && b->is_tcp) {
        struct linger lg = { .l_onoff = 1, .l_linger = 0 }; /* close sends RST */

        sd_libc()->setsockopt(b->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
    } else if (b->end_err != 0 && (d = malloc(sizeof(*d))) != NULL) {
        d->loop = b->loop;
        d->fd = b->fd;
        shutdown(b->fd, SHUT_WR);
        if (sd_loop_add_fd_owned(b->loop, b->fd, SD_EV_IN, bridge_drain_cb, d,
                                 bridge_drain_release) == 0)
            return;
        free(d);
    }
    shutdown(b->fd, SHUT_RDWR);
    close(b->fd);
}

static void bridge_end_cb(void *ctx, uint64_t now)
{
    struct smbd_bridge *b = ctx;
    struct smbd_bridge_stats st = { 0 };

    (void)now;
    if (b->close_timer > 0)
        sd_loop_cancel_timer(b->loop, b->close_timer);
    if (b->in.retry_timer > 0)
        sd_loop_cancel_timer(b->loop, b->in.retry_timer);
    if (b->half_close_timer > 0)
        sd_loop_cancel_timer(b->loop, b->half_close_timer);
    smb2_pending_fini(&b->pending);
    if (b->poll_held)
        sd_loop_poll_hold(b->loop, -1);
    /* An orderly end's last, best effort. */
    if (b->end_err == 0 && bridge_outq_len(&b->out.queue) > 0)
        (void)bridge_outq_write(&b->out.queue, b->fd, &b->out.splice, b->out.bytes);
    smbd_bridge_get_stats(b, &st);
    st.reason = b->end_reason;
    bridge_chan_free(b->chan); /* deregisters through the link's engine: before it goes */
    smbd_link_set_upper(b->link, NULL, NULL);
    smbd_link_free(b->link);
    bridge_splice_end(&b->out.splice, b->fd, b->out.bytes);
    bridge_close_stream(b);
    bridge_framer_destroy(&b->in.framer);
    bridge_outq_free(&b->out.queue);
    bridge_buf_free(&b->out.held);
    bridge_buf_free(&b->out.whole);
    if (b->in.unsent.alloc)
        bridge_pool_put(b->in.unsent.alloc, b->in.unsent.cap);
    bridge_pool_unref();
    b->on_end(b->ctx, &st, b->end_err);
    free(b);
}

int bridge_end_reserve(struct smbd_bridge *b)
{
    b->end_timer = sd_loop_add_timer(b->loop, UINT64_MAX, bridge_end_cb, b);
    return b->end_timer < 0 ? (int)b->end_timer : 0;
}

/* Both ends: the state, the first reason, the end scheduled on the loop. */
static void bridge_schedule_end(struct smbd_bridge *b, enum bridge_state final, int err,
                                const char *fmt, va_list ap)
{
    if (bridge_ended(b) || bridge_enter(b, final) < 0)
        return;
    b->end_err = err;
    vsnprintf(b->end_reason, sizeof(b->end_reason), fmt, ap);
    if (b->watched >= 0)
        sd_loop_del_fd(b->loop, b->fd);
    b->watched = -1;
    sd_loop_rearm_timer(b->loop, b->end_timer, 0); /* made by bridge_end_reserve */
    /* What the program sent cannot be carried: say why and what to do. Link losses
     * were logged by the engine already. */
    if (err == -EPROTO || err == -EMSGSIZE)
        sd_error("SMB Direct connection closed: %s", b->end_reason);
    else
        sd_debug("bridge fd %d ending: %s", b->fd, b->end_reason);
}

void bridge_fail(struct smbd_bridge *b, int err, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    bridge_schedule_end(b, BRIDGE_FAILED, err, fmt, ap);
    va_end(ap);
}

void bridge_close(struct smbd_bridge *b, int err, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    bridge_schedule_end(b, BRIDGE_CLOSED, err, fmt, ap);
    va_end(ap);
}

static void bridge_close_timeout_cb(void *ctx, uint64_t now)
{
    struct smbd_bridge *b = ctx;

    (void)now;
    b->close_timer = 0;
    if (b->state == BRIDGE_DISCONNECTING)
        bridge_close(b, 0, "stream closed; SMB Direct disconnect not confirmed in %u ms",
                     (unsigned)b->close_ms);
}

/* Flushing: once every delivered byte is in the stream, it ends with EOF (TCP's FIN
 * after the last byte), not a reset. */
void bridge_flush_step(struct smbd_bridge *b)
{
    if (b->state != BRIDGE_FLUSHING || bridge_outq_len(&b->out.queue) > 0)
        return;
    bridge_close(b, -ECONNRESET, "SMB Direct: the peer closed the connection in order (MS-SMBD "
                 "3.1.7.1); every byte it sent was delivered");
}

void bridge_terminated(void *ctx, int err, const char *reason)
{
    struct smbd_bridge *b = ctx;

    if (bridge_ended(b))
        return;
    if (b->state == BRIDGE_DISCONNECTING && err == 0) {
        bridge_close(b, 0, "stream closed; SMB Direct disconnected");
    } else if (b->state != BRIDGE_DISCONNECTING && smbd_conn_peer_closed(b->conn) &&
               b->out.deliver != BRIDGE_DELIVER_STREAM &&
               b->out.deliver != BRIDGE_DELIVER_WHOLE && bridge_buf_len(&b->out.held) == 0) {
        /* Between messages (none part-way into the stream or gathered for the channel):
         * like TCP, every byte the peer sent before it closed reaches the stream before
         * its end, however slowly the program or backend reads. */
        if (bridge_enter(b, BRIDGE_FLUSHING) == 0)
            bridge_flush_step(b);
    } else {
        bridge_fail(b, err ? err : -ECONNRESET, "SMB Direct: %s", reason);
    }
}

/* Flushing: the stream's writability takes more of the queue; what the program or
 * backend still writes is read and dropped. */
void bridge_flushing_stream_event(struct smbd_bridge *b, int revents)
{
    if (revents & SD_EV_OUT)
        bridge_flush(b);
    /* What the program or backend still writes has nowhere to go: read and dropped,
     * so it never blocks on a full socket. */
    if (!bridge_ended(b) && (revents & (SD_EV_IN | SD_EV_HUP | SD_EV_ERR)) &&
        !discard_input(b->fd)) /* the other side is gone too: nothing left to deliver */
        bridge_close(b, -ECONNRESET, "SMB Direct: the peer closed the connection in order "
                     "(MS-SMBD 3.1.7.1); the stream ended before all was written");
}

static void bridge_half_close_cb(void *ctx, uint64_t now)
{
    struct smbd_bridge *b = ctx;

    (void)now;
    b->half_close_timer = 0;
    if (b->state == BRIDGE_HALF_CLOSED || b->state == BRIDGE_FINISHED)
        bridge_enter(b, BRIDGE_CLOSING); /* no more waiting for answers */
    bridge_sync(b);
}

void bridge_stream_eof(struct smbd_bridge *b)
{
    if (bridge_enter(b, b->state == BRIDGE_FINISHING ? BRIDGE_FINISHED : BRIDGE_HALF_CLOSED) < 0)
        return;
    if (b->role == BRIDGE_CHAN_CLIENT)
        b->half_close_timer = sd_loop_add_timer(b->loop, sd_now_ms() + b->half_close_ms,
                                                bridge_half_close_cb, b);
    if (bridge_framer_buffered(&b->in.framer) > 0)
        sd_debug("bridge fd %d: stream ended inside a message (%zu bytes dropped)", b->fd,
                 bridge_framer_buffered(&b->in.framer));
}

/* TCP's half-close, which SMB Direct cannot carry: after the program's shutdown(SHUT_WR)
 * a TCP server still answers what it was asked before it closes, so the link stays up
 * (HALF_CLOSED) until every request the program sent has its final response written to
 * the stream. The program's full close (HUP), unreadable (encrypted) traffic past
 * half_close_ms, or that bound itself (-> CLOSING) end the wait. */
static int awaits_answers(const struct smbd_bridge *b)
{
    if (b->state == BRIDGE_FINISHED) /* nobody reads answers: only the peer's RDMA must end */
        return b->chan && bridge_chan_busy(b->chan);
    if (b->state != BRIDGE_HALF_CLOSED || b->role != BRIDGE_CHAN_CLIENT || b->hup)
        return 0;
    return !smb2_pending_known(&b->pending) || smb2_pending_count(&b->pending) > 0 ||
           bridge_outq_len(&b->out.queue) > 0;
}

void bridge_disconnect_when_done(struct smbd_bridge *b, uint64_t now)
{
    if (b->state != BRIDGE_HALF_CLOSED && b->state != BRIDGE_FINISHED &&
        b->state != BRIDGE_CLOSING)
        return;
    if (b->in.mem_wait || b->in.unsent.alloc || smbd_conn_send_queued(b->conn) > 0 ||
        awaits_answers(b))
        return;
    if (bridge_enter(b, BRIDGE_DISCONNECTING) < 0)
        return;
    smbd_conn_disconnect(b->conn);
    b->close_timer = sd_loop_add_timer(b->loop, now + b->close_ms, bridge_close_timeout_cb,
                                       b);
}

void smbd_bridge_finish(struct smbd_bridge *b)
{
    switch (b->state) {
    case BRIDGE_OPEN:
        bridge_enter(b, BRIDGE_FINISHING); /* bridge_sync reads the stream to its end */
        break;
    case BRIDGE_HALF_CLOSED:
        bridge_enter(b, BRIDGE_FINISHED); /* the answers will not be read */
        break;
    case BRIDGE_FLUSHING: /* the link is gone already: nobody will read the rest */
        bridge_fail(b, -ECONNRESET, "the program exited before reading all the peer sent");
        return;
    case BRIDGE_CLOSED:
    case BRIDGE_FAILED:
        return;
    default: /* FINISHING, FINISHED, CLOSING, DISCONNECTING: on their way already */
        break;
    }
    bridge_sync(b);
}

void smbd_bridge_stop(struct smbd_bridge *b, const char *reason)
{
    bridge_fail(b, -ECANCELED, "%s", reason);
}
