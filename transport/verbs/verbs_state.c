/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/verbs/verbs_state.c — a verbs connection's life as one state: the changes
 * enum sd_verbs_qp_state's table (verbs_priv.h) allows, and sd_verbs_qp_enter, the one
 * function that changes it. No I/O, so tests drive it directly. */
#include "verbs_priv.h"

#define TO SD_FSM_TO

static const unsigned verbs_qp_next[SD_VERBS_QP_STATES] = {
    [SD_VERBS_QP_CONNECTING] = TO(SD_VERBS_QP_CONNECTED) | TO(SD_VERBS_QP_FLUSHING),
    [SD_VERBS_QP_CONNECTED] = TO(SD_VERBS_QP_FLUSHING),
    [SD_VERBS_QP_FLUSHING] = TO(SD_VERBS_QP_LOST),
    [SD_VERBS_QP_LOST] = 0,
};

static const char *const verbs_qp_names[SD_VERBS_QP_STATES] = {
    [SD_VERBS_QP_CONNECTING] = "CONNECTING",
    [SD_VERBS_QP_CONNECTED] = "CONNECTED",
    [SD_VERBS_QP_FLUSHING] = "FLUSHING",
    [SD_VERBS_QP_LOST] = "LOST",
};

const struct sd_fsm sd_verbs_qp_fsm = { "verbs: connection", SD_VERBS_QP_STATES, verbs_qp_next,
                                        verbs_qp_names };

int sd_verbs_qp_enter(struct sd_qp *qp, enum sd_verbs_qp_state to)
{
    if (sd_fsm_check(&sd_verbs_qp_fsm, qp->state, to) != 0)
        return -1;
    qp->state = to;
    return 0;
}
