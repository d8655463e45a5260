#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# tests/bats/shim_hostile.bats — the client role against a hostile SMB Direct server
# (issue 12): build/tests/hostile-smbd breaks MS-SMBD one way per mode, and a Python
# program under the shim (SMBDIRECT_FALLBACK=none, soft-iWARP) connects to a tunneled
# port mapped to it, sends one SMB2 frame and reads. Each test asserts that the program
# sees connect() fail or the socket end (EOF, ECONNRESET, EPIPE) within a bound, never a
# hang (timeout) nor a crash (its exit status, no Sanitizer line), and that the shim's
# standard error has a line naming the rule broken. One mode also runs real smbclient.

load local_net

ROOT="$BATS_TEST_DIRNAME/../.."
BUILD_DIR="$(cd "${SENV_BUILD:-$ROOT/build}" && pwd)" # the build under test
SHIM="$BUILD_DIR/libsmbdirect.so"
HOSTILE="$BUILD_DIR/tests/hostile-smbd"
SMBDIRECT="$BUILD_DIR/smbdirect"
KEEPALIVE_TIMEOUT=5   # the engine's wait for a keepalive's answer (MS-SMBD Appendix B <3>)

# The program: prints "connect-failed ERRNO", "eof", "error ERRNO" or "still-waiting"
# (nothing ended within WAIT seconds), then the seconds it took.
CLIENT='
import errno, select, socket, struct, sys, time
port, wait = int(sys.argv[1]), float(sys.argv[2])
t0 = time.monotonic()
def done(what):
    print("%s %.1f" % (what, time.monotonic() - t0), flush=True)
    sys.exit(0)
s = socket.socket()
try:
    s.connect(("127.0.0.1", port))
except OSError as e:
    done("connect-failed " + errno.errorcode.get(e.errno, str(e.errno)))
try:
    s.sendall(struct.pack(">I", 68) + b"\xfeSMB" + bytes(64))
    while True:
        if not select.select([s], [], [], max(0.0, wait - (time.monotonic() - t0)))[0]:
            done("still-waiting")
        if not s.recv(65536):
            done("eof")
except OSError as e:
    done("error " + errno.errorcode.get(e.errno, str(e.errno)))
'

teardown() {
    [ -n "${SERVER_PID:-}" ] && kill "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null
    true
}

# start_hostile MODE — hostile-smbd on a free port (HPORT), and a free TCP port (TPORT)
# that the shim tunnels to it.
start_hostile() {
    HPORT=$(free_port)
    TPORT=$(free_port)
    "$HOSTILE" --listen "127.0.0.1:$HPORT" --mode "$1" 2>"$BATS_TEST_TMPDIR/server.err" &
    SERVER_PID=$!
    wait_listening "$HPORT"
}

# shim_env — the environment of a program under the shim, tunneling TPORT to HPORT.
shim_env() {
    echo SMBDIRECT_TRANSPORT=soft SMBDIRECT_PORTS="$TPORT" SMBDIRECT_PORTMAP="$TPORT:$HPORT" \
         SMBDIRECT_FALLBACK=none SMBDIRECT_KEEPALIVE="${KEEPALIVE:-120}"
}

# hostile MODE BOUND RULE — runs the program against MODE and asserts it ended in time
# with an ordinary error, and that the shim logged RULE.
hostile() {
    local mode=$1 bound=$2 rule=$3 status outcome secs
    start_hostile "$mode"
    echo "mode $mode: bound ${bound} s, expecting: $rule"
    # shellcheck disable=SC2046
    env $(shim_env) LD_PRELOAD="$SHIM" timeout $((bound + 20)) \
        python3 -c "$CLIENT" "$TPORT" $((bound + 10)) \
        >"$BATS_TEST_TMPDIR/out" 2>"$BATS_TEST_TMPDIR/err" && status=0 || status=$?
    echo "program (status $status): $(cat "$BATS_TEST_TMPDIR/out")"
    echo "shim's stderr:"; cat "$BATS_TEST_TMPDIR/err"
    echo "server's stderr:"; cat "$BATS_TEST_TMPDIR/server.err"
    [ "$status" -eq 0 ]                      # no crash, no hang killed by timeout
    if grep -q Sanitizer "$BATS_TEST_TMPDIR/err"; then return 1; fi
    # "connect-failed-EPROTO 0.0", "eof 0.2", "error-ECONNRESET 6.0", "still-waiting 17.0"
    read -r outcome secs <<<"$(awk '{ e = $1 == "connect-failed" || $1 == "error"
                                      print $1 (e ? "-" $2 : ""), $NF }' "$BATS_TEST_TMPDIR/out")"
    case $outcome in
        connect-failed-*|eof|error-ECONNRESET|error-EPIPE) ;;
        *) echo "not an ordinary end: $outcome"; return 1 ;;
    esac
    awk -v s="$secs" -v b="$bound" 'BEGIN { exit !(s < b) }'
    grep -F -- "$rule" "$BATS_TEST_TMPDIR/err"
}

@test "negotiate: NegotiatedVersion not 0x0100 fails connect()" {
    hostile neg-version 5 "NegotiatedVersion is not 0x0100 (MS-SMBD 3.1.5.7)"
    grep -q "^connect-failed EPROTO" "$BATS_TEST_TMPDIR/out"
}

