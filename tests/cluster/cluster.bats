#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# tests/cluster/cluster.bats — the cluster tier (make test-cluster, docs/CLUSTER.md): two
# CTDB nodes in namespaces of their own (cluster.bash), each with smbd (clustering = yes)
# and the relay CTDB starts through the package's event script, two public addresses,
# clients through the shim in the namespace the tier runs in. Checks that clients reach
# both addresses over SMB Direct and see one file system; that when a node is disabled
# and stopped its clients' connections end at once (releaseip: --drop-address) and the
# address is served by the other node's relay; that a node whose relay dies turns
# UNHEALTHY and gives its addresses away until the relay runs again; that CTDB knows the
# relay's TCP connections for its tickle ACKs; and that clients under load across a
# failover get an error or intact data, never wrong data.

load ../bats/helpers
source "$BATS_TEST_DIRNAME/cluster.bash"

setup_file() {
    CL_DIR=$(mktemp -d /tmp/smbdirect-cluster.XXXXXX)
    export CL_DIR
    cl_up "$CL_DIR"
}

teardown_file() {
    cl_down
    [ "${CL_KEEP:-0}" = 1 ] || rm -rf "$CL_DIR"
}

setup() {
    W=$CL_DIR/t$BATS_TEST_NUMBER
    mkdir -p "$W"
    PIDS=()
}

teardown() {
    touch "$W/go"
    wait_pids
    if [ -z "${BATS_TEST_COMPLETED:-}" ]; then
        local n
        for ((n = 1; n <= CL_NODES; n++)); do
            echo "--- node $n: ctdb log, relay log (tails)"
            tail -n 15 "$CL_DIR/node$n/log/log.ctdb" "$CL_DIR/node$n/relay.log" 2>/dev/null
        done
        cl_ctdb 1 status 2>&1
        cl_ctdb 1 ip 2>&1
    fi
    # the next test starts from every node OK and serving
    cl_wait 60 "every node OK again" cl_all_ok
}

# shim COMMAND... — COMMAND through the shim, SMB Direct mandatory, soft-iWARP.
shim() {
    SMBDIRECT_FALLBACK=none SMBDIRECT_TRANSPORT=soft SMBDIRECT_LOG=info \
        timeout 120 "$CL_BUILD/smbdirect" "$@"
}

# smbc_at ADDR [smbclient args...] — smbclient through the shim to //ADDR/share.
smbc_at() { local a=$1; shift; shim smbclient "//$a/share" -m SMB3 -N "$@"; }

# hold ADDR I — a background libsmbclient session to ADDR that writes 1 MiB to s<I>.bin,
# holds the file open and reads it back once $W/go exists. Output: $W/ADDR.out, exit
# status: $W/ADDR.rc.
hold() {
    senv_random_file "$W/up$2.bin" 1048576
    (
        rc=0
        shim "$PYTHON" "$SMBC_SESSIONS" "smb://$1/share" "$W" "$2" 1 "$W/go" \
            >"$W/$1.out" 2>&1 || rc=$?
        echo "$rc" >"$W/$1.rc"
    ) 3>&- &
    PIDS+=($!)
    cl_wait 60 "the session to $1 open" grep -qx "open 1" "$W/$1.out" || {
        cat "$W/$1.out" >&2
        return 1
    }
}

# other N — the node that is not N (two nodes).
other() { echo $((3 - $1)); }

# established N — how many connections node N's relay has established.
established() { grep -c 'relay: conn [0-9]* from .* established' "$CL_DIR/node$1/relay.log"; }

