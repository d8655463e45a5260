#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# tests/bats/shim_passthrough.bats — under LD_PRELOAD=build/libsmbdirect.so, sockets the
# shim must not touch behave exactly as without it (an HTTP server and curl, a TCP echo
# client on another port, port 139, port 445 with SMBDIRECT_TRANSPORT=tcp); an invalid
# setting fails only intercepted connects, with an error naming the variable; the
# SMB Direct fallback works both ways; the `smbdirect` wrapper. Everything runs on
# 127.0.0.1 with free ports and is cleaned up in teardown.

load local_net

ROOT="$BATS_TEST_DIRNAME/../.."
BUILD_DIR="$(cd "${SENV_BUILD:-$ROOT/build}" && pwd)" # the build under test
SHIM="$BUILD_DIR/libsmbdirect.so"
WRAPPER="$BUILD_DIR/smbdirect"

# Connects to 127.0.0.1:PORT for each PORT, sends a line, prints what came back or
# "PORT errno N"; exits 1 when any connect failed: python3 -c "$ECHO_CLIENT" PORT...
ECHO_CLIENT='
import socket, sys
rc = 0
for port in sys.argv[1:]:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.connect(("127.0.0.1", int(port)))
        s.sendall(b"hello " + port.encode())
        print(s.recv(100).decode())
    except OSError as e:
        print(port, "errno", e.errno)
        rc = 1
    s.close()
sys.exit(rc)
'

setup() {
    [ -f "$SHIM" ] || { echo "build/libsmbdirect.so is missing: run make" >&2; return 1; }
    WORK=$(mktemp -d)
    head -c 100000 /dev/urandom >"$WORK/file.bin"
    HTTP_PORT=$(free_port)
    ECHO_PORT=$(free_port)
    # The servers themselves run under the shim too: listening/accepting untouched.
    (cd "$WORK" && exec env LD_PRELOAD="$SHIM" python3 -m http.server --bind 127.0.0.1 "$HTTP_PORT" \
        >"$WORK/http.log" 2>&1) &
    HTTP_PID=$!
    env LD_PRELOAD="$SHIM" python3 -c "$ECHO_SERVER" "$ECHO_PORT" >"$WORK/echo.log" 2>&1 &
    ECHO_PID=$!
    wait_listening "$HTTP_PORT"
    wait_listening "$ECHO_PORT"
    unset SMBDIRECT_TRANSPORT SMBDIRECT_PORTS SMBDIRECT_PORTMAP SMBDIRECT_FALLBACK SMBDIRECT_LOG
}

teardown() {
    kill "$HTTP_PID" "$ECHO_PID" 2>/dev/null || true
    wait "$HTTP_PID" "$ECHO_PID" 2>/dev/null || true
    rm -rf "$WORK"
}

@test "curl to a local HTTP server is identical with and without the shim" {
    curl -sS -o "$WORK/plain.bin" -D "$WORK/plain.hdr" "http://127.0.0.1:$HTTP_PORT/file.bin"
    run env LD_PRELOAD="$SHIM" SMBDIRECT_LOG=debug \
        curl -sS -o "$WORK/shim.bin" -D "$WORK/shim.hdr" "http://127.0.0.1:$HTTP_PORT/file.bin"
    [ "$status" -eq 0 ]
    [ -z "$output" ] # not one line from the shim, even at debug level
    cmp "$WORK/file.bin" "$WORK/plain.bin"
    cmp "$WORK/file.bin" "$WORK/shim.bin"
    [ "$(head -n1 "$WORK/plain.hdr")" = "$(head -n1 "$WORK/shim.hdr")" ]
}

@test "a refused connect to another port fails the same with and without the shim" {
    local closed
    closed=$(free_port)
    run curl -sS "http://127.0.0.1:$closed/"
    local plain_status=$status
    run env LD_PRELOAD="$SHIM" curl -sS "http://127.0.0.1:$closed/"
    [ "$status" -eq "$plain_status" ]
    [ "$status" -eq 7 ]
    [[ "$output" == *"Couldn't connect"* || "$output" == *"onnection refused"* ]]
}

@test "port 139 passes through untouched" {
    local plain
    plain=$(python3 -c "$ECHO_CLIENT" 139 || true)
    run env LD_PRELOAD="$SHIM" SMBDIRECT_LOG=debug python3 -c "$ECHO_CLIENT" 139
    [ "$output" = "$plain" ]
    if ! ss -ltnH 'sport = :139' | grep -q .; then
        [ "$output" = "139 errno 111" ] # ECONNREFUSED from the kernel, no SMB Direct attempt
    fi
}

