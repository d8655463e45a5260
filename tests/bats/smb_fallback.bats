#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# tests/bats/smb_fallback.bats — nothing listens on the SMB Direct port (no relay; smbd
# on 127.0.0.15:445 only): with SMBDIRECT_FALLBACK=tcp (also the default) smbclient
# still works, over TCP, and the shim warns; with none, smbclient fails fast with the
# shim's error naming the cause, and nothing reaches smbd.

load helpers

setup_file() { suite_start_smbd 127.0.0.15; }
teardown_file() { suite_stop; }
setup() { require_shim; }
teardown() { dump_logs_on_failure; remove_work_dir; }

WARN_RE='smbdirect\[[0-9]+\] warn: SMB Direct to 127\.0\.0\.15:445 \([a-z]+, port 5445\) failed: .*; using TCP instead'

# transfer_with_fallback [VAR=value...] — put and get of a 1 MiB file through the shim
# with the given environment; checks the data and the shim's warning.
transfer_with_fallback() {
    local d
    d=$(work_dir)
    senv_random_file "$d/src.bin" 1048576
    run env "$@" SMBDIRECT_LOG=warn "$SENV_BUILD/smbdirect" \
        smbclient "//$SENV_ADDR/share" -m SMB3 -N -c "put $d/src.bin fb.bin; get fb.bin $d/back.bin"
    assert_success
    assert_same_file "$d/src.bin" "$SENV_SHARE/fb.bin"
    assert_same_file "$d/src.bin" "$d/back.bin"
    [[ "$output" =~ $WARN_RE ]]
    rm -f "$SENV_SHARE/fb.bin"
}

@test "fallback=tcp: with no SMB Direct listener the transfer works over TCP and a warning says so" {
    refute senv_listening "$SENV_ADDR" 5445
    transfer_with_fallback SMBDIRECT_FALLBACK=tcp
}

@test "fallback defaults to tcp when SMBDIRECT_FALLBACK is unset" {
    transfer_with_fallback -u SMBDIRECT_FALLBACK
}

@test "fallback=none: with no SMB Direct listener smbclient fails within 5 s with the shim's error" {
    local t0 t1
    : >"$SENV_SMBD_LOG"
    t0=$(senv_now)
    run env SMBDIRECT_FALLBACK=none SMBDIRECT_LOG=warn "$SENV_BUILD/smbdirect" \
        smbclient "//$SENV_ADDR/share" -m SMB3 -N -c ls
    t1=$(senv_now)
    echo "# smbclient failed after $(elapsed "$t0" "$t1") s" >&3
    [ "$status" -ne 0 ]
    awk -v a="$t0" -v b="$t1" 'BEGIN { exit !(b - a < 5) }'
    [[ "$output" =~ smbdirect\[[0-9]+\]\ error:\ SMB\ Direct\ to\ 127\.0\.0\.15:445\ .*port\ 5445.*[Rr]efused.*SMBDIRECT_FALLBACK=none ]]
    refute grep -q 'connect to service' "$SENV_SMBD_LOG"
}