@test "cluster: smbclient and libsmbclient reach both public addresses over SMB Direct; a file written through one is read back through the other, sha256 intact" {
    local a=${CL_PUBLIC[0]} b=${CL_PUBLIC[1]} na nb
    na=$(cl_holder "$a")
    nb=$(cl_holder "$b")
    [ "$na" != "$nb" ] # CTDB spreads the two addresses over the two nodes
    senv_random_file "$W/one.bin" 16777216
    senv_random_file "$W/two.bin" 16777216
    run smbc_at "$a" -c "put $W/one.bin one.bin"
    assert_success
    [[ "$output" == *"$a:445 tunneled over SMB Direct"* ]]
    run smbc_at "$b" -c "get one.bin $W/one.back"
    assert_success
    [[ "$output" == *"$b:445 tunneled over SMB Direct"* ]]
    [ "$(sha256sum <"$W/one.back")" = "$(sha256sum <"$W/one.bin")" ]
    # libsmbclient from Python: written through b, read back through a
    run shim "$PYTHON" "$SMBC_COPY" put "$W/two.bin" "smb://$b/share/two.bin" \
        get "smb://$a/share/two.bin" "$W/two.back"
    assert_success
    [ "$(sha256sum <"$W/two.back")" = "$(sha256sum <"$W/two.bin")" ]
    # each address's connections went to the relay of the node holding it
    [ "$(grep -c "from $CL_CLIENT:[0-9]* established" "$CL_DIR/node$na/relay.log")" -ge 2 ]
    [ "$(grep -c "from $CL_CLIENT:[0-9]* established" "$CL_DIR/node$nb/relay.log")" -ge 2 ]
}

@test "cluster: CTDB holds the relay's soft-iWARP connections to a public address for its tickle ACKs" {
    local a=${CL_PUBLIC[0]} n
    n=$(cl_holder "$a")
    hold "$a" 0
    # the event script's monitor registers them (MonitorInterval 3 s); the other node
    # learns them within TickleUpdateInterval (2 s)
    cl_wait 20 "the connection to $a:5445 registered on node $n" \
        sh -c "nsenter -t $(cat "$CL_DIR/node$n/holder.pid") -m -n ctdb gettickles $a 5445 |
            grep -q 'SRC: $CL_CLIENT:'"
    cl_wait 20 "the connection to $a:5445 known on node $(other "$n")" \
        sh -c "nsenter -t $(cat "$CL_DIR/node$(other "$n")/holder.pid") -m -n ctdb gettickles $a 5445 |
            grep -q 'SRC: $CL_CLIENT:'"
    touch "$W/go"
    cl_wait 30 "the session ended" test -s "$W/$a.rc"
    [ "$(cat "$W/$a.rc")" -eq 0 ]
}

@test "cluster: failover: a node disabled then stopped ends its clients' connections at once and the other node's relay serves its address" {
    local a=${CL_PUBLIC[0]} n o t0 t1
    n=$(cl_holder "$a")
    o=$(other "$n")
    hold "$a" 1
    t0=$(date +%s.%N)
    cl_ctdb "$n" disable
    # releaseip: the relay drops the connection and the client's shim sees it end
    cl_wait 5 "the client's connection to $a ended" \
        grep -Eq 'smbd: connection (closed|terminated)' "$W/$a.out"
    grep -q "relay: dropped 1 connections made to $a (--drop-address)" "$CL_DIR/node$n/relay.log"
    touch "$W/go"
    cl_wait 5 "the session's next read failed" test -s "$W/$a.rc"
    [ "$(cat "$W/$a.rc")" -eq 1 ]
    grep -q 'smbc_sessions: session 1: ' "$W/$a.out"
    # the address moves; a new session is the other node's relay's
    cl_wait 30 "$a held by node $o" cl_holds "$o" "$a"
    local before
    before=$(established "$o")
    until smbc_at "$a" -c ls >/dev/null 2>&1; do
        awk -v t0="$t0" -v now="$(date +%s.%N)" 'BEGIN { exit !(now - t0 < 60) }' ||
            { echo "no session on $a within 60 s" >&2; return 1; }
        sleep 0.1
    done
    t1=$(date +%s.%N)
    echo "# from ctdb disable to the first SMB Direct session on $a: $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s" >&3
    [ "$(established "$o")" -gt "$before" ]
    # a 64 MiB transfer after the move, intact both ways
    senv_random_file "$W/big.bin" 67108864
    run smbc_at "$a" -c "put $W/big.bin big.bin; get big.bin $W/big.back"
    assert_success
    [ "$(sha256sum <"$W/big.back")" = "$(sha256sum <"$W/big.bin")" ]
    # then the node is stopped, and comes back
    cl_ctdb "$n" stop
    cl_wait 20 "node $n STOPPED" sh -c "nsenter -t $(cat "$CL_DIR/node$o/holder.pid") -m -n ctdb status | grep -q 'pnn:$((n - 1)) .*STOPPED'"
    run smbc_at "$a" -c "get big.bin $W/big.again"
    assert_success
    cmp "$W/big.bin" "$W/big.again"
    cl_ctdb "$n" continue
    cl_ctdb "$n" enable
}

