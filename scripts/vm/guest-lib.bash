# SPDX-License-Identifier: BSD-3-Clause
# scripts/vm/guest-lib.bash — helpers for tests/vm/*.bats, which run inside the test VM
# (scripts/vm/boot): kernel RDMA devices on dummy interfaces, ksmbd with ksmbd-tools 3.5.2, and
# small probes of the kernel side. Functions and variables only (prefix vm_ / VM_); Samba, relay,
# file and rate helpers come from scripts/lib/samba-env.sh, sourced here.
#
# Addresses: RFC 5737 documentation addresses on dummy interfaces that exist only inside the VM
# (which has no network card): siw on vmsiw0 = 192.0.2.1, rxe on vmrxe0 = 192.0.2.2. siw and rxe
# on lo do not work (rdma_resolve_addr fails), a dummy interface with an address does.

# shellcheck source=scripts/lib/samba-env.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/samba-env.sh"

VM_SIW_IP=192.0.2.1
VM_RXE_IP=192.0.2.2
VM_BUILD=${VM_REPO:-$SENV_ROOT}/build
VM_KSMBD_TOOLS=${VM_CACHE:-$SENV_ROOT/build/vm}/ksmbd-tools/usr/sbin
VM_KSMBD_DIR=/tmp/ksmbd
VM_KSMBD_USER=vmuser
VM_KSMBD_PASS=vmsecret

# vm_require_guest — skips unless running inside the test VM (guest-run sets VM_RESULTS=/vm).
vm_require_guest() {
    [ "${VM_RESULTS:-}" = /vm ] && [ -d /sys/module/9p ] || skip "runs only inside the test VM (make test-vm)"
}

# Clients run as people run them: an unprivileged user, under the kernel's default
# RLIMIT_MEMLOCK (8 MiB, as on Debian 12), which kernel siw and rxe charge every registered byte
# against. Only tests about a raised limit raise it (vm_as_client's VM_CLIENT_MEMLOCK).
VM_CLIENT_USER=vmclient

# vm_client_tmpdir — a fresh temporary folder the client user can write (prints its path).
vm_client_tmpdir() {
    local d
    d=$(mktemp -d) && chmod 1777 "$d" && echo "$d"
}

# vm_as_client COMMAND [ARG]... — runs COMMAND as $VM_CLIENT_USER (created on first use, no
# privileges, no capabilities), with the environment kept and HOME its own. With MEMLOCK=KiB
# With VM_CLIENT_MEMLOCK=KiB (or "unlimited") in the environment, the soft RLIMIT_MEMLOCK is set
# to that first (root raises the hard limit for it: the test is then about a raised limit).
vm_as_client() {
    local home=/tmp/$VM_CLIENT_USER
    id -u "$VM_CLIENT_USER" >/dev/null 2>&1 ||
        useradd -M -N -d "$home" -s /bin/bash "$VM_CLIENT_USER" || return 1
    mkdir -p "$home" && chown "$VM_CLIENT_USER" "$home"
    (
        if [ -n "${VM_CLIENT_MEMLOCK:-}" ]; then
            [ "$VM_CLIENT_MEMLOCK" != unlimited ] || ulimit -H -l unlimited
            ulimit -S -l "$VM_CLIENT_MEMLOCK" || exit 126
        fi
        HOME=$home exec setpriv --reuid="$VM_CLIENT_USER" --regid="$(id -g "$VM_CLIENT_USER")" \
            --clear-groups --inh-caps=-all --bounding-set=-all -- "$@"
    )
}

# vm_require_bin PATH — skips when a project binary was not built.
vm_require_bin() { [ -x "$1" ] || skip "$1 is not built"; }

# vm_rdma_add_both — in the guest only: brings up both siw and rxe (suites that use both).
vm_rdma_add_both() {
    [ "${VM_RESULTS:-}" = /vm ] || return 0
    vm_rdma_add siw >/dev/null && vm_rdma_add rxe >/dev/null
}

# vm_rdma_add siw|rxe — the device (siw0 or rxe0) on its own dummy interface; prints its address.
vm_rdma_add() {
    local kind=$1 ip dev
    case "$kind" in
        siw) ip=$VM_SIW_IP dev=vmsiw0 ;;
        rxe) ip=$VM_RXE_IP dev=vmrxe0 ;;
        *) echo "vm_rdma_add: unknown device kind $kind" >&2; return 2 ;;
    esac
    if ! rdma link show "${kind}0/1" >/dev/null 2>&1; then
        modprobe -a ib_uverbs rdma_ucm dummy "$([ "$kind" = siw ] && echo siw || echo rdma_rxe)" &&
        ip link add "$dev" type dummy && ip addr add "$ip/32" dev "$dev" && ip link set "$dev" up &&
        rdma link add "${kind}0" type "$kind" netdev "$dev" || return 1
    fi
    echo "$ip"
}

