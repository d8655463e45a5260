#!/usr/bin/env bats
# tests/vm/cifs_relay.bats — inside the test VM: the kernel's own SMB Direct client
# (mount -t cifs -o rdma, this tier's cifs.ko with CONFIG_CIFS_SMB_DIRECT) against smbdirect-relay
# in front of Samba (TCP). The kernel client tries port 5445 first on siw. Files are copied both
# ways and compared by sha256; /proc/fs/cifs/DebugData must show the SMB Direct connection.

setup_file() {
    source "$BATS_TEST_DIRNAME/../../scripts/vm/guest-lib.bash"
    [ "${VM_RESULTS:-}" = /vm ] || return 0
    vm_rdma_add siw >/dev/null && modprobe cifs && vm_samba_start "$VM_SIW_IP" &&
    senv_random_file "$SENV_SHARE/from-samba-8m.bin" $((8 * 1024 * 1024)) &&
    chmod 0666 "$SENV_SHARE/from-samba-8m.bin"
}

teardown_file() {
    source "$BATS_TEST_DIRNAME/../../scripts/vm/guest-lib.bash"
    vm_samba_stop
}

setup() {
    source "$BATS_TEST_DIRNAME/../../scripts/vm/guest-lib.bash"
    vm_require_guest
    vm_require_bin "$VM_BUILD/smbdirect-relay"
    MNT=/mnt/cifs-rdma
    mkdir -p "$MNT"
}

teardown() {
    umount "$MNT" 2>/dev/null || umount -l "$MNT" 2>/dev/null || true
    senv_relay_stop
}

# mount_copy_both_ways RELAY_TRANSPORT LABEL — relay on RELAY_TRANSPORT, kernel mount over RDMA,
# 8 MiB from Samba and 8 MiB to Samba, sha256 both; DebugData shows SMB Direct; notes the rates.
mount_copy_both_ways() {
    local d t0 t1 t2
    d=$(mktemp -d)
    senv_random_file "$d/to-samba.bin" $((8 * 1024 * 1024))
    SENV_RELAY_TRANSPORT=$1 senv_relay_start
    run timeout 120 mount -t cifs "//$SENV_ADDR/share" "$MNT" \
        -o "rdma,vers=3.1.1,username=$SENV_USER,password=$SENV_PASS,cache=none"
    echo "mount: $output"; cat "$SENV_RELAY_LOG"
    [ "$status" -eq 0 ]
    run cat /proc/fs/cifs/DebugData
    echo "$output"
    [[ "$output" == *"SMBDirect (in hex) protocol version: 100"* ]]
    t0=$(senv_now)
    timeout 120 cp "$MNT/from-samba-8m.bin" "$d/from-samba.bin"
    t1=$(senv_now)
    timeout 120 cp "$d/to-samba.bin" "$MNT/to-samba-$1.bin"
    sync
    t2=$(senv_now)
    [ "$(senv_sha256 "$d/from-samba.bin")" = "$(senv_sha256 "$SENV_SHARE/from-samba-8m.bin")" ]
    [ "$(senv_sha256 "$d/to-samba.bin")" = "$(senv_sha256 "$SENV_SHARE/to-samba-$1.bin")" ]
    vm_note "$2: read 8 MiB $(senv_rate $((8 << 20)) "$t0" "$t1") MiB/s, write 8 MiB $(senv_rate $((8 << 20)) "$t1" "$t2") MiB/s"
    rm -rf "$d"
}

@test "kernel cifs -o rdma -> relay (verbs on siw) -> Samba: copy both ways, DebugData shows SMB Direct" {
    mount_copy_both_ways rdma "cifs.ko -> relay verbs/siw -> Samba"
}

@test "kernel cifs -o rdma -> relay (soft-iWARP accepting kernel siw) -> Samba: copy both ways" {
    mount_copy_both_ways soft "cifs.ko -> relay soft -> Samba"
}
