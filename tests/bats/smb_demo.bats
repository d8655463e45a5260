#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# tests/bats/smb_demo.bats — `make demo` (scripts/demo) works: it starts its own smbd
# and relay on 127.0.0.21, moves a file through the shim, checks it and cleans up.

load helpers

@test "scripts/demo puts and gets a file over SMB Direct, verifies it and leaves nothing running" {
    require_shim
    run env DEMO_MIB=16 "$BATS_TEST_DIRNAME/../../scripts/demo"
    assert_success
    [[ "$output" == *"demo: OK"* ]]
    [[ "$output" =~ put\ 16\ MiB:\ [0-9.]+\ MiB/s ]]
    [[ "$output" =~ get\ 16\ MiB:\ [0-9.]+\ MiB/s ]]
    refute senv_listening 127.0.0.21 445
    refute senv_listening 127.0.0.21 5445
}
