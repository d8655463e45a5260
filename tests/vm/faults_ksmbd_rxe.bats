#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# tests/vm/faults_ksmbd_rxe.bats — inside the test VM: ksmbd stopped (ksmbd.control --shutdown) in
# the middle of a 64 MiB get by smbclient through the shim on verbs (rxe) from ksmbd
# (scripts/vm/fault-checks.bash): the program gets an error within the bound and the log names
# the disconnect. A VM of its own: Linux 6.1's ksmbd is not restarted after it.

setup_file() {
    source "$BATS_TEST_DIRNAME/../../scripts/vm/fault-checks.bash"
    fault_suite_start rxe
}

setup() {
    source "$BATS_TEST_DIRNAME/../../scripts/vm/fault-checks.bash"
    vm_require_guest
}

@test "rxe: ksmbd stopped mid-transfer: the program gets an error within the bound, the log names the disconnect" {
    fault_check "$VM_RXE_IP" "fault rxe ksmbd stopped" 'connection lost: [a-z ]*disconnect[a-z]*' \
        "$VM_KSMBD_TOOLS/ksmbd.control" --shutdown
}
