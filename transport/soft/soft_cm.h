/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/soft/soft_cm.h — soft-iWARP connection management: TCP connect plus the
 * MPA exchange (soft_cm.c), the passive side's listener holding connections whose
 * MPA request is still arriving (soft_listen.c, soft_pending.c), and the helpers
 * both sides share. */
#ifndef SMBDIRECT_SOFT_CM_H
#define SMBDIRECT_SOFT_CM_H

#include "provider.h"
#include "soft_mpa.h"

#include <stdint.h>

/* ---- the provider's connection-manager operations (types from provider.h) ---- */
sd_connect_fn sd_soft_connect;
sd_listen_fn sd_soft_listen;
sd_listener_fd_fn sd_soft_listener_fd;
sd_accept_fn sd_soft_accept;
sd_listener_close_fn sd_soft_listener_close;
/* The address the listener's socket is bound to (the port the kernel chose when
 * listen() asked for 0); listener_fd() is no socket. 0 or -errno. */
int sd_soft_listener_addr(struct sd_listener *l, struct sockaddr *addr, socklen_t *len);

/* ---- shared by the active and passive sides (soft_cm.c) ---- */
/* Socket options the data path wants on a connected socket. */
void sd_soft_tune_socket(int fd);
/* Fills out (may be NULL) from the negotiation and the socket's addresses. */
void sd_soft_fill_result(int fd, const struct sd_soft_mpa_result *neg, struct sd_cm_result *out);

#endif
