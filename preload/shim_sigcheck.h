/* SPDX-License-Identifier: BSD-3-Clause */
/* preload/shim_sigcheck.h — the proof that the shim holds the program's signing keys:
 * each signed SMB2 request the program sends on a tunnel is checked with the key learned
 * for its session (shim_sigkeys_verify) and counted. Nothing is changed or held back: a
 * signature that does not verify is only counted, and logged at debug. A command of more
 * than SHIM_SIGCHECK_MAX_BYTES (a WRITE's inline data) is counted unchecked: the small
 * requests of the same session prove the key, and MACing its data a second time would
 * cost a signed session's writes (AES-CMAC: about 15 ms per 8 MiB). A LOGOFF ends its
 * session's keys on the tunnel. */
#ifndef SMBDIRECT_SHIM_SIGCHECK_H
#define SMBDIRECT_SHIM_SIGCHECK_H

#include <stddef.h>
#include <stdint.h>

#include "shim_fdtable.h"

#define SHIM_SIGCHECK_MAX_BYTES 65536u

/* Signed requests of one tunnel, by what their check found (enum shim_sigkeys_verdict),
 * and those too large to check. */
struct shim_sigcheck_stats {
    uint64_t verified, failed, no_key, too_large;
};

/* One whole SMB2 message of the program (no Direct-TCP prefix) on tunnel: each signed
 * command of its chain checked and counted in st. An encrypted message, or one that is
 * no SMB2 message, is not looked at. */
void shim_sigcheck_request(const struct shim_fd_key *tunnel, const uint8_t *msg, size_t len,
                           struct shim_sigcheck_stats *st);

#endif
