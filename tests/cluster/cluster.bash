# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# tests/cluster/cluster.bash — a clustered Samba of CL_NODES nodes on this machine, for
# the cluster tier (cluster.bats, make test-cluster; docs/CLUSTER.md): each node is a
# network and mount namespace of its own (its /run a tmpfs, its /etc/ctdb, /var/lib/ctdb
# and /var/log/ctdb bound to a folder of the run) on a bridge br0 in the caller's network
# namespace (own-net's: the clients run there, at 10.251.0.100), running ctdbd (the
# cluster lock on the shared folder), smbd with clustering = yes serving the shared
# folder, and smbdirect-relay, which CTDB starts through the relay package's event script
# (debian/ctdb/09.smbdirect-relay.script) from the unit's ExecStart= and Environment=
# (debian/smbdirect-relay.service, its program path pointed at the build). CTDB moves two
# public addresses, CL_PUBLIC, between the nodes. Defines functions (cl_) and variables
# (CL_) only.
#
#   cl_up DIR        builds the cluster in DIR and waits until every node is OK and holds
#                    public addresses; cl_down ends every process in its namespaces
#   cl_on N CMD...   runs CMD on node N (its namespaces; N from 1)
#   cl_holder ADDR   the node holding public address ADDR now

CL_NODES=2
CL_PUBLIC=(10.251.0.11 10.251.0.12)
CL_CLIENT=10.251.0.100
CL_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
: "${CL_BUILD:=$CL_ROOT/build}"

cl_say() { echo "cluster: $*" >&2; }

# cl_on N CMD... — CMD in node N's namespaces.
cl_on() {
    local n=$1
    shift
    nsenter -t "$(cat "$CL_DIR/node$n/holder.pid")" -m -n "$@"
}

# cl_ctdb N ARGS... — the ctdb tool on node N.
cl_ctdb() { local n=$1; shift; cl_on "$n" ctdb "$@"; }

# cl_node_files N — node N's configuration: CTDB's (the package's scripts and functions,
# the nodes, the public addresses, the event scripts enabled: the package's defaults and
# the relay's), smbd's and the relay's.
cl_node_files() {
    local n=$1 d=$CL_DIR/node$1 i
    mkdir -p "$d"/{etc,lib/volatile,lib/persistent,lib/state,log,samba/private,samba/lock,samba/state,samba/cache,samba/pid,samba/ncalrpc,units}
    cp -a /etc/ctdb/. "$d/etc/"
    for ((i = 1; i <= CL_NODES; i++)); do echo "10.251.0.$i"; done >"$d/etc/nodes"
    for i in "${CL_PUBLIC[@]}"; do echo "$i/24 eth0"; done >"$d/etc/public_addresses"
    cat >"$d/etc/ctdb.conf" <<EOF
[logging]
    location = file:/var/log/ctdb/log.ctdb
    log level = NOTICE
[cluster]
    cluster lock = $CL_DIR/shared/.reclock
[legacy]
    realtime scheduling = false
EOF
    # a failed relay is seen within 3 s; connections are shared for tickles every 2 s
    printf 'MonitorInterval=3\nTickleUpdateInterval=2\n' >"$d/etc/ctdb.tunables"
    ln -sf "$CL_ROOT/debian/ctdb/09.smbdirect-relay.script" "$d/etc/events/legacy/"
    # the unit's own lines, only its program taken from the build
    sed "s|/usr/sbin/smbdirect-relay|$CL_BUILD/smbdirect-relay|" \
        "$CL_ROOT/debian/smbdirect-relay.service" >"$d/units/smbdirect-relay.service"
    cat >"$d/etc/script.options" <<EOF
CTDB_SMBDIRECT_RELAY=$CL_BUILD/smbdirect-relay
CTDB_SMBDIRECT_RELAY_UNIT_DIR=$d/units
CTDB_SMBDIRECT_RELAY_LOG=$d/relay.log
EOF
    cat >"$d/smbdirect.conf" <<EOF
[relay]
listen = 0.0.0.0:5445
backend = 127.0.0.1:445
transport = soft
serve_addresses = $(IFS=,; echo "${CL_PUBLIC[*]}")
drain_time = 1
EOF
    cat >"$d/samba/smb.conf" <<EOF
[global]
    clustering = yes
    netbios name = SDCLUSTER
    workgroup = WORKGROUP
    server role = standalone server
    disable netbios = yes
    smb ports = 445
    private dir = $d/samba/private
    lock directory = $d/samba/lock
    state directory = $d/samba/state
    cache directory = $d/samba/cache
    pid directory = $d/samba/pid
    ncalrpc dir = $d/samba/ncalrpc
    passdb backend = tdbsam:$d/samba/private/passdb.tdb
    log file = $d/samba/smbd.log
    log level = 1
    load printers = no
    printcap name = /dev/null
    disable spoolss = yes
    map to guest = Bad User
    guest account = nobody
[share]
    path = $CL_DIR/shared/share
    read only = no
    guest ok = yes
EOF
}

