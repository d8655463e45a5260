#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# tests/bats/smb_failure.bats — losing the relay (killed, or killed and started again)
# or the backend smbd in the middle of a 512 MiB transfer makes smbclient exit with an
# error within the keepalive bound + 5 s, never hang, and the file being written is left
# short; killing smbclient itself mid-transfer makes the relay end its connection within
# that bound; the relay serves new connections after each. Keepalives every 2 s on both
# sides (SMBDIRECT_KEEPALIVE, relay --keepalive). Each test starts its own smbd and relay
# on 127.0.0.16. (No SMB Direct listener at all: smb_fallback.bats.)

load helpers

BIG=536870912
export SMBDIRECT_KEEPALIVE=2
RELAY_ARGS=(--keepalive 2)
LIMIT=$((SMBDIRECT_KEEPALIVE + 5))

setup_file() {
    senv_random_file "$BATS_FILE_TMPDIR/big.bin" "$BIG"
    chmod 0644 "$BATS_FILE_TMPDIR/big.bin"
}
setup() {
    suite_start_smbd 127.0.0.16 || return 1
    if [ "$SD_VIA" = shim ] && ! senv_relay_start "${RELAY_ARGS[@]}"; then senv_destroy; return 1; fi
}
teardown() { dump_logs_on_failure; suite_stop; }

@test "relay killed mid-get: smbclient exits with an error within keepalive + 5 s" {
    require_shim
    interrupt_transfer get relay "$LIMIT"
}

@test "relay killed mid-put: smbclient exits with an error within keepalive + 5 s" {
    require_shim
    interrupt_transfer put relay "$LIMIT"
}

@test "relay restarted mid-put: smbclient errors within keepalive + 5 s, the new relay serves" {
    require_shim
    interrupt_transfer put relay-restart "$LIMIT"
    assert_relay_serves
}

@test "smbclient killed mid-put: the relay ends its connection within keepalive + 5 s and serves" {
    require_shim
    interrupt_transfer put client "$LIMIT"
    assert_relay_serves
}

@test "smbclient killed mid-get: the relay ends its connection within keepalive + 5 s and serves" {
    require_shim
    interrupt_transfer get client "$LIMIT"
    assert_relay_serves
}

@test "backend smbd killed mid-get: smbclient exits with an error within keepalive + 5 s" {
    interrupt_transfer get smbd "$LIMIT"
}

@test "backend smbd killed mid-put: smbclient exits with an error within keepalive + 5 s" {
    interrupt_transfer put smbd "$LIMIT"
}

@test "after its backend was killed mid-transfer the relay still serves new connections" {
    require_shim
    interrupt_transfer get smbd "$LIMIT"
    local relay_pid d
    relay_pid=$(cat "$SENV_DIR/relay.pid")
    senv_smbd_start
    d=$(work_dir)
    senv_random_file "$d/after.bin" 1048576
    run_smb -c "put $d/after.bin after.bin"
    assert_success
    assert_same_file "$d/after.bin" "$SENV_SHARE/after.bin"
    [ "$(cat "$SENV_DIR/relay.pid")" = "$relay_pid" ]
    kill -0 "$relay_pid"
}

# A server whose MaxFragmentedSize is smaller than smbclient's WRITE (ksmbd offers
# 173910 bytes), with the RDMA channel off: the shim lowers smbclient's WRITE size to fit
# (preload/interpose_smb2cli.c), so the 1 MiB put succeeds inline.
@test "with the channel off, smbclient's WRITEs are sized to fit the server's MaxFragmentedSize" {
    require_shim
    local d
    senv_relay_stop TERM
    senv_relay_start --max-fragmented-size 173910
    d=$(work_dir)
    senv_random_file "$d/one.bin" 1048576
    run timeout 30 env SMBDIRECT_TRANSPORT=soft SMBDIRECT_FALLBACK=none SMBDIRECT_LOG=debug \
        SMBDIRECT_RDMA_THRESHOLD=0 \
        "$SENV_BUILD/smbdirect" smbclient "//$SENV_ADDR/$SENV_SHARE_NAME" -m SMB3 -N \
        -c "put $d/one.bin one.bin"
    [ "$status" -eq 0 ]
    [[ "$output" == *"SMB2 WRITE size 8388608 lowered to 172032"* ]]
    assert_same_file "$d/one.bin" "$SENV_SHARE/one.bin"
}

# A program that is not Samba's (nothing sizes its I/O) sends a 1 MiB SMB2 message to that
# server: the shim cannot carry it inline, so the connection ends with an error naming the
# cause and the remedy, and the program sees the connection end (no hang) within seconds.
@test "a message larger than the server's MaxFragmentedSize fails cleanly, naming the cause" {
    require_shim
    local t0 t1
    senv_relay_stop TERM
    senv_relay_start --max-fragmented-size 173910
    t0=$(senv_now)
    run timeout 30 env SMBDIRECT_TRANSPORT=soft SMBDIRECT_FALLBACK=none SMBDIRECT_LOG=warn \
        "$SENV_BUILD/smbdirect" python3 -c '
import socket, struct, sys
s = socket.create_connection((sys.argv[1], 445))
body = b"\xfeSMB" + b"\0" * (1048576 - 4)
try:
    s.sendall(struct.pack(">I", len(body)) + body)
    got = s.recv(4)
    print("peer answered %d bytes" % len(got))
except OSError as e:
    print("socket error:", e.strerror)
' "$SENV_ADDR"
    t1=$(senv_now)
    echo "# the program exited $status after $(elapsed "$t0" "$t1") s" >&3
    [ "$status" -eq 0 ]
    [[ "$output" == *"exceeds the peer's MaxFragmentedSize of 173910 bytes"* ]]
    [[ "$output" == *"peer answered 0 bytes"* || "$output" == *"socket error"* ]]
    awk -v a="$t0" -v b="$t1" 'BEGIN{exit !(b - a < 10)}'
}

# The same server with the channel on (the default): the 1 MiB WRITE leaves as a small
# request and the relay RDMA-reads its data, so the put succeeds byte for byte.
@test "a WRITE larger than the server's MaxFragmentedSize goes over the RDMA channel" {
    require_shim
    local d
    senv_relay_stop TERM
    senv_relay_start --max-fragmented-size 173910
    d=$(work_dir)
    senv_random_file "$d/one.bin" 1048576
    run timeout 30 env SMBDIRECT_TRANSPORT=soft SMBDIRECT_FALLBACK=none SMBDIRECT_LOG=warn \
        "$SENV_BUILD/smbdirect" smbclient "//$SENV_ADDR/$SENV_SHARE_NAME" -m SMB3 -N \
        -c "put $d/one.bin one.bin"
    [ "$status" -eq 0 ]
    assert_same_file "$d/one.bin" "$SENV_SHARE/one.bin"
}
