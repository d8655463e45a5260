#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# tests/bats/smb_relay_service.bats — the relay as a systemd service, with real programs:
# Samba's smbd on 127.0.0.34 behind smbdirect-relay (soft-iWARP, 127.0.0.34:5445),
# smbclient through the shim. systemd's side is played by the test (no systemd runs
# here): a datagram socket as $NOTIFY_SOCKET for readiness, reload and stop, a file
# named by $JOURNAL_STREAM as the journal. Also the backend-down refusals and the
# connection limit the open-file limit gives.

load helpers

ADDR=127.0.0.34

# The manager's notify socket: NOTIFY_LOG gets one line per datagram (its lines joined
# by '|'); at the first READY=1 it connects to the relay's port at once and appends
# "connect=ok" or "connect=failed" to that line. A datagram "END" ends it.
NOTIFY_LISTENER='
import socket, sys
path, log, host, port = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(path)
out = open(log, "a", buffering=1)
out.write("listening\n")
ready = False
while True:
    m = s.recv(4096).decode()
    if m == "END":
        break
    line = m.replace("\n", "|")
    if not ready and "READY=1" in m.split("\n"):
        ready = True
        try:
            socket.create_connection((host, port), timeout=2).close()
            line += " connect=ok"
        except OSError as e:
            line += " connect=failed (%s)" % e
    out.write(line + "\n")
'

setup() {
    require_shim
    CONF=$(mktemp)
    export SMBDIRECT_CONFIG=$CONF
    suite_start_smbd "$ADDR" || return 1
    W=$(work_dir)
    NOTIFY_SOCK=$W/notify NOTIFY_LOG=$W/notify.log
}

teardown() {
    [ -z "${NOTIFY_PID:-}" ] || { notify_end; wait "$NOTIFY_PID" 2>/dev/null || true; }
    [ -z "${SESSION_PIDS:-}" ] || { touch "$W/stop"; kill $SESSION_PIDS 2>/dev/null || true; }
    if [ -z "${BATS_TEST_COMPLETED:-}" ] && [ -s "${NOTIFY_LOG:-}" ]; then
        echo "--- notifications"; cat "$NOTIFY_LOG"
    fi
    dump_logs_on_failure
    suite_stop
    rm -f "$CONF"
}

# notify_start — the manager's socket, listening once this returns.
notify_start() {
    python3 -c "$NOTIFY_LISTENER" "$NOTIFY_SOCK" "$NOTIFY_LOG" "$ADDR" 5445 3>&- &
    NOTIFY_PID=$!
    await_file_line "$NOTIFY_LOG" '^listening$'
}

# notify_end — ends the listener after every datagram sent before (they are read in
# order), so its log is complete.
notify_end() {
    python3 -c 'import socket, sys
socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).sendto(b"END", sys.argv[1])' "$NOTIFY_SOCK"
    wait "$NOTIFY_PID"
    NOTIFY_PID=''
}

# await_file_line FILE REGEX — waits up to 10 s for a line of FILE matching REGEX.
await_file_line() {
    local i
    for i in $(seq 100); do grep -qE -- "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done
    echo "no line matching '$2' in $1 after 10 s" >&2
    return 1
}

# client [smbclient args...] — smbclient through the shim, SMB Direct mandatory.
client() { SMBDIRECT_CONFIG='' smb "$@"; }

# session NAME — a background smbclient session that lists the share, then holds the
# connection open until $W/stop exists.
session() {
    (
        echo ls
        for ((i = 0; i < 1200; i++)); do [ -e "$W/stop" ] && break; sleep 0.05; done
    ) | { client >"$W/$1.log" 2>&1; } 3>&- &
    SESSION_PIDS="${SESSION_PIDS:-} $!"
}

# fds PID — how many descriptors process PID holds open.
fds() { find "/proc/$1/fd" -mindepth 1 | wc -l; }

