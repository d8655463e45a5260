/* SPDX-License-Identifier: BSD-3-Clause */
/* common/sd_fsm.c — the one check of a state change against its lifecycle's table
 * (sd_fsm.h). */
#include "sd_fsm.h"

#include <stdio.h>

#include "log.h"

const char *sd_fsm_name(const struct sd_fsm *f, unsigned s)
{
    return s < f->states ? f->names[s] : "?";
}

int sd_fsm_check_id(const struct sd_fsm *f, int id, unsigned from, unsigned to)
{
    char who[96];

    if (id >= 0)
        snprintf(who, sizeof(who), "%s %d:", f->what, id);
    else
        snprintf(who, sizeof(who), "%s", f->what);
    if (from >= f->states || to >= f->states || !(f->next[from] & SD_FSM_TO(to))) {
        sd_error("%s state %s -> %s is not a change it makes (a bug)", who,
                 sd_fsm_name(f, from), sd_fsm_name(f, to));
        return -1;
    }
    sd_debug("%s %s -> %s", who, sd_fsm_name(f, from), sd_fsm_name(f, to));
    return 0;
}

int sd_fsm_check(const struct sd_fsm *f, unsigned from, unsigned to)
{
    return sd_fsm_check_id(f, -1, from, to);
}
