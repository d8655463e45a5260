/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/channel/smb2_pending.c — outstanding SMB2 requests in a uthash set keyed by
 * MessageId (see smb2_pending.h). */
#include "smb2_pending.h"

#include <stdlib.h>

#define HASH_NONFATAL_OOM 1
#include <uthash.h>

#include "smb2_wire.h"

#define SMB2_UNSOLICITED_ID UINT64_MAX /* 3.3.4.6: notifications the client never asked */

struct smb2_pending_node {
    uint64_t message_id;
    UT_hash_handle hh;
};

void smb2_pending_init(struct smb2_pending *p)
{
    p->by_id = NULL;
    p->count = 0;
    p->unknown = 0;
}

void smb2_pending_fini(struct smb2_pending *p)
{
    struct smb2_pending_node *n, *tmp;

    HASH_ITER(hh, p->by_id, n, tmp) {
        HASH_DEL(p->by_id, n);
        free(n);
    }
    p->count = 0;
}

static struct smb2_pending_node *find(const struct smb2_pending *p, uint64_t id)
{
    struct smb2_pending_node *n;

    HASH_FIND(hh, p->by_id, &id, sizeof(id), n);
    return n;
}

/* The request's wait begins: 0, or -1 when memory ran out. */
static int add(struct smb2_pending *p, uint64_t id)
{
    struct smb2_pending_node *n = calloc(1, sizeof(*n));

    if (!n)
        return -1;
    n->message_id = id;
    HASH_ADD(hh, p->by_id, message_id, sizeof(n->message_id), n);
    if (!n->hh.tbl) {
        free(n);
        return -1;
    }
    p->count++;
    return 0;
}

/* Walks the chain of a client (answers 0) or server (answers 1) message. */
static void walk(struct smb2_pending *p, const uint8_t *msg, size_t len, int answers)
{
    struct smb2_chain chain;
    struct smb2_hdr h;
    const uint8_t *cmd;
    size_t cmd_len;

    if (smb2_is_transform(msg, len)) {
        p->unknown = 1;
        return;
    }
    smb2_chain_init(&chain, msg, len);
    while (smb2_chain_next(&chain, &h, &cmd, &cmd_len) == 0) {
        struct smb2_pending_node *n = find(p, h.message_id);

        if (!answers) {
            if (h.command != SMB2_CANCEL && !(h.flags & SMB2_FLAGS_SERVER_TO_REDIR) && !n &&
                add(p, h.message_id) < 0) {
                p->unknown = 1;
                return;
            }
        } else if (n && h.message_id != SMB2_UNSOLICITED_ID && !smb2_hdr_is_interim(&h)) {
            HASH_DEL(p->by_id, n);
            free(n);
            p->count--;
        }
    }
}

void smb2_pending_request(struct smb2_pending *p, const uint8_t *msg, size_t len)
{
    walk(p, msg, len, 0);
}

void smb2_pending_response(struct smb2_pending *p, const uint8_t *msg, size_t len)
{
    walk(p, msg, len, 1);
}

size_t smb2_pending_count(const struct smb2_pending *p)
{
    return p->count;
}

int smb2_pending_known(const struct smb2_pending *p)
{
    return !p->unknown;
}
