#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# tests/bats/smb_concurrency.bats — several smbclient processes at once through the shim
# and one relay (real smbd on 127.0.0.14): each puts its own random file and gets
# another; every byte is checked and the relay must have served one SMB Direct
# connection per process.

load helpers

setup_file() { suite_start 127.0.0.14; }
teardown_file() { suite_stop; }
teardown() { dump_logs_on_failure; remove_work_dir; }

# parallel_clients N BYTES — N smbclient processes, each putting and getting BYTES.
parallel_clients() {
    local n=$1 size=$2 d i failed=0 before after pids=()
    d=$(work_dir)
    before=$(relay_established_count)
    for ((i = 0; i < n; i++)); do
        senv_random_file "$d/up$i.bin" "$size"
        senv_random_file "$SENV_SHARE/down$i.bin" "$size"
    done
    for ((i = 0; i < n; i++)); do
        smb -c "put $d/up$i.bin up$i.bin; get down$i.bin $d/got$i.bin" >"$d/client$i.log" 2>&1 &
        pids+=($!)
    done
    for ((i = 0; i < n; i++)); do
        if ! wait "${pids[$i]}"; then
            echo "client $i failed:" >&2; tail -n 20 "$d/client$i.log" >&2; failed=1
        fi
    done
    [ "$failed" -eq 0 ]
    for ((i = 0; i < n; i++)); do
        assert_same_file "$d/up$i.bin" "$SENV_SHARE/up$i.bin"
        assert_same_file "$SENV_SHARE/down$i.bin" "$d/got$i.bin"
    done
    rm -f "$SENV_SHARE"/up*.bin "$SENV_SHARE"/down*.bin
    if [ "$SD_VIA" = shim ]; then
        after=$(relay_established_count)
        [ "$after" -eq $((before + n)) ]
    fi
}

@test "two concurrent smbclient processes through one relay move all data intact" {
    parallel_clients 2 67108864
}

@test "eight concurrent smbclient processes through one relay move all data intact" {
    parallel_clients 8 16777216
}
