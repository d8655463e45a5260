# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# scripts/lib/samba-env.sh — throwaway Samba environment on one loopback address:
# a root smbd with a temp config and temp state dirs on ADDR:445, the smbdirect-relay
# in front of it on ADDR:5445, and helpers to run smbclient through the shim (or over
# plain TCP) against it. Sourced by tests/bats/helpers.bash, scripts/demo and
# scripts/bench; it defines functions and variables only (prefix senv_ / SENV_).
#
# Typical use:
#   senv_create 127.0.0.21          # temp dir + share, sets SENV_* below
#   senv_smbd_start                 # options: signing=mandatory min_protocol=SMB3_11 ...
#   senv_relay_start                # smbdirect-relay ADDR:5445 -> ADDR:445
#   senv_smbclient -c 'put a b'     # smbclient through the shim
#   senv_destroy                    # kills what it started, removes the temp dir
#
# Variables set when sourced: SENV_WRAPPER_BIN SENV_RELAY_BIN SENV_PROBE_BIN (the
# programs used: see SENV_BUILD and SENV_INSTALLED below).
# Variables set by senv_create / the start functions:
#   SENV_ADDR SENV_DIR SENV_SHARE SENV_CONF SENV_SMBD_PID SENV_SMBD_LOG
#   SENV_RELAY_PID SENV_RELAY_LOG SENV_USER SENV_PASS
# and by senv_busy_ticks: SENV_TICKS
# Knobs (environment, optional):
#   SENV_BUILD          build dir holding libsmbdirect.so, smbdirect, smbdirect-relay
#                       (default: <repo>/build)
#   SENV_INSTALLED=1    use the installed smbdirect, smbdirect-relay and smbdirect-probe
#                       found in PATH instead of SENV_BUILD's (the wrapper names its library)
#   SENV_SMB_PORT       backend smbd port (default 445)
#   SENV_RELAY_PORT     relay (SMB Direct) port (default 5445, the shim's soft-iWARP default)
#   SENV_RELAY_HOST     relay listen address (default ADDR; e.g. [::] for every address)
#   SENV_RELAY_TRANSPORT relay --transport (default soft)
#   SENV_NETNS          a named network namespace (ip netns) that smbd and the relay run in,
#                       ADDR being one of its addresses (default: none, the caller's)
#   SENV_RELAY_ENV      SMBDIRECT_NAME=VALUE words the relay gets in its environment; it
#                       gets no other SMBDIRECT_ variable of the caller but SMBDIRECT_CONFIG
#   SENV_SMBD_LOGLEVEL  smbd "log level" (default 2)
#   SENV_KEEP=1         keep the temp dir after senv_destroy (for debugging)
#   SENV_RELAY_LEAKS=1  the relay is an ASan build: run it with LeakSanitizer on, and make
#                       senv_relay_stop fail (printing the report) when its log has one

SENV_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SENV_LIB=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
: "${SENV_BUILD:=$SENV_ROOT/build}"
: "${SENV_SMB_PORT:=445}"
: "${SENV_RELAY_PORT:=5445}"
: "${SENV_RELAY_TRANSPORT:=soft}"
: "${SENV_SMBD_LOGLEVEL:=2}"
# The shim and the relay read /etc/smbdirect/smbdirect.conf unless SMBDIRECT_CONFIG names
# another file: an installed, configured package must not change what a test runs. A
# caller's SMBDIRECT_CONFIG (even empty) stands.
export SMBDIRECT_CONFIG="${SMBDIRECT_CONFIG-}"
SENV_SHARE_NAME=share
SENV_USER_NAME=sdtest

# senv_prog NAME — prints the path of program NAME: SENV_BUILD/NAME, or under
# SENV_INSTALLED=1 the one PATH finds (NAME alone when there is none, which then fails
# the callers' -x checks with its name).
senv_prog() {
    if [ "${SENV_INSTALLED:-0}" = 1 ]; then command -v "$1" || echo "$1"
    else echo "$SENV_BUILD/$1"; fi
}
SENV_WRAPPER_BIN=$(senv_prog smbdirect)
SENV_RELAY_BIN=$(senv_prog smbdirect-relay)
SENV_PROBE_BIN=$(senv_prog smbdirect-probe)

# Every function is safe under "set -e" (bats runs tests that way).

# senv_own_net "$0" "$@" — a script's first step: runs the script again, once, in a
# network namespace of its own (scripts/lib/own-net), so that its smbd on ADDR:445 never
# meets a Samba the machine runs; run-tests starts the bats tiers there already.
senv_own_net() { [ "${OWN_NET:-0}" = 1 ] || exec "$SENV_LIB/own-net" "$@"; }

