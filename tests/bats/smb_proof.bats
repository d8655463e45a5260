#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# tests/bats/smb_proof.bats — proof that smbclient's bytes went over SMB Direct: the
# relay's per-connection log (negotiated parameters, byte counts larger than the file),
# a capture of the tunnel port decoded by tshark as iWARP MPA -> DDP/RDMAP -> SMB Direct
# -> SMB2, and a capture of the backend port showing only the relay's connection.
# Real smbd and relay on 127.0.0.13.

load helpers

setup_file() { suite_start 127.0.0.13; }
teardown_file() { suite_stop; }
setup() { require_shim; }
teardown() {
    dump_logs_on_failure
    [ -z "${CAP:-}" ] || capture_stop "$CAP"
    remove_work_dir
}

# last_conn_id — the relay's id of the most recent established connection.
last_conn_id() {
    grep -o 'relay: conn [0-9]* from .* established' "$SENV_RELAY_LOG" | tail -n 1 |
        awk '{ print $3 }'
}

# closed_line ID — the relay's "closed" line of connection ID (waits up to 5 s for it).
closed_line() {
    wait_relay_log "relay: conn $1 closed" && grep -m1 "relay: conn $1 closed" "$SENV_RELAY_LOG"
}

@test "the relay logs each connection with its negotiated SMB Direct parameters" {
    run_smb -c 'ls'
    assert_success
    local id line
    id=$(last_conn_id)
    line=$(grep "relay: conn $id from .* established" "$SENV_RELAY_LOG")
    echo "# $line" >&3
    [[ "$line" =~ version\ 0x0100\ credits\ [0-9]+/[0-9]+\ send\ [0-9]+\ recv\ [0-9]+ ]]
}

@test "the relay counted more bytes for a put and a get than the file size" {
    local d id line size=8388608 counts n
    d=$(work_dir)
    senv_random_file "$d/src.bin" $size
    SMBDIRECT_RDMA_THRESHOLD=0 run_smb -c "put $d/src.bin proof.bin; get proof.bin $d/back.bin"
    assert_success
    assert_same_file "$d/src.bin" "$d/back.bin"
    id=$(last_conn_id)
    line=$(closed_line "$id")
    echo "# $line" >&3
    # Inline (no RDMA channel): each direction's byte count must exceed the file.
    counts=$(grep -oE '[0-9]+ bytes|bytes [0-9]+' <<<"$line" | grep -oE '[0-9]+')
    [ "$(wc -l <<<"$counts")" -ge 2 ]
    for n in $counts; do [ "$n" -gt $size ]; done
}

@test "over the RDMA channel the relay counts the put's and get's bytes as RDMA Read and Write" {
    local d id size=8388608
    d=$(work_dir)
    senv_random_file "$d/src.bin" $size
    run_smb -m SMB3_11 -c "put $d/src.bin proof.bin; get proof.bin $d/back.bin"
    assert_success
    assert_same_file "$d/src.bin" "$d/back.bin"
    id=$(last_conn_id)
    closed_line "$id" >/dev/null
    grep "relay: conn $id channel" "$SENV_RELAY_LOG" >&3
    grep -q "relay: conn $id channel: rdma_read [0-9]* ops $size bytes (WRITE data), rdma_write [0-9]* ops $size bytes (READ data)" "$SENV_RELAY_LOG"
}

