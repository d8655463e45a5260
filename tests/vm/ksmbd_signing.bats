#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# tests/vm/ksmbd_signing.bats — inside the test VM: ksmbd with "server signing = mandatory" on
# kernel siw (SMB Direct on port 5445), as a signing baseline sets a server up. smbclient runs
# through the shim as the unprivileged client user at Debian's default 8 MiB RLIMIT_MEMLOCK, over
# the soft-iWARP provider and the verbs provider on siw, at SMB 3.1.1 and SMB 3.0 (AES-128-CMAC):
# every session is signed, and 64 MiB go each way by the RDMA read/write channel, each rewritten
# request signed again by the shim with the session's key, each response checked with it, with
# sha256 kept and no signature failure logged by ksmbd. A run where smbclient asks for nothing
# shows the server's requirement took effect (against ksmbd_siw.bats's "server signing = auto"
# the same command is not signed). The suite has its own ksmbd: the kernel's cifs control rows of
# ksmbd_siw.bats would sign here too, and 6.1's ksmbd cannot be restarted on siw.
# vm-kernels: 6.1 6.12

setup_file() {
    source "$BATS_TEST_DIRNAME/../../scripts/vm/guest-lib.bash"
    source "$BATS_TEST_DIRNAME/../../scripts/vm/ksmbd-checks.bash"
    [ "${VM_RESULTS:-}" = /vm ] || return 0
    vm_rdma_add siw >/dev/null && vm_ksmbd_start mandatory && ksmbd_seed_share
}

setup() {
    source "$BATS_TEST_DIRNAME/../../scripts/vm/guest-lib.bash"
    source "$BATS_TEST_DIRNAME/../../scripts/vm/ksmbd-checks.bash"
    vm_require_guest
    export VM_CLIENT_MEMLOCK=8192
}

@test "ksmbd requires signing; smbclient + shim, soft-iWARP, asking for nothing: the session is signed, 64 MiB put and get by the RDMA channel keep sha256" {
    ksmbd_check_large_put_get "$VM_SIW_IP" soft "shim soft -> ksmbd/siw, signing mandatory" required
}

@test "ksmbd requires signing; smbclient + shim, verbs on siw, asking for nothing: the session is signed, 64 MiB put and get by the RDMA channel keep sha256" {
    ksmbd_check_large_put_get "$VM_SIW_IP" rdma "shim verbs/siw -> ksmbd/siw, signing mandatory" required
}

@test "ksmbd requires signing; smbclient + shim, soft-iWARP: signed session (SMB 3.1.1), 64 MiB put and get by the RDMA channel, signed again by the shim, keep sha256" {
    ksmbd_check_large_put_get "$VM_SIW_IP" soft "shim soft -> ksmbd/siw, signing mandatory" signed
}

@test "ksmbd requires signing; smbclient + shim, soft-iWARP: signed session at SMB 3.0 (AES-128-CMAC), 64 MiB put and get by the RDMA channel keep sha256" {
    ksmbd_check_large_put_get "$VM_SIW_IP" soft "shim soft -> ksmbd/siw, signing mandatory" signed-3.0
}

@test "ksmbd requires signing; smbclient + shim, verbs on siw: signed session (SMB 3.1.1), 64 MiB put and get by the RDMA channel keep sha256" {
    ksmbd_check_large_put_get "$VM_SIW_IP" rdma "shim verbs/siw -> ksmbd/siw, signing mandatory" signed
}

@test "ksmbd requires signing; smbclient + shim, verbs on siw: signed session at SMB 3.0 (AES-128-CMAC), 64 MiB put and get by the RDMA channel keep sha256" {
    ksmbd_check_large_put_get "$VM_SIW_IP" rdma "shim verbs/siw -> ksmbd/siw, signing mandatory" signed-3.0
}
