#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# tests/vm/ksmbd_rxe.bats — inside the test VM: ksmbd with only a RoCE device (kernel rxe), so its
# SMB Direct listener is on port 445 (MS-SMB2: InfiniBand/RoCE use the TCP port number), reached
# by the verbs provider on rxe: smbclient through the shim and smbdirect-probe.
# vm-kernels: 6.1 6.12

setup_file() {
    source "$BATS_TEST_DIRNAME/../../scripts/vm/guest-lib.bash"
    source "$BATS_TEST_DIRNAME/../../scripts/vm/ksmbd-checks.bash"
    [ "${VM_RESULTS:-}" = /vm ] || return 0
    vm_rdma_add rxe >/dev/null && vm_ksmbd_start && ksmbd_seed_share
}

setup() {
    source "$BATS_TEST_DIRNAME/../../scripts/vm/guest-lib.bash"
    source "$BATS_TEST_DIRNAME/../../scripts/vm/ksmbd-checks.bash"
    vm_require_guest
}

@test "ksmbd over TCP (no shim) next to its RoCE listener: ls, get and put keep sha256" {
    ksmbd_check_ls_get_put "$VM_RXE_IP" tcp
}

@test "smbdirect-probe, verbs on rxe -> ksmbd port 445: negotiates" {
    ksmbd_check_probe "$VM_RXE_IP" rdma "probe verbs/rxe -> ksmbd/rxe"
}

@test "smbclient + shim, verbs on rxe -> ksmbd port 445: ls, get and put keep sha256" {
    ksmbd_check_ls_get_put "$VM_RXE_IP" rdma
}

@test "smbclient + shim, verbs on rxe -> ksmbd: small requests read no idle event fd (strace: at most 40 reads or writes fail with EAGAIN over 40 allinfo)" {
    ksmbd_check_no_idle_reads "$VM_RXE_IP" rdma "shim verbs/rxe -> ksmbd/rxe"
}

@test "smbclient + shim, verbs on rxe -> ksmbd: 16 MiB get rate" {
    ksmbd_check_get_rate "$VM_RXE_IP" rdma "shim verbs/rxe -> ksmbd/rxe"
}

@test "smbclient + shim, verbs on rxe -> ksmbd under Debian's default 8 MiB RLIMIT_MEMLOCK, unprivileged: 64 MiB put and get, channel and signed, keep sha256" {
    ksmbd_check_memlock "$VM_RXE_IP" rdma "shim verbs/rxe -> ksmbd/rxe" 8192
}

@test "smbclient + shim, verbs on rxe -> ksmbd with RLIMIT_MEMLOCK raised to unlimited: 64 MiB put and get, channel and signed, keep sha256" {
    ksmbd_check_memlock "$VM_RXE_IP" rdma "shim verbs/rxe -> ksmbd/rxe" unlimited
}

@test "smbclient + shim, verbs on rxe -> ksmbd under a 1 MiB RLIMIT_MEMLOCK: planned smaller at connect with one warning, 64 MiB put and get complete" {
    ksmbd_check_memlock "$VM_RXE_IP" rdma "shim verbs/rxe -> ksmbd/rxe" 1024
}

@test "smbclient + shim, verbs on rxe -> ksmbd under a 256 KiB RLIMIT_MEMLOCK: refused at connect naming RLIMIT_MEMLOCK" {
    ksmbd_check_memlock "$VM_RXE_IP" rdma "shim verbs/rxe -> ksmbd/rxe" 256
}

@test "smbdirect-probe --conformance, verbs on rxe -> ksmbd: the positive READ/WRITE channel cases pass" {
    ksmbd_check_conformance "$VM_RXE_IP" rdma "conformance verbs/rxe -> ksmbd/rxe"
}

@test "smbdirect-probe --conformance, verbs on rxe -> ksmbd: Smb2Multichannel, a signed session over TCP and a channel bound over SMB Direct, pass" {
    ksmbd_check_multichannel "$VM_RXE_IP" rdma "multichannel verbs/rxe -> ksmbd/rxe"
}
