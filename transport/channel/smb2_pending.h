/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/channel/smb2_pending.h — the SMB2 requests of a client still waiting for
 * their final response, by MessageId (MS-SMB2 3.2.1.2 Connection.OutstandingRequests),
 * I/O-free. The shim's bridge uses it for TCP's half-close: after the program's
 * shutdown(SHUT_WR) the SMB Direct connection stays up until every request it sent has
 * been answered, as a TCP server would answer before closing. Encrypted messages cannot
 * be read: once one goes by, the set is unknown (smb2_pending_known). */
#ifndef SMBDIRECT_SMB2_PENDING_H
#define SMBDIRECT_SMB2_PENDING_H

#include <stddef.h>
#include <stdint.h>

struct smb2_pending_node;

struct smb2_pending {
    struct smb2_pending_node *by_id;
    size_t count;
    int unknown; /* an encrypted message went by, or memory ran out */
};

void smb2_pending_init(struct smb2_pending *p);
void smb2_pending_fini(struct smb2_pending *p);

/* A whole message of the client: each request of its chain but CANCEL (2.2.30) waits. */
void smb2_pending_request(struct smb2_pending *p, const uint8_t *msg, size_t len);
/* (The first bytes of) a message of the server: each final response of its chain (not
 * an interim STATUS_PENDING, 3.3.4.2) ends its request's wait; unsolicited messages
 * (MessageId 0xFFFFFFFFFFFFFFFF, oplock and lease breaks, 3.3.4.6) end none. */
void smb2_pending_response(struct smb2_pending *p, const uint8_t *msg, size_t len);

/* Requests still waiting; meaningful only while smb2_pending_known. */
size_t smb2_pending_count(const struct smb2_pending *p);
int smb2_pending_known(const struct smb2_pending *p);

#endif
