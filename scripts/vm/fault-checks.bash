# SPDX-License-Identifier: BSD-3-Clause
# scripts/vm/fault-checks.bash — real fabric faults in the middle of a transfer, for
# tests/vm/faults_*.bats: smbclient through the shim on verbs gets a 64 MiB file from ksmbd (four
# times over) while the test takes the device's network link down, removes the RDMA device or
# stops ksmbd; and for tests/vm/two_devices.bats, the same faults under a relay serving clients on two devices. The
# program must get an error within FAULT_BOUND_S seconds (the RDMA events arrive at once; the
# SMB Direct keepalive's 120 s is not good enough), the shim's log must name the cause, nothing
# may hang or crash; afterwards the path is restored and a new session moves data again.
# Sources guest-lib.bash and ksmbd-checks.bash itself; used inside bats tests.
# shellcheck shell=bash disable=SC2154  # output and status are set by bats' run

# shellcheck source=scripts/vm/guest-lib.bash
source "$(dirname "${BASH_SOURCE[0]}")/guest-lib.bash"
# shellcheck source=scripts/vm/ksmbd-checks.bash
source "$(dirname "${BASH_SOURCE[0]}")/ksmbd-checks.bash"

FAULT_BOUND_S=10
# The relay's side: on siw the programs learn of the link going down from the connection's
# end (as in faults_siw: no PORT_ERR reached them), and with two transfers sharing the
# guest's two vCPUs that took 2.2-8.0 s over five runs. Still far from the 120 s keepalive.
FAULT_RELAY_BOUND_S=15
FAULT_FILE=get-64m.bin

# fault_suite_start siw|rxe — setup_file of a fault suite: the device, ksmbd, and the files the
# faulted transfers read.
fault_suite_start() {
    [ "${VM_RESULTS:-}" = /vm ] || return 0
    vm_rdma_add "$1" >/dev/null && vm_ksmbd_start && ksmbd_seed_share &&
        senv_random_file "$KSMBD_SHARE/$FAULT_FILE" $((64 * 1024 * 1024))
}

# fault_get_cmd PATH — smbclient commands that get the fault file to PATH four times over: a
# fault reaches a program up to 2.8 s after it (2-8 s for siw's link fault through the relay),
# and on a fast host one 64 MiB get (28 MiB/s) can be over by then.
fault_get_cmd() { local g="get $FAULT_FILE $1;"; echo "$g $g $g $g"; }

# fault_wait_started FILE PID — waits until FILE holds 4 MiB (60 s at most) while PID runs.
fault_wait_started() {
    local start=$SECONDS
    until [ "$(stat -c %s "$1" 2>/dev/null || echo 0)" -ge $((4 * 1024 * 1024)) ]; do
        kill -0 "$2" 2>/dev/null || { echo "a transfer ended before the fault" >&2; return 1; }
        [ $((SECONDS - start)) -lt 60 ] || { echo "a transfer did not start" >&2; return 1; }
        sleep 0.1
    done
}

# fault_wait_ended PID T0 BOUND — waits for PID to exit; 1 when it still runs 3 x BOUND s
# after T0 (senv_now), so a hang fails the test instead of holding it.
fault_wait_ended() {
    while kill -0 "$1" 2>/dev/null; do
        if awk -v a="$2" -v b="$(senv_now)" -v m="$(($3 * 3))" 'BEGIN { exit !(b - a > m) }'; then
            echo "the program still runs $(($3 * 3)) s after the fault" >&2
            return 1
        fi
        sleep 0.1
    done
}

# fault_within T0 T1 BOUND — T1 - T0 <= BOUND seconds, else says so and fails.
fault_within() {
    awk -v a="$1" -v b="$2" -v m="$3" 'BEGIN { exit !(b - a <= m) }' ||
        { echo "the error came more than $3 s after the fault" >&2; return 1; }
}

