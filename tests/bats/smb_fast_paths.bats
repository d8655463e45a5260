#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# tests/bats/smb_fast_paths.bats — the fast paths that have no switch of their own are
# taken where they should be (docs/ARCHITECTURE.md, Fast paths): smbclient through the
# shim and smbdirect-relay (--log-stats) in front of a real smbd on 127.0.0.40, each
# path's counter read from the shim's end-of-tunnel lines or the relay's stats line,
# every copy checked by sha256. A large inline message goes from the buffer it arrived
# in (the shim's put, the relay's get, with SMBDIRECT_RDMA_THRESHOLD=0); the RDMA
# channel's WRITE data (shim) and READ data (relay) are registered where they lay, a
# small I/O's copied; the shim's and the relay's loops take events by busy polling when
# it is on, and never poll at 0. (SMBDIRECT_DIRECT_SEND and SMBDIRECT_SPLICE on and off:
# smb_transfer.bats.)

load helpers

BIG=$((64 * 1024 * 1024))
SMALL=$((128 * 1024))

setup_file() {
    suite_start_smbd 127.0.0.40 signing=disabled
    senv_random_file "$SENV_SHARE/big.bin" "$BIG"
    senv_random_file "$SENV_SHARE/small.bin" "$SMALL"
    chmod 0644 "$SENV_SHARE/big.bin" "$SENV_SHARE/small.bin"
}
teardown_file() { suite_stop; }

# Each test starts the relay as it needs it: relay_start [flags...] starts it with a log of
# its own (connection numbers start again at 1) and --log-stats.
setup() { require_shim; }
relay_start() { : >"$SENV_RELAY_LOG"; senv_relay_start --log-stats "$@"; }
teardown() { dump_logs_on_failure; senv_relay_stop; remove_work_dir; }

# count TEXT WHAT — the number before WHAT in the last line of TEXT holding it (e.g. "of
# them from where they lay"); fails, showing TEXT's tail, when no line has it.
count() {
    local n
    n=$(grep -o "[0-9]* $2" <<<"$1" | tail -n 1 | cut -d' ' -f1)
    [ -n "$n" ] || { echo "no '$2' in: $(tail -n 5 <<<"$1")" >&2; return 1; }
    echo "$n"
}

# relay_stat WHAT — the number after WHAT in the relay's stats line of its latest
# connection (e.g. "rdma_in_place").
relay_stat() {
    local line n
    line=$(last_conn_line stats)
    n=$(sed -n "s/.* $1 \([0-9]*\).*/\1/p" <<<"$line")
    [ -n "$n" ] || { echo "no '$1' in the relay's stats line: '$line'" >&2; return 1; }
    echo "$n"
}

# put_get — puts and gets both files in one session through the shim; checks the copies.
put_get() {
    local d
    d=$(work_dir)
    run_smb -c "get big.bin $d/big.bin; get small.bin $d/small.bin; put $d/big.bin big-up.bin; put $d/small.bin small-up.bin"
    assert_success
    assert_same_file "$SENV_SHARE/big.bin" "$d/big.bin"
    assert_same_file "$SENV_SHARE/small.bin" "$d/small.bin"
    assert_same_file "$SENV_SHARE/big.bin" "$SENV_SHARE/big-up.bin"
    assert_same_file "$SENV_SHARE/small.bin" "$SENV_SHARE/small-up.bin"
}

@test "a large inline message is sent from the buffer it arrived in: the shim's WRITEs and the relay's READ answers with SMBDIRECT_RDMA_THRESHOLD=0" {
    local shim relay
    relay_start
    SMBDIRECT_RDMA_THRESHOLD=0 put_get
    shim=$(count "$output" "of them from where they lay")
    relay=$(relay_stat smbd_out_in_place)
    echo "# shim $shim, relay $relay bytes sent from where they lay" >&3
    # every byte of the 64 MiB put's WRITEs and get's READ answers (each over 256 KiB),
    # and no more than a few headers beside them
    [ "$shim" -ge "$BIG" ]
    [ "$shim" -lt $((BIG + SMALL)) ]
    [ "$relay" -ge "$BIG" ]
    [ "$relay" -lt $((BIG + SMALL)) ]
}

@test "the RDMA channel's data is registered where it lay: the shim's WRITE data and the relay's READ data, a 128 KiB I/O's copied" {
    local shim relay
    relay_start
    put_get
    shim=$(count "$output" "bytes of WRITE data registered where they lay")
    relay=$(relay_stat rdma_in_place)
    echo "# shim $shim, relay $relay bytes registered where they lay" >&3
    [ "$shim" -eq "$BIG" ]
    [ "$relay" -eq "$BIG" ]
    [ "$(count "$output" "of them from where they lay")" -eq 0 ] # nothing large went inline
}

@test "busy polling: the shim's and the relay's loops take events by polling, and at 0 never poll" {
    local poll hits relay_hits ran_out relay_ran_out
    for poll in 10000 0; do
        relay_start --busy-poll "$poll"
        SMBDIRECT_BUSY_POLL=$poll SMBDIRECT_LOG=debug run_smb -c 'ls; allinfo big.bin; allinfo small.bin; ls'
        assert_success
        grep -q 'small\.bin' <<<"$output"
        hits=$(count "$output" "waits ended by busy polling")
        ran_out=$(count "$output" "polls ran out")
        relay_hits=$(relay_stat hit)
        relay_ran_out=$(relay_stat ran_out)
        echo "# $poll us: shim $hits events polled ($ran_out ran out), relay $relay_hits ($relay_ran_out)" >&3
        # one assertion per line: a failed [ ] before && would not fail the test
        if [ "$poll" -gt 0 ]; then
            [ "$hits" -gt 0 ]
            [ "$relay_hits" -gt 0 ]
        else
            [ "$hits" -eq 0 ]
            [ "$ran_out" -eq 0 ]
            [ "$relay_hits" -eq 0 ]
            [ "$relay_ran_out" -eq 0 ]
        fi
        senv_relay_stop
    done
}
