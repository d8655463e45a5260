# SPDX-License-Identifier: BSD-3-Clause
# tests/bats/helpers.bash — shared setup of the system-level smb_*.bats suites: a real
# Samba smbd (root, temp config) on one loopback address per suite, the smbdirect-relay
# in front of it, and smbclient run through the shim (scripts/lib/samba-env.sh does the
# work; this file adds the bats glue and assertions).
#
# Loopback addresses (one per suite so suites never collide; the real ports 445 and
# 5445 are used so the shim's defaults apply): smb_transfer 127.0.0.11, smb_sessions .12,
# smb_proof .13, smb_concurrency .14, smb_fallback .15, smb_failure .16, smb_channel .17,
# smb_soak .18, smb_conformance .19, smb_halfclose .24, smb_clients .25, smb_config .26,
# smb_addrmap .27 (and .28, where nothing listens); smb_mount .29; smb_relay_ops .31 (the
# relay on [::]:5446, clients from 127.0.0.1 and ::1); smb_torture .32; smb_relay_service .34;
# smb_signing .35; smb_limits .36; smb_release .37; smb_relay_cluster .38 (and .39, the relay's
# second address); smb_fast_paths .40; scripts/bench-ab .33;
# scripts/demo .21, scripts/bench .22, scripts/soak .23 (its default). smb_faults uses no loopback address:
# 10.213.0.1/.2 on a veth pair into a network namespace it creates.
#
# SD_VIA=tcp runs the smbclient helpers over plain TCP without the relay (to check the
# harness itself); the default, shim, goes through build/smbdirect and the relay with
# SMBDIRECT_FALLBACK=none, so a run that did not use SMB Direct fails.

# shellcheck source=../../scripts/lib/samba-env.sh
source "$BATS_TEST_DIRNAME/../../scripts/lib/samba-env.sh"

: "${SD_VIA:=shim}"
export SD_VIA

# Python's libsmbclient test programs (tests/tools: sessions held open, a copy by smbc
# calls), the interpreter whose smbc module they use (python3 on PATH may be another one
# without it), and the words the shim logs when a server refuses a connection.
SMBC_SESSIONS="$BATS_TEST_DIRNAME/../tools/smbc_sessions.py"
SMBC_COPY="$BATS_TEST_DIRNAME/../tools/smbc_copy.py"
PYTHON=/usr/bin/python3
REFUSED="refused by the server (its access policy or connection limits)"

# wait_pids — waits for every background process the test put in PIDS, whatever it ends with.
wait_pids() {
    local p
    for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
}

# suite_start ADDR [smbd options...] — creates the environment, starts smbd and (via
# shim) the relay; on failure cleans up and fails. Exports SENV_* for the tests.
suite_start() {
    suite_start_smbd "$@" || return 1
    if [ "$SD_VIA" = shim ] && ! senv_relay_start; then senv_destroy; return 1; fi
}

# suite_start_smbd ADDR [smbd options...] — the same without the relay.
suite_start_smbd() {
    senv_create "$1" || return 1
    shift
    if ! senv_smbd_start "$@"; then senv_destroy; return 1; fi
    export SENV_ADDR SENV_DIR SENV_SHARE SENV_CONF SENV_SMBD_LOG SENV_RELAY_LOG
}

# suite_stop — stops everything suite_start started and removes its files.
suite_stop() { senv_destroy; }

# require_shim — skips a test that only makes sense through the shim and relay.
require_shim() {
    [ "$SD_VIA" = shim ] || skip "needs the shim and relay (SD_VIA=$SD_VIA)"
}

# smb [smbclient args...] — smbclient against //ADDR/share via $SD_VIA; through the shim
# SMB Direct is mandatory (no TCP fallback) and the shim logs at info level.
smb() {
    if [ "$SD_VIA" = shim ]; then
        SMBDIRECT_FALLBACK=none SMBDIRECT_LOG=${SMBDIRECT_LOG:-info} senv_smbclient_via shim "$@"
    else
        senv_smbclient_via tcp "$@"
    fi
}

# relay_established_count — how many SMB Direct connections the relay has established.
relay_established_count() {
    [ -f "$SENV_RELAY_LOG" ] || { echo 0; return; }
    grep -c 'relay: conn .* established' "$SENV_RELAY_LOG" || true
}

