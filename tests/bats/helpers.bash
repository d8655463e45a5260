# tests/bats/helpers.bash — shared setup of the system-level smb_*.bats suites: a real
# Samba smbd (root, temp config) on one loopback address per suite, the smbdirect-relay
# in front of it, and smbclient run through the shim (scripts/lib/samba-env.sh does the
# work; this file adds the bats glue and assertions).
#
# Loopback addresses (one per suite so suites never collide; the real ports 445 and
# 5445 are used so the shim's defaults apply): smb_transfer 127.0.0.11, smb_sessions .12,
# smb_proof .13, smb_concurrency .14, smb_fallback .15, smb_failure .16, smb_channel .17,
# smb_conformance .19, smb_halfclose .24; scripts/demo .21,
# scripts/bench .22.
#
# SD_VIA=tcp runs the smbclient helpers over plain TCP without the relay (to check the
# harness itself); the default, shim, goes through build/smbdirect and the relay with
# SMBDIRECT_FALLBACK=none, so a run that did not use SMB Direct fails.

# shellcheck source=../../scripts/lib/samba-env.sh
source "$BATS_TEST_DIRNAME/../../scripts/lib/samba-env.sh"

: "${SD_VIA:=shim}"
export SD_VIA

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

# remove_work_dir — for teardown: frees the per-test scratch space (large files).
remove_work_dir() { [ -z "${SENV_DIR:-}" ] || rm -rf "$SENV_DIR/work/t$BATS_TEST_NUMBER"; }

# capture_start FILE BPF-FILTER — starts dumpcap on lo and waits until it captures.
capture_start() {
    dumpcap -i lo -f "$2" -w "$1" >"$1.log" 2>&1 3>&- &
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
}

# tshark_count FILE DISPLAY-FILTER — how many frames of FILE match, with port 5445
# decoded as iWARP MPA -> DDP/RDMAP -> SMB Direct -> SMB2 by the heuristic dissectors.
tshark_count() {
    tshark -r "$1" -o tcp.try_heuristic_first:TRUE -Y "$2" -T fields -e frame.number 2>/dev/null |
        wc -l
}
