#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# tests/bats/smb_addrmap.bats — the address map (SMBDIRECT_ADDRMAP, key addrmap) with real
# programs: Samba's smbd and smbdirect-relay on 127.0.0.27 (the server's "RDMA address"),
# nothing at all on 127.0.0.28 (the address the program connects to). smbclient through
# the shim to 127.0.0.28 with SMB Direct mandatory reaches the smbd behind the relay only
# through the map; the map's port, else the port map's, is dialled; a TCP fallback goes to
# the address the program asked for; getpeername reports that address; the probe applies
# the map and says so; a bad map is an error naming the variable; the file's map works.

load helpers

SERVER=127.0.0.27 # smbd :445 and the relay :5445 (a second relay on :5446 when a test asks)
MAPPED=127.0.0.28 # nothing listens here
MAP="$MAPPED=$SERVER"

setup_file() {
    [ "$SD_VIA" = shim ] || return 0 # every test skips (setup)
    suite_start "$SERVER" || return 1
    # A name only this run's share holds: a listing that shows it came from this smbd.
    MARKER=addrmap-marker-$$-$RANDOM
    : >"$SENV_SHARE/$MARKER"
    export MARKER
}
teardown_file() { suite_stop; }

setup() {
    require_shim
    CONF=$(mktemp)
    export SMBDIRECT_CONFIG=$CONF # empty unless a test writes it: no /etc file counts
}
teardown() { dump_logs_on_failure; senv_stop_pidfile relay2 TERM; rm -f "$CONF"; }

# ls_via_shim HOST [VAR=value...] — smbclient through the shim (soft-iWARP, info log,
# SMB Direct mandatory unless the caller says otherwise) listing //HOST/share.
ls_via_shim() {
    local host=$1
    shift
    run env SMBDIRECT_TRANSPORT=soft SMBDIRECT_LOG=info SMBDIRECT_FALLBACK=none "$@" \
        "$SENV_WRAPPER_BIN" smbclient "//$host/share" -m SMB3 -N -c ls
}

# tcp_refused ADDR PORT — a plain TCP connect (no shim) to ADDR:PORT is refused.
tcp_refused() { refute timeout 5 bash -c "exec 3<>/dev/tcp/$1/$2" 2>/dev/null; }

# relay2_start — a second relay on SERVER:5446 in front of the same smbd, logging to
# $RELAY2_LOG (stopped by teardown).
relay2_start() {
    RELAY2_LOG=$SENV_DIR/log/relay2.log
    setsid "$SENV_RELAY_BIN" --listen "$SERVER:5446" --backend "$SERVER:445" --transport soft \
        </dev/null >"$RELAY2_LOG" 2>&1 3>&- &
    senv_await_start relay2 $! 5446 10 "$RELAY2_LOG"
}

@test "addrmap: smbclient to an address where nothing listens reaches the mapped server over SMB Direct" {
    tcp_refused "$MAPPED" 445
    tcp_refused "$MAPPED" 5445
    local before
    before=$(relay_established_count)
    # Without the map the same command fails: nothing answers on 127.0.0.28.
    ls_via_shim "$MAPPED"
    [ "$status" -ne 0 ]
    [[ "$output" == *"SMB Direct to $MAPPED:445 (soft, port 5445) failed"* ]]
    [ "$(relay_established_count)" -eq "$before" ]
    ls_via_shim "$MAPPED" SMBDIRECT_ADDRMAP="$MAP"
    assert_success
    [[ "$output" == *"$MARKER"* ]]
    [[ "$output" =~ fd\ [0-9]+:\ 127\.0\.0\.28:445\ tunneled\ over\ SMB\ Direct\ \(soft,\ port\ 5445\)\ via\ 127\.0\.0\.27:5445\ \(address\ map\) ]]
    [ "$(relay_established_count)" -eq $((before + 1)) ]
}

@test "addrmap: an address not in the map is dialled as it is, with no mapping in the log line" {
    local before
    before=$(relay_established_count)
    ls_via_shim "$SERVER" SMBDIRECT_ADDRMAP="$MAP"
    assert_success
    [[ "$output" == *"$SERVER:445 tunneled over SMB Direct (soft, port 5445)"* ]]
    [[ "$output" != *"address map"* ]]
    [ "$(relay_established_count)" -eq $((before + 1)) ]
}

@test "addrmap: getpeername on the tunneled fd reports the address the program connected to" {
    tcp_refused "$MAPPED" 445
    local before
    before=$(relay_established_count)
    run env SMBDIRECT_TRANSPORT=soft SMBDIRECT_FALLBACK=none SMBDIRECT_ADDRMAP="$MAP" \
        "$SENV_WRAPPER_BIN" python3 -c '
import socket
s = socket.create_connection(("127.0.0.28", 445), timeout=10)
print("peer", s.getpeername())
s.close()'
    assert_success
    [[ "$output" == *"peer ('127.0.0.28', 445)"* ]]
    [ "$(relay_established_count)" -eq $((before + 1)) ]
}

@test "addrmap: the entry's port is dialled, over the port map's; without one the port map's" {
    relay2_start
    local before
    before=$(relay_established_count)
    ls_via_shim "$MAPPED" SMBDIRECT_ADDRMAP="$MAPPED=$SERVER:5446" SMBDIRECT_PORTMAP=445:5999
    assert_success
    [[ "$output" == *"$MAPPED:445 tunneled over SMB Direct (soft, port 5446) via $SERVER:5446 (address map)"* ]]
    ls_via_shim "$MAPPED" SMBDIRECT_ADDRMAP="$MAP" SMBDIRECT_PORTMAP=445:5446
    assert_success
    [[ "$output" == *"$MAPPED:445 tunneled over SMB Direct (soft, port 5446) via $SERVER:5446 (address map)"* ]]
    [ "$(grep -c 'relay: conn .* established' "$RELAY2_LOG")" -eq 2 ]
    [ "$(relay_established_count)" -eq "$before" ] # none went to the relay on 5445
}

