#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# tests/bats/smb_config.bats — the configuration file with real programs: Samba's smbd on
# 127.0.0.26 behind smbdirect-relay, smbclient through the shim, both reading the file
# SMBDIRECT_CONFIG names. Precedence default < file < environment < flag for three
# settings (the relay's credits, the shim's log level and transport), and a bad line is
# an error naming the file and the line, in the shim and in the relay.

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

@test "config: the relay's credits come from its [relay] section, and --credits overrides the file" {
    printf 'credits = 200\n[relay]\ncredits = 100\n' >"$CONF"
    suite_start 127.0.0.26
    via_shim -c ls
    [ "$status" -eq 0 ]
    grep -q "^relay: conn 1 from .* credits 100/100 " "$SENV_RELAY_LOG"
    senv_relay_stop
    senv_relay_start --credits 50
    via_shim -c ls
    [ "$status" -eq 0 ]
    grep -q "^relay: conn 1 from .* credits 50/50 " "$SENV_RELAY_LOG"
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

@test "config: a bad line is an error naming the file and the line, in the shim and in the relay" {
    printf 'credits = 64\n\n[shim]\nkeepalive = soon\n' >"$CONF"
    suite_start_smbd 127.0.0.26
    run "$SENV_RELAY_BIN" --listen "$SENV_ADDR:5445" --backend "$SENV_ADDR:445" --transport soft
    [ "$status" -eq 2 ]
    [[ "$output" == *"$CONF:4: keepalive = 'soon' is invalid: use a whole number of seconds from 0 to "* ]]
    via_shim -c ls
    [ "$status" -ne 0 ]
    [[ "$output" == *"$CONF:4: keepalive = 'soon' is invalid"* ]]
    [[ "$output" == *"connects to SMB ports will fail with EINVAL"* ]]
}
