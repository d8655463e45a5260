#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# tests/bats/smb_relay_cluster.bats — the relay's two parts for a cluster whose addresses
# move (docs/CLUSTER.md), with real programs: Samba's smbd on 127.0.0.38, smbdirect-relay
# on every address (0.0.0.0:5445, soft-iWARP) in front of it, clients through the shim
# to 127.0.0.38 and 127.0.0.39 (the relay bridges both to the one smbd). serve_addresses
# admits connections made to the addresses it lists and refuses others before any backend
# connection, and SIGHUP re-reads it; smbdirect-relay --drop-address IP ends at once the
# connections made to IP, and only those: python3-smbc sessions (tests/tools/
# smbc_sessions.py) held open on each address see it, the dropped one as an error at its
# next read, the other reading its data back intact.

load helpers

setup() {
    require_shim
    CONF=$(mktemp)
    export SMBDIRECT_CONFIG=$CONF SENV_RELAY_HOST=0.0.0.0
    PIDS=()
}

teardown() {
    [ -z "${W:-}" ] || touch "$W/go-127.0.0.38" "$W/go-127.0.0.39"
    wait_pids
    dump_logs_on_failure
    suite_stop
    rm -f "$CONF"
}

# start SERVE — smbd and the relay on every address, serving the addresses SERVE.
start() {
    printf '[relay]\nserve_addresses = %s\n' "$1" >"$CONF"
    suite_start 127.0.0.38 || return 1
    W=$(work_dir)
}

# at ADDR [smbclient args...] — smbclient through the shim to ADDR (the share's name
# stays //127.0.0.38/share), SMB Direct mandatory; the relay's file is not the shim's.
at() { SMBDIRECT_CONFIG='' smb -I "$1" "${@:2}"; }

# hold ADDR I — a background libsmbclient session to ADDR that writes 1 MiB to s<I>.bin,
# holds the file open, and reads it back once $W/go-ADDR exists. Output: $W/ADDR.out,
# exit status: $W/ADDR.rc.
hold() {
    senv_random_file "$W/up$2.bin" 1048576
    (
        rc=0
        SMBDIRECT_CONFIG='' SMBDIRECT_FALLBACK=none SMBDIRECT_TRANSPORT=soft SMBDIRECT_LOG=info \
            timeout 120 "$SENV_WRAPPER_BIN" "$PYTHON" "$SMBC_SESSIONS" \
            "smb://$1/$SENV_SHARE_NAME" "$W" "$2" 1 "$W/go-$1" >"$W/$1.out" 2>&1 || rc=$?
        echo "$rc" >"$W/$1.rc"
    ) 3>&- &
    PIDS+=($!)
    local i
    for i in $(seq 300); do
        grep -qx "open 1" "$W/$1.out" 2>/dev/null && return 0
        [ ! -s "$W/$1.rc" ] || break
        sleep 0.1
    done
    echo "the session to $1 did not open:" >&2; cat "$W/$1.out" >&2
    return 1
}

# ended ADDR SECONDS — waits up to SECONDS for the session to ADDR to exit; prints its
# exit status.
ended() {
    local i
    for ((i = 0; i < $2 * 20; i++)); do [ -s "$W/$1.rc" ] && break; sleep 0.05; done
    cat "$W/$1.rc" 2>/dev/null || echo "still running"
}

@test "relay cluster: a wildcard relay serves the addresses in serve_addresses and refuses a connection to another before any backend connection" {
    start 127.0.0.38
    run at 127.0.0.38 -c ls
    assert_success
    run at 127.0.0.39 -c ls
    [ "$status" -ne 0 ]
    [[ "$output" == *"$REFUSED"* ]]
    grep -Eq '^relay: refused a connection from 127\.0\.0\.[0-9]+: made to 127\.0\.0\.39, which is not in serve_addresses$' \
        "$SENV_RELAY_LOG"
    [ "$(grep -c 'relay: conn [0-9]* from' "$SENV_RELAY_LOG")" -eq 1 ]
    [ "$(status 'refused["serve_addresses"]')" -eq 1 ]
    [ "$(status accepted)" -eq 1 ]
    # SIGHUP re-reads it: the second address is served from then on
    printf '[relay]\nserve_addresses = 127.0.0.38, 127.0.0.39\n' >"$CONF"
    kill -HUP "$SENV_RELAY_PID"
    await_log "serve_addresses 127.0.0.38/32, 127.0.0.39/32,"
    run at 127.0.0.39 -c ls
    assert_success
    [ "$(status accepted)" -eq 2 ]
}

@test "relay cluster: --drop-address ends at once every connection made to that address and no other" {
    start "127.0.0.38, 127.0.0.39"
    hold 127.0.0.38 0
    hold 127.0.0.39 1
    await_status live 2
    run "$SENV_RELAY_BIN" --drop-address 127.0.0.38 --status-socket "$SENV_DIR/relay.sock"
    assert_success
    [ "$output" = "dropped 1 connections made to 127.0.0.38" ]
    await_log "closed: "
    grep -q 'relay: conn [0-9]* closed: .*reason its address was dropped (--drop-address)$' \
        "$SENV_RELAY_LOG"
    grep -q '^relay: dropped 1 connections made to 127.0.0.38 (--drop-address)$' "$SENV_RELAY_LOG"
    [ "$(status live)" -eq 1 ]
    [ "$(status dropped)" -eq 1 ]
    # the dropped session's next read fails at once; the other reads its data back
    touch "$W/go-127.0.0.38"
    [ "$(ended 127.0.0.38 5)" -eq 1 ]
    grep -q 'smbc_sessions: session 0: ' "$W/127.0.0.38.out"
    touch "$W/go-127.0.0.39"
    [ "$(ended 127.0.0.39 30)" -eq 0 ]
    cmp "$W/up1.bin" "$W/got1.bin"
    cmp "$W/up1.bin" "$SENV_SHARE/s1.bin"
    # the same address again: nothing is left to drop
    run "$SENV_RELAY_BIN" --drop-address 127.0.0.38 --status-socket "$SENV_DIR/relay.sock"
    assert_success
    [ "$output" = "dropped 0 connections made to 127.0.0.38" ]
}

@test "relay cluster: --drop-address names a bad address and a relay that does not answer" {
    start 127.0.0.38
    run "$SENV_RELAY_BIN" --drop-address 127.0.0.300 --status-socket "$SENV_DIR/relay.sock"
    [ "$status" -eq 2 ]
    [[ "$output" == *"--drop-address: '127.0.0.300' is not an IPv4 or IPv6 address"* ]]
    run "$SENV_RELAY_BIN" --drop-address ::1 --status-socket "$SENV_DIR/none.sock"
    [ "$status" -eq 1 ]
    [[ "$output" == *"--drop-address: no relay answers at $SENV_DIR/none.sock"* ]]
    run "$SENV_RELAY_BIN" --drop-address ::ffff:127.0.0.38 --status-socket "$SENV_DIR/relay.sock"
    assert_success
    [ "$output" = "dropped 0 connections made to 127.0.0.38" ]
}
