/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/soft/soft_pending.c — a passive soft-iWARP connection waiting for its MPA
 * request (see soft_pending.h): non-blocking collection, then the reply. */
#include "soft_pending.h"
#include "soft_cm.h"
#include "soft_qp.h"
#include "log.h"
#include "sd_libc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

struct sd_soft_pending *sd_soft_pending_new(int fd, int64_t deadline)
{
    struct sd_soft_pending *p = malloc(sizeof(*p));
    socklen_t pl = sizeof(p->peer_addr);

    if (!p)
        return NULL;
    p->fd = fd;
    p->deadline = deadline;
    p->pd_len = -1;
    p->have = 0;
    memset(&p->peer_addr, 0, sizeof(p->peer_addr));
    if (sd_libc()->getpeername(fd, (struct sockaddr *)&p->peer_addr, &pl) == 0) {
        sd_addr_format((struct sockaddr *)&p->peer_addr, p->peer, sizeof(p->peer));
    } else {
        p->peer_addr.ss_family = 0;
        snprintf(p->peer, sizeof(p->peer), "an unknown peer");
    }
    return p;
}

void sd_soft_pending_drop(struct sd_soft_pending *p, const char *why)
{
    sd_warn("soft-iWARP: dropping the connection from %s: %s", p->peer, why);
    close(p->fd);
    free(p);
}

int sd_soft_pending_read(struct sd_soft_pending *p, const char **why)
{
    for (;;) {
        size_t want = p->pd_len < 0 ? MPA_RR_HDR_LEN : MPA_RR_HDR_LEN + (size_t)p->pd_len;

        if (p->pd_len >= 0 && p->have == want)
            return 1;
        ssize_t r = recv(p->fd, p->req + p->have, want - p->have, MSG_DONTWAIT);
        if (r == 0) {
            *why = "closed before its MPA request was complete";
            return -ECONNRESET;
        }
        if (r < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return 0;
            *why = strerror(errno);
            return -errno;
        }
        p->have += (size_t)r;
        if (p->pd_len < 0 && p->have == MPA_RR_HDR_LEN) {
            p->pd_len = sd_soft_mpa_parse_hdr(p->req, 0);   /* RFC 5044 7.1.1, 7.1.5 */
            if (p->pd_len < 0) {
                *why = "malformed MPA request (bad key or private data length)";
                return -EPROTO;
            }
        }
    }
}

/* The reply is at most SD_SOFT_MPA_FRAME_MAX bytes into a fresh socket's empty send
 * buffer: it goes out whole or the connection is broken. */
static int send_frame(int fd, const uint8_t *frame, size_t len)
{
    ssize_t w = sd_libc()->send(fd, frame, len, MSG_NOSIGNAL | MSG_DONTWAIT);

    if (w == (ssize_t)len)
        return 0;
    return w < 0 && errno != EAGAIN && errno != EWOULDBLOCK ? -errno : -ENOBUFS;
}

static struct sd_qp *answer_fail(struct sd_soft_pending *p, int *err, int e)
{
    close(p->fd);
    free(p);
    *err = e;
    return NULL;
}

/* The admit hook, asked with the address the TCP connection reached and the peer's. */
static int pending_admit(const struct sd_soft_pending *p, const struct sd_cm_params *params)
{
    struct sockaddr_storage local;
    socklen_t ll = sizeof(local);

    memset(&local, 0, sizeof(local));
    if (sd_libc()->getsockname(p->fd, (struct sockaddr *)&local, &ll) < 0)
        local.ss_family = 0;
    return params->admit((struct sockaddr *)&local, (struct sockaddr *)&p->peer_addr,
                         params->admit_arg);
}

struct sd_qp *sd_soft_pending_answer(struct sd_soft_pending *p, const struct sd_cm_params *params,
                                     struct sd_cm_result *result, int *err)
{
    uint8_t rep[SD_SOFT_MPA_FRAME_MAX];
    size_t rlen = 0;
    struct sd_soft_mpa_result neg;
    int r = params->admit ? pending_admit(p, params) : 0;

    if (r < 0) {
        sd_soft_mpa_reject(rep, &rlen, p->req[17], NULL); /* the hook logs (provider.h) */
        send_frame(p->fd, rep, rlen);
        return answer_fail(p, err, r);
    }
    r = sd_soft_mpa_respond(p->req, p->have, params, params->want_crc, rep, &rlen, &neg);

    if (r == -ECONNREFUSED)
        send_frame(p->fd, rep, rlen);   /* best effort: the connection ends anyway */
    if (r)
        return answer_fail(p, err, r);
    struct sd_qp *qp = sd_soft_qp_create(p->fd, 1, neg.crc, neg.ird, neg.ord);
    if (!qp)
        return answer_fail(p, err, -ENOMEM);
    /* The hook posts its receives before the reply lets the peer send (provider.h). */
    r = params->pre_accept ? params->pre_accept(qp, params->pre_accept_arg) : 0;
    if (r < 0) {
        sd_soft_mpa_reject(rep, &rlen, p->req[17], "refused by the pre_accept hook");
        send_frame(p->fd, rep, rlen);
        sd_soft_provider.destroy(qp);   /* closes the socket */
        free(p);
        *err = r;
        return NULL;
    }
    r = send_frame(p->fd, rep, rlen);
    if (r) {
        /* The hook's work is on the qp: report the failure as connection loss. */
        sd_warn("soft-iWARP: cannot send the MPA reply to %s: %s", p->peer, strerror(-r));
        sd_soft_qp_fail(qp, SD_WC_FATAL, SD_SOFT_BLAME_NONE);
    }
    sd_soft_fill_result(p->fd, &neg, result);   /* neg points into p->req */
    free(p);
    return qp;
}