@test "cluster: a node whose relay is killed turns UNHEALTHY and gives its addresses away; a restarted relay makes it healthy again" {
    local b=${CL_PUBLIC[1]} n pid
    n=$(cl_holder "$b")
    pid=$(cat "$CL_DIR/node$n/lib/scripts/service/smbdirect-relay/relay.pid")
    kill -KILL "$pid"
    cl_wait 15 "node $n UNHEALTHY" sh -c "nsenter -t $(cat "$CL_DIR/node$n/holder.pid") -m -n ctdb status | grep -q 'pnn:$((n - 1)) .*UNHEALTHY'"
    cl_wait 30 "no public address on node $n" sh -c "! nsenter -t $(cat "$CL_DIR/node$n/holder.pid") -m -n ctdb -X ip | awk -F'|' '\$3 == $((n - 1))' | grep -q ."
    run smbc_at "$b" -c ls
    assert_success
    # what systemctl start would do without systemd: the script's startup
    cl_on "$n" env SMBDIRECT_CONFIG="$CL_DIR/node$n/smbdirect.conf" CTDB_BASE=/etc/ctdb \
        /etc/ctdb/events/legacy/09.smbdirect-relay.script startup
    cl_wait 30 "node $n OK again" cl_all_ok
}

@test "cluster: 8 clients under load across a failover get intact data or an error they see, never wrong data" {
    local a=${CL_PUBLIC[0]} n i
    n=$(cl_holder "$a")
    for ((i = 0; i < 8; i++)); do
        senv_random_file "$W/load$i.bin" 4194304
        (
            ok=0 failed=0 wrong=0
            end=$((SECONDS + 30))
            while [ "$SECONDS" -lt "$end" ]; do
                rm -f "$W/load$i.back"
                if smbc_at "$a" -c "put $W/load$i.bin load$i.bin; get load$i.bin $W/load$i.back" \
                    >"$W/load$i.log" 2>&1; then
                    if cmp -s "$W/load$i.bin" "$W/load$i.back"; then ok=$((ok + 1)); else wrong=$((wrong + 1)); fi
                else
                    failed=$((failed + 1))
                fi
                : >"$W/load$i.round"
            done
            echo "$ok $failed $wrong" >"$W/load$i.counts"
        ) 3>&- &
        PIDS+=($!)
    done
    cl_wait 60 "every client through one round" \
        sh -c "for i in 0 1 2 3 4 5 6 7; do test -e $W/load\$i.round || exit 1; done"
    cl_ctdb "$n" disable
    cl_wait 30 "$a moved" cl_holds "$(other "$n")" "$a"
    for p in "${PIDS[@]}"; do wait "$p"; done
    PIDS=()
    local ok=0 failed=0 wrong=0 o f w
    for ((i = 0; i < 8; i++)); do
        read -r o f w <"$W/load$i.counts"
        ok=$((ok + o)) failed=$((failed + f)) wrong=$((wrong + w))
    done
    echo "# load across the failover: $ok transfers intact, $failed failed with an error, $wrong wrong" >&3
    cl_ctdb "$n" enable
    [ "$wrong" -eq 0 ]
    [ "$ok" -ge 8 ]
}
