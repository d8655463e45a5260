#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# tests/bats/smb_config.bats — the configuration file with real programs: Samba's smbd on
# 127.0.0.26 behind smbdirect-relay, smbclient through the shim and smbdirect-probe, all
# reading the file SMBDIRECT_CONFIG names. Precedence default < file < environment < flag
# for each program (the relay's and the probe's credits, the shim's log level and
# transport); a bad line is an error naming the file and the line for the programs it
# concerns and a warning for the others (a bad [relay] line leaves the shim's connects and
# --status working); --check-config prints each setting with where it came from.

load helpers

setup() {
    require_shim
    CONF=$(mktemp)
    export SMBDIRECT_CONFIG=$CONF
}

teardown() { dump_logs_on_failure; suite_stop; rm -f "$CONF"; }

# via_shim [smbclient args...] — smbclient through the shim with no SMBDIRECT_ variable set
# but what the caller exports: the file decides the rest.
via_shim() { run senv_smbclient_via shim "$@"; }

# relay_restart [relay args...] — a new relay with an empty log.
relay_restart() {
    senv_relay_stop
    : >"$SENV_RELAY_LOG"
    senv_relay_start "$@"
}

# source_of NAME — the source comment of NAME's line in --check-config's $output.
source_of() { sed -n "s/^$1 = .* # //p" <<<"$output"; }

@test "config: the relay's credits: [relay] over the top level, SMBDIRECT_CREDITS over the file, --credits over both; the shim's variables never reach it" {
    printf 'credits = 200\n[relay]\ncredits = 100\n' >"$CONF"
    # the harness keeps a variable exported for the shim from the relay it starts
    SMBDIRECT_CREDITS=30 suite_start 127.0.0.26
    via_shim -c ls
    [ "$status" -eq 0 ]
    grep -q "^relay: conn 1 from .* credits 100/100 " "$SENV_RELAY_LOG"
    SENV_RELAY_ENV=SMBDIRECT_CREDITS=80 relay_restart
    via_shim -c ls
    [ "$status" -eq 0 ]
    grep -q "^relay: conn 1 from .* credits 80/80 " "$SENV_RELAY_LOG"
    SENV_RELAY_ENV=SMBDIRECT_CREDITS=80 relay_restart --credits 50
    via_shim -c ls
    [ "$status" -eq 0 ]
    grep -q "^relay: conn 1 from .* credits 50/50 " "$SENV_RELAY_LOG"
}

@test "config: the probe's credits: [probe] over the default, SMBDIRECT_CREDITS over the file, --credits over both" {
    printf '[relay]\ncredits = 200\n[probe]\ncredits = 100\n' >"$CONF"
    suite_start 127.0.0.26
    run "$SENV_PROBE_BIN" --transport soft "$SENV_ADDR"
    [ "$status" -eq 0 ]
    [[ "$output" == *"credits.receive_max: 100"* ]]
    run env SMBDIRECT_CREDITS=90 "$SENV_PROBE_BIN" --transport soft "$SENV_ADDR"
    [ "$status" -eq 0 ]
    [[ "$output" == *"credits.receive_max: 90"* ]]
    run env SMBDIRECT_CREDITS=90 "$SENV_PROBE_BIN" --transport soft --credits 80 "$SENV_ADDR"
    [ "$status" -eq 0 ]
    [[ "$output" == *"credits.receive_max: 80"* ]]
    # the relay took its own line all along
    wait_relay_log "^relay: conn 3 from .* credits 200/200 "
}

@test "config: the shim's log level comes from the file, SMBDIRECT_LOG overrides it, an empty one does not" {
    printf '[shim]\nlog = info\nfallback = none\n' >"$CONF"
    suite_start 127.0.0.26
    via_shim -c ls
    [ "$status" -eq 0 ]
    [[ "$output" == *"tunneled over SMB Direct (soft"* ]]
    SMBDIRECT_LOG=error via_shim -c ls
    [ "$status" -eq 0 ]
    [[ "$output" != *"tunneled over SMB Direct"* ]]
    SMBDIRECT_LOG= via_shim -c ls
    [ "$status" -eq 0 ]
    [[ "$output" == *"tunneled over SMB Direct (soft"* ]]
}

