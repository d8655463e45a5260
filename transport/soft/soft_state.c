/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/soft/soft_state.c — a soft-iWARP connection's life as one state: the changes
 * enum sd_soft_qp_state's table (soft_qp.h) allows, and sd_soft_qp_enter, the one
 * function that changes it. No I/O, so tests drive it directly. */
#include "log.h"
#include "soft_qp.h"

#define TO(s) (1u << (s))

/* The changes the table allows, by the state they leave. */
static const unsigned soft_qp_next[SD_SOFT_QP_STATES] = {
    [SD_SOFT_QP_RTS] = TO(SD_SOFT_QP_CLOSING) | TO(SD_SOFT_QP_ERROR),
    [SD_SOFT_QP_CLOSING] = TO(SD_SOFT_QP_CLOSED),
    [SD_SOFT_QP_ERROR] = TO(SD_SOFT_QP_CLOSED),
    [SD_SOFT_QP_CLOSED] = 0,
};

const char *sd_soft_qp_state_name(enum sd_soft_qp_state s)
{
    static const char *const names[SD_SOFT_QP_STATES] = {
        [SD_SOFT_QP_RTS] = "RTS",
        [SD_SOFT_QP_CLOSING] = "CLOSING",
        [SD_SOFT_QP_ERROR] = "ERROR",
        [SD_SOFT_QP_CLOSED] = "CLOSED",
    };

    return (unsigned)s < SD_SOFT_QP_STATES ? names[s] : "?";
}

int sd_soft_qp_enter(struct sd_qp *qp, enum sd_soft_qp_state to)
{
    enum sd_soft_qp_state from = qp->state;

    if ((unsigned)from >= SD_SOFT_QP_STATES || (unsigned)to >= SD_SOFT_QP_STATES ||
        !(soft_qp_next[from] & TO(to))) {
        sd_error("soft-iWARP: connection state %s -> %s is not a change the provider makes "
                 "(a bug)", sd_soft_qp_state_name(from), sd_soft_qp_state_name(to));
        return -1;
    }
    sd_debug("soft-iWARP: connection %s -> %s", sd_soft_qp_state_name(from),
             sd_soft_qp_state_name(to));
    qp->state = to;
    return 0;
}
