/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/verbs/verbs_state.c — a verbs connection's life as one state: the changes
 * enum sd_verbs_qp_state's table (verbs_priv.h) allows, and sd_verbs_qp_enter, the one
 * function that changes it. No I/O, so tests drive it directly. */
#include "log.h"
#include "verbs_priv.h"

#define TO(s) (1u << (s))

/* The changes the table allows, by the state they leave. */
static const unsigned verbs_qp_next[SD_VERBS_QP_STATES] = {
    [SD_VERBS_QP_CONNECTING] = TO(SD_VERBS_QP_CONNECTED) | TO(SD_VERBS_QP_FLUSHING),
    [SD_VERBS_QP_CONNECTED] = TO(SD_VERBS_QP_FLUSHING),
    [SD_VERBS_QP_FLUSHING] = TO(SD_VERBS_QP_LOST),
    [SD_VERBS_QP_LOST] = 0,
};

const char *sd_verbs_qp_state_name(enum sd_verbs_qp_state s)
{
    static const char *const names[SD_VERBS_QP_STATES] = {
        [SD_VERBS_QP_CONNECTING] = "CONNECTING",
        [SD_VERBS_QP_CONNECTED] = "CONNECTED",
        [SD_VERBS_QP_FLUSHING] = "FLUSHING",
        [SD_VERBS_QP_LOST] = "LOST",
    };

    return (unsigned)s < SD_VERBS_QP_STATES ? names[s] : "?";
}

int sd_verbs_qp_enter(struct sd_qp *qp, enum sd_verbs_qp_state to)
{
    enum sd_verbs_qp_state from = qp->state;

    if ((unsigned)from >= SD_VERBS_QP_STATES || (unsigned)to >= SD_VERBS_QP_STATES ||
        !(verbs_qp_next[from] & TO(to))) {
        sd_error("verbs: connection state %s -> %s is not a change the provider makes (a bug)",
                 sd_verbs_qp_state_name(from), sd_verbs_qp_state_name(to));
        return -1;
    }
    sd_debug("verbs: connection %s -> %s", sd_verbs_qp_state_name(from),
             sd_verbs_qp_state_name(to));
    qp->state = to;
    return 0;
}
