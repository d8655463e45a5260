/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/channel/chan_table.h — the channel I/Os of one connection that wait for their
 * SMB2 response, found by MessageId (as are MS-SMB2 3.2.1.2 Connection.OutstandingRequests
 * and the server's Connection.RequestList), and the queue of those released: their final response
 * came (MS-SMB2 3.2.5.11, 3.2.5.12: deregister the buffer then) or teardown gave them
 * up. The owner takes each released cookie out exactly once and frees what it names
 * (MS-SMBD 3.1.4.4 Deregister Buffer). No I/O; allocation for the entries only. */
#ifndef SMBDIRECT_CHAN_TABLE_H
#define SMBDIRECT_CHAN_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "smb2_sign.h"
#include "smbd_conn.h"

enum chan_kind {
    CHAN_PASS,   /* not a channel I/O: the message goes unchanged */
    CHAN_READ,
    CHAN_WRITE,
};

struct chan_io {
    uint64_t message_id;
    enum chan_kind kind;               /* CHAN_READ or CHAN_WRITE */
    uint32_t length;                   /* bytes the I/O moves (at most) */
    int invalidate;                    /* sent with SMB2_CHANNEL_RDMA_V1_INVALIDATE */
    uint32_t first_token;              /* Token of the first descriptor */
    int invalidated;                   /* a Send with Invalidate named first_token */
    void *cookie;                      /* the owner's handle (its buffer, registration) */
    int signed_io;                     /* client role: the session signs, so its response is
                                          checked and a READ's rebuilt one signed with key */
    struct smb2_sign_key key;          /* signed_io: the session's key on this connection,
                                          wiped with the entry */
    size_t ndescs;                     /* descs: the peer's buffer (server role), */
    struct smbd_buffer_desc *descs;    /* room for ndescs made by chan_table_add */
};

/* What the owner gets back for a released I/O. */
struct chan_released {
    void *cookie;
    int invalidated;                   /* the peer already invalidated its first token */
};

struct chan_node;
struct chan_table {
    struct chan_node *by_id;           /* outstanding, by MessageId */
    struct chan_node *released;        /* released, not yet taken */
    size_t outstanding;
};

void chan_table_init(struct chan_table *t);
/* Frees every entry, outstanding or released, reporting nothing: take the cookies
 * first (chan_table_release_all, then chan_table_take_released until it returns 0). */
void chan_table_fini(struct chan_table *t);

/* Adds an outstanding I/O with room for ndescs descriptors, its fields zero but for
 * message_id, ndescs and descs: 0 and *io to fill in, -EEXIST when message_id is
 * outstanding already, -ENOMEM. */
int chan_table_add(struct chan_table *t, uint64_t message_id, size_t ndescs, struct chan_io **io);
/* The outstanding I/O of message_id, or NULL. */
struct chan_io *chan_table_find(const struct chan_table *t, uint64_t message_id);
/* Moves an outstanding I/O to the released queue; it stays readable until taken. */
void chan_table_release(struct chan_table *t, struct chan_io *io);
/* Releases every outstanding I/O (teardown). */
void chan_table_release_all(struct chan_table *t);
/* Takes one released I/O out, wiping and freeing its entry: 1 and *out, or 0 when none
 * is left. */
int chan_table_take_released(struct chan_table *t, struct chan_released *out);
size_t chan_table_outstanding(const struct chan_table *t);

#endif
