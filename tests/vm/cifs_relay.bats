#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# tests/vm/cifs_relay.bats — inside the test VM: the kernel's own SMB Direct client
# (mount -t cifs -o rdma, this tier's cifs.ko with CONFIG_CIFS_SMB_DIRECT) against smbdirect-relay
# in front of Samba (TCP), with the relay on verbs over siw and on soft-iWARP (then the kernel's siw
# connects to our userspace provider). Files are copied both ways and compared by sha256;
# /proc/fs/cifs/DebugData must show SMB Direct. The same copy against ksmbd (kernel to kernel) is
# the control in ksmbd_siw.bats.
# vm-kernels: 6.1 6.12

setup_file() {
    source "$BATS_TEST_DIRNAME/../../scripts/vm/guest-lib.bash"
    [ "${VM_RESULTS:-}" = /vm ] || return 0
    vm_rdma_add siw >/dev/null && vm_samba_start "$VM_SIW_IP"
}

teardown_file() {
    source "$BATS_TEST_DIRNAME/../../scripts/vm/guest-lib.bash"
    vm_samba_stop
}

setup() {
    source "$BATS_TEST_DIRNAME/../../scripts/vm/guest-lib.bash"
    source "$BATS_TEST_DIRNAME/../../scripts/vm/cifs-checks.bash"
    vm_require_guest
    vm_require_bin "$VM_BUILD/smbdirect-relay"
}

teardown() {
    cifs_umount
    senv_relay_stop
}

# relay_mount_copy RELAY_TRANSPORT IO LABEL [MIB] — the relay on RELAY_TRANSPORT, the kernel mount
# with IO (see cifs-checks.bash), MIB (default 8) MiB copied both ways.
relay_mount_copy() {
    SENV_RELAY_TRANSPORT=$1 senv_relay_start
    cifs_mount "$SENV_ADDR" "$SENV_USER" "$SENV_PASS" "$2"
    cifs_copy_both_ways "$SENV_SHARE" "$3" "${4:-8}" || { tail -n 3 "$SENV_RELAY_LOG"; return 1; }
}

# relay_channel_bytes — after the unmount, the relay's "channel:" line: the bytes it moved by
# RDMA Read (WRITE data) and RDMA Write (READ data), "READ_BYTES WRITE_BYTES".
relay_channel_bytes() {
    local i
    cifs_umount
    for i in $(seq 50); do grep -q 'relay: conn .* channel:' "$SENV_RELAY_LOG" && break; sleep 0.1; done
    grep 'relay: conn .* channel:' "$SENV_RELAY_LOG" |
        sed -n 's/.*rdma_read [0-9]* ops \([0-9]*\) bytes.*rdma_write [0-9]* ops \([0-9]*\) bytes.*/\1 \2/p' |
        awk '{ r += $1; w += $2 } END { print r + 0, w + 0 }'
}

# relay_channel_copy RELAY_TRANSPORT LABEL — cifs.ko's default I/O (1 MiB READ/WRITE with
# SMB2_CHANNEL_RDMA_V1_INVALIDATE) through the relay: 64 MiB both ways, and the relay moved at
# least that much by RDMA Read and RDMA Write.
relay_channel_copy() {
    local bytes
    relay_mount_copy "$1" channel "$2" 64
    bytes=$(relay_channel_bytes)
    echo "relay channel bytes (RDMA Read, RDMA Write): $bytes"
    [ "${bytes% *}" -ge $((64 << 20)) ]
    [ "${bytes#* }" -ge $((64 << 20)) ]
}

@test "kernel cifs -o rdma, 4 KiB inline I/O -> relay (verbs on siw) -> Samba: copy both ways" {
    relay_mount_copy rdma inline "cifs.ko inline 4 KiB I/O -> relay verbs/siw -> Samba"
}

@test "kernel cifs -o rdma, 4 KiB inline I/O -> relay (soft-iWARP accepting kernel siw) -> Samba: copy both ways" {
    relay_mount_copy soft inline "cifs.ko inline 4 KiB I/O -> relay soft -> Samba"
}

# cifs.ko asks for SMB2_CHANNEL_RDMA_V1_INVALIDATE and relies on it: it never invalidates its MR
# locally and fast-registers the same MR again for its next I/O, so a response without Send with
# Invalidate breaks its QP on siw ("siw: fastreg: STag ... already valid", "QP fatal error",
# "register_mr_done status=2"), after which cifsd hangs in its reconnect. So the relay on verbs
# answers with Send with Invalidate too (transport/verbs/verbs_post.c puts the STag where
# rdma-core's siw provider reads it).
@test "kernel cifs -o rdma, default I/O (RDMA read/write channel) -> relay (verbs on siw) -> Samba: 64 MiB both ways" {
    relay_channel_copy rdma "cifs.ko RDMA-channel I/O -> relay verbs/siw -> Samba"
}

@test "kernel cifs -o rdma, default I/O (RDMA read/write channel) -> relay (soft-iWARP accepting kernel siw) -> Samba: 64 MiB both ways" {
    relay_channel_copy soft "cifs.ko RDMA-channel I/O -> relay soft -> Samba"
}
