/* SPDX-License-Identifier: BSD-3-Clause */
/* preload/shim_sigkeys.h — the signing keys of the program's SMB2 sessions, learned in
 * process as the program signs (shim_siglearn.c) and used by the shim to check its signed
 * requests (shim_sigcheck.c) and to sign again the READ/WRITE it moves by the RDMA
 * channel (shim_sigkeys_get, for the bridge). A key is learned for a SessionId; it is bound to a tunnel
 * (the fd-table key of the program's socketpair end) once a request of that session on
 * that tunnel verifies with it, since one SessionId may sign with a different key on each
 * channel of a session (MS-SMB2 3.2.5.3.1: Channel.SigningKey). Keys live only in this
 * module's fixed table, under its own lock, and are wiped (smb2_sign_key_wipe) when their
 * session ends (LOGOFF), their tunnel ends, the table needs the room (the oldest key no
 * tunnel has proved goes first) or the process exits; nothing here logs key bytes. */
#ifndef SMBDIRECT_SHIM_SIGKEYS_H
#define SMBDIRECT_SHIM_SIGKEYS_H

#include <stddef.h>
#include <stdint.h>

#include "shim_fdtable.h"
#include "smb2_sign.h"

/* Keys kept at once: a program's sessions (a few per connection) and the keys it learned
 * on connections the shim does not carry, which no tunnel ever proves. */
#define SHIM_SIGKEYS_MAX 64

/* Learns k as a signing key of session_id (not bound to a tunnel). The same key already
 * known for session_id is not added again. */
void shim_sigkeys_learn(uint64_t session_id, const struct smb2_sign_key *k);

enum shim_sigkeys_verdict {
    SHIM_SIGKEYS_VERIFIED, /* a learned key of the session made this signature */
    SHIM_SIGKEYS_FAILED,   /* the session has keys here; none made it */
    SHIM_SIGKEYS_NO_KEY,   /* no key of the session is known on this tunnel */
};

/* Checks the signature of the command at cmd (len: to the end of its message, as
 * smb2_sign_verify takes it), sent by the client on tunnel in session session_id, with
 * the session's key bound to tunnel, else with each key learned for it and not bound
 * yet; one of those that verifies is bound to tunnel from then on (a key bound to tunnel
 * before it, for the same session, is wiped: re-authentication replaced it). */
enum shim_sigkeys_verdict shim_sigkeys_verify(const struct shim_fd_key *tunnel,
                                              uint64_t session_id, const uint8_t *cmd,
                                              size_t len);

/* A copy of the key bound to tunnel for session_id (proved by a request of the session
 * on tunnel): 0, or -1 when there is none. The caller wipes its copy when done. */
int shim_sigkeys_get(const struct shim_fd_key *tunnel, uint64_t session_id,
                     struct smb2_sign_key *k);

/* The session ended on tunnel (the program sent LOGOFF): its keys bound there are wiped. */
void shim_sigkeys_forget_session(const struct shim_fd_key *tunnel, uint64_t session_id);

/* The tunnel ended: every key bound to it is wiped. */
void shim_sigkeys_forget_tunnel(const struct shim_fd_key *tunnel);

/* Wipes every key (the process exits; tests). */
void shim_sigkeys_wipe_all(void);

/* Keys held now (tests, logs). */
size_t shim_sigkeys_count(void);

/* fork(): the table's lock is held across it, so the child's copy is consistent. */
void shim_sigkeys_atfork_prepare(void);
void shim_sigkeys_atfork_parent(void);
void shim_sigkeys_atfork_child(void);

#endif