@test "SMBDIRECT_TRANSPORT=tcp passes an intercepted port through" {
    run env LD_PRELOAD="$SHIM" SMBDIRECT_TRANSPORT=tcp SMBDIRECT_PORTS="445,$ECHO_PORT" \
        SMBDIRECT_FALLBACK=none SMBDIRECT_LOG=debug python3 -c "$ECHO_CLIENT" "$ECHO_PORT"
    [ "$status" -eq 0 ]
    [ "$output" = "hello $ECHO_PORT" ]
}

@test "an invalid SMBDIRECT_FALLBACK fails intercepted connects only, naming the variable" {
    run env LD_PRELOAD="$SHIM" SMBDIRECT_PORTS="$HTTP_PORT" SMBDIRECT_FALLBACK=sometimes \
        python3 -c "$ECHO_CLIENT" "$ECHO_PORT" "$HTTP_PORT"
    [ "$status" -eq 1 ]
    [[ "$output" == *"SMBDIRECT_FALLBACK='sometimes'"* ]]
    [[ "$output" == *"$HTTP_PORT errno 22"* ]] # EINVAL
    # The echo port is not intercepted: that connect worked in the same process.
    [[ "$output" == *"hello $ECHO_PORT"* ]]
}

@test "an invalid SMBDIRECT_PORTS keeps 445 failing and other ports working" {
    run env LD_PRELOAD="$SHIM" SMBDIRECT_PORTS=smb python3 -c "$ECHO_CLIENT" 445 "$ECHO_PORT"
    [ "$status" -eq 1 ]
    [[ "$output" == *"SMBDIRECT_PORTS"*"smb"* ]]
    [[ "$output" == *"445 errno 22"* ]]
    [[ "$output" == *"hello $ECHO_PORT"* ]]
}

@test "fallback=tcp: no SMB Direct listener, the connect goes over TCP with a warning" {
    local nobody
    nobody=$(free_port)
    run env LD_PRELOAD="$SHIM" SMBDIRECT_TRANSPORT=soft SMBDIRECT_PORTS="$ECHO_PORT" \
        SMBDIRECT_PORTMAP="$ECHO_PORT:$nobody" python3 -c "$ECHO_CLIENT" "$ECHO_PORT"
    [ "$status" -eq 0 ]
    [[ "$output" == *"warn: SMB Direct to 127.0.0.1:$ECHO_PORT (soft, port $nobody) failed"* ]]
    [[ "$output" == *"using TCP instead"* ]]
    [[ "$output" == *"hello $ECHO_PORT"* ]]
}

@test "fallback=none: no SMB Direct listener, the connect fails fast with ECONNREFUSED" {
    local nobody start
    nobody=$(free_port)
    start=$(date +%s)
    run env LD_PRELOAD="$SHIM" SMBDIRECT_TRANSPORT=soft SMBDIRECT_PORTS="$ECHO_PORT" \
        SMBDIRECT_PORTMAP="$ECHO_PORT:$nobody" SMBDIRECT_FALLBACK=none \
        python3 -c "$ECHO_CLIENT" "$ECHO_PORT"
    [ "$status" -eq 1 ]
    [[ "$output" == *"error: SMB Direct to 127.0.0.1:$ECHO_PORT (soft, port $nobody) failed"* ]]
    [[ "$output" == *"SMBDIRECT_FALLBACK=none"* ]]
    [[ "$output" == *"$ECHO_PORT errno 111"* ]]
    [ $(($(date +%s) - start)) -lt 5 ]
}

@test "smbdirect --help describes usage and the environment" {
    run "$WRAPPER" --help
    [ "$status" -eq 0 ]
    [[ "$output" == *"Usage: smbdirect"* ]]
    for v in SMBDIRECT_TRANSPORT SMBDIRECT_PORTS SMBDIRECT_PORTMAP SMBDIRECT_FALLBACK SMBDIRECT_LOG; do
        [[ "$output" == *"$v"* ]]
    done
    run "$WRAPPER"
    [ "$status" -eq 2 ]
    run "$WRAPPER" --bogus true
    [ "$status" -eq 2 ]
}

@test "smbdirect COMMAND appends the shim to LD_PRELOAD and runs COMMAND" {
    local other=/lib/x86_64-linux-gnu/libdl.so.2
    [ -f "$other" ] || other=$(ldconfig -p | awk '/libdl.so.2 /{print $NF; exit}')
    run env -u LD_PRELOAD "$WRAPPER" printenv LD_PRELOAD
    [ "$status" -eq 0 ]
    [ "$output" = "$SHIM" ] || [ "$(realpath "$output")" = "$(realpath "$SHIM")" ]
    run env LD_PRELOAD="$other" "$WRAPPER" printenv LD_PRELOAD
    [ "$status" -eq 0 ]
    [[ "$output" == "$other "*libsmbdirect.so ]]
    run "$WRAPPER" sh -c 'exit 3'
    [ "$status" -eq 3 ]
}
