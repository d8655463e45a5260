# scripts/vm/fault-checks.bash — real fabric faults in the middle of a transfer, for
# tests/vm/faults_*.bats: smbclient through the shim on verbs gets a 64 MiB file from ksmbd while
# the test takes the device's network link down, removes the RDMA device or stops ksmbd. The
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
FAULT_FILE=get-64m.bin

# fault_suite_start siw|rxe — setup_file of a fault suite: the device, ksmbd, and the files the
# faulted transfers read.
fault_suite_start() {
    [ "${VM_RESULTS:-}" = /vm ] || return 0
    vm_rdma_add "$1" >/dev/null && vm_ksmbd_start && ksmbd_seed_share &&
        senv_random_file "$KSMBD_SHARE/$FAULT_FILE" $((64 * 1024 * 1024))
}

# fault_check ADDR LABEL CAUSE_REGEX FAULT_CMD... — starts the transfer, waits until a few MiB
# have arrived, runs FAULT_CMD, and asserts the bound and that the client's output matches
# CAUSE_REGEX (extended grep). Notes how long the program took to see the error.
fault_check() {
    local addr=$1 label=$2 cause=$3 d pid t0 t1 rc=0 start=$SECONDS
    shift 3
    d=$(vm_client_tmpdir)
    SMBDIRECT_LOG=info vm_smbclient_ksmbd "$addr" rdma -c "get $FAULT_FILE $d/got.bin" \
        >"$d/out" 2>&1 &
    pid=$!
    until [ "$(stat -c %s "$d/got.bin" 2>/dev/null || echo 0)" -ge $((4 * 1024 * 1024)) ]; do
        kill -0 "$pid" 2>/dev/null || { cat "$d/out"; echo "the transfer ended before the fault" >&2; return 1; }
        [ $((SECONDS - start)) -lt 60 ] || { kill -9 "$pid"; cat "$d/out"; echo "the transfer did not start" >&2; return 1; }
        sleep 0.1
    done
    t0=$(senv_now)
    # detached from the test (setsid -f, none of bats' fds): a kernel that hangs in the fault
    # (6.1's ksmbd stopping on siw) must not keep the test, bats or the VM from ending; a
    # fault command that fails leaves the program running, which fails the test below
    vm_detached setsid -f "$@" >"$d/fault.out" 2>&1
    while kill -0 "$pid" 2>/dev/null; do
        if awk -v a="$t0" -v b="$(senv_now)" -v m="$((FAULT_BOUND_S * 3))" 'BEGIN { exit !(b - a > m) }'; then
            kill -9 "$pid"
            cat "$d/out"
            echo "the program still runs $((FAULT_BOUND_S * 3)) s after the fault" >&2
            return 1
        fi
        sleep 0.1
    done
    wait "$pid" || rc=$?
    t1=$(senv_now)
    cat "$d/out"
    [ "$rc" -ne 0 ] || grep -q 'NT_STATUS_' "$d/out" ||
        { echo "the program saw no error" >&2; return 1; }
    grep -Eq "$cause" "$d/out" || { echo "the log does not name the cause ($cause)" >&2; return 1; }
    if grep -q 'AddressSanitizer\|Segmentation\|core dumped' "$d/out"; then echo "a crash" >&2; return 1; fi
    awk -v a="$t0" -v b="$t1" -v m="$FAULT_BOUND_S" 'BEGIN { exit !(b - a <= m) }' ||
        { echo "the error came more than $FAULT_BOUND_S s after the fault" >&2; return 1; }
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
