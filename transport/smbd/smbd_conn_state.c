/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/smbd/smbd_conn_state.c — the engine connection's life as one state: the
 * changes enum smbd_state's table (smbd_conn_int.h) allows, and smbd_enter_state, the one
 * function that changes it. No I/O, so tests drive it directly. */
#include "smbd_conn_int.h"

#define TO SD_FSM_TO
/* What a running connection (RUNNING, PROVIDER_GONE) may become. */
#define FROM_LIVE (TO(SMBD_ST_DRAINING) | TO(SMBD_ST_DISCONNECTING) | TO(SMBD_ST_PEER_CLOSED) | \
                   TO(SMBD_ST_TERMINATED))

static const unsigned smbd_next[SMBD_ST_STATES] = {
    [SMBD_ST_NEW] = TO(SMBD_ST_RUNNING) | TO(SMBD_ST_DISCONNECTING),
    [SMBD_ST_RUNNING] = TO(SMBD_ST_PROVIDER_GONE) | TO(SMBD_ST_REFUSING) | FROM_LIVE,
    [SMBD_ST_PROVIDER_GONE] = FROM_LIVE,
    [SMBD_ST_DRAINING] = TO(SMBD_ST_DISCONNECTING) | TO(SMBD_ST_TERMINATED),
    [SMBD_ST_DISCONNECTING] = TO(SMBD_ST_TERMINATED),
    [SMBD_ST_REFUSING] = TO(SMBD_ST_TERMINATED),
    [SMBD_ST_PEER_CLOSED] = 0,
    [SMBD_ST_TERMINATED] = 0,
};

static const char *const smbd_names[SMBD_ST_STATES] = {
    [SMBD_ST_NEW] = "NEW",
    [SMBD_ST_RUNNING] = "RUNNING",
    [SMBD_ST_PROVIDER_GONE] = "PROVIDER_GONE",
    [SMBD_ST_DRAINING] = "DRAINING",
    [SMBD_ST_DISCONNECTING] = "DISCONNECTING",
    [SMBD_ST_REFUSING] = "REFUSING",
    [SMBD_ST_PEER_CLOSED] = "PEER_CLOSED",
    [SMBD_ST_TERMINATED] = "TERMINATED",
};

const struct sd_fsm smbd_state_fsm = { "smbd: connection", SMBD_ST_STATES, smbd_next,
                                       smbd_names };

int smbd_enter_state(struct smbd_conn *c, enum smbd_state to)
{
    if (sd_fsm_check(&smbd_state_fsm, c->state, to) != 0)
        return -1;
    c->state = to;
    return 0;
}
