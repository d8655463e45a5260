#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# tests/bats/smb_release.bats — the release's one version and the programs' command-line
# habits: smbdirect, smbdirect-relay and smbdirect-probe each print debian/changelog's
# version for -V and --version, their help for -h, and one line with a pointer to --help
# (exit 2) for an unknown option; with a real smbd on 127.0.0.37 behind the relay, the
# relay names the version in its start line and in --status (text and JSON), and the
# shim in its first line at SMBDIRECT_LOG=debug.

load helpers

ROOT="$BATS_TEST_DIRNAME/../.."
PROGS=(smbdirect smbdirect-relay smbdirect-probe)

setup() {
    # the oracle: dpkg's own reading of the changelog, not the Makefile's
    VERSION=$(dpkg-parsechangelog -l "$ROOT/debian/changelog" -S Version)
    [ -n "$VERSION" ]
}

teardown() { dump_logs_on_failure; suite_stop; }

# bin NAME — the program under test (SENV_BUILD's, or the installed one).
bin() {
    case $1 in
        smbdirect) echo "$SENV_WRAPPER_BIN" ;;
        smbdirect-relay) echo "$SENV_RELAY_BIN" ;;
        smbdirect-probe) echo "$SENV_PROBE_BIN" ;;
    esac
}

# each CHECK ARG... — CHECK NAME ARG for each program NAME and each ARG.
each() {
    local check=$1 p arg
    shift
    for p in "${PROGS[@]}"; do
        for arg in "$@"; do "$check" "$p" "$arg"; done
    done
}

# prints_version NAME FLAG — NAME FLAG prints "NAME VERSION" and exits 0.
prints_version() {
    run "$(bin "$1")" "$2"
    assert_success
    [ "$output" = "$1 $VERSION" ]
}

# prints_usage NAME FLAG — NAME FLAG prints NAME's usage, naming --version, and exits 0.
prints_usage() {
    run "$(bin "$1")" "$2"
    assert_success
    [[ "${lines[0]}" == "Usage: $1 "* ]]
    [[ "$output" == *"--help | --version"* ]]
}

# refuses NAME OPTION — NAME OPTION prints only the error's line and the pointer to
# --help, on stderr, and exits 2.
refuses() {
    local rc=0
    "$(bin "$1")" "$2" >"$BATS_TEST_TMPDIR/out" 2>"$BATS_TEST_TMPDIR/err" || rc=$?
    [ "$rc" -eq 2 ]
    [ ! -s "$BATS_TEST_TMPDIR/out" ]
    diff - "$BATS_TEST_TMPDIR/err" <<EOF
$1: unknown option '$2'
Try '$1 --help' for more information.
EOF
}

@test "release: -V and --version print each program's name and debian/changelog's version" {
    each prints_version -V --version
}

@test "release: -h and --help print each program's usage on stdout, naming --version" {
    each prints_usage -h --help
}

@test "release: an unknown option prints one line and a pointer to --help, and exits 2" {
    each refuses --frob -q
}

@test "release: the relay names its version in its start line and in --status, as text and as JSON" {
    require_shim
    suite_start 127.0.0.37
    [[ "$(head -n 1 "$SENV_RELAY_LOG")" == "relay: smbdirect-relay $VERSION listening on 127.0.0.37:5445 (soft), backend 127.0.0.37:445, "* ]]
    run "$SENV_RELAY_BIN" --status --status-socket "$SENV_DIR/relay.sock"
    assert_success
    [[ "${lines[0]}" == "smbdirect-relay $VERSION on 127.0.0.37:5445 (soft), backend 127.0.0.37:445: accepting, "* ]]
    run "$SENV_RELAY_BIN" --status --json --status-socket "$SENV_DIR/relay.sock"
    assert_success
    [ "$(python3 -c 'import json, sys; print(json.load(sys.stdin)["version"])' <<<"$output")" = "$VERSION" ]
}

@test "release: the shim's first line at SMBDIRECT_LOG=debug names libsmbdirect's version" {
    require_shim
    suite_start 127.0.0.37
    local re="^smbdirect\[[0-9]+\] debug: libsmbdirect ${VERSION//./\\.}: SMB Direct provider: soft$"
    SMBDIRECT_LOG=debug run_smb -c ls
    assert_success
    [[ "$(grep -m 1 '^smbdirect\[' <<<"$output")" =~ $re ]]
}