@test "addrmap: fallback=tcp connects to the address the program asked for, not the mapped one" {
    local before
    before=$(relay_established_count)
    # The program asks for the server; SMB Direct goes to 127.0.0.28, where nothing
    # listens; TCP then reaches smbd on the server's own address.
    ls_via_shim "$SERVER" SMBDIRECT_FALLBACK=tcp SMBDIRECT_ADDRMAP="$SERVER=$MAPPED"
    assert_success
    [[ "$output" == *"$MARKER"* ]]
    [[ "$output" =~ warn:\ SMB\ Direct\ to\ 127\.0\.0\.27:445\ \(soft,\ port\ 5445\)\ via\ 127\.0\.0\.28:5445\ \(address\ map\)\ failed:\ .*using\ TCP\ instead ]]
    # The program asks for 127.0.0.28; SMB Direct to the server on a port nothing
    # listens on fails; the TCP connect goes to 127.0.0.28 too, and fails, although
    # the mapped address has smbd on port 445.
    : >"$SENV_SMBD_LOG"
    ls_via_shim "$MAPPED" SMBDIRECT_FALLBACK=tcp SMBDIRECT_ADDRMAP="$MAPPED=$SERVER:5999"
    [ "$status" -ne 0 ]
    [[ "$output" == *"via $SERVER:5999 (address map) failed"*"using TCP instead"* ]]
    [[ "$output" != *"$MARKER"* ]]
    refute grep -q 'connect to service' "$SENV_SMBD_LOG"
    [ "$(relay_established_count)" -eq "$before" ]
}

@test "addrmap: the probe applies the map to its HOST and prints the mapping first" {
    local before
    before=$(relay_established_count)
    run "$SENV_PROBE_BIN" --transport soft "$MAPPED"
    [ "$status" -eq 1 ]
    [[ "$output" != *"address map"* ]]
    run env SMBDIRECT_ADDRMAP="$MAP" "$SENV_PROBE_BIN" --transport soft "$MAPPED"
    assert_success
    [ "${lines[0]}" = "address map: $MAPPED -> $SERVER:5445" ]
    [ "${lines[1]}" = "peer: $SERVER:5445" ]
    [[ "$output" == *"transport: soft"* ]]
    # A port on the command line wins over the entry's.
    run env SMBDIRECT_ADDRMAP="$MAPPED=$SERVER:5999" "$SENV_PROBE_BIN" --transport soft "$MAPPED:5445"
    assert_success
    [ "${lines[0]}" = "address map: $MAPPED -> $SERVER:5445" ]
    # A HOST the map does not name: no mapping line.
    run env SMBDIRECT_ADDRMAP="$MAP" "$SENV_PROBE_BIN" --transport soft "$SERVER"
    assert_success
    [ "${lines[0]}" = "peer: $SERVER:5445" ]
    [ "$(relay_established_count)" -eq $((before + 3)) ]
}

@test "addrmap: a bad SMBDIRECT_ADDRMAP is an error naming the variable, in the shim and the probe" {
    local before
    before=$(relay_established_count)
    ls_via_shim "$MAPPED" SMBDIRECT_ADDRMAP="$MAPPED=storage1"
    [ "$status" -ne 0 ]
    [[ "$output" == *"error: SMBDIRECT_ADDRMAP='$MAPPED=storage1' is invalid: 'storage1' is not a numeric IPv4 or IPv6 address"* ]]
    [[ "$output" == *"connects to SMB ports will fail with EINVAL"* ]]
    run env SMBDIRECT_ADDRMAP="$MAP,$MAPPED=$SERVER:5446" "$SENV_PROBE_BIN" --transport soft "$MAPPED"
    [ "$status" -eq 2 ]
    [[ "$output" == *"SMBDIRECT_ADDRMAP='$MAP,$MAPPED=$SERVER:5446' is invalid: $MAPPED is mapped twice"* ]]
    [ "$(relay_established_count)" -eq "$before" ]
}

@test "addrmap: the map in the configuration file works for the shim and the probe; the environment overrides it" {
    printf 'addrmap = %s\n' "$MAP" >"$CONF"
    local before
    before=$(relay_established_count)
    ls_via_shim "$MAPPED"
    assert_success
    [[ "$output" == *"$MARKER"* ]]
    [[ "$output" == *"$MAPPED:445 tunneled over SMB Direct (soft, port 5445) via $SERVER:5445 (address map)"* ]]
    run "$SENV_PROBE_BIN" --transport soft "$MAPPED"
    assert_success
    [ "${lines[0]}" = "address map: $MAPPED -> $SERVER:5445" ]
    [ "$(relay_established_count)" -eq $((before + 2)) ]
    # The environment's map replaces the file's: its port has no listener.
    ls_via_shim "$MAPPED" SMBDIRECT_ADDRMAP="$MAPPED=$SERVER:5999"
    [ "$status" -ne 0 ]
    [[ "$output" == *"via $SERVER:5999 (address map) failed"* ]]
    # A bad line names the file, the line and the key.
    printf '[shim]\naddrmap = %s\n' "$MAPPED" >"$CONF"
    ls_via_shim "$MAPPED"
    [ "$status" -ne 0 ]
    [[ "$output" == *"$CONF:2: addrmap = '$MAPPED' is invalid: '$MAPPED' is not addr=rdmaaddr[:port]"* ]]
    [ "$(relay_established_count)" -eq $((before + 2)) ]
}