# Prints a message to stderr, prefixed so it is clear which layer speaks.
senv_say() { echo "samba-env: $*" >&2; }

# senv_create ADDR — makes the temp tree for one environment on loopback ADDR.
senv_create() {
    SENV_ADDR=$1
    SENV_DIR=$(mktemp -d "${TMPDIR:-/tmp}/smbdirect-env.XXXXXX") || return 1
    # smbd serves guests as "nobody": the share path must be reachable by it.
    chmod 0755 "$SENV_DIR"
    mkdir -p "$SENV_DIR"/{private,lock,state,cache,pid,ncalrpc,binddns,log,share,work}
    chmod 0700 "$SENV_DIR/private"
    chmod 0777 "$SENV_DIR/share"
    SENV_SHARE=$SENV_DIR/share
    SENV_CONF=$SENV_DIR/smb.conf
    SENV_SMBD_LOG=$SENV_DIR/log/smbd.log
    SENV_RELAY_LOG=$SENV_DIR/log/relay.log
    SENV_SMBD_PID='' SENV_RELAY_PID='' SENV_USER='' SENV_PASS=''
}

# senv_write_conf [signing=default|mandatory|disabled] [min_protocol=P] [max_protocol=P]
#                 [guest=yes|no]
# Writes $SENV_CONF: standalone server bound to $SENV_ADDR only, every state dir in
# $SENV_DIR, one share [share] on $SENV_SHARE, passwords in a temp tdbsam.
senv_write_conf() {
    local signing=default min_protocol=SMB2_02 max_protocol=SMB3 guest=yes kv
    for kv in "$@"; do
        case "$kv" in
            signing=*) signing=${kv#*=} ;;
            min_protocol=*) min_protocol=${kv#*=} ;;
            max_protocol=*) max_protocol=${kv#*=} ;;
            guest=*) guest=${kv#*=} ;;
            *) senv_say "unknown smbd option: $kv"; return 2 ;;
        esac
    done
    cat >"$SENV_CONF" <<EOF
[global]
    server role = standalone server
    netbios name = SDTEST$(echo "$SENV_ADDR" | tr -d .)
    workgroup = WORKGROUP
    interfaces = $SENV_ADDR/8
    bind interfaces only = yes
    smb ports = $SENV_SMB_PORT
    disable netbios = yes
    private dir = $SENV_DIR/private
    lock directory = $SENV_DIR/lock
    state directory = $SENV_DIR/state
    cache directory = $SENV_DIR/cache
    pid directory = $SENV_DIR/pid
    ncalrpc dir = $SENV_DIR/ncalrpc
    binddns dir = $SENV_DIR/binddns
    usershare path =
    passdb backend = tdbsam:$SENV_DIR/private/passdb.tdb
    log file = $SENV_SMBD_LOG
    max log size = 0
    log level = $SENV_SMBD_LOGLEVEL
    load printers = no
    printing = bsd
    printcap name = /dev/null
    disable spoolss = yes
    map to guest = Bad User
    guest account = nobody
    server signing = $signing
    server min protocol = $min_protocol
    server max protocol = $max_protocol

[$SENV_SHARE_NAME]
    path = $SENV_SHARE
    read only = no
    guest ok = $guest
EOF
}

# senv_add_user — a real Unix account (created once with useradd if missing) with a
# random password in this environment's tdbsam. Sets SENV_USER and SENV_PASS.
senv_add_user() {
    SENV_USER=$SENV_USER_NAME
    SENV_PASS=$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
    if ! id -u "$SENV_USER" >/dev/null 2>&1; then
        useradd --no-create-home --shell /usr/sbin/nologin "$SENV_USER" || return 1
    fi
    printf '%s\n%s\n' "$SENV_PASS" "$SENV_PASS" |
        smbpasswd -c "$SENV_CONF" -a -s "$SENV_USER" >/dev/null || return 1
}

# senv_listening ADDR PORT — true when something listens on ADDR:PORT, in SENV_NETNS when
# set (checked with ss, so no connection is made to the server being waited for).
senv_listening() {
    local net=()
    [ -z "${SENV_NETNS:-}" ] || net=(-N "$SENV_NETNS")
    [ -n "$(ss "${net[@]}" -Hltn "src $1:$2" 2>/dev/null)" ]
}

