/* SPDX-License-Identifier: BSD-3-Clause */
/* preload/shim_sigcheck.c — checks the signatures of the program's requests on a tunnel
 * with the learned keys (shim_sigcheck.h). */
#include "shim_sigcheck.h"

#include "log.h"
#include "shim_sigkeys.h"
#include "smb2_wire.h"

void shim_sigcheck_request(const struct shim_fd_key *tunnel, const uint8_t *msg, size_t len,
                           struct shim_sigcheck_stats *st)
{
    struct smb2_chain chain;
    struct smb2_hdr h;
    const uint8_t *cmd;
    size_t cmd_len;
    uint64_t session_id = 0;

    smb2_chain_init(&chain, msg, len);
    while (smb2_chain_next(&chain, &h, &cmd, &cmd_len) == 0) {
        enum shim_sigkeys_verdict v;

        /* A related request may name its session as "the previous one's". */
        if (!(h.flags & SMB2_FLAGS_RELATED_OPERATIONS) ||
            h.session_id != SMB2_SESSION_ID_PREVIOUS)
            session_id = h.session_id;
        if ((h.flags & SMB2_FLAGS_SIGNED) && cmd_len > SHIM_SIGCHECK_MAX_BYTES) {
            st->too_large++;
        } else if (h.flags & SMB2_FLAGS_SIGNED) {
            /* The signature covers the command up to NextCommand (or the end). */
            v = shim_sigkeys_verify(tunnel, session_id, cmd, (size_t)(msg + len - cmd));
            st->verified += v == SHIM_SIGKEYS_VERIFIED;
            st->failed += v == SHIM_SIGKEYS_FAILED;
            st->no_key += v == SHIM_SIGKEYS_NO_KEY;
            if (v != SHIM_SIGKEYS_VERIFIED)
                sd_debug("signed SMB2 request (command %u, MessageId %llu) of session "
                         "0x%016llx: %s", h.command, (unsigned long long)h.message_id,
                         (unsigned long long)session_id,
                         v == SHIM_SIGKEYS_FAILED ? "its signature does not verify with the "
                                                    "learned key"
                                                  : "no key learned for the session");
        }
        if (h.command == SMB2_LOGOFF)
            shim_sigkeys_forget_session(tunnel, session_id);
    }
}
