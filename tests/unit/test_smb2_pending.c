/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/test_smb2_pending.c — the outstanding-request set behind the shim's
 * half-close (transport/channel/smb2_pending.c): requests wait until their final
 * response; interim responses, unsolicited breaks and unknown ids end nothing; CANCEL
 * never waits; a compound chain counts each command; an encrypted message makes the set
 * unknown. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "sd_bytes.h"
#include "smb2_pending.h"
#include "th_smb2.h"

static uint8_t m[512];

static size_t request(uint16_t command, uint64_t id)
{
    const struct th_hdr h = { .command = command, .message_id = id };

    th_smb2_hdr(m, &h);
    return 64 + 8;
}

static size_t final_response(uint64_t id)
{
    const struct th_hdr h = { .command = 9, .message_id = id };

    return th_smb2_write_resp(m, &h, 10);
}

static void requests_wait_for_their_final_response(void **state)
{
    struct smb2_pending p;

    (void)state;
    smb2_pending_init(&p);
    smb2_pending_request(&p, m, request(9, 5));
    smb2_pending_request(&p, m, request(8, 6));
    smb2_pending_request(&p, m, request(12, 7)); /* CANCEL: no response comes */
    assert_int_equal(smb2_pending_count(&p), 2);
    smb2_pending_response(&p, m, th_smb2_interim_resp(m, 5));
    assert_int_equal(smb2_pending_count(&p), 2); /* interim: the final one follows */
    smb2_pending_response(&p, m, final_response(5));
    smb2_pending_response(&p, m, final_response(99)); /* nobody asked */
    assert_int_equal(smb2_pending_count(&p), 1);
    smb2_pending_response(&p, m, final_response(UINT64_MAX)); /* an oplock break */
    assert_int_equal(smb2_pending_count(&p), 1);
    smb2_pending_response(&p, m, th_smb2_error_resp(m, &(struct th_hdr){ .command = 8,
                                                                        .status = 0xC0000022,
                                                                        .message_id = 6 }));
    assert_int_equal(smb2_pending_count(&p), 0);
    assert_true(smb2_pending_known(&p));
    smb2_pending_fini(&p);
}

static void each_command_of_a_chain_waits(void **state)
{
    struct smb2_pending p;
    struct th_hdr h = { .command = 5, .next_command = 72, .message_id = 10 };

    (void)state;
    smb2_pending_init(&p);
    th_smb2_hdr(m, &h);
    h = (struct th_hdr){ .command = 6, .flags = 4, .message_id = 11 };
    th_smb2_hdr(m + 72, &h);
    smb2_pending_request(&p, m, 72 + 72);
    assert_int_equal(smb2_pending_count(&p), 2);
    smb2_pending_response(&p, m, final_response(10));
    smb2_pending_response(&p, m, final_response(11));
    assert_int_equal(smb2_pending_count(&p), 0);
    smb2_pending_fini(&p);
}

static void an_encrypted_message_makes_the_set_unknown(void **state)
{
    struct smb2_pending p;

    (void)state;
    smb2_pending_init(&p);
    memcpy(m, "\xFDSMB", 4);
    smb2_pending_request(&p, m, 100);
    assert_false(smb2_pending_known(&p));
    smb2_pending_fini(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(requests_wait_for_their_final_response),
        cmocka_unit_test(each_command_of_a_chain_waits),
        cmocka_unit_test(an_encrypted_message_makes_the_set_unknown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
