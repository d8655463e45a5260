#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# tests/bats/smb_limits.bats — the relay's connection limits against many sessions from
# one client address: Samba's smbd on 127.0.0.36, smbdirect-relay in front of it
# (soft-iWARP), python3-smbc sessions through the shim (tests/tools/smbc_sessions.py:
# one libsmbclient context, so one SMB Direct connection, per session). At its defaults
# the relay sets no per-client bound, as smbd sets none: 200 sessions from one address
# are live at once and each moves its own data. With max_connections_per_client = 4 the
# fifth is refused: the relay names the limit in its log and counts the refusal under
# its reason in --status; the client's shim names the server's refusal, and the
# program's connect() fails with ECONNREFUSED (or, with SMBDIRECT_FALLBACK=tcp, goes
# over TCP). A SIGHUP back to 0 lifts the bound for new connections.
#
# The clients run with the fd soft limit of a stock machine (1024): a session holds
# about three of its process's fds (its socket's socketpair end, the engine's end and
# the soft-iWARP socket), so 50 sessions per process stay far below it.

load helpers

setup() {
    require_shim
    CONF=$(mktemp)
    suite_start_smbd 127.0.0.36
    W=$(work_dir)
    PIDS=()
}

teardown() {
    [ -z "${W:-}" ] || touch "$W/go"
    wait_pids
    dump_logs_on_failure
    suite_stop
    rm -f "$CONF"
}

# sessions FIRST COUNT — a background process holding COUNT sessions (FIRST...), each with
# its own 128 KiB file written; they read their files back once $W/go exists. Its
# output goes to $W/sessions-FIRST.out, its exit status to $W/sessions-FIRST.rc.
sessions() {
    local i
    for ((i = $1; i < $1 + $2; i++)); do senv_random_file "$W/up$i.bin" 131072; done
    (
        ulimit -Sn 1024
        rc=0
        SMBDIRECT_FALLBACK=none SMBDIRECT_TRANSPORT=soft "$SENV_WRAPPER_BIN" "$PYTHON" \
            "$SMBC_SESSIONS" "smb://$SENV_ADDR/$SENV_SHARE_NAME" "$W" "$1" "$2" "$W/go" \
            >"$W/sessions-$1.out" 2>&1 || rc=$?
        echo "$rc" >"$W/sessions-$1.rc"
    ) 3>&- &
    PIDS+=($!)
}

# await_open FIRST COUNT — waits up to 60 s until process FIRST holds its COUNT sessions.
await_open() {
    local i
    for i in $(seq 600); do
        grep -qx "open $2" "$W/sessions-$1.out" 2>/dev/null && return 0
        [ ! -s "$W/sessions-$1.rc" ] || break
        sleep 0.1
    done
    echo "sessions $1: not all open:" >&2; tail -n 20 "$W/sessions-$1.out" >&2
    return 1
}

# sessions_end FIRST COUNT — waits up to 60 s for process FIRST to end; asserts that each
# of its sessions read back what it wrote and that the share holds each session's file.
sessions_end() {
    local i
    for i in $(seq 600); do [ -s "$W/sessions-$1.rc" ] && break; sleep 0.1; done
    if [ "$(cat "$W/sessions-$1.rc" 2>/dev/null)" != 0 ]; then
        echo "sessions $1 failed:" >&2; tail -n 20 "$W/sessions-$1.out" >&2
        return 1
    fi
    grep -qx "checked $2" "$W/sessions-$1.out"
    local up
    up=$(digests "$W/up" "$1" "$2")
    [ "$(digests "$SENV_SHARE/s" "$1" "$2")" = "$up" ]
    [ "$(digests "$W/got" "$1" "$2")" = "$up" ]
}

# digests PREFIX FIRST COUNT — the sha256 of PREFIX<i>.bin for each i, one a line (one
# sha256sum for them all: a fork per file is slow on a busy machine).
digests() {
    local i
    for ((i = $2; i < $2 + $3; i++)); do echo "$1$i.bin"; done | xargs sha256sum | cut -d' ' -f1
}