# wait_relay_log REGEX — waits up to 5 s for a relay log line matching REGEX (grep -E).
wait_relay_log() {
    local i
    for ((i = 0; i < 100; i++)); do
        grep -qE "$1" "$SENV_RELAY_LOG" && return 0
        sleep 0.05
    done
    echo "no relay log line matches '$1' after 5 s" >&2
    return 1
}

# last_conn_line WHAT — the relay's "closed" or "channel" line of its latest connection
# (waits up to 5 s: the relay logs when the shim's connection has gone). Empty if none.
last_conn_line() {
    local id i line
    id=$(grep -o 'relay: conn [0-9]* from' "$SENV_RELAY_LOG" | tail -n 1 | cut -d' ' -f3)
    for i in $(seq 50); do
        grep -q "relay: conn $id closed" "$SENV_RELAY_LOG" && break
        sleep 0.1
    done
    line=$(grep "relay: conn $id $1" "$SENV_RELAY_LOG" || true)
    echo "$line"
}

# run_smb [smbclient args...] — `run smb ...` that also asserts, through the shim, that
# the run made exactly one new SMB Direct connection at the relay.
run_smb() {
    local before after
    before=$(relay_established_count)
    run smb "$@"
    if [ "$SD_VIA" = shim ]; then
        after=$(relay_established_count)
        if [ "$after" -ne $((before + 1)) ]; then
            echo "expected one new relay connection, relay log went from $before to $after established" >&2
            return 1
        fi
    fi
}

# client COMMAND... — runs COMMAND via $SD_VIA: through the shim with SMB Direct
# mandatory and the shim logging at info, or over plain TCP. A hang fails at 300 s.
client() {
    if [ "$SD_VIA" = shim ]; then
        SMBDIRECT_FALLBACK=none SMBDIRECT_LOG=${SMBDIRECT_LOG:-info} \
            SMBDIRECT_TRANSPORT=${SMBDIRECT_TRANSPORT:-soft} \
            timeout 300 "$SENV_BUILD/smbdirect" "$@"
    else
        timeout 300 "$@"
    fi
}

# run_client COMMAND... — `run client ...`; through the shim it also asserts that the
# run made exactly one new SMB Direct connection at the relay, that the shim reported
# the tunnel, and that the shim logged no error.
run_client() {
    local before after
    before=$(relay_established_count)
    run client "$@"
    [ "$SD_VIA" = shim ] || return 0
    after=$(relay_established_count)
    if [ "$after" -ne $((before + 1)) ]; then
        echo "expected one new relay connection, relay log went from $before to $after established" >&2
        return 1
    fi
    if ! grep -q "info: fd [0-9]*: $SENV_ADDR:445 tunneled over SMB Direct" <<<"$output"; then
        echo "the shim did not report a tunnel" >&2
        return 1
    fi
    if grep -E 'smbdirect\[[0-9]+\] error:' <<<"$output" >&2; then
        echo "the shim logged errors (above)" >&2
        return 1
    fi
}

# assert_success — last `run` exited 0; shows its output otherwise.
assert_success() {
    if [ "$status" -ne 0 ]; then
        echo "command failed with status $status; output:" >&2
        echo "$output" >&2
        SD_OUTPUT_SHOWN=1
        return 1
    fi
}

# refute COMMAND... — fails when COMMAND succeeds (a bare "! cmd" never fails a bats
# test under set -e, except as its last command).
refute() {
    if "$@"; then echo "expected to fail but succeeded: $*" >&2; return 1; fi
}

# assert_same_file EXPECTED ACTUAL — both exist with equal sha256.
assert_same_file() {
    [ -f "$1" ] || { echo "missing file $1" >&2; return 1; }
    [ -f "$2" ] || { echo "missing file $2" >&2; return 1; }
    local a b
    a=$(senv_sha256 "$1") b=$(senv_sha256 "$2")
    if [ "$a" != "$b" ]; then
        echo "sha256 differs: $1 ($(stat -c %s "$1") B) $a" >&2
        echo "                $2 ($(stat -c %s "$2") B) $b" >&2
        return 1
    fi
}

# tree_digest DIR — one "sha256  ./path" line per file under DIR, sorted by path.
tree_digest() { (cd "$1" && find . -type f -print0 | sort -z | xargs -0r sha256sum); }

