#!/usr/bin/env bats
# tests/vm/ksmbd_rxe.bats — inside the test VM: ksmbd with only a RoCE device (kernel rxe), so its
# SMB Direct listener is on port 445 (MS-SMB2: InfiniBand/RoCE use the TCP port number), reached
# by the verbs provider on rxe: smbclient through the shim and smbdirect-probe.

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
    vm_memlock_unlimited
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

@test "smbclient + shim, verbs on rxe -> ksmbd: 16 MiB get rate" {
    ksmbd_check_get_rate "$VM_RXE_IP" rdma "shim verbs/rxe -> ksmbd/rxe"
}

@test "smbclient + shim, verbs on rxe -> ksmbd: 64 MiB put and get over the RDMA read/write channel keep sha256" {
    ksmbd_check_large_put_get "$VM_RXE_IP" rdma "shim verbs/rxe -> ksmbd/rxe"
}

@test "smbclient + shim, verbs on rxe -> ksmbd: signed session, 64 MiB put and get sized to fit ksmbd's MaxFragmentedSize keep sha256" {
    ksmbd_check_large_put_get "$VM_RXE_IP" rdma "shim verbs/rxe -> ksmbd/rxe" signed
}

@test "smbdirect-probe --conformance, verbs on rxe -> ksmbd: the positive READ/WRITE channel cases pass" {
    ksmbd_check_conformance "$VM_RXE_IP" rdma "conformance verbs/rxe -> ksmbd/rxe"
}
