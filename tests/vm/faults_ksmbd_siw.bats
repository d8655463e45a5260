#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# tests/vm/faults_ksmbd_siw.bats — inside the test VM: ksmbd stopped (ksmbd.control --shutdown) in
# the middle of a 64 MiB get by smbclient through the shim on verbs (siw) from ksmbd
# (scripts/vm/fault-checks.bash): the program gets an error within the bound and the log names
# the disconnect. A VM of its own: Linux 6.1's ksmbd hangs in the kernel on this shutdown (the
# ksmbd.control process and ksmbd's RDMA listener thread block), so nothing can follow it.

setup_file() {
    source "$BATS_TEST_DIRNAME/../../scripts/vm/fault-checks.bash"
    fault_suite_start siw
}

setup() {
    source "$BATS_TEST_DIRNAME/../../scripts/vm/fault-checks.bash"
    vm_require_guest
}

@test "siw: ksmbd stopped mid-transfer: the program gets an error within the bound, the log names the disconnect" {
    fault_check "$VM_SIW_IP" "fault siw ksmbd stopped" 'connection lost: [a-z ]*disconnect[a-z]*' \
        "$VM_KSMBD_TOOLS/ksmbd.control" --shutdown
}
