/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/th_fsm.h — checks a lifecycle's transition function against the test's own
 * list of allowed changes: on an object in every state, asked for every state (and one
 * past the last), an allowed change is made, any other is refused with an error line
 * naming both states and the state kept (or, for an object a refusal fails, the state its
 * failure leaves). */
#ifndef SMBDIRECT_TH_FSM_H
#define SMBDIRECT_TH_FSM_H

#include <stddef.h>

#include "sd_fsm.h"

struct th_fsm_change {
    int from, to;
};

struct th_fsm {
    const struct sd_fsm *fsm;  /* the code's table: the count and names of its states */
    size_t size;               /* the object the function changes (zeroed), */
    size_t state_offset;       /* ... and where its state lies: an enum the size of an int */
    int (*enter)(void *obj, int to); /* the function: 0, or -1 refused */
    const struct th_fsm_change *allowed;
    size_t nallowed;
    int (*refused_to)(int from); /* may be NULL (the state kept): the state a refused
                                    change leaves the object in */
};

/* Fails the test on the first change that is not as the list says. */
void th_fsm_check(const struct th_fsm *f);

#endif