@test "config: transport = tcp in the file tunnels nothing; SMBDIRECT_TRANSPORT=soft overrides it" {
    printf '[shim]\ntransport = tcp\nlog = info\n' >"$CONF"
    suite_start 127.0.0.26
    # senv_smbclient_via defaults SMBDIRECT_TRANSPORT to soft: unset it for the file to count
    run env -u SMBDIRECT_TRANSPORT "$SENV_WRAPPER_BIN" smbclient "//$SENV_ADDR/share" -m SMB3 -N -c ls
    [ "$status" -eq 0 ]
    [[ "$output" != *"tunneled over SMB Direct"* ]]
    [ "$(relay_established_count)" -eq 0 ]
    SMBDIRECT_TRANSPORT=soft SMBDIRECT_FALLBACK=none via_shim -c ls
    [ "$status" -eq 0 ]
    [[ "$output" == *"tunneled over SMB Direct (soft"* ]]
    [ "$(relay_established_count)" -eq 1 ]
}

@test "config: a bad line every program takes is an error naming the file and the line, in the shim and in the relay" {
    printf 'credits = 64\n\n[global]\nkeepalive = soon\n' >"$CONF"
    suite_start_smbd 127.0.0.26
    run "$SENV_RELAY_BIN" --listen "$SENV_ADDR:5445" --backend "$SENV_ADDR:445" --transport soft
    [ "$status" -eq 2 ]
    [[ "$output" == *"$CONF:4: keepalive = 'soon' is invalid: use a whole number of seconds from 0 to "* ]]
    via_shim -c ls
    [ "$status" -ne 0 ]
    [[ "$output" == *"$CONF:4: keepalive = 'soon' is invalid"* ]]
    [[ "$output" == *"connects to SMB ports will fail with EINVAL"* ]]
}

@test "config: a bad [relay] line is a warning for the shim, whose connects go on; SIGHUP keeps the relay's settings and --status still answers" {
    printf '[relay]\nmax_connections = 100\n' >"$CONF"
    suite_start 127.0.0.26
    # a bad [shim] line: the relay reloads with a warning, its settings the same
    printf '[shim]\nfallback = never\n' >>"$CONF"
    kill -HUP "$SENV_RELAY_PID"
    wait_relay_log "^relay: warning: $CONF:4: fallback = 'never' is invalid: use tcp or none; this concerns the shim, not the relay$"
    wait_relay_log "SIGHUP: reloaded"
    # the file broken for the relay too (the status socket it serves named in it)
    printf '[relay]\nstatus_socket = %s\nmax_connections = 70000\n' "$SENV_DIR/relay.sock" >"$CONF"
    kill -HUP "$SENV_RELAY_PID"
    wait_relay_log "SIGHUP: configuration not reloaded.*$CONF:3: max_connections = '70000' is invalid"
    # the first reload's lines all came before: it found nothing else changed
    refute grep -q "other settings changed" "$SENV_RELAY_LOG"
    SMBDIRECT_FALLBACK=none SMBDIRECT_LOG=info via_shim -c ls
    [ "$status" -eq 0 ]
    [[ "$output" == *"tunneled over SMB Direct (soft"* ]]
    [[ "$output" == *"warn: $CONF:3: max_connections = '70000' is invalid: use a whole number from 0 to 65536; this concerns the relay, not the shim"* ]]
    [ "$(relay_established_count)" -eq 1 ]
    # --status: the socket from the file's good line, the bad one a warning
    run "$SENV_RELAY_BIN" --status
    [ "$status" -eq 0 ]
    [[ "$output" == *"warning: $CONF:3: max_connections = '70000' is invalid"* ]]
    [[ "$output" == *"connections: 0 live (max 100,"* ]]
    # a file that cannot be read: the socket from the flag
    run env SMBDIRECT_CONFIG="$SENV_DIR" "$SENV_RELAY_BIN" --status --status-socket "$SENV_DIR/relay.sock"
    [ "$status" -eq 0 ]
    [[ "$output" == *"warning: $SENV_DIR: cannot read it: Is a directory"* ]]
    [[ "$output" == *"connections: 0 live"* ]]
}

