#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# tests/vm/provider_conformance.bats — inside the test VM: the provider conformance suite
# (build/tests/test_provider_conformance, cmocka) with the verbs provider on real rdma-core devices,
# kernel siw (iWARP) and kernel rxe (RoCE), selected by address (SMBDIRECT_TEST_RDMA_ADDR).

setup_file() {
    source "$BATS_TEST_DIRNAME/../../scripts/vm/guest-lib.bash"
    vm_rdma_add_both
}

setup() {
    source "$BATS_TEST_DIRNAME/../../scripts/vm/guest-lib.bash"
    vm_require_guest
    vm_require_bin "$VM_BUILD/tests/test_provider_conformance"
    # The one suite that raises RLIMIT_MEMLOCK: it drives the verbs provider itself, below the
    # engine's budget, with both ends of every connection in one process and up to 16 MiB of
    # buffers plus 32 RDMA Reads' temporary sinks at once (a test of the provider under load,
    # not of the limit; kernel siw on 6.1 counts them even for root).
    ulimit -l unlimited
}

# conformance ADDR LABEL — runs the suite on the device owning ADDR; the verbs group must have run
# and passed. Cases a real device cannot meet are skipped by the suite itself, each with its reason
# in the source (cmocka's TAP writes a skip as "not ok N # SKIP name"); they are noted, as are the
# verbs throughput lines the suite prints.
conformance() {
    local line
    run env SMBDIRECT_TEST_RDMA_ADDR="$1" CMOCKA_MESSAGE_OUTPUT=TAP \
        timeout 600 "$VM_BUILD/tests/test_provider_conformance"
    echo "$output"
    # A failure's own lines go to the tier's summary too, which outlives a truncated log:
    # the failed cases with the message before each, or the run's last lines if it died.
    if [ "$status" -ne 0 ]; then
        local why
        why=$(awk '/^not ok/ && !/# SKIP/ { print p2; print p1; print } { p2 = p1; p1 = $0 }' \
            <<<"$output")
        [ -n "$why" ] || why="exit $status; last lines: $(tail -n 3 <<<"$output")"
        while IFS= read -r line; do vm_note "$2 failed: $line"; done <<<"$why"
    fi
    [ "$status" -eq 0 ]
    [[ "$output" == *"# ok - provider conformance: verbs"* ]]
    [ "$(grep '^not ok' <<<"$output" | grep -vc '# SKIP')" -eq 0 ]
    while IFS= read -r line; do vm_note "$2: ${line#\# }"; done < <(grep -E '^# rdma: ' <<<"$output")
    while IFS= read -r line; do vm_note "$2: skipped ${line##*# SKIP }"; done < <(grep -E '# SKIP' <<<"$output")
}

@test "provider conformance, verbs provider on kernel siw (iWARP)" {
    conformance "$VM_SIW_IP" "conformance verbs/siw"
}

@test "provider conformance, verbs provider on kernel rxe (RoCE)" {
    conformance "$VM_RXE_IP" "conformance verbs/rxe"
}