@test "service: READY=1 once the relay accepts, RELOADING=1 then READY=1 around SIGHUP (a failed reload too), STATUS= counts live connections, STOPPING=1 on SIGTERM" {
    local pid
    notify_start
    NOTIFY_SOCKET=$NOTIFY_SOCK senv_relay_start
    pid=$(cat "$SENV_DIR/relay.pid")
    await_file_line "$NOTIFY_LOG" '^READY=1'
    # a client could connect the moment READY=1 arrived
    grep -qE '^READY=1\|STATUS=0 connections live connect=ok$' "$NOTIFY_LOG"
    session a
    await_status live 1
    await_file_line "$NOTIFY_LOG" '^STATUS=1 connections live$'
    printf '[relay]\nmax_connections_per_client = 7\n' >"$CONF"
    kill -HUP "$pid"
    await_log "relay: SIGHUP: reloaded: allow "
    await_file_line "$NOTIFY_LOG" '^READY=1\|STATUS=1 connections live$'
    # a bad file: not applied, an error, and still READY=1 (the old settings serve)
    printf '[relay]\nmax_connections_per_client = many\n' >"$CONF"
    kill -HUP "$pid"
    await_log "relay: SIGHUP: configuration not reloaded, the settings in force stay: $CONF:2:"
    [ "$(status max_connections_per_client)" -eq 7 ]
    kill -TERM "$pid"
    await_file_line "$NOTIFY_LOG" '^STOPPING=1\|STATUS=draining'
    touch "$W/stop"
    notify_end
    # in order: READY=1, then each SIGHUP's RELOADING=1 (with the time on the monotonic
    # clock, as Type=notify-reload wants) and READY=1, then STOPPING=1
    [ "$(grep -oE '^(READY|RELOADING|STOPPING)=1' "$NOTIFY_LOG" | tr '\n' ' ')" = \
        "READY=1 RELOADING=1 READY=1 RELOADING=1 READY=1 STOPPING=1 " ]
    [ "$(grep -cE '^RELOADING=1\|MONOTONIC_USEC=[1-9][0-9]*\|' "$NOTIFY_LOG")" -eq 2 ]
}

@test "service: a relay that cannot bind (address in use) or has a bad setting exits without READY=1" {
    notify_start
    senv_relay_start
    run env NOTIFY_SOCKET="$NOTIFY_SOCK" "$SENV_RELAY_BIN" --listen "$ADDR:5445" \
        --backend "$ADDR:445" --transport soft --status-socket none
    [ "$status" -eq 1 ]
    [[ "$output" == *"relay: cannot listen on $ADDR:5445 (soft): Address already in use"* ]]
    printf '[relay]\nlisten = %s:5447\nbackend = %s:445\ncredits = lots\n' "$ADDR" "$ADDR" >"$CONF"
    run env NOTIFY_SOCKET="$NOTIFY_SOCK" "$SENV_RELAY_BIN" --status-socket none
    [ "$status" -eq 2 ]
    [[ "$output" == *"relay: $CONF:4: credits = 'lots' is invalid"* ]]
    notify_end
    [ "$(cat "$NOTIFY_LOG")" = listening ]
}

@test "service: with stderr on the journal each line carries its priority; a failed connection's line (<3>) names the client" {
    touch "$SENV_RELAY_LOG"
    JOURNAL_STREAM=$(stat -c '%d:%i' "$SENV_RELAY_LOG") senv_relay_start
    grep -q '^<5>relay: smbdirect-relay [^ ]* listening on ' "$SENV_RELAY_LOG"
    grep -q '^<5>relay: open files: limit ' "$SENV_RELAY_LOG"
    # the backend goes away: the next connection negotiates, then its backend connect fails
    senv_smbd_stop
    run client -c ls
    [ "$status" -ne 0 ]
    await_log "relay: conn 1 failed"
    grep -qE "^<3>relay: conn 1 failed: client 127\.0\.0\.[0-9]+:[0-9]+: backend $ADDR:445: Connection refused$" \
        "$SENV_RELAY_LOG"
    grep -q "^<3>relay: backend $ADDR:445 is down (connect: Connection refused); refusing new connections$" \
        "$SENV_RELAY_LOG"
    # nothing without its priority
    refute grep -qv '^<[3-7]>relay: ' "$SENV_RELAY_LOG"
}

