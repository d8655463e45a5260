/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/soft/soft_pending.h — one passive soft-iWARP connection between its TCP
 * accept and its MPA reply: the request collected without blocking as its bytes
 * arrive, a handshake deadline, and the answer that turns it into a qp. */
#ifndef SMBDIRECT_SOFT_PENDING_H
#define SMBDIRECT_SOFT_PENDING_H

#include "provider.h"
#include "sd_addr.h"
#include "soft_mpa.h"

#include <stddef.h>
#include <stdint.h>

struct sd_soft_pending {
    int fd;
    int64_t deadline;                  /* monotonic ms: the request must be in by then */
    struct sockaddr_storage peer_addr; /* family 0 when unknown */
    char peer[SD_ADDR_STRLEN];         /* for log lines */
    int pd_len;                        /* request private data length, -1: header not in */
    size_t have;                       /* request bytes received */
    uint8_t req[SD_SOFT_MPA_FRAME_MAX];
};

/* Takes over a freshly accepted socket. NULL on ENOMEM (fd is then left open). */
struct sd_soft_pending *sd_soft_pending_new(int fd, int64_t deadline);

/* Reads what has arrived of the MPA request, never past its end (FPDUs may follow
 * it). 1 when the whole request is in, 0 when more is needed, -errno with *why when
 * the connection must be dropped (closed, socket error, no MPA request). */
int sd_soft_pending_read(struct sd_soft_pending *p, const char **why);

/* Answers the complete request (RFC 5044 7.1.2): on success a responder qp owning
 * the socket, after params->admit allowed the peer, params->pre_accept ran on the qp
 * and the reply went out. Else NULL
 * with *err (-ECONNREFUSED after a reject frame, -EPROTO, the hook's error...) and
 * the socket closed. Frees p either way. */
struct sd_qp *sd_soft_pending_answer(struct sd_soft_pending *p, const struct sd_cm_params *params,
                                     struct sd_cm_result *result, int *err);

/* Drops p (closing its socket) with a log line saying why. */
void sd_soft_pending_drop(struct sd_soft_pending *p, const char *why);

#endif