# senv_exec_in_net COMMAND... — for a background job: replaces it with COMMAND, run in
# SENV_NETNS when set, so that $! is COMMAND's pid.
senv_exec_in_net() {
    [ -z "${SENV_NETNS:-}" ] || exec ip netns exec "$SENV_NETNS" "$@"
    exec "$@"
}

# senv_wait_listen ADDR PORT SECONDS PID — waits until something listens on ADDR:PORT;
# gives up early when process PID (the server being started) has exited.
senv_wait_listen() {
    local deadline=$((SECONDS + $3))
    while [ "$SECONDS" -lt "$deadline" ]; do
        senv_listening "$1" "$2" && return 0
        if ! kill -0 "$4" 2>/dev/null; then
            senv_say "process $4 exited before listening on $1:$2"
            return 1
        fi
        sleep 0.05
    done
    senv_say "nothing listens on $1:$2 after $3 s"
    return 1
}

# senv_await_start NAME PID PORT SECONDS LOG [HOST] — records the just-started server PID
# in $SENV_DIR/NAME.pid (for senv_stop_pidfile) and waits until it listens on HOST:PORT
# (default ADDR:PORT);
# on failure prints the tail of its LOG.
senv_await_start() {
    echo "$2" >"$SENV_DIR/$1.pid"
    if ! senv_wait_listen "${6:-$SENV_ADDR}" "$3" "$4" "$2"; then
        senv_say "$1 did not start; log tail:"; tail -n 20 "$5" >&2
        return 1
    fi
}

# senv_smbd_start [senv_write_conf options...] — writes the config and starts smbd in
# the foreground mode, backgrounded, in its own process group (smbd -F calls setsid).
senv_smbd_start() {
    senv_write_conf "$@" || return 1
    if senv_listening "$SENV_ADDR" "$SENV_SMB_PORT"; then
        senv_say "$SENV_ADDR:$SENV_SMB_PORT is already in use (a system smbd? stop it)"
        return 1
    fi
    senv_exec_in_net smbd --foreground --configfile="$SENV_CONF" </dev/null >>"$SENV_SMBD_LOG" \
        2>&1 3>&- &
    SENV_SMBD_PID=$!
    senv_await_start smbd "$SENV_SMBD_PID" "$SENV_SMB_PORT" 20 "$SENV_SMBD_LOG"
}

# senv_smbd_stop [SIGNAL] — signals smbd's whole process group (parent, per-connection
# children, helpers it spawned) and waits for the parent to go.
senv_smbd_stop() { senv_stop_pidfile smbd "${1:-TERM}"; SENV_SMBD_PID=''; }

# senv_relay_start [extra relay args...] — smbdirect-relay on ADDR:RELAY_PORT bridging
# to ADDR:SMB_PORT, stderr to $SENV_RELAY_LOG; waits until it listens. The relay reads
# the variable of every setting it takes: the SMBDIRECT_ variables a caller exports for
# the shim (SMBDIRECT_CREDITS, SMBDIRECT_KEEPALIVE...) are kept from it, so that only
# its flags, SENV_RELAY_ENV and the configuration file set it.
senv_relay_start() {
    local relay=$SENV_RELAY_BIN host=${SENV_RELAY_HOST:-$SENV_ADDR} var unset=()
    if [ ! -x "$relay" ]; then senv_say "$relay is missing (run make)"; return 1; fi
    for var in $(compgen -e); do
        if [[ $var == SMBDIRECT_* && $var != SMBDIRECT_CONFIG ]]; then unset+=(-u "$var"); fi
    done
    # its status socket in the test's tree; no drain on SIGTERM (senv_relay_stop ends it
    # at once, as a test's teardown wants); the caller's flags come after and win
    local asan=${ASAN_OPTIONS-}
    [ "${SENV_RELAY_LEAKS:-0}" = 1 ] && asan="${asan:+$asan:}detect_leaks=1"
    # shellcheck disable=SC2086 # SENV_RELAY_ENV: words
    ASAN_OPTIONS=$asan senv_exec_in_net setsid env "${unset[@]}" ${SENV_RELAY_ENV-} \
        "$relay" --listen "$host:$SENV_RELAY_PORT" \
        --backend "$SENV_ADDR:$SENV_SMB_PORT" --transport "$SENV_RELAY_TRANSPORT" \
        --status-socket "$SENV_DIR/relay.sock" --drain-time 0 "$@" \
        </dev/null >>"$SENV_RELAY_LOG" 2>&1 3>&- &
    SENV_RELAY_PID=$!
    senv_await_start relay "$SENV_RELAY_PID" "$SENV_RELAY_PORT" 10 "$SENV_RELAY_LOG" \
        "$host"
}

