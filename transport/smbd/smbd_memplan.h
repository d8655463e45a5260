/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/smbd/smbd_memplan.h — how one connection fits the registered memory the
 * process may still pin (RLIMIT_MEMLOCK, sd_pinned.h), decided once, before it connects:
 * its permanent receive and send buffers (sized by the configuration) plus a reserve for
 * one I/O. When they do not fit, what can shrink shrinks, in this order: the I/O down to
 * 1 MiB, the credits (receive buffers, and the send buffers they need) down to 16, the
 * I/O down to 64 KiB; below that the connection is refused. Pure arithmetic, no I/O; the
 * layout helpers are the ones the engine allocates by. */
#ifndef SMBDIRECT_SMBD_MEMPLAN_H
#define SMBDIRECT_SMBD_MEMPLAN_H

#include <stddef.h>
#include <stdint.h>

#include "smbd_conn.h"

#define SMBD_MEMPLAN_MIN_CREDITS 16u
#define SMBD_MEMPLAN_MIN_IO      65536u
#define SMBD_MEMPLAN_IO_FIRST    1048576u /* the I/O shrinks to this before the credits do */
#define SMBD_MEMPLAN_FULL_IOS    8u       /* I/Os in flight at full speed: smbclient keeps
                                             16 MiB outstanding in 2 MiB I/Os */
/* What the device driver may pin for a connection's work and completion queues in the
 * process's memory (mlx5 allocates them in user memory and pins them; siw and rxe keep
 * them in the kernel): counted with the permanent buffers so they cannot pass the limit. */
#define SMBD_MEMPLAN_QUEUES      524288u

enum smbd_memplan_fit {
    SMBD_MEMPLAN_FITS,    /* as configured */
    SMBD_MEMPLAN_SHRUNK,  /* credits or the I/O made smaller */
    SMBD_MEMPLAN_REFUSED, /* not even the smallest connection fits */
};

struct smbd_memplan {
    uint16_t credits;   /* receive_credit_max and send_credit_target, at most as configured */
    uint32_t io;        /* bytes of one I/O the reserve holds (<= the io asked for) */
    uint64_t fixed;     /* pinned by the permanent receive and send buffers, and the
                           device's queues (SMBD_MEMPLAN_QUEUES) */
    uint64_t reserve;   /* pinned for the I/O (smbd_conn_adopt_reserve) */
    uint64_t need_min;  /* room the smallest connection needs */
    uint64_t full;      /* room for the connection as configured with SMBD_MEMPLAN_FULL_IOS
                           I/Os in flight */
};

/* The plan for a connection configured by cfg whose I/Os move up to io bytes, with
 * room bytes left to pin (UINT64_MAX: no limit). */
enum smbd_memplan_fit smbd_memplan_make(const struct smbd_config *cfg, uint32_t io,
                                        uint64_t room, struct smbd_memplan *p);

/* The engine's buffer layout for cfg: bytes between two posted receives, between two
 * send buffers, and how many send buffers of max_send_size bytes stay registered for
 * good (a connection's, once negotiated, hold the negotiated size). */
uint32_t smbd_recv_stride(const struct smbd_config *cfg);
uint32_t smbd_send_stride(const struct smbd_config *cfg);
uint32_t smbd_stride_for(uint32_t size); /* ... for a buffer of size bytes, either kind */
uint32_t smbd_send_base_slots(const struct smbd_config *cfg, uint32_t max_send_size);
/* What the permanent buffers of cfg pin at its configured sizes: ReceiveCreditMax
 * receives of its MaxReceiveSize and the permanent send buffers of its MaxSendSize. */
size_t smbd_memplan_buffers_cost(const struct smbd_config *cfg);

#endif