# make_small_files DIR COUNT — COUNT files of 1..4096 random bytes in DIR.
make_small_files() {
    local i
    mkdir -p "$1"
    for ((i = 0; i < $2; i++)); do head -c $((RANDOM % 4096 + 1)) /dev/urandom >"$1/f$i.bin"; done
}

# work_dir — a per-test scratch directory inside the environment (removed with it).
work_dir() {
    local d=$SENV_DIR/work/t$BATS_TEST_NUMBER
    mkdir -p "$d" && echo "$d"
}

# dump_logs_on_failure — for teardown: when the test failed, prints the tails of the
# relay and smbd logs (bats shows them with the failure).
dump_logs_on_failure() {
    [ -z "${BATS_TEST_COMPLETED:-}" ] || return 0
    [ -n "${SENV_DIR:-}" ] || return 0
    if [ -n "${output:-}" ] && [ -z "${SD_OUTPUT_SHOWN:-}" ]; then echo "--- output of the last run (tail)"; tail -n 15 <<<"$output"; fi
    if [ -s "$SENV_RELAY_LOG" ]; then echo "--- relay log (tail)"; tail -n 15 "$SENV_RELAY_LOG"; fi
    if [ -s "$SENV_SMBD_LOG" ]; then echo "--- smbd log (tail)"; tail -n 15 "$SENV_SMBD_LOG"; fi
}

# interrupt_transfer get|put VICTIM [LIMIT] — starts a BIG-byte ($BIG) get or put of
# $BATS_FILE_TMPDIR/big.bin with `smb`, and once at least 1 MiB has moved: VICTIM relay
# or smbd is killed with SIGKILL, relay-restart is killed and started again (with
# $RELAY_ARGS), client kills smbclient itself, link sets $FAULT_LINK down. smbclient must
# then exit with an error within LIMIT seconds (default 20; 0.5 s more is allowed for
# the measurement itself: a keepalive timeout ends the connection at LIMIT exactly), and the file it was writing
# must not be complete. For client the program cannot see anything; instead the relay
# must log the connection's end within LIMIT seconds. Prints the time taken to fd 3.
interrupt_transfer() {
    local dir=$1 victim=$2 limit=${3:-20} d cmd watch pid t0 t1 rc i ended before
    d=$(work_dir)
    if [ "$dir" = get ]; then
        ln "$BATS_FILE_TMPDIR/big.bin" "$SENV_SHARE/big.bin"
        cmd="get big.bin $d/big.bin" watch=$d/big.bin
    else
        cmd="put $BATS_FILE_TMPDIR/big.bin big.bin" watch=$SENV_SHARE/big.bin
    fi
    ended=$(relay_ended_count)
    smb -c "$cmd" >"$d/client.log" 2>&1 &
    pid=$!
    for ((i = 0; i < 3000; i++)); do
        [ "$(stat -c %s "$watch" 2>/dev/null || echo 0)" -gt 1048576 ] && break
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.01
    done
    if ! kill -0 "$pid" 2>/dev/null; then
        echo "smbclient ended before the $victim could be interrupted:" >&2; cat "$d/client.log" >&2
        return 1
    fi
    t0=$(senv_now)
    case "$victim" in
        relay) senv_relay_stop KILL ;;
        relay-restart) senv_relay_stop KILL; senv_relay_start "${RELAY_ARGS[@]}" ;;
        smbd) senv_smbd_stop KILL ;;
        client) pkill -KILL -P "$pid" || kill -KILL "$pid" ;;   # smbclient: the child of smb's subshell
        link) ip link set "$FAULT_LINK" down ;;
    esac
    for ((i = 0; i < (limit + 1) * 20; i++)); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.05
    done
    if kill -0 "$pid" 2>/dev/null; then
        pkill -KILL -P "$pid" || true; kill -KILL "$pid" 2>/dev/null || true; wait "$pid" || true
        echo "smbclient still running $limit s after the fault ($victim): a hang" >&2
        cat "$d/client.log" >&2
        return 1
    fi
    wait "$pid" && rc=0 || rc=$?
    if [ "$victim" = client ]; then
        before=$ended
        for ((i = 0; i < limit * 20; i++)); do
            [ "$(relay_ended_count)" -gt "$before" ] && break
            sleep 0.05
        done
        t1=$(senv_now)
        echo "# smbclient killed; the relay ended its connection after $(elapsed "$t0" "$t1") s" >&3
        if [ "$(relay_ended_count)" -le "$before" ]; then
            echo "the relay did not end the killed client's connection within $limit s" >&2
            return 1
        fi
        [ "$rc" -eq 137 ]
    else
        t1=$(senv_now)
        echo "# smbclient exited $rc after $(elapsed "$t0" "$t1") s" >&3
        if [ "$rc" -eq 0 ]; then
            echo "smbclient reported success although the $victim failed mid-transfer:" >&2
            cat "$d/client.log" >&2
            return 1
        fi
    fi
    # 0.5 s for what the measurement adds: 50 ms polling, ps, the process exiting
    awk -v a="$t0" -v b="$t1" -v l="$limit" 'BEGIN { exit !(b - a < l + 0.5) }'
    [ "$(stat -c %s "$watch" 2>/dev/null || echo 0)" -lt "$BIG" ]
}

