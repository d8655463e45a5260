/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/bridge/bridge_state.c — a bridge's life as one state: the changes enum
 * bridge_state's table (bridge_int.h) allows, and bridge_enter, the one function that
 * changes it, which fails the bridge on a change the table refuses. */
#include <errno.h>

#include "bridge_int.h"

#define TO SD_FSM_TO

static const unsigned bridge_next[BRIDGE_STATES] = {
    [BRIDGE_OPEN] = TO(BRIDGE_HALF_CLOSED) | TO(BRIDGE_FINISHING) | TO(BRIDGE_FLUSHING) |
                    TO(BRIDGE_FAILED),
    [BRIDGE_FINISHING] = TO(BRIDGE_FINISHED) | TO(BRIDGE_FLUSHING) | TO(BRIDGE_FAILED),
    [BRIDGE_HALF_CLOSED] = TO(BRIDGE_DISCONNECTING) | TO(BRIDGE_CLOSING) | TO(BRIDGE_FINISHED) |
                           TO(BRIDGE_FLUSHING) | TO(BRIDGE_FAILED),
    [BRIDGE_FINISHED] = TO(BRIDGE_DISCONNECTING) | TO(BRIDGE_CLOSING) | TO(BRIDGE_FLUSHING) |
                        TO(BRIDGE_FAILED),
    [BRIDGE_CLOSING] = TO(BRIDGE_DISCONNECTING) | TO(BRIDGE_FLUSHING) | TO(BRIDGE_FAILED),
    [BRIDGE_DISCONNECTING] = TO(BRIDGE_CLOSED) | TO(BRIDGE_FAILED),
    [BRIDGE_FLUSHING] = TO(BRIDGE_CLOSED) | TO(BRIDGE_FAILED),
    [BRIDGE_CLOSED] = 0,
    [BRIDGE_FAILED] = 0,
};

static const char *const bridge_names[BRIDGE_STATES] = {
    [BRIDGE_OPEN] = "OPEN",
    [BRIDGE_FINISHING] = "FINISHING",
    [BRIDGE_HALF_CLOSED] = "HALF_CLOSED",
    [BRIDGE_FINISHED] = "FINISHED",
    [BRIDGE_CLOSING] = "CLOSING",
    [BRIDGE_DISCONNECTING] = "DISCONNECTING",
    [BRIDGE_FLUSHING] = "FLUSHING",
    [BRIDGE_CLOSED] = "CLOSED",
    [BRIDGE_FAILED] = "FAILED",
};

const struct sd_fsm bridge_state_fsm = { "bridge fd", BRIDGE_STATES, bridge_next, bridge_names };

int bridge_enter(struct smbd_bridge *b, enum bridge_state to)
{
    enum bridge_state from = b->state;

    if (sd_fsm_check_id(&bridge_state_fsm, b->fd, from, to) != 0) {
        if (!bridge_ended(b))
            bridge_fail(b, -EINVAL, "internal error: bridge state %s -> %s refused",
                        sd_fsm_name(&bridge_state_fsm, from), sd_fsm_name(&bridge_state_fsm, to));
        return -1;
    }
    b->state = to;
    return 0;
}
