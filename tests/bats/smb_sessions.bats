#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# tests/bats/smb_sessions.bats — authenticated sessions through the shim: a real user
# account against a server that mandates signing (signed SMB 3.1.1: the shim must pass
# signed messages through untouched), and an unsigned guest session. Each test starts
# its own smbd on 127.0.0.12 with the configuration it needs; smbd's log (level 2) says
# whether a tree connect was signed ("signed connect to service ...").

load helpers

teardown() { dump_logs_on_failure; suite_stop; }

# transfer_both_ways [smbclient args...] — puts and gets a 3 MiB random file with the
# given session arguments and checks both copies.
transfer_both_ways() {
    local d src
    d=$(work_dir) src=$d/src.bin
    senv_random_file "$src" 3145728
    run_smb "$@" -c "put $src s.bin; get s.bin $d/back.bin"
    assert_success
    assert_same_file "$src" "$SENV_SHARE/s.bin"
    assert_same_file "$src" "$d/back.bin"
}

@test "a real user's session on a signing-mandatory SMB 3.1.1 server is signed and moves data" {
    suite_start 127.0.0.12 signing=mandatory min_protocol=SMB3_11 guest=no
    senv_add_user
    transfer_both_ways -m SMB3_11 "$(senv_user_auth)"
    grep -q "signed connect to service share initially as user $SENV_USER " "$SENV_SMBD_LOG"
}

@test "a wrong password is refused on the signing-mandatory server" {
    suite_start 127.0.0.12 signing=mandatory min_protocol=SMB3_11 guest=no
    senv_add_user
    run_smb -m SMB3_11 "--user=$SENV_USER%wrong-$SENV_PASS" -c 'ls'
    [ "$status" -ne 0 ]
    [[ "$output" == *NT_STATUS_LOGON_FAILURE* ]]
}

@test "an unsigned guest session moves data" {
    suite_start 127.0.0.12 signing=disabled
    transfer_both_ways -N
    grep -q "connect to service share initially as user nobody" "$SENV_SMBD_LOG"
    refute grep -q "signed connect to service share" "$SENV_SMBD_LOG"
}
