/* SPDX-License-Identifier: BSD-3-Clause */
/* preload/shim_siglearn.c — a handle's setup held until its first use, which tells
 * whether its key signs SMB2 (shim_siglearn.h). */
#include "shim_siglearn.h"

#include <stdint.h>
#include <string.h>

#include "shim_fdtable.h"
#include "shim_guard.h"
#include "shim_sigkeys.h"
#include "smb2_wire.h"

struct pending {
    const void *handle; /* NULL: none */
    struct smb2_sign_key key;
};

static _Thread_local struct pending pending;

static void drop(void)
{
    smb2_sign_key_wipe(&pending.key);
    pending.handle = NULL;
}

void shim_siglearn_setup(const void *handle, enum smb2_sign_algo algo, const void *key,
                         size_t key_len)
{
    drop();
    /* The shim's own work (a signal handler interrupting the key table's holder) learns
     * nothing; nor does a process without a tunnel, which has nothing to check. */
    if (key_len != SMB2_SIGN_KEY_SIZE || !handle || shim_guard_active() ||
        shim_fdtable_count() == 0)
        return;
    pending.handle = handle;
    pending.key.algo = algo;
    memcpy(pending.key.key, key, SMB2_SIGN_KEY_SIZE);
}

void shim_siglearn_use(const void *handle, const void *data, size_t len, int encrypts)
{
    uint64_t session_id;

    if (!pending.handle)
        return;
    /* Samba never signs a message of SessionId 0 (MS-SMB2 3.2.4.1.1). */
    if (handle == pending.handle && !encrypts && !shim_guard_active() &&
        smb2_hdr_signed_part(data, len, &session_id) == 0 && session_id != 0)
        shim_sigkeys_learn(session_id, &pending.key);
    drop();
}
