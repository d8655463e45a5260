#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# tests/bats/smb_mount.bats — mounting a share over SMB Direct where the kernel cannot
# (Debian 12's cifs is built without CONFIG_CIFS_SMB_DIRECT): smbnetfs (FUSE over
# libsmbclient) run under the smbdirect wrapper, against a real smbd on 127.0.0.29
# behind smbdirect-relay (soft-iWARP). SMB Direct is mandatory (SMBDIRECT_FALLBACK=none)
# and libsmbclient may dial port 445 only (its private smb.conf), so no byte can take
# plain TCP; the relay's channel counters must show the file's bytes moved by RDMA Read
# (the WRITEs) and RDMA Write (the READs).
#
# What could pass wrongly, and what rules it out: a cp into the mountpoint directory
# while nothing is mounted (the mount is checked in /proc/mounts first, and the server's
# copy in the share's directory must equal the source); a read served from the page
# cache of the mount that wrote the file (it is read back through a second smbnetfs,
# mounted afresh, and the relay must have moved its bytes by RDMA Write); an smbnetfs
# that lingers or a mount left behind (both checked after fusermount -u).
#
# smbnetfs runs with -o big_writes: without it libfuse 2 hands it 4 KiB writes, each one
# SMB2 WRITE small enough to go inline, about 13 times slower. With it FUSE's requests
# are 128 KiB (libfuse 2's limit) in both directions, one at a time.

load helpers

BIG=$((32 * 1048576))

setup() {
    require_shim
    export SMBDIRECT_CONFIG=   # no /etc/smbdirect/smbdirect.conf: the defaults, for shim and relay
    [ -c /dev/fuse ] || skip "/dev/fuse is absent: no FUSE in this kernel or container"
    command -v smbnetfs >/dev/null || {
        echo "smbnetfs is missing (scripts/install-deps installs it)" >&2
        return 1
    }
    FUSERMOUNT=$(command -v fusermount || command -v fusermount3) || {
        echo "neither fusermount nor fusermount3 is installed (package fuse3)" >&2
        return 1
    }
    NETFS_PID=''
    suite_start_smbd 127.0.0.29 guest=no || return 1
    senv_add_user || return 1
    senv_relay_start || return 1
    MNT=$SENV_DIR/mnt
    MHOME=$SENV_DIR/home
    mkdir -p "$MNT" "$MHOME/.smb"
    # smbnetfs refuses an auth line in a file others can read (it then has no credentials)
    (
        umask 077
        # shellcheck disable=SC2153 # SENV_ADDR: set by suite_start_smbd (samba-env.sh)
        cat >"$MHOME/.smb/smbnetfs.conf" <<EOF
auth "$SENV_ADDR/share" "$SENV_USER" "$SENV_PASS"
smb_query_browsers "false"
use_libsecret "false"
EOF
    )
    # libsmbclient's own configuration: port 445 only (no parallel dial of 139, which the
    # shim would pass through), no NetBIOS name queries or broadcasts
    cat >"$MHOME/.smb/smb.conf" <<EOF
[global]
    client min protocol = SMB3
    smb ports = 445
    disable netbios = yes
    name resolve order = host
EOF
}

teardown() {
    if [ -n "${MNT:-}" ] && is_mounted; then
        "$FUSERMOUNT" -u -z "$MNT" 2>/dev/null || umount -l "$MNT" || true
    fi
    [ -z "${NETFS_PID:-}" ] || senv_kill_group "$NETFS_PID" TERM
    if [ -z "${BATS_TEST_COMPLETED:-}" ] && [ -n "${SENV_DIR:-}" ]; then
        for f in "$SENV_DIR"/smbnetfs*.out "$SENV_DIR"/smbnetfs*.log; do
            [ -s "$f" ] && { echo "--- $f (tail)"; tail -n 15 "$f"; }
        done
    fi
    dump_logs_on_failure
    suite_stop
}

# is_mounted — true while /proc/mounts lists an smbnetfs mount on $MNT.
is_mounted() { awk -v m="$MNT" '$2 == m && $3 == "fuse.smbnetfs" { f = 1 } END { exit !f }' /proc/mounts; }

