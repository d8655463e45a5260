/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/test_verbs_qp_state.c — the verbs connection's lifecycle (enum
 * sd_verbs_qp_state, transport/verbs/verbs_priv.h) through sd_verbs_qp_enter, which does
 * no I/O: every change the table allows is made, every other one (and a state past the
 * last) refused with an error line, the state kept; and what each state lets happen. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "th_fsm.h"
#include "verbs/verbs_priv.h"

static int enter(void *qp, int to)
{
    return sd_verbs_qp_enter(qp, (enum sd_verbs_qp_state)to);
}

/* The table of verbs_priv.h, written out again. */
static const struct th_fsm_change verbs_allowed[] = {
    { SD_VERBS_QP_CONNECTING, SD_VERBS_QP_CONNECTED },
    { SD_VERBS_QP_CONNECTING, SD_VERBS_QP_FLUSHING },
    { SD_VERBS_QP_CONNECTED, SD_VERBS_QP_FLUSHING },
    { SD_VERBS_QP_FLUSHING, SD_VERBS_QP_LOST },
};

static void test_every_change_allowed_or_refused(void **state)
{
    const struct th_fsm f = { .fsm = &sd_verbs_qp_fsm, .size = sizeof(struct sd_qp),
                              .state_offset = offsetof(struct sd_qp, state), .enter = enter,
                              .allowed = verbs_allowed,
                              .nallowed = sizeof(verbs_allowed) / sizeof(verbs_allowed[0]) };

    (void)state;
    th_fsm_check(&f);
}

/* Posting is refused from FLUSHING on (sd_verbs_qp_lost), not before the connection is
 * established: a passive side posts its receives before it accepts. */
static void test_lost_from_flushing_on(void **state)
{
    struct sd_qp qp;

    (void)state;
    memset(&qp, 0, sizeof(qp));
    assert_int_equal(qp.state, SD_VERBS_QP_CONNECTING);
    assert_false(sd_verbs_qp_lost(&qp));
    assert_int_equal(sd_verbs_qp_enter(&qp, SD_VERBS_QP_CONNECTED), 0);
    assert_false(sd_verbs_qp_lost(&qp));
    assert_int_equal(sd_verbs_qp_enter(&qp, SD_VERBS_QP_FLUSHING), 0);
    assert_true(sd_verbs_qp_lost(&qp));
    assert_int_equal(sd_verbs_qp_enter(&qp, SD_VERBS_QP_LOST), 0);
    assert_true(sd_verbs_qp_lost(&qp));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_change_allowed_or_refused),
        cmocka_unit_test(test_lost_from_flushing_on),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
