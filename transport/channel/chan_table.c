/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/channel/chan_table.c — outstanding channel I/Os in a uthash table keyed by
 * MessageId, released ones on a list (see chan_table.h). Each entry is one allocation:
 * the node, then its descriptors. uthash runs with non-fatal OOM: a failed insert leaves
 * the table as it was and the entry's hh.tbl NULL. */
#include "chan_table.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define HASH_NONFATAL_OOM 1
#include <uthash.h>

struct chan_node {
    struct chan_io io;                 /* first: a chan_io * is its node */
    struct chan_node *next_released;
    UT_hash_handle hh;
};

static struct chan_node *node_of(struct chan_io *io)
{
    return (struct chan_node *)io;
}

void chan_table_init(struct chan_table *t)
{
    memset(t, 0, sizeof(*t));
}

void chan_table_fini(struct chan_table *t)
{
    struct chan_released r;

    chan_table_release_all(t);
    while (chan_table_take_released(t, &r))
        ;
}

int chan_table_add(struct chan_table *t, uint64_t message_id, size_t ndescs, struct chan_io **io)
{
    struct chan_node *n;

    if (chan_table_find(t, message_id))
        return -EEXIST;
    if (ndescs > (SIZE_MAX - sizeof(*n)) / sizeof(struct smbd_buffer_desc))
        return -ENOMEM;
    n = calloc(1, sizeof(*n) + ndescs * sizeof(struct smbd_buffer_desc));
    if (!n)
        return -ENOMEM;
    n->io.message_id = message_id;
    n->io.ndescs = ndescs;
    n->io.descs = ndescs ? (struct smbd_buffer_desc *)(n + 1) : NULL;
    HASH_ADD(hh, t->by_id, io.message_id, sizeof(n->io.message_id), n);
    if (!n->hh.tbl) {
        free(n);
        return -ENOMEM;
    }
    t->outstanding++;
    *io = &n->io;
    return 0;
}

struct chan_io *chan_table_find(const struct chan_table *t, uint64_t message_id)
{
    struct chan_node *n;

    HASH_FIND(hh, t->by_id, &message_id, sizeof(message_id), n);
    return n ? &n->io : NULL;
}

void chan_table_release(struct chan_table *t, struct chan_io *io)
{
    struct chan_node *n = node_of(io);

    HASH_DEL(t->by_id, n);
    t->outstanding--;
    n->next_released = t->released;
    t->released = n;
}

void chan_table_release_all(struct chan_table *t)
{
    struct chan_node *n, *tmp;

    HASH_ITER(hh, t->by_id, n, tmp) {
        chan_table_release(t, &n->io);
    }
}

int chan_table_take_released(struct chan_table *t, struct chan_released *out)
{
    struct chan_node *n = t->released;

    if (!n)
        return 0;
    t->released = n->next_released;
    out->cookie = n->io.cookie;
    out->invalidated = n->io.invalidated;
    smb2_sign_key_wipe(&n->io.key);
    free(n);
    return 1;
}

size_t chan_table_outstanding(const struct chan_table *t)
{
    return t->outstanding;
}
