#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# tests/vm/soft_vs_siw.bats — inside the test VM: our userspace soft-iWARP provider against the
# kernel's siw, both directions, through smbdirect-relay in front of Samba (TCP):
#   soft connects to a kernel-siw listener  (relay --transport rdma, i.e. verbs on siw)
#   soft accepts a kernel-siw connection    (relay --transport soft, peer on verbs over siw)
# with smbdirect-probe for the handshake and smbclient + shim for data (sha256-checked).

setup_file() {
    source "$BATS_TEST_DIRNAME/../../scripts/vm/guest-lib.bash"
    [ "${VM_RESULTS:-}" = /vm ] || return 0
    vm_rdma_add siw >/dev/null && vm_samba_start "$VM_SIW_IP" &&
    senv_random_file "$SENV_SHARE/get-16m.bin" $((16 * 1024 * 1024))
}

teardown_file() {
    source "$BATS_TEST_DIRNAME/../../scripts/vm/guest-lib.bash"
    vm_samba_stop
}

setup() {
    source "$BATS_TEST_DIRNAME/../../scripts/vm/guest-lib.bash"
    vm_require_guest
    vm_require_bin "$VM_BUILD/smbdirect-relay"
}

teardown() { senv_relay_stop; }

# probe_via_relay RELAY_TRANSPORT PROBE_TRANSPORT — the probe negotiates through the relay.
probe_via_relay() {
    vm_require_bin "$VM_BUILD/smbdirect-probe"
    SENV_RELAY_TRANSPORT=$1 senv_relay_start
    run timeout 60 "$VM_BUILD/smbdirect-probe" --transport "$2" "$SENV_ADDR:$SENV_RELAY_PORT"
    echo "$output"; cat "$SENV_RELAY_LOG"
    [ "$status" -eq 0 ]
    [[ "$output" == *"version: 0x0100"* ]]
    grep -q 'relay: conn 1 from .* established' "$SENV_RELAY_LOG"
}

# get_put_via_relay RELAY_TRANSPORT SHIM_TRANSPORT LABEL — smbclient through the shim gets 16 MiB
# and puts 4 MiB through the relay; both keep sha256; notes the rates.
get_put_via_relay() {
    local d t0 t1 t2
    d=$(vm_client_tmpdir)
    senv_random_file "$d/put.bin" $((4 * 1024 * 1024))
    SENV_RELAY_TRANSPORT=$1 senv_relay_start
    t0=$(senv_now)
    run vm_smbclient_samba "$2" -c "get get-16m.bin $d/get.bin"
    t1=$(senv_now)
    echo "$output"; cat "$SENV_RELAY_LOG"
    [ "$status" -eq 0 ]
    [[ "$output" == *"tunneled over SMB Direct ($2"* ]]
    run vm_smbclient_samba "$2" -c "put $d/put.bin put-4m-$2.bin"
    t2=$(senv_now)
    echo "$output"; tail -n 5 "$SENV_RELAY_LOG"
    [ "$status" -eq 0 ]
    vm_assert_same_file "$d/get.bin" "$SENV_SHARE/get-16m.bin"
    vm_assert_same_file "$d/put.bin" "$SENV_SHARE/put-4m-$2.bin"
    vm_note "$3: get 16 MiB $(senv_rate $((16 << 20)) "$t0" "$t1") MiB/s, put 4 MiB $(senv_rate $((4 << 20)) "$t1" "$t2") MiB/s (whole smbclient runs)"
    rm -rf "$d"
}

@test "soft-iWARP connects to a kernel-siw listener: probe (soft) -> relay (verbs on siw)" {
    probe_via_relay rdma soft
}

@test "soft-iWARP accepts a kernel-siw connection: probe (verbs on siw) -> relay (soft)" {
    probe_via_relay soft rdma
}

@test "smbclient + shim (soft) -> relay (verbs on siw) -> Samba: get and put keep sha256" {
    get_put_via_relay rdma soft "shim soft -> relay verbs/siw -> Samba"
}

@test "smbclient + shim (verbs on siw) -> relay (soft) -> Samba: get and put keep sha256" {
    get_put_via_relay soft rdma "shim verbs/siw -> relay soft -> Samba"
}