@test "service: with its backend down the relay refuses new connections before accepting them, counts them, and serves again once smbd is back" {
    local t0 t1
    senv_relay_start
    run_smb -c ls
    assert_success
    [ "$(status backend_state)" = up ]
    senv_smbd_stop
    # the first one finds the backend gone (negotiated, then reset)
    run client -c ls
    [ "$status" -ne 0 ]
    await_log "relay: backend $ADDR:445 is down (connect: Connection refused); refusing new connections"
    [ "$(status backend_state)" = down ]
    # the next is refused before it is accepted: no connection line, a refusal line
    t0=$(senv_now)
    run client -c ls
    t1=$(senv_now)
    [ "$status" -ne 0 ]
    echo "# refused after $(elapsed "$t0" "$t1") s" >&3
    awk -v a="$t0" -v b="$t1" 'BEGIN { exit !(b - a < 5) }'
    grep -qE "^relay: refused a connection from 127\.0\.0\.[0-9]+: backend $ADDR:445 is down \(connect: Connection refused\)$" \
        "$SENV_RELAY_LOG"
    refute grep -q 'relay: conn 3 ' "$SENV_RELAY_LOG"
    [ "$(status "refused['backend_down']")" -eq 1 ]
    run "$SENV_RELAY_BIN" --status --status-socket "$SENV_DIR/relay.sock"
    [[ "$output" == *", 1 by backend_down"* ]]
    [[ "$output" == *"backend: down for "*" s (connect: Connection refused), refusing new connections"* ]]
    # smbd back: the relay's check finds it within its 2 s period
    senv_smbd_start
    await_log "relay: backend $ADDR:445 is back; admitting again (down "
    grep -q "is back; admitting again (down [0-9]* s, 1 connections refused)" "$SENV_RELAY_LOG"
    run_smb -c ls
    assert_success
    [ "$(status backend_state)" = up ]
    [ "$(status "refused['backend_down']")" -eq 1 ]
}

@test "service: each established line names the backend port it came from, which smbd's side of the connection shows" {
    senv_relay_start
    session a
    await_status 'len([c for c in connections if c["state"] == "bridged"])' 1
    local port
    port=$(sed -nE "s/^relay: conn 1 from .* established: .*, backend $ADDR:445 via port ([0-9]+)$/\1/p" \
        "$SENV_RELAY_LOG")
    [ -n "$port" ]
    # the relay's end of that TCP connection to smbd, the client smbd sees
    [ -n "$(ss -Htn state established "( sport = :$port and dport = :445 )" dst "$ADDR")" ]
}

@test "service: max_connections 0 is the room the open-file limit leaves (2 descriptors a connection on soft-iWARP); an explicit one above it is warned about" {
    local pid base
    # the soft limit below the hard one: the relay raises it to the hard one
    (
        ulimit -Sn 500
        ulimit -Hn 1000
        senv_relay_start --loops 2
    )
    pid=$(cat "$SENV_DIR/relay.pid")
    grep -q '^Max open files *1000 *1000 ' "/proc/$pid/limits"
    # 1000 - 256 kept - 2 for each of 2 loops, over 2 a connection
    grep -q '^relay: open files: limit 1000, 2 per connection, 260 kept for the relay: max_connections 370$' \
        "$SENV_RELAY_LOG"
    [ "$(status max_connections)" -eq 370 ]
    # what a connection holds: the shim's socket and the backend's
    run_smb -c ls
    assert_success
    await_status live 0
    base=$(fds "$pid")
    session a
    session b
    session c
    await_status 'len([c for c in connections if c["state"] == "bridged"])' 3
    [ "$(fds "$pid")" -eq $((base + 6)) ]
    printf '[relay]\nmax_connections = 5000\n' >"$CONF"
    kill -HUP "$pid"
    await_log "relay: open files: limit 1000, 2 per connection, 260 kept for the relay: room for 370 connections, fewer than max_connections 5000; connections past that fail (raise LimitNOFILE= or ulimit -n)"
    await_log "relay: SIGHUP: reloaded: allow "
    [ "$(status max_connections)" -eq 5000 ]
}