# vm_rdma_readd siw|rxe — adds the device again after an `rdma link delete`: the kernel takes
# the name back only once every user has let go of the device (ksmbd, the client), so this
# retries for 15 s at most.
vm_rdma_readd() {
    local dev=vmsiw0 deadline=$((SECONDS + 15))
    [ "$1" = siw ] || dev=vmrxe0
    until rdma link add "${1}0" type "$1" netdev "$dev" 2>/dev/null; do
        [ "$SECONDS" -lt "$deadline" ] || { echo "${1}0 could not be added again within 15 s" >&2; return 1; }
        sleep 0.2
    done
}

# vm_ksmbd_start [auto|mandatory] — ksmbd (this tier's build: SMB Direct, opinfo_put guard) with
# ksmbd.mountd from ksmbd-tools 3.5.2, share [share] on $VM_KSMBD_DIR/share, user $VM_KSMBD_USER,
# multichannel on (channels bound to a session: the probe's Smb2Multichannel cases), "server
# signing" as given (auto by default; mandatory: every session is signed, whatever the client
# asks). Create the RDMA devices first: ksmbd picks its SMB Direct port when it starts (5445 once
# an iWARP device exists, else 445). Waits until its TCP and RDMA listeners are up.
vm_ksmbd_start() {
    local conf=$VM_KSMBD_DIR/ksmbd.conf db=$VM_KSMBD_DIR/ksmbdpwd.db signing=${1:-auto}
    # ksmbd opens files with the credentials of the user's Unix account; vmuser has none here.
    mkdir -p "$VM_KSMBD_DIR/share" && chmod 0777 "$VM_KSMBD_DIR/share" && modprobe ksmbd || return 1
    cat >"$conf" <<EOF
[global]
	netbios name = VMKSMBD
	server signing = $signing
	server multi channel support = yes
[share]
	path = $VM_KSMBD_DIR/share
	read only = no
EOF
    "$VM_KSMBD_TOOLS/ksmbd.adduser" -C "$conf" -P "$db" -a -p "$VM_KSMBD_PASS" "$VM_KSMBD_USER" \
        >"$VM_KSMBD_DIR/adduser.log" 2>&1 || { cat "$VM_KSMBD_DIR/adduser.log" >&2; return 1; }
    vm_detached "$VM_KSMBD_TOOLS/ksmbd.mountd" -C "$conf" -P "$db" >"$VM_KSMBD_DIR/mountd.log" 2>&1 ||
        { cat "$VM_KSMBD_DIR/mountd.log" >&2; return 1; }
    vm_wait_port 445 || return 1
    if rdma link show siw0/1 >/dev/null 2>&1; then vm_wait_rdma_listen 5445; else vm_wait_rdma_listen 445; fi
}

# vm_detached COMMAND [ARG]... — runs COMMAND (a daemon) with every file descriptor above 2
# closed: bats waits for whoever holds its fds 3 and up, so a daemon that kept one would hang it.
vm_detached() {
    (
        local fd
        for fd in /proc/"$BASHPID"/fd/*; do
            fd=${fd##*/}
            [ "$fd" -le 2 ] || eval "exec $fd>&-"
        done
        exec "$@"
    )
}

# vm_wait_port PORT — waits (10 s at most) for a TCP listener on PORT, any address.
vm_wait_port() {
    local deadline=$((SECONDS + 10))
    until [ -n "$(ss -Hltn "sport = :$1")" ]; do
        [ "$SECONDS" -lt "$deadline" ] || { echo "nothing listens on TCP port $1" >&2; return 1; }
        sleep 0.1
    done
}

# vm_wait_rdma_listen PORT — waits (10 s at most) for an rdma_cm listener on PORT, any device.
vm_wait_rdma_listen() {
    local deadline=$((SECONDS + 10))
    until rdma resource show cm_id 2>/dev/null | grep -q "state LISTEN .*src-addr [^ ]*:$1 "; do
        [ "$SECONDS" -lt "$deadline" ] || { echo "no rdma_cm listener on port $1" >&2; return 1; }
        sleep 0.1
    done
}