# fifth FALLBACK — `run` of one more client from the same address: smbclient listing the
# share through the shim with SMBDIRECT_FALLBACK=FALLBACK.
fifth() { SMBDIRECT_FALLBACK=$1 SMBDIRECT_LOG=info run senv_smbclient -c ls; }

@test "limits: at its defaults the relay serves 200 sessions from one address at once, each moving its own data" {
    local first t0
    senv_relay_start
    t0=$(senv_now)
    for first in 0 50 100 150; do sessions "$first" 50; done
    for first in 0 50 100 150; do await_open "$first" 50; done
    echo "# 200 sessions open in $(elapsed "$t0" "$(senv_now)") s" >&3
    # all 200 live at the relay at once, from one address, each having carried its 128 KiB
    # WRITE to smbd; none refused
    [ "$(status '[live, len(connections), max_connections_per_client, sum(refused.values()),
                  len(set(c["client"].rsplit(":", 1)[0] for c in connections)),
                  all(c["state"] == "bridged" and c["bytes_to_backend"] > 131072
                      for c in connections)]')" = "[200, 200, 0, 0, 1, True]" ]
    touch "$W/go"
    for first in 0 50 100 150; do sessions_end "$first" 50; done
    await_status live 0
    [ "$(status accepted)" -eq 200 ]
    refute grep -q "refused a connection" "$SENV_RELAY_LOG"
    echo "# 200 sessions checked in $(elapsed "$t0" "$(senv_now)") s" >&3
}

@test "limits: max_connections_per_client = 4 refuses the fifth, named at the relay and at the client; SIGHUP to 0 lifts it" {
    printf '[relay]\nmax_connections_per_client = 4\n' >"$CONF"
    SMBDIRECT_CONFIG=$CONF senv_relay_start
    sessions 0 4
    await_open 0 4
    [ "$(status '[live, max_connections_per_client]')" = "[4, 4]" ]
    # the fifth, SMB Direct only: the shim names the server's refusal and the program's
    # connect() fails with ECONNREFUSED, which smbclient reports as such
    fifth none
    [ "$status" -ne 0 ]
    [[ "$output" == *"warn: SMB Direct connection to $SENV_ADDR:5445 $REFUSED"* ]]
    [[ "$output" == *"NT_STATUS_CONNECTION_REFUSED"* ]]
    grep -Eq "^relay: refused a connection from [0-9.]+: 4 connections from it are live \(max_connections_per_client 4\)$" \
        "$SENV_RELAY_LOG"
    [ "$(status 'refused["max_connections_per_client"]')" -eq 1 ]
    # connect() itself: ECONNREFUSED
    SMBDIRECT_FALLBACK=none SMBDIRECT_TRANSPORT=soft run "$SENV_WRAPPER_BIN" "$PYTHON" -c 'import errno, socket, sys
try:
    socket.create_connection((sys.argv[1], 445))
except OSError as e:
    print("connect:", errno.errorcode.get(e.errno))' "$SENV_ADDR"
    [[ "$output" == *"connect: ECONNREFUSED"* ]]
    # with the TCP fallback the fifth goes to smbd over TCP instead
    fifth tcp
    assert_success
    [[ "$output" == *"$REFUSED"*"using TCP instead (SMBDIRECT_FALLBACK=tcp)"* ]]
    # three refusals, one line: the next ones within the minute are counted, not logged
    [ "$(status '[refused["max_connections_per_client"], refused["max_connections"], refused["access_list"], live]')" = "[3, 0, 0, 4]" ]
    [ "$(grep -c "refused a connection" "$SENV_RELAY_LOG")" -eq 1 ]
    # SIGHUP to 0: no bound; the live sessions stay, a fifth SMB Direct session is served
    printf '[relay]\nmax_connections_per_client = 0\n' >"$CONF"
    kill -HUP "$(cat "$SENV_DIR/relay.pid")"
    await_status max_connections_per_client 0
    run_smb -c ls
    assert_success
    [ "$(status '[max_connections_per_client, accepted, live]')" = "[0, 5, 4]" ]
    touch "$W/go"
    sessions_end 0 4
}
