/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/test_link_note.c — the relay's note in its connection reply's private data
 * (transport/link/smbd_link_note.c): what it encodes decodes to its flags; anything else
 * (no private data, another server's, a shorter one, another version) says nothing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "smbd_link_note.h"

static void a_note_round_trips_its_flags(void **state)
{
    uint8_t pd[SMBD_LINK_NOTE_LEN + 4] = { 0 };

    (void)state;
    smbd_link_note_encode(pd, SMBD_LINK_NOTE_KEYLESS);
    assert_memory_equal(pd, "SDPR\x01\x00\x01\x00", SMBD_LINK_NOTE_LEN);
    assert_int_equal(smbd_link_note_decode(pd, SMBD_LINK_NOTE_LEN), SMBD_LINK_NOTE_KEYLESS);
    assert_int_equal(smbd_link_note_decode(pd, sizeof(pd)), SMBD_LINK_NOTE_KEYLESS);
    smbd_link_note_encode(pd, 0);
    assert_int_equal(smbd_link_note_decode(pd, SMBD_LINK_NOTE_LEN), 0);
}

static void anything_else_says_nothing(void **state)
{
    uint8_t pd[SMBD_LINK_NOTE_LEN];

    (void)state;
    assert_int_equal(smbd_link_note_decode(NULL, 0), 0); /* ksmbd, Windows: none */
    smbd_link_note_encode(pd, SMBD_LINK_NOTE_KEYLESS);
    assert_int_equal(smbd_link_note_decode(pd, SMBD_LINK_NOTE_LEN - 1), 0);
    pd[4] = 2; /* a version this one does not know */
    assert_int_equal(smbd_link_note_decode(pd, sizeof(pd)), 0);
    smbd_link_note_encode(pd, SMBD_LINK_NOTE_KEYLESS);
    pd[0] = 's';
    assert_int_equal(smbd_link_note_decode(pd, sizeof(pd)), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_note_round_trips_its_flags),
        cmocka_unit_test(anything_else_says_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