# senv_relay_stop [SIGNAL] — fails when SENV_RELAY_LEAKS=1 and the relay's exit reported a
# leak (the report goes to stderr).
senv_relay_stop() {
    senv_stop_pidfile relay "${1:-TERM}"
    SENV_RELAY_PID=''
    if [ "${SENV_RELAY_LEAKS:-0}" = 1 ] && [ -n "${SENV_RELAY_LOG:-}" ] &&
        grep -q 'LeakSanitizer' "$SENV_RELAY_LOG" 2>/dev/null; then
        senv_say "the relay leaked memory at exit ($SENV_RELAY_LOG):"
        sed -n '/LeakSanitizer/,/^SUMMARY/p' "$SENV_RELAY_LOG" >&2
        return 1
    fi
}

# senv_stop_pidfile NAME SIGNAL — stops the process group recorded in $SENV_DIR/NAME.pid
# (pid files let a bats test stop what setup_file started, and the reverse).
senv_stop_pidfile() {
    local f=${SENV_DIR:-/nonexistent}/$1.pid
    [ -s "$f" ] || return 0
    senv_kill_group "$(cat "$f")" "$2"
    rm -f "$f"
}

# senv_kill_group PID SIGNAL — signals the process group led by PID (which this library
# started in its own session), escalates to KILL after 5 s, and reaps it.
senv_kill_group() {
    local pid=$1 sig=$2 i
    kill -s "$sig" -- "-$pid" 2>/dev/null || kill -s "$sig" "$pid" 2>/dev/null || true
    for ((i = 0; i < 100; i++)); do
        senv_group_alive "$pid" || break
        sleep 0.05
    done
    kill -s KILL -- "-$pid" 2>/dev/null || kill -s KILL "$pid" 2>/dev/null || true
    { wait "$pid"; } 2>/dev/null || true
}

# senv_group_alive PGID — true while a member of process group PGID has not exited
# (zombies waiting for their reaper do not count).
senv_group_alive() {
    ps -e -o pgid=,stat= | awk -v g="$1" '$1 == g && $2 !~ /^Z/ { alive = 1 } END { exit !alive }'
}

# senv_destroy — stops the relay and smbd and removes the temp tree (unless SENV_KEEP=1);
# fails when senv_relay_stop does.
senv_destroy() {
    local rc=0
    senv_relay_stop TERM || rc=1
    senv_smbd_stop TERM
    if [ -n "${SENV_DIR:-}" ] && [ -d "$SENV_DIR" ]; then
        if [ "${SENV_KEEP:-0}" = 1 ]; then senv_say "kept $SENV_DIR"
        else rm -rf "$SENV_DIR"; fi
    fi
    SENV_DIR=''
    return "$rc"
}

# senv_smbclient_via VIA [smbclient args...] — runs smbclient against
# //ADDR/share, non-interactive, max protocol SMB3, as guest unless the args carry -U.
# VIA is "shim" (through the smbdirect wrapper, i.e. LD_PRELOAD of the shim) or "tcp".
senv_smbclient_via() {
    local via=$1; shift
    local auth=(-N) a
    for a in "$@"; do case "$a" in -U*|--user*) auth=() ;; esac; done
    local cmd=(smbclient "//$SENV_ADDR/$SENV_SHARE_NAME" -m SMB3 "${auth[@]}" "$@")
    case "$via" in
        shim) SMBDIRECT_TRANSPORT=${SMBDIRECT_TRANSPORT:-soft} "$SENV_WRAPPER_BIN" "${cmd[@]}" ;;
        tcp)  "${cmd[@]}" ;;
        *) senv_say "unknown path: $via"; return 2 ;;
    esac
}

# senv_smbclient [smbclient args...] — smbclient through the shim.
senv_smbclient() { senv_smbclient_via shim "$@"; }

# senv_user_auth — the -U argument for the environment's real user.
senv_user_auth() { printf -- '--user=%s%%%s' "$SENV_USER" "$SENV_PASS"; }

# senv_random_file PATH BYTES — a file of BYTES random bytes.
senv_random_file() {
    head -c "$2" /dev/urandom >"$1"
}

