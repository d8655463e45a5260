#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# tests/bats/smb_faults.bats — the network path dropped mid-transfer: smbd and the relay
# on 10.213.0.1 in the root namespace, smbclient (through the shim) in a network
# namespace the test creates, on 10.213.0.2 at the other end of a veth pair. Setting the
# link down in the middle of a 512 MiB get or put (no RST, no FIN: packets just stop)
# must make smbclient exit with an error within the keepalive bound + 5 s (keepalives
# every 2 s on both sides), never hang; the file being written is left short, and with
# the link back up the relay serves a new session. Skips when network namespaces or
# veth pairs are not available. (Processes killed mid-transfer: smb_failure.bats; no SMB
# Direct listener: smb_fallback.bats.)

load helpers

BIG=536870912
NS=sdfaults
FAULT_LINK=sdf0
export SMBDIRECT_KEEPALIVE=2
RELAY_ARGS=(--keepalive 2)
LIMIT=$((SMBDIRECT_KEEPALIVE + 5))

# net_up — the namespace, the veth pair and their addresses; false when unavailable.
net_up() {
    ip netns add "$NS" 2>/dev/null || return 1
    ip link add "$FAULT_LINK" type veth peer name sdf1 2>/dev/null || return 1
    ip link set sdf1 netns "$NS" &&
        ip addr add 10.213.0.1/24 dev "$FAULT_LINK" && ip link set "$FAULT_LINK" up &&
        ip -n "$NS" addr add 10.213.0.2/24 dev sdf1 && ip -n "$NS" link set sdf1 up &&
        ip -n "$NS" link set lo up
}

net_down() {
    ip link del "$FAULT_LINK" 2>/dev/null || true
    ip netns del "$NS" 2>/dev/null || true
}

setup_file() {
    net_down
    if net_up; then net_down; else net_down; export FAULTS_SKIP="network namespaces or veth pairs are not available (ip netns add / ip link add type veth failed)"; fi
    senv_random_file "$BATS_FILE_TMPDIR/big.bin" "$BIG"
    chmod 0644 "$BATS_FILE_TMPDIR/big.bin"
}

setup() {
    [ -z "${FAULTS_SKIP:-}" ] || skip "$FAULTS_SKIP"
    require_shim
    net_up || return 1
    suite_start_smbd 10.213.0.1 || return 1
    senv_relay_start "${RELAY_ARGS[@]}" || { senv_destroy; return 1; }
}

teardown() {
    dump_logs_on_failure
    [ -z "${SENV_DIR:-}" ] || suite_stop
    net_down
}

# smb [smbclient args...] — smbclient through the shim, run inside the namespace.
smb() {
    ip netns exec "$NS" env SMBDIRECT_FALLBACK=none SMBDIRECT_LOG=info SMBDIRECT_TRANSPORT=soft \
        "$SENV_BUILD/smbdirect" smbclient "//$SENV_ADDR/$SENV_SHARE_NAME" -m SMB3 -N "$@"
}

# path_back — after the link is set up again, waits (up to 5 s) until a plain TCP connect
# from the namespace reaches smbd: the neighbour entries that failed while the link was
# down answer "No route to host" until they are retried, which is the network's doing,
# not the relay's.
path_back() {
    local i
    ip -n "$NS" neigh flush dev sdf1 2>/dev/null || true
    ip neigh flush dev "$FAULT_LINK" 2>/dev/null || true
    for ((i = 0; i < 50; i++)); do
        ip netns exec "$NS" bash -c "exec 3<>/dev/tcp/$SENV_ADDR/$SENV_SMB_PORT" 2>/dev/null && return 0
        sleep 0.1
    done
    echo "the path to $SENV_ADDR did not come back within 5 s of the link going up" >&2
    return 1
}

# link_dropped get|put — the transfer with the link set down, then the link back up and
# a new session served; the relay must have ended the stranded connection by then.
link_dropped() {
    local ended t0 i
    assert_relay_serves
    ended=$(relay_ended_count)
    interrupt_transfer "$1" link "$LIMIT"
    t0=$(senv_now)
    for ((i = 0; i < LIMIT * 20; i++)); do
        [ "$(relay_ended_count)" -gt "$ended" ] && break
        sleep 0.05
    done
    echo "# the relay ended the stranded connection $(elapsed "$t0" "$(senv_now)") s after smbclient exited" >&3
    [ "$(relay_ended_count)" -gt "$ended" ]
    ip link set "$FAULT_LINK" up
    path_back
    assert_relay_serves
}

@test "link dropped mid-get: smbclient exits with an error within keepalive + 5 s" {
    link_dropped get
}

@test "link dropped mid-put: smbclient exits with an error within keepalive + 5 s" {
    link_dropped put
}
