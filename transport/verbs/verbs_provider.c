/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/verbs/verbs_provider.c — the rdma-core verbs provider's entry points
 * (provider.h), implemented by verbs_cm.c, verbs_listen.c, verbs_mem.c, verbs_post.c,
 * verbs_events.c, verbs_cq.c, verbs_lost.c and verbs_qp.c (verbs_priv.h says which). */
#include "verbs_priv.h"

const struct sd_provider_ops sd_verbs_provider = {
    .name = "rdma",
    .remote_invalidation = 0,
    .pins_memory = 1,
    .fds_per_qp = 5,
    .is_iwarp = sd_verbs_is_iwarp,
    .connect = sd_verbs_connect,
    .listen = sd_verbs_listen,
    .listener_fd = sd_verbs_listener_fd,
    .listener_addr = sd_verbs_listener_addr,
    .accept = sd_verbs_accept,
    .listener_close = sd_verbs_listener_close,
    .reg_mr = sd_verbs_reg_mr,
    .dereg_mr = sd_verbs_dereg_mr,
    .post_recv = sd_verbs_post_recv,
    .post_send = sd_verbs_post_send,
    .post_write = sd_verbs_post_write,
    .post_read = sd_verbs_post_read,
    .fd = sd_verbs_fd,
    .poll_events = sd_verbs_poll_events,
    .progress = sd_verbs_progress,
    .poll_cq = sd_verbs_poll_cq,
    .readable = sd_verbs_readable,
    .disconnect = sd_verbs_disconnect,
    .destroy = sd_verbs_destroy,
};
