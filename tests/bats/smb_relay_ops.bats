#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# tests/bats/smb_relay_ops.bats — the relay's operations with real programs: Samba's smbd
# on 127.0.0.31, smbdirect-relay on every address ([::]:5446, soft-iWARP) in front of it,
# smbclient through the shim from two loopback client addresses: 127.0.0.1 (IPv4, which
# the dual-stack relay sees as ::ffff:127.0.0.1) and ::1 (IPv6, smbclient -I ::1). The
# access list, both connection limits, SIGTERM's drain, SIGHUP's reload, the live
# status and the event loops, each while sessions move data; and an exit while a lost
# client's backend connection still drains.

load helpers

setup() {
    require_shim
    [ -n "$(ip -6 addr show dev lo 2>/dev/null | grep 'inet6 ::1/128')" ] ||
        skip "no IPv6 loopback address ::1 (the second client address)"
    CONF=$(mktemp)
    export SMBDIRECT_CONFIG=$CONF SMBDIRECT_PORTMAP=445:5446
    export SENV_RELAY_PORT=5446 SENV_RELAY_HOST='[::]'
}

teardown() {
    [ -z "${W:-}" ] || touch "$W/stop"
    [ -z "${SESSION_PIDS:-}" ] || kill $SESSION_PIDS 2>/dev/null || true
    dump_logs_on_failure
    suite_stop
    rm -f "$CONF"
}

# start [relay flags...] — smbd with a 64 MiB file "big" in its share, and the relay.
start() {
    suite_start_smbd 127.0.0.31 || return 1
    head -c 64M /dev/urandom >"$SENV_SHARE/big"
    senv_relay_start "$@" || { senv_destroy; return 1; }
    W=$(work_dir)
}

# client [smbclient args...] — smbclient through the shim, SMB Direct mandatory, reading
# no configuration file ($CONF is the relay's: a bad line there would stop the shim too).
client() { SMBDIRECT_CONFIG='' smb "$@"; }

# from4 / from6 [smbclient args...] — one client run from 127.0.0.1 or from ::1.
from4() { run client "$@"; }
from6() { run client -I ::1 "$@"; }

# session NAME FROM LINE... — a background smbclient session (FROM: 4 or 6) fed LINEs in
# turn; a LINE "@X" holds the session open until the file $W/X exists. Its output goes
# to $W/NAME.log, its exit status to $W/NAME.rc.
session() {
    local name=$1 from=$2 ip=() l i
    shift 2
    [ "$from" = 6 ] && ip=(-I ::1)
    (
        for l in "$@"; do
            if [[ $l == @* ]]; then
                # bounded, and ended by teardown: a failed test leaves no feeder behind
                for ((i = 0; i < 1200; i++)); do
                    [ -e "$W/${l#@}" ] || [ -e "$W/stop" ] && break
                    sleep 0.05
                done
            else
                echo "$l"
            fi
        done
    ) | { client "${ip[@]}"; echo $? >"$W/$name.rc"; } >"$W/$name.log" 2>&1 3>&- &
    SESSION_PIDS="${SESSION_PIDS:-} $!"
}

# session_end NAME — waits up to 30 s for the session to exit; asserts it exited 0.
session_end() {
    local i
    for i in $(seq 300); do [ -s "$W/$1.rc" ] && break; sleep 0.1; done
    [ -s "$W/$1.rc" ] || { echo "session $1 still runs" >&2; return 1; }
    [ "$(cat "$W/$1.rc")" -eq 0 ] || { echo "session $1 failed:" >&2; cat "$W/$1.log" >&2; return 1; }
}

# got FILE — waits up to 30 s until $W/FILE holds all of "big", and checks it.
got() {
    local i
    for i in $(seq 300); do
        [ "$(stat -c %s "$W/$1" 2>/dev/null || echo 0)" -eq 67108864 ] && break
        sleep 0.1
    done
    assert_same_file "$SENV_SHARE/big" "$W/$1"
}

# await_exit PID — waits up to 10 s for process PID to exit; fails while it still runs.
await_exit() {
    local i
    for i in $(seq 100); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.1; done
    echo "process $1 still runs after 10 s" >&2
    return 1
}

@test "relay ops: the access list refuses 127.0.0.1 before any backend connection and admits ::1" {
    printf '[relay]\nallow = ::1\n' >"$CONF"
    start
    from4 -c ls
    [ "$status" -ne 0 ]
    grep -q "^relay: refused a connection from 127.0.0.1: not in the access list (allow)$" \
        "$SENV_RELAY_LOG"
    # refused before the accept: no connection line at all, so no backend connection
    refute grep -q "relay: conn " "$SENV_RELAY_LOG"
    from6 -c ls
    assert_success
    grep -q '^relay: conn 1 from \[::1\]:[0-9]* established' "$SENV_RELAY_LOG"
    # a second refusal within the minute is counted, not logged again
    from4 -c ls
    [ "$status" -ne 0 ]
    [ "$(grep -c 'refused a connection from 127.0.0.1' "$SENV_RELAY_LOG")" -eq 1 ]
    [ "$(status 'refused["access_list"]')" -eq 2 ]
    [ "$(status accepted)" -eq 1 ]
}

