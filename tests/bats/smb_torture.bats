#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# tests/bats/smb_torture.bats — Samba's own smbtorture as the judge of the tunnel:
# scripts/torture runs its selection of smb2 tests (compound, credits, lock, notify, oplock,
# lease, session, durable-open, ioctl, getinfo, read, rw, multichannel) against one smbd on
# 127.0.0.32, over plain TCP and through the shim and a relay at its default settings
# (SMB Direct over soft-iWARP, no TCP fallback). Fails when a test that passes over TCP
# does not pass through the tunnel, in its first run there or in one of two more (a few
# race smbd's own timing; each retry is shown).
# SD_TORTURE_TESTS, when set, replaces the selection (scripts/run-tests' bats-san tier
# runs a shorter one under the sanitizers).

load helpers

@test "smbtorture smb2: every test that passes over TCP passes through the tunnel" {
    require_shim
    local both tcp_only sessions
    run env TORTURE_ADDR=127.0.0.32 TORTURE_TESTS="${SD_TORTURE_TESTS:-}" \
        "$BATS_TEST_DIRNAME/../../scripts/torture"
    grep -E '^torture: ([0-9]* passed both ways|passed through the tunnel at attempt)' <<<"$output" |
        sed 's/^torture: /# /' >&3
    assert_success
    both=$(sed -nE 's/^torture: ([0-9]+) passed both ways.*/\1/p' <<<"$output")
    tcp_only=$(sed -nE 's/^torture: .*, ([0-9]+) passed over TCP only,.*/\1/p' <<<"$output")
    sessions=$(sed -nE 's/^torture: .*; ([0-9]+) SMB Direct sessions$/\1/p' <<<"$output")
    # the selection's tests that pass against this smbd (about 200; about 100 in the short
    # one) all reported both ways
    if [ -n "${SD_TORTURE_TESTS:-}" ]; then [ "$both" -ge 50 ]; else [ "$both" -ge 150 ]; fi
    [ "$tcp_only" -eq 0 ]
    [ "$sessions" -ge 20 ]
    [[ "$output" == *"torture: PASS"* ]]
}

@test "compound requests leave the shim as one Send each; credit-only messages stay off the requests' path" {
    require_shim
    local msgs frags sessions
    run env TORTURE_ADDR=127.0.0.32 TORTURE_TESTS="smb2.compound smb2.compound_async \
smb2.compound_find.compound_find_related smb2.compound_find.compound_find_unrelated" \
        "$BATS_TEST_DIRNAME/../../scripts/torture"
    grep -E '^torture: (the relay received|[0-9]* passed both)' <<<"$output" | sed 's/^torture: /# /' >&3
    assert_success
    msgs=$(sed -nE 's/^torture: the relay received ([0-9]+) SMB2 messages .*/\1/p' <<<"$output")
    frags=$(sed -nE 's/^torture: the relay received .* in ([0-9]+) Data Transfer .*/\1/p' <<<"$output")
    sessions=$(sed -nE 's/^torture: .*; ([0-9]+) SMB Direct sessions$/\1/p' <<<"$output")
    [ "$msgs" -gt 100 ]
    [ "$sessions" -gt 0 ]
    # Every SMB2 message (a compound chain is one) went in one Data Transfer message; the
    # only others are one credit grant per session, sent as it opens (MS-SMBD 3.1.5.9).
    [ "$frags" -le $((msgs + sessions)) ]
}