@test "config: --check-config prints each setting with its source, for the relay and for the shim through the wrapper" {
    printf 'credits = 200\n[relay]\ncredits = 100\nlisten = 127.0.0.26:5445\nbackend = 127.0.0.26:445\n[shim]\nfallback = none\n' >"$CONF"
    other=$(mktemp)
    run env SMBDIRECT_CONFIG="$other" SMBDIRECT_KEEPALIVE=30 "$SENV_RELAY_BIN" --check-config "$CONF" --ird 8
    rm -f "$other"
    [ "$status" -eq 0 ]
    [[ "$output" == *"# Configuration file: $CONF"* ]]
    grep -qx '\[relay\]' <<<"$output"
    [ "$(source_of credits)" = "$CONF:3" ]
    grep -q '^credits = 100  *# ' <<<"$output"
    [ "$(source_of listen)" = "$CONF:4" ]
    [ "$(source_of keepalive)" = "environment SMBDIRECT_KEEPALIVE" ]
    grep -q '^keepalive = 30  *# ' <<<"$output"
    [ "$(source_of ird)" = "flag --ird" ]
    grep -q '^ird = 8  *# ' <<<"$output"
    [ "$(source_of ord)" = default ]
    refute grep -q '^fallback' <<<"$output"
    # the shim: the file SMBDIRECT_CONFIG names, its variables
    run env SMBDIRECT_LOG=debug "$SENV_WRAPPER_BIN" --check-config
    [ "$status" -eq 0 ]
    grep -qx '\[shim\]' <<<"$output"
    [ "$(source_of credits)" = "$CONF:1" ]
    [ "$(source_of fallback)" = "$CONF:7" ]
    grep -q '^fallback = none  *# ' <<<"$output"
    [ "$(source_of log)" = "environment SMBDIRECT_LOG" ]
    [ "$(source_of ports)" = default ]
    refute grep -q '^listen' <<<"$output"
}

@test "config: --check-config on a bad file names the file and the line and exits 1, for the relay and for the shim through the wrapper" {
    printf '[relay]\nlisten = 127.0.0.26:5445\nbackend = 127.0.0.26:445\nmax_connections = 70000\n[shim]\nfallback = never\n' >"$CONF"
    run "$SENV_RELAY_BIN" --check-config "$CONF"
    [ "$status" -eq 1 ]
    grep -qx "$CONF:4: max_connections = '70000' is invalid: use a whole number from 0 to 65536" <<<"$output"
    grep -qx "warning: $CONF:6: fallback = 'never' is invalid: use tcp or none; this concerns the shim, not the relay" <<<"$output"
    refute grep -q '^credits' <<<"$output"
    run "$SENV_WRAPPER_BIN" --check-config "$CONF"
    [ "$status" -eq 1 ]
    grep -qx "$CONF:6: fallback = 'never' is invalid: use tcp or none" <<<"$output"
    grep -qx "warning: $CONF:4: max_connections = '70000' is invalid: use a whole number from 0 to 65536; this concerns the relay, not the shim" <<<"$output"
    # fixed for the shim: the relay's line is only a warning
    sed -i 's/never/none/' "$CONF"
    run "$SENV_WRAPPER_BIN" --check-config "$CONF"
    [ "$status" -eq 0 ]
    [ "$(source_of fallback)" = "$CONF:6" ]
}