@test "relay (verbs on siw) under Debian's default 8 MiB RLIMIT_MEMLOCK: says what a connection takes, and 64 MiB put and get through it keep sha256" {
    local d
    ulimit -S -l 8192
    SENV_RELAY_TRANSPORT=rdma senv_relay_start
    grep -q 'relay: RLIMIT_MEMLOCK is 8192 KiB: a connection registers [0-9]* KiB for good and 1028 KiB per I/O in flight' "$SENV_RELAY_LOG"
    d=$(vm_client_tmpdir)
    senv_random_file "$d/put.bin" $((64 * 1024 * 1024))
    run vm_smbclient_samba soft -c "put $d/put.bin put-64m-memlock.bin; get put-64m-memlock.bin $d/back.bin"
    echo "$output"; cat "$SENV_RELAY_LOG"
    [ "$status" -eq 0 ]
    vm_assert_same_file "$d/put.bin" "$SENV_SHARE/put-64m-memlock.bin"
    cmp "$d/put.bin" "$d/back.bin"
    if grep -q 'ibv_reg_mr of .* failed\|no registered memory' "$SENV_RELAY_LOG"; then
        echo "the relay met a refused registration" >&2; return 1
    fi
    vm_note "relay verbs/siw, RLIMIT_MEMLOCK 8 MiB: $(grep -m1 -o 'a connection registers.*per I/O in flight' "$SENV_RELAY_LOG")"
    rm -rf "$d"
}

@test "relay (verbs on siw) started as its systemd unit starts it: the unit's ExecStart and LimitMEMLOCK, an unprivileged user, listen and backend from the file; 3 clients at once keep sha256" {
    local unit=$BATS_TEST_DIRNAME/../../debian/smbdirect-relay.service exec limit conf d i pid log
    local -a args pids
    exec=$(sed -n 's/^ExecStart=//p' "$unit")
    limit=$(sed -n 's/^LimitMEMLOCK=//p' "$unit")
    [[ "$exec" == "/usr/sbin/smbdirect-relay "* ]]
    [ "$limit" = infinity ]
    read -ra args <<<"${exec#/usr/sbin/smbdirect-relay }"
    d=$(vm_client_tmpdir)
    conf=$d/smbdirect.conf
    printf '[relay]\nlisten = %s:%s\nbackend = %s:%s\ntransport = rdma\n' \
        "$SENV_ADDR" "$SENV_RELAY_PORT" "$SENV_ADDR" "$SENV_SMB_PORT" >"$conf"
    chmod 644 "$conf"
    # what RuntimeDirectory= makes for the unit's user (vm_as_client creates the user)
    vm_as_client true && mkdir -p /run/smbdirect && chown "$VM_CLIENT_USER" /run/smbdirect
    log=$d/relay.log
    SMBDIRECT_CONFIG=$conf VM_CLIENT_MEMLOCK=unlimited \
        vm_as_client "$VM_BUILD/smbdirect-relay" "${args[@]}" >"$log" 2>&1 3>&- &
    vm_wait_rdma_listen "$SENV_RELAY_PORT"
    pid=$(pgrep -n -x -f "$VM_BUILD/smbdirect-relay ${args[*]}")
    echo "$pid" >"$SENV_DIR/relay.pid" # teardown's senv_relay_stop
    [ "$(ps -o user= -p "$pid")" = "$VM_CLIENT_USER" ]
    grep -q '^Max locked memory *unlimited *unlimited' "/proc/$pid/limits"
    # no limit to report: the relay's own bounds decide
    if grep -q 'RLIMIT_MEMLOCK' "$log"; then cat "$log"; return 1; fi
    for i in 1 2 3; do
        senv_random_file "$d/p$i.bin" $((16 * 1024 * 1024))
        vm_smbclient_samba soft -c "put $d/p$i.bin unit-$i.bin; get unit-$i.bin $d/b$i.bin" \
            >"$d/c$i.log" 2>&1 &
        pids+=($!)
    done
    for i in 1 2 3; do
        wait "${pids[$((i - 1))]}" || { cat "$d/c$i.log" "$log"; return 1; }
        vm_assert_same_file "$d/p$i.bin" "$SENV_SHARE/unit-$i.bin"
        cmp "$d/p$i.bin" "$d/b$i.bin"
    done
    [ "$(grep -c 'relay: conn .* established' "$log")" -eq 3 ]
    run env SMBDIRECT_CONFIG="$conf" "$VM_BUILD/smbdirect-relay" --status --json
    echo "$output"
    [ "$status" -eq 0 ]
    [ "$(python3 -c 'import json, sys; print(json.load(sys.stdin)["accepted"])' <<<"$output")" -eq 3 ]
    kill -TERM "$pid"
    for i in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then echo "the relay outlived SIGTERM" >&2; return 1; fi
    [ ! -e /run/smbdirect/relay.sock ]
    rmdir /run/smbdirect
    rm -rf "$d"
}
