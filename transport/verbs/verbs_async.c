/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/verbs/verbs_async.c — the device's asynchronous events (ibv_get_async_event):
 * a QP gone into the error state (QP_FATAL, REQ_ERR, ACCESS_ERR), its port down
 * (PORT_ERR: the netdev under siw or rxe set down, a cable pulled) or the device failed
 * (DEVICE_FATAL) end the connections they concern at once, with the cause in the log,
 * instead of leaving them to a TCP retransmission timeout (siw) or the SMB Direct
 * keepalive (120 s). One async fd serves every connection of the process on a device,
 * so whichever connection reads an event marks the ones it concerns (a flag and their
 * wake fd); each ends itself on its own thread at its next progress(). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "log.h"
#include "verbs_priv.h"

static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sd_qp *live; /* every connection with a queue pair, under live_lock */

int sd_verbs_async_watch(struct sd_qp *qp)
{
    int fd = qp->id->verbs->async_fd, fl = fcntl(fd, F_GETFL);

    if (fl < 0 || (!(fl & O_NONBLOCK) && fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0))
        return -errno;
    pthread_mutex_lock(&live_lock);
    qp->live_next = live;
    live = qp;
    pthread_mutex_unlock(&live_lock);
    qp->async_watched = 1;
    return 0;
}

void sd_verbs_async_unwatch(struct sd_qp *qp)
{
    if (!qp->async_watched)
        return;
    pthread_mutex_lock(&live_lock);
    for (struct sd_qp **pp = &live; *pp; pp = &(*pp)->live_next) {
        if (*pp == qp) {
            *pp = qp->live_next;
            break;
        }
    }
    pthread_mutex_unlock(&live_lock);
    qp->async_watched = 0;
}

/* Marks q as ended by event (the first one stays) and wakes its loop. live_lock held. */
static void mark(struct sd_qp *q, enum ibv_event_type event)
{
    int none = 0;

    if (atomic_compare_exchange_strong(&q->async_lost, &none, (int)event + 1) &&
        eventfd_write(q->wake_fd, 1) < 0 && errno != EAGAIN)
        sd_debug("verbs: cannot wake a connection: %s", strerror(errno));
}

static int is_qp_event(enum ibv_event_type t)
{
    return t == IBV_EVENT_QP_FATAL || t == IBV_EVENT_QP_REQ_ERR || t == IBV_EVENT_QP_ACCESS_ERR;
}

static int port_is_up(struct ibv_context *ctx, uint8_t port)
{
    struct ibv_port_attr attr;

    return ibv_query_port(ctx, port, &attr) == 0 && attr.state == IBV_PORT_ACTIVE;
}

/* The connections one event concerns: those of its QP, or all on its device (and port). */
static void dispatch(struct ibv_context *ctx, const struct ibv_async_event *ev)
{
    enum ibv_event_type t = ev->event_type;

    if (!is_qp_event(t) && t != IBV_EVENT_PORT_ERR && t != IBV_EVENT_DEVICE_FATAL) {
        sd_debug("verbs: %s: async event %s", ibv_get_device_name(ctx->device),
                 ibv_event_type_str(t));
        return;
    }
    /* Events wait in the device's queue while no connection of ours reads it: a PORT_ERR
     * from a link that has come back since must not end the connections made after. */
    if (t == IBV_EVENT_PORT_ERR && port_is_up(ctx, (uint8_t)ev->element.port_num)) {
        sd_debug("verbs: %s port %d: PORT_ERR from before the port came back, ignored",
                 ibv_get_device_name(ctx->device), ev->element.port_num);
        return;
    }
    for (struct sd_qp *q = live; q; q = q->live_next) {
        if (q->id->verbs != ctx)
            continue;
        if (is_qp_event(t) ? q->id->qp == ev->element.qp
                           : t == IBV_EVENT_DEVICE_FATAL || q->id->port_num == ev->element.port_num)
            mark(q, t);
    }
}

void sd_verbs_async_progress(struct sd_qp *qp, int fabric_only)
{
    struct ibv_context *ctx = qp->id->verbs;
    struct ibv_async_event ev;
    char why[160];
    int event;

    if (!qp->async_watched)
        return;
    pthread_mutex_lock(&live_lock);
    while (ibv_get_async_event(ctx, &ev) == 0) {
        dispatch(ctx, &ev);
        ibv_ack_async_event(&ev);
    }
    pthread_mutex_unlock(&live_lock);
    if ((event = atomic_load(&qp->async_lost)) == 0 || sd_verbs_qp_lost(qp))
        return;
    if (fabric_only && event - 1 != IBV_EVENT_PORT_ERR && event - 1 != IBV_EVENT_DEVICE_FATAL)
        return;
    snprintf(why, sizeof(why), "%s on %s port %u: %s", ibv_event_type_str(event - 1),
             ibv_get_device_name(ctx->device), qp->id->port_num,
             event - 1 == IBV_EVENT_PORT_ERR ? "the port went down (its network link)"
             : event - 1 == IBV_EVENT_DEVICE_FATAL ? "the RDMA device failed"
                                                    : "the queue pair is in error");
    sd_verbs_qp_set_lost(qp, SD_WC_FATAL, why);
}
