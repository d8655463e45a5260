/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/th_fsm.h — checks a lifecycle's transition function against the test's own
 * list of allowed changes: from every state to every state (and one past the last), an
 * allowed change is made, any other is refused with the state kept and an error line
 * naming both states. */
#ifndef SMBDIRECT_TH_FSM_H
#define SMBDIRECT_TH_FSM_H

#include <stddef.h>

struct th_fsm_change {
    int from, to;
};

struct th_fsm {
    int states;                    /* the enum's count: states are 0 .. states - 1 */
    const char *(*name)(int s);    /* the state's name as the code logs it */
    /* Puts the object in state from, asks for to; returns the function's result (0 or
     * -1) and the state afterwards in *now. */
    int (*enter)(int from, int to, int *now);
    const struct th_fsm_change *allowed;
    size_t nallowed;
};

/* Fails the test on the first change that is not as the list says. */
void th_fsm_check(const struct th_fsm *f);

#endif