@test "relay ops: the per-client and the total limit refuse new connections, never live ones" {
    printf '[relay]\nmax_connections_per_client = 1\nmax_connections = 2\n' >"$CONF"
    start
    session a 6 "get big $W/a1" @go "get big $W/a2"
    got a1
    [ "$(status live)" -eq 1 ]
    from6 -c ls
    [ "$status" -ne 0 ]
    grep -q "refused a connection from ::1: 1 connections from it are live (max_connections_per_client 1)" \
        "$SENV_RELAY_LOG"
    session b 4 "get big $W/b1" @go "get big $W/b2"
    got b1
    [ "$(status live)" -eq 2 ]
    from4 -c ls
    [ "$status" -ne 0 ]
    grep -q "refused a connection from 127.0.0.1: 2 connections are live (max_connections 2)" \
        "$SENV_RELAY_LOG"
    [ "$(status '[refused["max_connections"], refused["max_connections_per_client"]]')" = "[1, 1]" ]
    touch "$W/go"
    session_end a
    session_end b
    got a2
    got b2
    await_status live 0
    from4 -c ls
    assert_success
}

@test "relay ops: SIGTERM stops accepting, lets a live session finish its transfer, then exits" {
    start --drain-time 20
    session a 6 "get big $W/a1" @go "get big $W/a2"
    got a1
    local pid t0
    pid=$(cat "$SENV_DIR/relay.pid")
    t0=$(senv_now)
    kill -TERM "$pid"
    await_log "relay: Terminated, not accepting; waiting up to 20 s for 1 connections to end"
    from4 -c ls
    [ "$status" -ne 0 ]
    kill -0 "$pid"
    touch "$W/go"
    session_end a
    got a2
    await_exit "$pid"
    echo "relay exited $(elapsed "$t0" "$(senv_now)") s after SIGTERM" >&3
    awk -v t="$(elapsed "$t0" "$(senv_now)")" 'BEGIN { exit !(t < 20) }'
    grep -q "relay: conn 1 closed: .*reason " "$SENV_RELAY_LOG"
    refute grep -q "relay shutting down\|drain time over" "$SENV_RELAY_LOG"
    [ ! -e "$SENV_DIR/relay.sock" ]
}

@test "relay ops: SIGHUP changes the access list while a session moves data; a bad file changes nothing" {
    printf '[relay]\nallow = ::1\n' >"$CONF"
    start
    session a 6 "get big $W/a1" @go "get big $W/a2" @go2 "get big $W/a3"
    got a1
    from4 -c ls
    [ "$status" -ne 0 ]
    printf '[relay]\nallow = ::1, 127.0.0.1\n' >"$CONF"
    kill -HUP "$(cat "$SENV_DIR/relay.pid")"
    await_log "relay: SIGHUP: reloaded: allow ::1/128, 127.0.0.1/32,"
    refute grep -q "other settings changed" "$SENV_RELAY_LOG"
    touch "$W/go"
    from4 -c ls
    assert_success
    got a2
    printf '[relay]\nallow = 127.0.0.1/8\n' >"$CONF"
    kill -HUP "$(cat "$SENV_DIR/relay.pid")"
    await_log "relay: SIGHUP: configuration not reloaded, the settings in force stay: $CONF:2: allow = '127.0.0.1/8' is invalid"
    from4 -c ls
    assert_success
    touch "$W/go2"
    session_end a
    got a3
    await_status 'len(connections)' 0
    [ "$(status accepted)" -eq 3 ]
}