# senv_small_tree DIR N — N files of 1-8 KiB of random bytes under DIR, in folders of
# 100 (d0, d1, ...), like a source tree.
senv_small_tree() {
    local i d
    mkdir -p "$1"
    for ((i = 0; i < $2; i++)); do
        d=$1/d$((i / 100))
        [ -d "$d" ] || mkdir "$d"
        head -c $((1024 + RANDOM % 7169)) /dev/urandom >"$d/f$i"
    done
}

# senv_tree_cmd put|get LOCAL REMOTE — the smbclient commands that copy the tree of
# directory LOCAL to the share's new directory REMOTE (put, mput), or the share's REMOTE into
# directory LOCAL (get, mget), recursively and without prompting.
senv_tree_cmd() {
    if [ "$1" = put ]; then
        echo "prompt off; recurse on; mkdir $3; cd $3; lcd $2; mput *"
    else
        echo "prompt off; recurse on; cd $3; lcd $2; mget *"
    fi
}

# senv_check_counts NAME... — each named variable, when set, is a whole number from 1; else
# prints which one is not and returns 1.
senv_check_counts() {
    local knob
    for knob in "$@"; do
        case ${!knob:-1} in
            '' | *[!0-9]* | 0*) echo "$knob='${!knob}' is invalid: use a whole number from 1"; return 1 ;;
        esac
    done
}

# senv_bench_tmpdir MIB — for a benchmark: exports TMPDIR, where senv_create makes the
# environment (smbd's share, the bench's own files), as BENCH_TMPDIR when that is set, else
# /dev/shm when it is a tmpfs with MIB MiB free, else leaves it; sets SENV_FILES_ON to the
# file system type and directory chosen, for the bench's header. In RAM, smbd creating and
# writing a file costs the same from one run to the next: on a virtual disk (ext4 mounted
# with discard) ten runs in a row of plain TCP's mput of 1000 files of 1-8 KiB took 1.5 to
# 2.3 s, on tmpfs 0.76 to 0.90 s (2026-11-29, ad hoc), and the transport's share drowned.
# Returns 1, saying why on stderr, when BENCH_TMPDIR is not a writable directory.
senv_bench_tmpdir() {
    local dir=${BENCH_TMPDIR:-} free_kib
    if [ -n "$dir" ] && ! { [ -d "$dir" ] && [ -w "$dir" ]; }; then
        echo "BENCH_TMPDIR='$dir' is invalid: use a writable directory" >&2; return 1
    fi
    if [ -z "$dir" ] && [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ]; then
        free_kib=$(df -Pk /dev/shm | awk 'NR == 2 { print $4 }')
        [ "$free_kib" -ge $(($1 * 1024)) ] && dir=/dev/shm
    fi
    [ -n "$dir" ] && export TMPDIR=$dir
    dir=${TMPDIR:-/tmp}
    SENV_FILES_ON="$(stat -f -c %T "$dir") $dir"
}

# senv_sha256 PATH — prints the file's sha256 hex digest.
senv_sha256() { sha256sum "$1" | cut -d' ' -f1; }

# senv_now — seconds since the epoch with nanoseconds, for throughput measurements.
senv_now() { date +%s.%N; }

# senv_busy_ticks — sets SENV_TICKS to the machine's busy clock ticks so far, without a
# fork: user nice system irq softirq of /proc/stat's cpu line (idle, iowait and steal left
# out: steal is time another guest ran).
senv_busy_ticks() {
    local user nice system irq softirq
    read -r _ user nice system _ _ irq softirq _ </proc/stat   # cpu, idle, iowait, steal...
    SENV_TICKS=$((user + nice + system + irq + softirq))
}

# senv_rate BYTES START END — prints MiB/s.
senv_rate() { awk -v b="$1" -v s="$2" -v e="$3" 'BEGIN { printf "%.1f", b / 1048576 / (e - s) }'; }

# senv_paired_ratio "A1 A2 ..." "B1 B2 ..." — prints the median of Ai / Bi as "0.00x": one ratio
# per benchmark round whose paths ran back to back, so the machine's drift over the rounds
# cancels.
senv_paired_ratio() {
    awk -v a="$1" -v b="$2" 'BEGIN {
        n = split(a, x, " "); split(b, y, " ")
        for (i = 1; i <= n; i++) r[i] = x[i] / y[i]
        for (i = 2; i <= n; i++) for (j = i; j > 1 && r[j - 1] > r[j]; j--) { t = r[j]; r[j] = r[j - 1]; r[j - 1] = t }
        printf "%.2fx", n % 2 ? r[(n + 1) / 2] : (r[n / 2] + r[n / 2 + 1]) / 2 }'
}
