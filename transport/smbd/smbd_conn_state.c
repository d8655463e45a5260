/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/smbd/smbd_conn_state.c — the engine connection's life as one state: the
 * changes enum smbd_state's table (smbd_conn_int.h) allows, and smbd_enter_state, the one
 * function that changes it. No I/O, so tests drive it directly. */
#include "log.h"
#include "smbd_conn_int.h"

#define TO(s) (1u << (s))
/* What a running connection (RUNNING, PROVIDER_GONE) may become. */
#define SMBD_FROM_LIVE (TO(SMBD_ST_DRAINING) | TO(SMBD_ST_DISCONNECTING) | \
                        TO(SMBD_ST_PEER_CLOSED) | TO(SMBD_ST_TERMINATED))

/* The changes the table allows, by the state they leave. */
static const unsigned smbd_next[SMBD_ST_STATES] = {
    [SMBD_ST_NEW] = TO(SMBD_ST_RUNNING) | TO(SMBD_ST_DISCONNECTING),
    [SMBD_ST_RUNNING] = TO(SMBD_ST_PROVIDER_GONE) | TO(SMBD_ST_REFUSING) | SMBD_FROM_LIVE,
    [SMBD_ST_PROVIDER_GONE] = SMBD_FROM_LIVE,
    [SMBD_ST_DRAINING] = TO(SMBD_ST_DISCONNECTING) | TO(SMBD_ST_TERMINATED),
    [SMBD_ST_DISCONNECTING] = TO(SMBD_ST_TERMINATED),
    [SMBD_ST_REFUSING] = TO(SMBD_ST_TERMINATED),
    [SMBD_ST_PEER_CLOSED] = 0,
    [SMBD_ST_TERMINATED] = 0,
};

const char *smbd_state_name(enum smbd_state s)
{
    static const char *const names[SMBD_ST_STATES] = {
        [SMBD_ST_NEW] = "NEW",
        [SMBD_ST_RUNNING] = "RUNNING",
        [SMBD_ST_PROVIDER_GONE] = "PROVIDER_GONE",
        [SMBD_ST_DRAINING] = "DRAINING",
        [SMBD_ST_DISCONNECTING] = "DISCONNECTING",
        [SMBD_ST_REFUSING] = "REFUSING",
        [SMBD_ST_PEER_CLOSED] = "PEER_CLOSED",
        [SMBD_ST_TERMINATED] = "TERMINATED",
    };

    return (unsigned)s < SMBD_ST_STATES ? names[s] : "?";
}

int smbd_enter_state(struct smbd_conn *c, enum smbd_state to)
{
    enum smbd_state from = c->state;

    if ((unsigned)from >= SMBD_ST_STATES || (unsigned)to >= SMBD_ST_STATES ||
        !(smbd_next[from] & TO(to))) {
        sd_error("smbd: connection state %s -> %s is not a change the engine makes (a bug)",
                 smbd_state_name(from), smbd_state_name(to));
        return -1;
    }
    sd_debug("smbd: connection %s -> %s", smbd_state_name(from), smbd_state_name(to));
    c->state = to;
    return 0;
}