@test "tshark shows the RDMA channel: WRITE and READ with Channel 2, data as RDMA Read and Write" {
    local d
    d=$(work_dir)
    CAP=$d/channel.pcapng
    capture_start "$CAP" "host $SENV_ADDR and tcp port 5445"
    senv_random_file "$d/src.bin" 1048576
    run_smb -m SMB3_11 -c "put $d/src.bin chan.bin; get chan.bin $d/back.bin"
    capture_stop "$CAP"
    assert_success
    assert_same_file "$d/src.bin" "$d/back.bin"
    # SMB2 WRITE (9) and READ (8) requests name SMB2_CHANNEL_RDMA_V1_INVALIDATE (2).
    [ "$(tshark_count "$CAP" 'smb2.cmd == 9 && smb2.channel == 2')" -ge 1 ]
    [ "$(tshark_count "$CAP" 'smb2.cmd == 8 && smb2.channel == 2')" -ge 1 ]
    # RDMAP (RFC 5040): Read Request (1) and tagged Read Response (2) carry the WRITE data,
    # RDMA Write (0) the READ data, and a response comes as Send with Invalidate (4).
    [ "$(tshark_count "$CAP" 'iwarp_rdma.opcode == 1')" -ge 1 ]
    [ "$(tshark_count "$CAP" 'iwarp_rdma.opcode == 2 && iwarp_ddp.tagged_flag == 1')" -ge 1 ]
    [ "$(tshark_count "$CAP" 'iwarp_rdma.opcode == 0 && iwarp_ddp.tagged_flag == 1')" -ge 1 ]
    [ "$(tshark_count "$CAP" 'iwarp_rdma.opcode == 4 && smb2.flags.response == 1')" -ge 1 ]
}

@test "tshark decodes the tunnel port as SMB Direct: negotiate request, response, data messages" {
    local d
    d=$(work_dir)
    CAP=$d/tunnel.pcapng
    capture_start "$CAP" "host $SENV_ADDR and tcp port 5445"
    senv_random_file "$d/src.bin" 262144
    run_smb -c "put $d/src.bin cap.bin; get cap.bin $d/back.bin"
    capture_stop "$CAP"
    assert_success
    assert_same_file "$d/src.bin" "$d/back.bin"
    [ "$(tshark_count "$CAP" iwarp_mpa.key.req)" -eq 1 ]
    [ "$(tshark_count "$CAP" iwarp_mpa.key.rep)" -eq 1 ]
    [ "$(tshark_count "$CAP" smb_direct.negotiate_request)" -eq 1 ]
    [ "$(tshark_count "$CAP" smb_direct.negotiate_response)" -eq 1 ]
    [ "$(tshark_count "$CAP" 'smb_direct.data_message && smb_direct.data_length > 0')" -ge 10 ]
    # SMB2 inside SMB Direct: the negotiate, the create of cap.bin, a write and a read.
    [ "$(tshark_count "$CAP" 'iwarp_ddp_rdmap && smb2.cmd == 0')" -ge 2 ]
    [ "$(tshark_count "$CAP" 'iwarp_ddp_rdmap && smb2.filename == "cap.bin"')" -ge 1 ]
    [ "$(tshark_count "$CAP" 'iwarp_ddp_rdmap && smb2.cmd == 9')" -ge 1 ]
    [ "$(tshark_count "$CAP" 'iwarp_ddp_rdmap && smb2.cmd == 8')" -ge 1 ]
}

@test "smbclient opened no TCP connection to smbd itself: port 445 saw only the relay's" {
    local d first5445 first445
    d=$(work_dir)
    CAP=$d/both.pcapng
    capture_start "$CAP" "host $SENV_ADDR and (tcp port 445 or tcp port 5445)"
    run_smb -c 'ls'
    capture_stop "$CAP"
    assert_success
    # One connection to each port: smbclient -> relay (5445), relay -> smbd (445).
    [ "$(tshark_count "$CAP" 'tcp.flags.syn == 1 && tcp.flags.ack == 0 && tcp.dstport == 5445')" -eq 1 ]
    [ "$(tshark_count "$CAP" 'tcp.flags.syn == 1 && tcp.flags.ack == 0 && tcp.dstport == 445')" -eq 1 ]
    # ... and the relay's backend connection follows the SMB Direct one.
    first5445=$(tshark -r "$CAP" -Y 'tcp.flags.syn == 1 && tcp.flags.ack == 0 && tcp.dstport == 5445' \
        -T fields -e frame.number 2>/dev/null)
    first445=$(tshark -r "$CAP" -Y 'tcp.flags.syn == 1 && tcp.flags.ack == 0 && tcp.dstport == 445' \
        -T fields -e frame.number 2>/dev/null)
    [ "$first445" -gt "$first5445" ]
    # The SMB2 on 445 is plain Direct-TCP and carries the same session's commands.
    [ "$(tshark_count "$CAP" 'tcp.port == 445 && smb2.cmd == 3')" -ge 1 ]
}