# vm_smbclient ADDR VIA [smbclient args...] — smbclient against //ADDR/share, 120 s at most, as
# the unprivileged client user (vm_as_client). VIA: tcp (no shim), or soft|rdma: through the
# shim with that SMBDIRECT_TRANSPORT and no TCP fallback, so a run that did not use SMB Direct
# fails. With VM_SMBCLIENT_WRAP (words, split on blanks) in the environment, the client runs under
# that command, e.g. strace.
vm_smbclient() {
    local addr=$1 via=$2 wrap; shift 2
    local cmd=(smbclient "//$addr/share" -m SMB3 "$@")
    read -ra wrap <<<"${VM_SMBCLIENT_WRAP:-}"
    case "$via" in
        tcp) vm_as_client timeout 120 "${wrap[@]}" "${cmd[@]}" ;;
        soft|rdma) SMBDIRECT_TRANSPORT=$via SMBDIRECT_FALLBACK=none SMBDIRECT_LOG=${SMBDIRECT_LOG:-info} \
                   vm_as_client timeout 120 "${wrap[@]}" "$VM_BUILD/smbdirect" "${cmd[@]}" ;;
        *) echo "vm_smbclient: unknown path $via" >&2; return 2 ;;
    esac
}

# vm_smbclient_ksmbd ADDR VIA [smbclient args...] — vm_smbclient as ksmbd's user.
vm_smbclient_ksmbd() { vm_smbclient "$1" "$2" -U "$VM_KSMBD_USER%$VM_KSMBD_PASS" "${@:3}"; }

# vm_samba_start ADDR — Samba's smbd on ADDR:445 (TCP) through scripts/lib/samba-env.sh, with a
# real user; exports SENV_* so the tests of a bats file see what setup_file started.
vm_samba_start() {
    senv_create "$1" && senv_smbd_start && senv_add_user || return 1
    export SENV_ADDR SENV_DIR SENV_SHARE SENV_CONF SENV_SMBD_LOG SENV_RELAY_LOG SENV_USER SENV_PASS
}

# vm_samba_stop — stops the relay and smbd, removes their files.
vm_samba_stop() { [ -z "${SENV_DIR:-}" ] || senv_destroy; }

# vm_smbclient_samba VIA [smbclient args...] — vm_smbclient to the Samba share as guest.
vm_smbclient_samba() { vm_smbclient "$SENV_ADDR" "$1" -N "${@:2}"; }

# vm_mpa_reply ADDR PORT — sends an MPA rev 2 request (RFC 5044 7.1, CRC + enhanced RFC 6581
# IRD/ORD words) over plain TCP and prints the reply's key, flags and revision, e.g.
# "MPA ID Rep Frame flags=0x50 rev=2". Proves a kernel siw listener answers MPA.
vm_mpa_reply() {
    local reply=/tmp/mpa-reply.$$
    (exec 3<>"/dev/tcp/$1/$2" &&
        printf 'MPA ID Req Frame\x50\x02\x00\x04\x00\x10\x00\x10' >&3 &&
        timeout 5 head -c 20 <&3 >"$reply") || { rm -f "$reply"; return 1; }
    [ "$(stat -c %s "$reply")" -eq 20 ] || { echo "short MPA reply" >&2; rm -f "$reply"; return 1; }
    local flags rev
    read -r flags rev _ < <(tail -c 4 "$reply" | od -An -tx1)
    printf '%s flags=0x%s rev=%d\n' "$(head -c 16 "$reply")" "$flags" "0x$rev"
    rm -f "$reply"
}

# vm_assert_same_file A B — A and B have one sha256; on a mismatch prints where they differ.
vm_assert_same_file() {
    [ "$(senv_sha256 "$1")" = "$(senv_sha256 "$2")" ] && return 0
    echo "content differs: $1 ($(stat -c %s "$1") B) vs $2 ($(stat -c %s "$2") B)" >&2
    cmp "$1" "$2" >&2 || true
    echo "differing bytes: $(cmp -l "$1" "$2" 2>/dev/null | wc -l); first 64 KiB blocks that differ:" \
        "$(cmp -l "$1" "$2" 2>/dev/null | awk '{ b = int(($1 - 1) / 65536); if (!(b in s)) { s[b]; printf "%d ", b } }' | head -c 200)" >&2
    return 1
}

# vm_note TEXT — a TAP comment (bats fd 3) that scripts/vm/run-tests repeats in its summary.
vm_note() { echo "# note: $*" >&3; }