# fault_check ADDR LABEL CAUSE_REGEX FAULT_CMD... — starts the transfer, waits until a few MiB
# have arrived, runs FAULT_CMD, and asserts the bound and that the client's output matches
# CAUSE_REGEX (extended grep). Notes how long the program took to see the error.
fault_check() {
    local addr=$1 label=$2 cause=$3 d pid t0 t1 rc=0
    shift 3
    d=$(vm_client_tmpdir)
    SMBDIRECT_LOG=info vm_smbclient_ksmbd "$addr" rdma -c "$(fault_get_cmd "$d/got.bin")" \
        >"$d/out" 2>&1 &
    pid=$!
    fault_wait_started "$d/got.bin" "$pid" || { kill -9 "$pid" 2>/dev/null; cat "$d/out"; return 1; }
    t0=$(senv_now)
    # detached from the test (setsid -f, none of bats' fds): a kernel that hangs in the fault
    # (6.1's ksmbd stopping on siw) must not keep the test, bats or the VM from ending; a
    # fault command that fails leaves the program running, which fails the test below
    vm_detached setsid -f "$@" >"$d/fault.out" 2>&1
    fault_wait_ended "$pid" "$t0" "$FAULT_BOUND_S" || { kill -9 "$pid"; cat "$d/out"; return 1; }
    wait "$pid" || rc=$?
    t1=$(senv_now)
    cat "$d/out"
    [ "$rc" -ne 0 ] || grep -q 'NT_STATUS_' "$d/out" ||
        { echo "the program saw no error" >&2; return 1; }
    grep -Eq "$cause" "$d/out" || { echo "the log does not name the cause ($cause)" >&2; return 1; }
    if grep -q 'AddressSanitizer\|Segmentation\|core dumped' "$d/out"; then echo "a crash" >&2; return 1; fi
    fault_within "$t0" "$t1" "$FAULT_BOUND_S" || return 1
    vm_note "$label: the program saw the error $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }') s after the fault: $(grep -Eo "$cause" "$d/out" | head -n1)"
    rm -rf "$d"
}

# fault_recovered ADDR — after the fault was undone, a new session moves data again.
fault_recovered() {
    local d
    d=$(vm_client_tmpdir)
    run vm_smbclient_ksmbd "$1" rdma -c "get get-1m.bin $d/1m.bin"
    echo "$output"
    [ "$status" -eq 0 ]
    ksmbd_assert_same "$d/1m.bin" get-1m.bin
    rm -rf "$d"
}

# ---- the relay's side (tests/vm/two_devices.bats) ----
# One smbdirect-relay on verbs listens on every RDMA device (0.0.0.0:5445) in front of Samba on
# 127.0.0.1 (no netdev under test carries it); one smbclient through the shim gets the 64 MiB file
# over siw, another over rxe (both dial 5445: SMBDIRECT_PORTMAP). A fault on one device's link
# must end its client within FAULT_RELAY_BOUND_S with the relay's log naming the cause, while the client
# on the other device completes intact through the same relay process. (Not the removal of a
# device: siw and rxe cannot take their resources back from a running process, so `rdma link
# delete` waits until the relay, whose librdmacm keeps the device open, exits.) The tests export
# SMBDIRECT_PORTMAP=445:5445 for the clients.

# fault_relay_suite_start — setup_file of two_devices.bats (also the 1 MiB file).
fault_relay_suite_start() {
    [ "${VM_RESULTS:-}" = /vm ] || return 0
    vm_rdma_add_both && vm_samba_start 127.0.0.1 &&
        senv_random_file "$SENV_SHARE/$FAULT_FILE" $((64 * 1024 * 1024)) &&
        senv_random_file "$SENV_SHARE/get-1m.bin" $((1024 * 1024)) || return 1
    SMBDIRECT_LOG=info vm_detached "$VM_BUILD/smbdirect-relay" --transport rdma \
        --listen 0.0.0.0:5445 --backend "127.0.0.1:$SENV_SMB_PORT" --drain-time 0 \
        --status-socket none </dev/null >>"$SENV_RELAY_LOG" 2>&1 &
    echo $! >"$SENV_DIR/relay.pid"
    vm_wait_rdma_listen 5445 || { cat "$SENV_RELAY_LOG" >&2; return 1; }
}