# netfs_mount N — starts smbnetfs on $MNT under the wrapper (foreground mode, in its own
# session, stderr with the shim's info lines to smbnetfs-N.out) and waits until the
# share's directory lists (smbnetfs shows a share's directory before it connects: the
# listing is what connects). Sets NETFS_PID.
netfs_mount() {
    HOME=$MHOME SMBDIRECT_FALLBACK=none SMBDIRECT_LOG=info SMBDIRECT_TRANSPORT=soft \
        setsid "$SENV_WRAPPER_BIN" smbnetfs "$MNT" -f -o big_writes \
        -o "log_file=$SENV_DIR/smbnetfs-$1.log" </dev/null >"$SENV_DIR/smbnetfs-$1.out" 2>&1 3>&- &
    NETFS_PID=$!
    local i
    for ((i = 0; i < 200; i++)); do
        if is_mounted && ls "$MNT/$SENV_ADDR/share" >/dev/null 2>&1; then return 0; fi
        kill -0 "$NETFS_PID" 2>/dev/null || { echo "smbnetfs exited before mounting" >&2; return 1; }
        sleep 0.1
    done
    echo "the share did not list under $MNT after 20 s" >&2
    return 1
}

# netfs_unmount N — fusermount -u, then smbnetfs must exit (status 0) within 10 s and the
# mount must be gone; its stderr must carry the shim's tunnel lines and no error.
netfs_unmount() {
    "$FUSERMOUNT" -u "$MNT"
    local i rc
    for ((i = 0; i < 100; i++)); do
        kill -0 "$NETFS_PID" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$NETFS_PID" 2>/dev/null; then echo "smbnetfs still runs 10 s after the unmount" >&2; return 1; fi
    wait "$NETFS_PID" && rc=0 || rc=$?
    NETFS_PID=''
    [ "$rc" -eq 0 ] || { echo "smbnetfs exited $rc" >&2; return 1; }
    refute is_mounted
    refute mountpoint -q "$MNT"
    grep -q "info: fd [0-9]*: $SENV_ADDR:445 tunneled over SMB Direct (soft" "$SENV_DIR/smbnetfs-$1.out"
    refute grep -E 'smbdirect\[[0-9]+\] error:' "$SENV_DIR/smbnetfs-$1.out"
}

# relay_channel_bytes read|write — bytes the relay moved by RDMA Read (WRITE data) or
# RDMA Write (READ data) over all its connections, once every one has closed (the relay
# logs its channel line at the close; waits up to 10 s).
relay_channel_bytes() {
    local i
    for ((i = 0; i < 100; i++)); do
        [ "$(relay_ended_count)" -ge "$(relay_established_count)" ] && break
        sleep 0.1
    done
    sed -n "s/^relay: conn [0-9]* channel: .*rdma_$1 [0-9]* ops \([0-9]*\) bytes.*/\1/p" "$SENV_RELAY_LOG" |
        awk '{ s += $1 } END { print s + 0 }'
}

@test "mount: smbnetfs under the wrapper mounts the share over SMB Direct; 32 MiB in and out with cp, intact" {
    local src=$SENV_DIR/work/src.bin back=$SENV_DIR/work/back.bin t0 t1 share
    mkdir -p "$SENV_DIR/work"
    senv_random_file "$src" "$BIG"
    share=$MNT/$SENV_ADDR/share

    netfs_mount 1
    [ "$(relay_established_count)" -ge 1 ]
    t0=$(senv_now)
    cp "$src" "$share/big.bin"
    t1=$(senv_now)
    echo "# cp in:  32 MiB in $(elapsed "$t0" "$t1") s ($(senv_rate "$BIG" "$t0" "$t1") MiB/s)" >&3
    is_mounted
    # the server's copy, read from the share's directory, not through the mount
    assert_same_file "$src" "$SENV_SHARE/big.bin"
    netfs_unmount 1
    local wrote
    wrote=$(relay_channel_bytes read)
    echo "# the relay moved $wrote bytes of WRITE data by RDMA Read" >&3
    [ "$wrote" -ge "$BIG" ]

    # a second smbnetfs, a fresh mount: nothing of the file can be in its cache
    netfs_mount 2
    t0=$(senv_now)
    cp "$share/big.bin" "$back"
    t1=$(senv_now)
    echo "# cp out: 32 MiB in $(elapsed "$t0" "$t1") s ($(senv_rate "$BIG" "$t0" "$t1") MiB/s)" >&3
    assert_same_file "$src" "$back"
    netfs_unmount 2
    local served
    served=$(relay_channel_bytes write)
    echo "# the relay moved $served bytes of READ data by RDMA Write" >&3
    [ "$served" -ge "$BIG" ]
    [ "$(relay_established_count)" -ge 2 ]
}