@test "negotiate: a failure Status fails connect() with ECONNREFUSED" {
    hostile neg-status 5 "the peer refused negotiation with status 0xc00000bb (MS-SMBD 3.1.5.7)"
    grep -q "^connect-failed ECONNREFUSED" "$BATS_TEST_TMPDIR/out"
}

@test "negotiate: MaxReceiveSize below 128 fails connect()" {
    hostile neg-recv-size 5 "MaxReceiveSize is below 128 (MS-SMBD 3.1.5.7)"
    grep -q "^connect-failed EPROTO" "$BATS_TEST_TMPDIR/out"
}

@test "negotiate: CreditsGranted 0 fails connect()" {
    hostile neg-credits 5 "CreditsGranted is 0 (MS-SMBD 3.1.5.7)"
    grep -q "^connect-failed EPROTO" "$BATS_TEST_TMPDIR/out"
}

@test "negotiate: MaxFragmentedSize below 131072 fails connect()" {
    hostile neg-frag-size 5 "MaxFragmentedSize is below 131072 (MS-SMBD 3.1.5.7)"
    grep -q "^connect-failed EPROTO" "$BATS_TEST_TMPDIR/out"
}

@test "negotiate: a response shorter than 32 bytes fails connect()" {
    hostile neg-truncated 5 "Negotiate Response shorter than 32 bytes (MS-SMBD 3.1.5.7)"
    grep -q "^connect-failed EPROTO" "$BATS_TEST_TMPDIR/out"
}

@test "data: DataOffset not 8-byte aligned ends the socket" {
    hostile data-misaligned 5 "DataOffset not 8-byte aligned (MS-SMBD 3.1.5.8)"
}

@test "data: DataOffset + DataLength past the message ends the socket" {
    hostile data-past-end 5 "DataOffset + DataLength beyond the message (MS-SMBD 3.1.5.8)"
}

@test "data: a message larger than our MaxReceiveSize ends the socket" {
    hostile data-oversized 5 "MaxReceiveSize exceeded (MS-SMBD 3.1.5.4)"
}

@test "data: RemainingDataLength beyond our MaxFragmentedSize ends the socket" {
    hostile data-remaining 5 \
        "DataLength + RemainingDataLength exceed MaxFragmentedRecvSize (MS-SMBD 3.1.5.8)"
}

@test "data: CreditsRequested 0 ends the socket" {
    hostile data-zero-requested 5 "Data Transfer with CreditsRequested 0 (MS-SMBD 3.1.5.8)"
}

@test "keepalive: a server that never answers is dropped after keepalive + its timeout" {
    KEEPALIVE=1
    hostile no-keepalive-answer $((KEEPALIVE + KEEPALIVE_TIMEOUT + 2)) \
        "the peer did not answer a keepalive within 5000 ms (MS-SMBD 3.1.6.2)"
}

# Out of send credits the shim cannot even ask with a keepalive; it waits one more
# interval plus the timeout for anything at all (a paused peer would send its own
# keepalive), then ends the connection.
@test "credits: a server that spends our credits and grants none ends the socket" {
    KEEPALIVE=1
    hostile no-credits $((2 * KEEPALIVE + KEEPALIVE_TIMEOUT + 2)) \
        "left no credit to send a keepalive with (MS-SMBD 3.1.6.2)"
}

@test "cut: a disconnect in the middle of a fragmented message ends the socket, named" {
    hostile cut-disconnect 5 \
        "bytes of a fragmented message still to come (MS-SMBD 3.1.5.8, 3.1.7.1)"
}

@test "cut: an RDMAP Terminate in the middle of a fragmented message ends the socket" {
    hostile cut-terminate 5 "the peer terminated the connection (MS-SMBD 3.1.7.1)"
}

@test "garbage: junk bytes under MPA after the negotiation end the socket" {
    hostile garbage 5 "the RDMA connection was lost: transport failure (MS-SMBD 3.1.7.1)"
    grep -q "soft-iWARP: terminating the connection" "$BATS_TEST_TMPDIR/err"
}

@test "garbage: junk instead of an MPA reply frame fails connect()" {
    hostile garbage-mpa 5 "peer sent no valid MPA reply frame"
    grep -q "^connect-failed EPROTO" "$BATS_TEST_TMPDIR/out"
}

@test "smbclient: a malformed Data Transfer makes smbclient exit with an error quickly" {
    start_hostile data-misaligned
    local t0 status
    t0=$(date +%s)
    # shellcheck disable=SC2046
    env $(shim_env) timeout 30 "$SMBDIRECT" smbclient "//127.0.0.1/x" -p "$TPORT" -N -c ls \
        >"$BATS_TEST_TMPDIR/out" 2>&1 && status=0 || status=$?
    echo "smbclient (status $status) after $(( $(date +%s) - t0 )) s, bound 10 s:"
    cat "$BATS_TEST_TMPDIR/out"
    [ "$status" -ne 0 ]        # an error,
    [ "$status" -ne 124 ]      # not a hang killed by timeout,
    [ "$status" -lt 128 ]      # not a crash
    [ $(( $(date +%s) - t0 )) -lt 10 ]
    if grep -q Sanitizer "$BATS_TEST_TMPDIR/out"; then return 1; fi
    grep -F "DataOffset not 8-byte aligned (MS-SMBD 3.1.5.8)" "$BATS_TEST_TMPDIR/out"
}