# elapsed T0 T1 — seconds between two senv_now readings, two decimals.
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

# status_json — the relay's status (senv_relay_start's status socket) as JSON.
status_json() {
    SMBDIRECT_CONFIG='' "$SENV_RELAY_BIN" --status --json --status-socket "$SENV_DIR/relay.sock"
}

# status EXPR — a Python expression over the relay's JSON status (its keys are names).
status() {
    status_json | python3 -c 'import json, sys; print(eval(sys.argv[1], {}, json.load(sys.stdin)))' "$1"
}

# await_status EXPR VALUE — waits up to 10 s until status EXPR prints VALUE.
await_status() {
    local i
    for i in $(seq 100); do [ "$(status "$1")" = "$2" ] && return 0; sleep 0.1; done
    echo "status $1 is $(status "$1"), not $2" >&2
    return 1
}

# await_log TEXT — waits up to 10 s for a relay log line holding TEXT.
await_log() {
    local i
    for i in $(seq 100); do grep -qF -- "$1" "$SENV_RELAY_LOG" && return 0; sleep 0.1; done
    echo "the relay never logged: $1" >&2
    return 1
}

# relay_ended_count — how many connections the relay has ended (closed or failed).
relay_ended_count() {
    [ -f "$SENV_RELAY_LOG" ] || { echo 0; return; }
    grep -cE 'relay: conn [0-9]+ (closed|failed)' "$SENV_RELAY_LOG" || true
}

# assert_relay_serves — a new session through the relay lists the share.
assert_relay_serves() {
    run_smb -c ls
    assert_success
}

# remove_work_dir — for teardown: frees the per-test scratch space (large files).
remove_work_dir() { [ -z "${SENV_DIR:-}" ] || rm -rf "$SENV_DIR/work/t$BATS_TEST_NUMBER"; }

# capture_start FILE BPF-FILTER — starts dumpcap on lo and waits until it captures.
capture_start() {
    # -B: a 64 MiB kernel buffer; at the default 2 MiB a loopback burst of 64 KiB
    # segments outran dumpcap and the frames lost took the SMB2 messages in them along
    dumpcap -i lo -B 64 -f "$2" -w "$1" >"$1.log" 2>&1 3>&- &
    echo $! >"$1.pid"
    local i
    for ((i = 0; i < 200; i++)); do
        grep -q '^File:' "$1.log" && return 0
        sleep 0.05
    done
    echo "dumpcap did not start:" >&2; cat "$1.log" >&2
    return 1
}

# capture_stop FILE — stops the capture started for FILE and waits for it to flush.
capture_stop() {
    [ -s "$1.pid" ] || return 0
    local pid
    pid=$(cat "$1.pid")
    sleep 0.3   # let the last packets of the run reach the capture buffer
    kill -INT "$pid" 2>/dev/null || true
    { wait "$pid"; } 2>/dev/null || true
    rm -f "$1.pid"
    # a test that then misses a frame says why: "received/dropped ... N/M (pcap:M/..."
    grep -E "dropped on interface .*/[1-9]" "$1.log" >&2 || true
}

# tshark_count FILE DISPLAY-FILTER — how many frames of FILE match, with port 5445
# decoded as iWARP MPA -> DDP/RDMAP -> SMB Direct -> SMB2 by the heuristic dissectors.
tshark_count() {
    tshark -r "$1" -o tcp.try_heuristic_first:TRUE -Y "$2" -T fields -e frame.number 2>/dev/null |
        wc -l
}