# cl_node_up N — node N's namespaces, its link on br0, its ctdbd.
cl_node_up() {
    local n=$1 d=$CL_DIR/node$1 pid
    cl_node_files "$n"
    unshare --net --mount --propagation private sleep infinity </dev/null >/dev/null 2>&1 3>&- &
    pid=$!
    echo "$pid" >"$d/holder.pid"
    for _ in $(seq 50); do
        [ "$(readlink "/proc/$pid/ns/net")" != "$(readlink /proc/self/ns/net)" ] && break
        sleep 0.02
    done
    ip link add "cl$n" type veth peer name eth0 netns "$pid" || return 1
    ip link set "cl$n" master br0 up
    cl_on "$n" sh -c "ip link set lo up && ip addr add 10.251.0.$n/24 dev eth0 &&
        ip link set eth0 up && mount -t tmpfs tmpfs /run && mkdir /run/ctdb &&
        mount --bind $d/etc /etc/ctdb && mount --bind $d/lib /var/lib/ctdb &&
        mount --bind $d/log /var/log/ctdb" || return 1
    cl_on "$n" env SMBDIRECT_CONFIG="$d/smbdirect.conf" ctdbd </dev/null >/dev/null 2>&1 3>&-
}

# cl_smbd_up N — smbd (clustering = yes) on node N, once its ctdbd answers.
cl_smbd_up() {
    local n=$1 d=$CL_DIR/node$1
    cl_wait 30 "ctdbd of node $n answers" cl_ctdb "$n" pnn || return 1
    cl_on "$n" smbd --foreground --no-process-group --configfile="$d/samba/smb.conf" \
        </dev/null >>"$d/samba/smbd.out" 2>&1 3>&- &
}

# cl_wait SECONDS WHAT CMD... — waits until CMD succeeds; fails naming WHAT.
cl_wait() {
    local deadline=$((SECONDS + $1)) what=$2
    shift 2
    until "$@" >/dev/null 2>&1; do
        if [ "$SECONDS" -ge "$deadline" ]; then
            cl_say "not within the time allowed: $what"
            return 1
        fi
        sleep 0.2
    done
}

# cl_all_ok — every node OK (healthy, enabled, running) and every public address held.
cl_all_ok() {
    local out
    out=$(cl_ctdb 1 status) || return 1
    [ "$(grep -c '^pnn:.* OK' <<<"$out")" -eq "$CL_NODES" ] || return 1
    ! cl_ctdb 1 ip | awk 'NR > 1 { print $2 }' | grep -qx -- -1
}

# cl_holder ADDR — the node (from 1) holding ADDR, or nothing, as node 1 sees it;
# cl_holds N ADDR: node N holds ADDR, as node N sees it.
cl_holder() { cl_holder_from 1 "$1"; }
cl_holder_from() {
    local pnn
    pnn=$(cl_ctdb "$1" -X ip | awk -F'|' -v a="$2" '$2 == a { print $3 }')
    [ -n "$pnn" ] && [ "$pnn" -ge 0 ] && echo $((pnn + 1))
}
cl_holds() { [ "$(cl_holder_from "$1" "$2")" = "$1" ]; }

cl_up() {
    CL_DIR=$1
    export CL_DIR
    mkdir -p "$CL_DIR/shared/share"
    chmod 0777 "$CL_DIR/shared/share"
    chmod 0755 "$CL_DIR"
    ip link set lo up
    ip link add br0 type bridge || return 1
    ip addr add "$CL_CLIENT/24" dev br0
    ip link set br0 up
    local n
    for ((n = 1; n <= CL_NODES; n++)); do cl_node_up "$n" || return 1; done
    for ((n = 1; n <= CL_NODES; n++)); do cl_smbd_up "$n" || return 1; done
    cl_wait 90 "every node OK and every public address held" cl_all_ok
}

# cl_pids N — the processes in node N's network namespace (its holder, ctdbd and its
# helpers, smbd, the relay), one a line.
cl_pids() {
    local ns p
    ns=$(readlink "/proc/$(cat "$CL_DIR/node$1/holder.pid" 2>/dev/null)/ns/net") || return 0
    for p in /proc/[0-9]*; do
        [ "$(readlink "$p/ns/net" 2>/dev/null)" = "$ns" ] && echo "${p#/proc/}"
    done
}

# cl_down — ends every process in the nodes' namespaces, waiting for them to go.
cl_down() {
    local n i pids
    for ((n = 1; n <= CL_NODES; n++)); do
        for i in 1 2 3 4 5; do
            mapfile -t pids < <(cl_pids "$n")
            [ ${#pids[@]} -gt 0 ] || break
            kill -KILL "${pids[@]}" 2>/dev/null
            sleep 0.2
        done
    done
    ip link del br0 2>/dev/null || true
}
