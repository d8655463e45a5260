/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/soft/soft_state.c — a soft-iWARP connection's life as one state: the changes
 * enum sd_soft_qp_state's table (soft_qp.h) allows, and sd_soft_qp_enter, the one
 * function that changes it. No I/O, so tests drive it directly. */
#include "soft_qp.h"

#define TO SD_FSM_TO

static const unsigned soft_qp_next[SD_SOFT_QP_STATES] = {
    [SD_SOFT_QP_RTS] = TO(SD_SOFT_QP_CLOSING) | TO(SD_SOFT_QP_ERROR),
    [SD_SOFT_QP_CLOSING] = TO(SD_SOFT_QP_CLOSED),
    [SD_SOFT_QP_ERROR] = TO(SD_SOFT_QP_CLOSED),
    [SD_SOFT_QP_CLOSED] = 0,
};

static const char *const soft_qp_names[SD_SOFT_QP_STATES] = {
    [SD_SOFT_QP_RTS] = "RTS",
    [SD_SOFT_QP_CLOSING] = "CLOSING",
    [SD_SOFT_QP_ERROR] = "ERROR",
    [SD_SOFT_QP_CLOSED] = "CLOSED",
};

const struct sd_fsm sd_soft_qp_fsm = { "soft-iWARP: connection", SD_SOFT_QP_STATES,
                                       soft_qp_next, soft_qp_names };

int sd_soft_qp_enter(struct sd_qp *qp, enum sd_soft_qp_state to)
{
    if (sd_fsm_check(&sd_soft_qp_fsm, qp->state, to) != 0)
        return -1;
    qp->state = to;
    return 0;
}
