/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/th_fsm.c — th_fsm_check: a lifecycle's transition function against the
 * test's list of allowed changes (th_fsm.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "th_fsm.h"
#include "th_stderr.h"

static int fsm_allows(const struct th_fsm *f, int from, int to)
{
    for (size_t i = 0; i < f->nallowed; i++)
        if (f->allowed[i].from == from && f->allowed[i].to == to)
            return 1;
    return 0;
}

/* Asks for from -> to on a zeroed object in state from; its state afterwards in *now. */
static int fsm_try(const struct th_fsm *f, int from, int to, int *now, char *log, size_t len)
{
    unsigned char *obj = calloc(1, f->size);
    struct th_stderr cap;
    int rc;

    assert_non_null(obj);
    memcpy(obj + f->state_offset, &from, sizeof(from));
    th_stderr_begin(&cap);
    rc = f->enter(obj, to);
    th_stderr_end(&cap, log, len);
    memcpy(now, obj + f->state_offset, sizeof(*now));
    free(obj);
    return rc;
}

void th_fsm_check(const struct th_fsm *f)
{
    int states = (int)f->fsm->states, made = 0;

    for (int from = 0; from < states; from++) {
        for (int to = 0; to <= states; to++) {
            char log[512], want[128];
            int now, rc = fsm_try(f, from, to, &now, log, sizeof(log));

            snprintf(want, sizeof(want), "%s -> %s", sd_fsm_name(f->fsm, (unsigned)from),
                     sd_fsm_name(f->fsm, (unsigned)to));
            if (fsm_allows(f, from, to)) {
                if (rc != 0 || now != to)
                    fail_msg("%s is allowed but was refused", want);
                made++;
            } else if (rc != -1) {
                fail_msg("%s was made (it is no allowed change)", want);
            } else if (now != (f->refused_to ? f->refused_to(from) : from)) {
                fail_msg("%s was refused, leaving the state %s", want,
                         sd_fsm_name(f->fsm, (unsigned)now));
            } else if (!strstr(log, want) || !strstr(log, "error")) {
                fail_msg("%s was refused without an error line naming it: '%s'", want, log);
            }
        }
    }
    assert_int_equal(made, (int)f->nallowed); /* every listed change is one of the states' */
}
