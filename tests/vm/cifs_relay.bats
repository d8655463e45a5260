#!/usr/bin/env bats
# tests/vm/cifs_relay.bats — inside the test VM: the kernel's own SMB Direct client
# (mount -t cifs -o rdma, this tier's cifs.ko with CONFIG_CIFS_SMB_DIRECT) against smbdirect-relay
# in front of Samba (TCP), with the relay on verbs over siw and on soft-iWARP (then the kernel's siw
# connects to our userspace provider). Files are copied both ways and compared by sha256;
# /proc/fs/cifs/DebugData must show SMB Direct. The same copy against ksmbd (kernel to kernel) is
# the control in ksmbd_siw.bats.

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
    vm_memlock_unlimited
    vm_require_bin "$VM_BUILD/smbdirect-relay"
}

teardown() {
    cifs_umount
    senv_relay_stop
}

# relay_mount_copy RELAY_TRANSPORT IO LABEL — the relay on RELAY_TRANSPORT, the kernel mount with
# IO (see cifs-checks.bash), 8 MiB copied both ways.
relay_mount_copy() {
    SENV_RELAY_TRANSPORT=$1 senv_relay_start
    cifs_mount "$SENV_ADDR" "$SENV_USER" "$SENV_PASS" "$2"
    cifs_copy_both_ways "$SENV_SHARE" "$3" || { tail -n 3 "$SENV_RELAY_LOG"; return 1; }
}

@test "kernel cifs -o rdma, 4 KiB inline I/O -> relay (verbs on siw) -> Samba: copy both ways" {
    relay_mount_copy rdma inline "cifs.ko inline 4 KiB I/O -> relay verbs/siw -> Samba"
}

@test "kernel cifs -o rdma, 4 KiB inline I/O -> relay (soft-iWARP accepting kernel siw) -> Samba: copy both ways" {
    relay_mount_copy soft inline "cifs.ko inline 4 KiB I/O -> relay soft -> Samba"
}

# Recorded limitation. The relay carries SMB2 messages only; it does not implement the SMB2 RDMA
# read/write channel (SMB2_CHANNEL_RDMA_V1). cifs.ko's default I/O asks for it: its 1 MiB READ
# reaches Samba over TCP, whose inline 1 MiB response exceeds what cifs.ko reassembles, so the
# relay closes the connection naming MaxFragmentedSize ("Direct-TCP message length exceeds the
# configured maximum"); cifs.ko reconnects and re-sends the READ without end, so the copy neither
# completes nor fails (seen: cp still running at its 60 s bound). A clean failure cannot be
# asserted, hence the skip.
@test "kernel cifs -o rdma, default I/O (RDMA read/write channel) -> relay (verbs on siw) -> Samba: limitation" {
    skip "needs the SMB2 RDMA read/write channel (not implemented)"
}
