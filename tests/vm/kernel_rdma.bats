#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# tests/vm/kernel_rdma.bats — inside the test VM: the kernel RDMA stack itself works before any
# of our code is involved. siw and rxe devices come up on dummy interfaces, rdma-core sees them,
# and rdma-core's own rping/ucmatose move data over each; a kernel siw listener answers a plain
# TCP MPA request (what our soft-iWARP provider relies on).

setup_file() {
    source "$BATS_TEST_DIRNAME/../../scripts/vm/guest-lib.bash"
    vm_rdma_add_both
}

setup() {
    source "$BATS_TEST_DIRNAME/../../scripts/vm/guest-lib.bash"
    vm_require_guest
}

# rping_pair ADDR — rping server and client (10 verified iterations) on ADDR.
rping_pair() {
    local server_log=/tmp/rping-server.$$ server server_rc=0
    timeout 90 rping -s -a "$1" -v -C 10 >"$server_log" 2>&1 3>&- &
    server=$!
    vm_wait_rdma_listen 7174
    run timeout 60 rping -c -a "$1" -v -C 10 -V
    wait "$server" || server_rc=$?
    echo "client: $output"; echo "server: $(cat "$server_log")"
    [ "$status" -eq 0 ]
    [ "$server_rc" -eq 0 ]
    [ "$(grep -c 'ping data: rdma-ping-' <<<"$output")" -eq 10 ]
}

@test "rdma link shows siw0 and rxe0 active on their dummy interfaces" {
    run rdma link show
    echo "$output"
    [[ "$output" == *"link siw0/1 state ACTIVE"*"netdev vmsiw0"* ]]
    [[ "$output" == *"link rxe0/1 state ACTIVE"*"netdev vmrxe0"* ]]
}

@test "ibv_devices lists siw0 (iWARP) and rxe0 (RoCE) through rdma-core" {
    run ibv_devices
    echo "$output"
    [[ "$output" == *siw0* ]]
    [[ "$output" == *rxe0* ]]
    run ibv_devinfo -d siw0
    [[ "$output" == *"transport:"*"iWARP"* ]]
    run ibv_devinfo -d rxe0
    [[ "$output" == *"transport:"*"InfiniBand"* ]]
    [[ "$output" == *"link_layer:"*"Ethernet"* ]]
}

@test "rping moves verified data over kernel siw" {
    rping_pair "$VM_SIW_IP"
}

@test "rping moves verified data over kernel rxe" {
    rping_pair "$VM_RXE_IP"
}

# ucmatose_round — one ucmatose server + client pair over kernel siw; sets status/output.
ucmatose_round() {
    timeout 90 ucmatose -b "$VM_SIW_IP" -C 10 >/tmp/ucmatose-server.log 2>&1 3>&- &
    local server=$!
    vm_wait_rdma_listen 7471
    run timeout 60 ucmatose -s "$VM_SIW_IP" -C 10
    server_rc=0
    wait "$server" || server_rc=$?
    echo "$output"; cat /tmp/ucmatose-server.log
}

# Under qemu's emulation kernel siw now and then refuses one of the ten connects
# (RDMA_CM_EVENT_CONNECT_ERROR -22, seen once in a CI-like run, gone on rerun): that
# alone earns one more round; any other failure, or a second one, fails.
@test "ucmatose connects, transfers and disconnects over kernel siw" {
    local server_rc
    ucmatose_round
    if [ "$status" -ne 0 ] && [[ "$output" == *RDMA_CM_EVENT_CONNECT_ERROR* ]]; then
        echo "# kernel siw refused a connect; one more round"
        ucmatose_round
    fi
    [ "$status" -eq 0 ]
    [ "$server_rc" -eq 0 ]
    [[ "$output" == *"test complete"* ]]
}

@test "a kernel siw listener answers a plain TCP MPA request with an MPA rev 2 reply" {
    timeout 60 rping -s -a "$VM_SIW_IP" -C 1 >/dev/null 2>&1 3>&- &
    local server=$!
    vm_wait_rdma_listen 7174
    run vm_mpa_reply "$VM_SIW_IP" 7174
    kill "$server" 2>/dev/null || true
    wait "$server" 2>/dev/null || true
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == "MPA ID Rep Frame flags=0x"[45]"0 rev=2" ]]
}
