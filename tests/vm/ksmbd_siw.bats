#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# tests/vm/ksmbd_siw.bats — inside the test VM: the kernel's SMB Direct server (ksmbd, SMB Direct on
# port 5445 because an iWARP device exists) on kernel siw, reached by our code over both providers:
# the userspace soft-iWARP provider (plain TCP to siw's listener) and the verbs provider on siw.
# smbclient runs through the shim; smbdirect-probe reports what ksmbd negotiates. Controls: the
# kernel's cifs client against ksmbd, kernel to kernel, with the checks cifs_relay.bats applies.
# vm-kernels: 6.1 6.12

setup_file() {
    source "$BATS_TEST_DIRNAME/../../scripts/vm/guest-lib.bash"
    source "$BATS_TEST_DIRNAME/../../scripts/vm/ksmbd-checks.bash"
    [ "${VM_RESULTS:-}" = /vm ] || return 0
    vm_rdma_add siw >/dev/null && vm_ksmbd_start && ksmbd_seed_share
}

setup() {
    source "$BATS_TEST_DIRNAME/../../scripts/vm/guest-lib.bash"
    source "$BATS_TEST_DIRNAME/../../scripts/vm/ksmbd-checks.bash"
    source "$BATS_TEST_DIRNAME/../../scripts/vm/cifs-checks.bash"
    vm_require_guest
}

teardown() { cifs_umount; }

@test "ksmbd over TCP (no shim): ls, get and put keep sha256" {
    ksmbd_check_ls_get_put "$VM_SIW_IP" tcp
}

@test "ksmbd's SMB Direct listener on siw port 5445 answers a plain TCP MPA request" {
    run vm_mpa_reply "$VM_SIW_IP" 5445
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == "MPA ID Rep Frame flags=0x"[45]"0 rev=2" ]]
}

@test "smbdirect-probe, soft-iWARP -> ksmbd on siw: negotiates" {
    ksmbd_check_probe "$VM_SIW_IP" soft "probe soft -> ksmbd/siw"
}

@test "smbdirect-probe, verbs on siw -> ksmbd: negotiates" {
    ksmbd_check_probe "$VM_SIW_IP" rdma "probe verbs/siw -> ksmbd/siw"
}

@test "smbdirect-probe --conformance, soft-iWARP -> ksmbd on siw: the positive READ/WRITE channel cases pass" {
    ksmbd_check_conformance "$VM_SIW_IP" soft "conformance soft -> ksmbd/siw"
}

@test "smbdirect-probe --conformance, verbs on siw -> ksmbd: the positive READ/WRITE channel cases pass" {
    ksmbd_check_conformance "$VM_SIW_IP" rdma "conformance verbs/siw -> ksmbd/siw"
}

@test "smbdirect-probe --conformance, soft-iWARP -> ksmbd on siw: Smb2Multichannel, a signed session over TCP and a channel bound over SMB Direct, pass" {
    ksmbd_check_multichannel "$VM_SIW_IP" soft "multichannel soft -> ksmbd/siw"
}

@test "smbdirect-probe --conformance, verbs on siw -> ksmbd: Smb2Multichannel, a signed session over TCP and a channel bound over SMB Direct, pass" {
    ksmbd_check_multichannel "$VM_SIW_IP" rdma "multichannel verbs/siw -> ksmbd/siw"
}

@test "smbclient + shim, soft-iWARP -> ksmbd on siw: ls, get and put keep sha256" {
    ksmbd_check_ls_get_put "$VM_SIW_IP" soft
}

@test "smbclient + shim, soft-iWARP -> ksmbd on siw: 16 MiB get rate" {
    ksmbd_check_get_rate "$VM_SIW_IP" soft "shim soft -> ksmbd/siw"
}

@test "smbclient + shim, soft-iWARP -> ksmbd on siw: 64 MiB put and get over the RDMA read/write channel keep sha256" {
    ksmbd_check_large_put_get "$VM_SIW_IP" soft "shim soft -> ksmbd/siw"
}

@test "smbclient + shim, verbs on siw -> ksmbd: ls, get and put keep sha256" {
    ksmbd_check_ls_get_put "$VM_SIW_IP" rdma
}

@test "smbclient + shim, verbs on siw -> ksmbd: small requests read no idle event fd (strace: at most 40 reads or writes fail with EAGAIN over 40 allinfo)" {
    ksmbd_check_no_idle_reads "$VM_SIW_IP" rdma "shim verbs/siw -> ksmbd/siw"
}

@test "smbclient + shim, verbs on siw -> ksmbd: 16 MiB get rate" {
    ksmbd_check_get_rate "$VM_SIW_IP" rdma "shim verbs/siw -> ksmbd/siw"
}

@test "smbclient + shim, verbs on siw -> ksmbd under Debian's default 8 MiB RLIMIT_MEMLOCK, unprivileged: 64 MiB put and get, channel and signed, keep sha256" {
    ksmbd_check_memlock "$VM_SIW_IP" rdma "shim verbs/siw -> ksmbd/siw" 8192
}

@test "smbclient + shim, verbs on siw -> ksmbd with RLIMIT_MEMLOCK raised to unlimited: 64 MiB put and get, channel and signed, keep sha256" {
    ksmbd_check_memlock "$VM_SIW_IP" rdma "shim verbs/siw -> ksmbd/siw" unlimited
}

@test "smbclient + shim, verbs on siw -> ksmbd under a 1 MiB RLIMIT_MEMLOCK: planned smaller at connect with one warning, 64 MiB put and get complete" {
    ksmbd_check_memlock "$VM_SIW_IP" rdma "shim verbs/siw -> ksmbd/siw" 1024
}

@test "smbclient + shim, verbs on siw -> ksmbd under a 256 KiB RLIMIT_MEMLOCK: refused at connect naming RLIMIT_MEMLOCK" {
    ksmbd_check_memlock "$VM_SIW_IP" rdma "shim verbs/siw -> ksmbd/siw" 256
}

@test "control, kernel to kernel: cifs -o rdma (RDMA read/write channel) -> ksmbd on siw: copy both ways" {
    cifs_mount "$VM_SIW_IP" "$VM_KSMBD_USER" "$VM_KSMBD_PASS" channel
    cifs_copy_both_ways "$KSMBD_SHARE" "control cifs.ko RDMA-channel I/O -> ksmbd/siw"
}

@test "control, kernel to kernel: cifs -o rdma (4 KiB inline I/O) -> ksmbd on siw: copy both ways" {
    cifs_mount "$VM_SIW_IP" "$VM_KSMBD_USER" "$VM_KSMBD_PASS" inline
    cifs_copy_both_ways "$KSMBD_SHARE" "control cifs.ko inline 4 KiB I/O -> ksmbd/siw"
}