@test "relay ops: --status shows a live session's bytes growing, as text and as JSON" {
    start
    session a 6 "get big $W/a1" @go "get big $W/a2" @go2 "exit"
    got a1
    local first second
    status_json | python3 -m json.tool >/dev/null
    # a READ's data comes from the backend and reaches the client by RDMA Write
    first=$(status 'connections[0]["bytes_from_backend"]')
    [ "$first" -ge 67108864 ]
    [ "$(status 'connections[0]["rdma_write_bytes"]')" -eq 67108864 ]
    [ "$(status 'connections[0]["client"].startswith("[::1]:")')" = True ]
    [ "$(status 'connections[0]["state"]')" = bridged ]
    # between transfers the connection holds no channel memory and nothing waits for it;
    # the limits are the defaults
    [ "$(status '[channel_memory_bytes, channel_memory_per_connection, channel_memory_total]')" = \
        "[0, 67108864, 536870912]" ]
    [ "$(status '[connections[0]["channel_memory_bytes"], connections[0]["memory_waiting"]]')" = "[0, 0]" ]
    [ "$(status 'type(connections[0]["memory_waits"]) is int and type(connections[0]["memory_wait_ms"]) is int')" = True ]
    touch "$W/go"
    got a2
    second=$(status 'connections[0]["bytes_from_backend"]')
    [ "$second" -ge $((first + 67108864)) ]
    [ "$(status 'connections[0]["rdma_write_bytes"]')" -eq $((2 * 67108864)) ]
    run "$SENV_RELAY_BIN" --status --status-socket "$SENV_DIR/relay.sock"
    assert_success
    # max_connections 0 (the default): what the open-file limit leaves room for
    [[ "$output" == *"connections: 1 live (max $(status max_connections), no per-client limit), 1 accepted"$'
'"refused: 0 by access_list, 0 by max_connections, 0 by max_connections_per_client"* ]]
    [[ "$output" == *"channel memory: 0 bytes held (max 67108864 per connection, 536870912 in all)"* ]]
    [[ "$output" =~ conn\ 1\ from\ \[::1\]:[0-9]+\ bridged\ on\ loop\ [0-9]+,\ [0-9]+\ s:\ from\ client\ [0-9]+\ bytes,\ to\ client\ [0-9]+\ bytes,\ from\ backend\ $second\ bytes,\ to\ backend\ [0-9]+\ bytes,\ rdma_read\ 0\ bytes,\ rdma_write\ 134217728\ bytes,\ channel\ memory\ 0\ bytes,\ memory\ waits\ [0-9]+\ \([0-9]+\ ms,\ 0\ now\),\ credits\ send\ [0-9]+/255\ receive\ [0-9]+/255 ]]
    touch "$W/go2"
    session_end a
    run "$SENV_RELAY_BIN" --status --status-socket "$SENV_DIR/nothing.sock"
    [ "$status" -eq 1 ]
    [[ "$output" == *"no relay answers at $SENV_DIR/nothing.sock"* ]]
}

@test "relay ops: --loops 3 spreads six live sessions two to a loop; each moves its data, the drain waits for all" {
    # the drain must outlast six 64 MiB gets at once on a slow, loaded machine (ASan): under
    # a busy host they once took more than 20 s
    start --loops 3 --drain-time 60
    local i pid
    for i in 1 2 3 4 5 6; do session "s$i" $((i % 2 ? 4 : 6)) "get big $W/a$i" @go "get big $W/b$i"; done
    for i in 1 2 3 4 5 6; do got "a$i"; done
    grep -q "^relay: smbdirect-relay .* listening on .*, 3 event loops$" "$SENV_RELAY_LOG"
    [ "$(status loops)" -eq 3 ]
    await_status 'len(connections)' 6
    # each new connection goes to the loop with the fewest
    [ "$(status 'sorted(c["loop"] for c in connections)')" = "[0, 0, 1, 1, 2, 2]" ]
    [ "$(status 'all(c["state"] == "bridged" and c["rdma_write_bytes"] == 67108864 for c in connections)')" = True ]
    pid=$(cat "$SENV_DIR/relay.pid")
    kill -TERM "$pid"
    await_log "relay: Terminated, not accepting; waiting up to 60 s for 6 connections to end"
    touch "$W/go"
    for i in 1 2 3 4 5 6; do session_end "s$i"; got "b$i"; done
    await_exit "$pid"
    [ "$(grep -c "^relay: conn [0-9]* closed: " "$SENV_RELAY_LOG")" -eq 6 ]
    refute grep -q "relay shutting down\|drain time over" "$SENV_RELAY_LOG"
}

@test "relay ops: a relay stopped while a lost client's backend connection still drains exits 0, leaving nothing behind" {
    # The relay ends a backend stream whose client is gone by reading what smbd still
    # sends until smbd closes. Here smbd cannot close (stopped), so the relay exits with
    # that drain still open: the exit must free it (the sanitizer tier's LeakSanitizer
    # looks), and the relay must neither crash nor wait for it.
    start --drain-time 0
    session a 4 "get big $W/a1" @go
    got a1
    local relay smbd_child client rc gone
    relay=$(cat "$SENV_DIR/relay.pid")
    # the smbd process serving the relay's backend connection
    smbd_child=$(ss -Htnp state established "( sport = :$SENV_SMB_PORT )" src "$SENV_ADDR" |
        grep -o 'pid=[0-9]*' | head -n 1 | cut -d= -f2)
    [ -n "$smbd_child" ]
    kill -STOP "$smbd_child"
    client=$(pgrep -x -P "${SESSION_PIDS##* }" smbclient)
    kill -KILL "$client"
    await_log "relay: conn 1 closed: " || { kill -CONT "$smbd_child"; false; }
    kill -TERM "$relay"
    gone=1
    await_exit "$relay" || gone=0
    kill -CONT "$smbd_child"
    [ "$gone" -eq 1 ] # it exits without waiting for smbd
    rc=0
    wait "$relay" || rc=$?
    [ "$rc" -eq 0 ]
    grep -q "^relay: Terminated, closing no connections" "$SENV_RELAY_LOG"
}
