/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/th_fsm.c — th_fsm_check: a lifecycle's transition function against the
 * test's list of allowed changes (th_fsm.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
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

void th_fsm_check(const struct th_fsm *f)
{
    int made = 0;

    for (int from = 0; from < f->states; from++) {
        for (int to = 0; to <= f->states; to++) {
            struct th_stderr cap;
            char log[512], want[128];
            int now = -1, rc;

            th_stderr_begin(&cap);
            rc = f->enter(from, to, &now);
            th_stderr_end(&cap, log, sizeof(log));
            if (fsm_allows(f, from, to)) {
                if (rc != 0 || now != to)
                    fail_msg("%s -> %s is allowed but was refused", f->name(from), f->name(to));
                made++;
                continue;
            }
            snprintf(want, sizeof(want), "%s -> %s", f->name(from),
                     to < f->states ? f->name(to) : "?");
            if (rc != -1 || now != from)
                fail_msg("%s was made (it is no allowed change)", want);
            if (!strstr(log, want) || !strstr(log, "error"))
                fail_msg("%s was refused without an error line naming it: '%s'", want, log);
        }
    }
    assert_int_equal(made, (int)f->nallowed); /* every listed change is one of the states' */
}