# fault_relay_check FAULTED OTHER LABEL CAUSE_REGEX FAULT_CMD... — FAULTED and OTHER are siw|rxe:
# both clients start (FAULTED's getting the file four times over), FAULT_CMD hits FAULTED's
# device a few MiB in; FAULTED's client must exit
# with an error within the bound, the relay must have closed that client's connection with a log
# line matching CAUSE_REGEX, OTHER's client must get the whole file intact, and the relay must
# still run. (Client and relay share the device inside the VM, so the relay may learn of the
# fault from the device or from the client's side going away first: CAUSE_REGEX allows both.)
fault_relay_check() {
    local faulted=$1 other=$2 label=$3 cause=$4 d fpid opid t0 t1 rc=0 orc=0 conn
    local faddr=$VM_SIW_IP oaddr=$VM_SIW_IP
    shift 4
    [ "$faulted" = siw ] || faddr=$VM_RXE_IP
    [ "$other" = siw ] || oaddr=$VM_RXE_IP
    d=$(vm_client_tmpdir)
    cp "$SENV_RELAY_LOG" "$d/relay.before"
    SMBDIRECT_LOG=info vm_smbclient "$faddr" rdma -N -c "$(fault_get_cmd "$d/faulted.bin")" \
        >"$d/faulted.out" 2>&1 &
    fpid=$!
    SMBDIRECT_LOG=info vm_smbclient "$oaddr" rdma -N -c "get $FAULT_FILE $d/other.bin" \
        >"$d/other.out" 2>&1 &
    opid=$!
    if ! fault_wait_started "$d/faulted.bin" "$fpid" || ! fault_wait_started "$d/other.bin" "$opid"; then
        kill -9 "$fpid" "$opid" 2>/dev/null; cat "$d/faulted.out" "$d/other.out" "$SENV_RELAY_LOG"; return 1
    fi
    t0=$(senv_now)
    vm_detached setsid -f "$@" >"$d/fault.out" 2>&1
    if ! fault_wait_ended "$fpid" "$t0" "$FAULT_RELAY_BOUND_S"; then
        kill -9 "$fpid" "$opid" 2>/dev/null
        cat "$d/faulted.out" "$SENV_RELAY_LOG"
        return 1
    fi
    wait "$fpid" || rc=$?
    t1=$(senv_now)
    wait "$opid" || orc=$?
    echo "--- fault ($*):"; cat "$d/fault.out"
    echo "--- $faulted client:"; cat "$d/faulted.out"
    echo "--- $other client:"; cat "$d/other.out"
    diff "$d/relay.before" "$SENV_RELAY_LOG" | sed -n 's/^> //p' >"$d/relay.new"
    echo "--- relay (this test):"; cat "$d/relay.new"
    [ "$rc" -ne 0 ] || grep -q 'NT_STATUS_' "$d/faulted.out" ||
        { echo "the $faulted client saw no error" >&2; return 1; }
    conn=$(sed -n "s/^relay: conn \([0-9]*\) from $faddr:.*/\1/p" "$d/relay.new" | head -n1)
    [ -n "$conn" ] && grep -q "^relay: conn $conn closed" "$d/relay.new" ||
        { echo "the relay did not close the $faulted client's connection" >&2; return 1; }
    grep -Eq "$cause" "$d/relay.new" ||
        { echo "the relay's log does not name the cause ($cause)" >&2; return 1; }
    fault_within "$t0" "$t1" "$FAULT_RELAY_BOUND_S" || return 1
    [ "$orc" -eq 0 ] || { echo "the $other client failed ($orc)" >&2; return 1; }
    vm_assert_same_file "$d/other.bin" "$SENV_SHARE/$FAULT_FILE"
    kill -0 "$(cat "$SENV_DIR/relay.pid")" || { echo "the relay is gone" >&2; return 1; }
    if grep -q 'AddressSanitizer\|Segmentation\|core dumped' "$d"/*.out "$SENV_RELAY_LOG"; then
        echo "a crash" >&2; return 1
    fi
    vm_note "$label: the $faulted client saw the error $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }') s after the fault, the relay logged: $(grep -Eo "$cause" "$d/relay.new" | head -n1); the $other client's 64 MiB arrived intact"
    rm -rf "$d"
}

# fault_relay_recovered KIND — after the fault was undone, a new session over KIND's device
# moves data through the same relay.
fault_relay_recovered() {
    local d addr=$VM_SIW_IP
    [ "$1" = siw ] || addr=$VM_RXE_IP
    d=$(vm_client_tmpdir)
    run vm_smbclient "$addr" rdma -N -c "get get-1m.bin $d/1m.bin"
    echo "$output"; tail -n 5 "$SENV_RELAY_LOG"
    [ "$status" -eq 0 ]
    [[ "$output" == *"verbs: connected over ${1}0 ("* ]]
    vm_assert_same_file "$d/1m.bin" "$SENV_SHARE/get-1m.bin"
    rm -rf "$d"
}
