# SPDX-License-Identifier: BSD-3-Clause
# scripts/vm/cifs-checks.bash — the kernel SMB Direct client (mount -t cifs -o rdma, this tier's
# cifs.ko) as a test peer, for tests/vm/cifs_relay.bats and the kernel-to-kernel control in
# tests/vm/ksmbd_siw.bats. Sourced after guest-lib.bash, inside bats tests.
# shellcheck shell=bash disable=SC2154  # output and status are set by bats' run
#
# I/O modes:
#   channel  cifs' defaults: 1 MiB reads/writes through the RDMA read/write channel (from 4 KiB on)
#   inline   4 KiB reads/writes carried inside SMB Direct messages (threshold raised to 8 KiB).
#            Larger inline writes are corrupted by this kernel's cifs from the second 4 KiB page
#            on, against ksmbd as well (seen with rsize=wsize=64 KiB), so inline stays at one page.
#   tcp      no SMB Direct: the same client over TCP port 445 (scripts/vm/bench's yardstick)

# A mount whose copy failed is left mounted ("wedged", listed in $CIFS_WEDGED), never unmounted:
# once, on 6.1, the forced unmount after a stalled copy to ksmbd on siw was killed hit a BUG in
# cifs.ko (a dentry still in use at unmount) and the guest panicked, which lost the rest of the
# suite. The guest powers off without unmounting (guest-run), and each later test mounts on a
# directory no wedged mount holds.
CIFS_WEDGED=/mnt/cifs-wedged
CIFS_MNT=/mnt/cifs-rdma
if [ -s "$CIFS_WEDGED" ]; then CIFS_MNT+=-$(wc -l <"$CIFS_WEDGED"); fi

# cifs_mount ADDR USER PASS IO [sign] — mounts //ADDR/share at $CIFS_MNT over SMB Direct (port 5445
# first on iWARP) and checks /proc/fs/cifs/DebugData shows it (IO tcp: over TCP port 445 instead);
# "sign" requires a signed session (mount option sign).
# cache=none sends every read to the server; "soft" makes a dead connection fail calls instead of
# retrying them forever. A mount still running after 55 s has the relay's log and the kernel's
# copied to the results share (mount-stuck-relay.log, mount-stuck-dmesg.log): once, with 6.12, an
# SMB Direct negotiation against the relay never ended, and after the timeout's signal
# ("smbd_negotiate rc=-4") mount.cifs hung in the kernel until the VM was killed, logs and all.
cifs_mount() {
    local opts="rdma,vers=3.1.1,username=$2,password=$3,cache=none,soft" watcher
    modprobe cifs && mkdir -p "$CIFS_MNT" || return 1
    [ "${5:-}" != sign ] || opts+=",sign"
    if [ "$4" = tcp ]; then
        opts=${opts#rdma,}
    elif [ "$4" = inline ]; then
        opts+=",rsize=4096,wsize=4096"
        echo 8192 >/proc/fs/cifs/rdma_readwrite_threshold
    else
        echo 4096 >/proc/fs/cifs/rdma_readwrite_threshold
    fi
    (
        sleep 55
        [ ! -f "${SENV_RELAY_LOG:-}" ] || cp "$SENV_RELAY_LOG" /vm/mount-stuck-relay.log
        dmesg >/vm/mount-stuck-dmesg.log
    ) </dev/null >/dev/null 2>&1 3>&- &
    watcher=$!
    run timeout 60 mount -t cifs "//$1/share" "$CIFS_MNT" -o "$opts"
    kill "$watcher" 2>/dev/null || true
    wait "$watcher" 2>/dev/null || true
    echo "mount: $output"
    [ "$status" -eq 0 ]
    [ "$4" != tcp ] || return 0
    run cat /proc/fs/cifs/DebugData
    [[ "$output" == *"SMBDirect (in hex) protocol version: 100"* ]] || { echo "$output"; return 1; }
}

# cifs_umount — unmounts $CIFS_MNT, forcing it when the connection is dead; a wedged mount stays.
cifs_umount() {
    if grep -qxF "$CIFS_MNT" "$CIFS_WEDGED" 2>/dev/null; then
        echo "cifs_umount: $CIFS_MNT stays mounted (its copy failed; see $CIFS_WEDGED)" >&2
        return 0
    fi
    umount -f "$CIFS_MNT" 2>/dev/null || umount -l "$CIFS_MNT" 2>/dev/null || true
}

# cifs_copy_both_ways SERVER_DIR LABEL [MIB] — through the mount, MIB (default 8) MiB from the
# server (seeded in SERVER_DIR) and as much to it; both keep their sha256; notes the rates.
# Copies are bounded (60 s); after a failed one the mount is wedged (see CIFS_WEDGED).
cifs_copy_both_ways() {
    local dir=$1 mib=${3:-8} d t0 t1 t2 rc=0
    d=$(mktemp -d)
    senv_random_file "$dir/from-server.bin" $((mib * 1024 * 1024)) && chmod 0666 "$dir/from-server.bin"
    senv_random_file "$d/to-server.bin" $((mib * 1024 * 1024))
    t0=$(senv_now)
    timeout 60 cp "$CIFS_MNT/from-server.bin" "$d/from-server.bin" || rc=$?
    t1=$(senv_now)
    [ "$rc" -ne 0 ] || timeout 60 cp "$d/to-server.bin" "$CIFS_MNT/to-server.bin" || rc=$?
    t2=$(senv_now)
    if [ "$rc" -ne 0 ]; then
        echo "$CIFS_MNT" >>"$CIFS_WEDGED"
        echo "copy failed (exit $rc; 124: timed out); $CIFS_MNT is left mounted" >&2
        return 1
    fi
    vm_assert_same_file "$d/from-server.bin" "$dir/from-server.bin"
    vm_assert_same_file "$d/to-server.bin" "$dir/to-server.bin"
    vm_note "$2: read $mib MiB $(senv_rate $((mib << 20)) "$t0" "$t1") MiB/s, write $mib MiB $(senv_rate $((mib << 20)) "$t1" "$t2") MiB/s"
    rm -rf "$d" "$dir/from-server.bin" "$dir/to-server.bin"
}
