#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# tests/bats/smb_conformance.bats — `smbdirect-probe --conformance` against the relay in
# front of a real smbd on 127.0.0.19 (soft-iWARP): every case of the groups the client
# has of the MS-SMBD server conformance list (SmbdNegotiate: raw Negotiate Requests,
# malformed ones, the negotiation timer; SmbdDataTransfer: fragments of every size,
# padding, malformed Data Transfer messages, keepalives both ways; SmbdCreditMgmt:
# credits few, spent and withheld; Smb2OverRdma: READ/WRITE over the RDMA channel,
# 4095 descriptors, invalid descriptors; RemoteInvalidation: Send with Invalidate at
# 3.0.2, none at 3.0; Smb2Multichannel: a signed session over TCP to smbd, a channel bound
# to it over SMB Direct through the relay, data written on one read back on the other)
# must PASS, the probe must exit 0, no test file may be left, and the relay must still be
# alive and serving afterwards. The cases run once (setup_file); each test reads the
# table. A wrong password must FAIL a case (exit 1), a server requiring signing makes the
# unsigned SMB2 cases SKIP while the signed Smb2Multichannel ones PASS, and bad arguments
# exit 2 naming the option.

load helpers

ADDR=127.0.0.19
PROBE=${SENV_BUILD:-$BATS_TEST_DIRNAME/../../build}/smbdirect-probe

# The relay runs with --keepalive 1 (default 120 s): the idle cases wait for its
# keepalive (MS-SMBD 3.1.6.2) within the probe's --keepalive-wait (5 s).
setup_file() {
    suite_start_smbd "$ADDR" || return 1
    if [ "$SD_VIA" = shim ] && ! senv_relay_start --keepalive 1; then senv_destroy; return 1; fi
    senv_add_user || return 1
    export SENV_USER SENV_PASS
    [ "$SD_VIA" = shim ] || return 0
    local rc=0
    SMBDIRECT_LOG=warn timeout 300 "$PROBE" --conformance --transport soft \
        --user "$SENV_USER%$SENV_PASS" "$ADDR" >"$SENV_DIR/conformance.out" \
        2>"$SENV_DIR/conformance.err" || rc=$?
    echo "$rc" >"$SENV_DIR/conformance.rc"
}
teardown_file() { suite_stop; }
teardown() { dump_logs_on_failure; }

# show_table — the probe's table and stderr, for a failure message.
show_table() {
    echo "--- smbdirect-probe --conformance output:" >&2
    cat "$SENV_DIR/conformance.out" "$SENV_DIR/conformance.err" >&2
    SD_OUTPUT_SHOWN=1
}

# assert_pass NAME... — each case has a PASS row in the table.
assert_pass() {
    local name bad=0
    for name in "$@"; do
        if ! grep -Eq "^$name +PASS " "$SENV_DIR/conformance.out"; then
            echo "case $name did not PASS" >&2
            bad=1
        fi
    done
    [ "$bad" -eq 0 ] || { show_table; return 1; }
}

@test "conformance: every case runs and the probe exits 0" {
    require_shim
    [ "$(cat "$SENV_DIR/conformance.rc")" -eq 0 ] || { show_table; return 1; }
    grep -qx "55 cases: 55 passed, 0 failed, 0 skipped" "$SENV_DIR/conformance.out" ||
        { show_table; return 1; }
}

@test "conformance: SmbdNegotiate, all 14 cases PASS" {
    require_shim
    assert_pass BVT_SmbdNegotiate_Basic S1_SmbdNegotiate_PreferredSendSizeWithZero \
        S1_SmbdNegotiate_PreferredSendSizeLessThan128 S1_SmbdNegotiate_PreferredSendSizeMaxValue \
        S1_SmbdNegotiate_Redundancy SmbdNegotiate_DisconnectAfterNegotiate \
        SmbdNegotiate_UncompletedMessage SmbdNegotiate_NegativeParameter_MinVersion \
        SmbdNegotiate_NegativeParameter_MaxVersion SmbdNegotiate_NegativeParameter_CreditsRequested \
        SmbdNegotiate_NegativeParameter_MaxReceiveSize \
        SmbdNegotiate_NegativeParameter_MaxFragmentedSize SmbdNegotiate_NegotiationTimer \
        SmbdNegotiate_NegotiationTimer_Timeout
}

@test "conformance: SmbdDataTransfer, all 18 cases PASS" {
    require_shim
    assert_pass BVT_SmbdDataTransfer_Basic_SendSmallBytesOfData \
        BVT_SmbdDataTransfer_Basic_SendModerateBytesData SmbdDataTransfer_VariableLengthSegment \
        SmbdDataTransfer_SmallLengthSegment \
        SmbdDataTransfer_Redundancy SmbdDataTransfer_ReceiveMaxReceiveSize \
        SmbdDataTransfer_UncompletedMessage \
        SmbdDataTransfer_NegativeParameter_DataOffset_Against8ByteAligned \
        SmbdDataTransfer_NegativeParameter_DataOffset_AgainstMessageLength \
        SmbdDataTransfer_NegativeParameter_DataLength_AgainstMessageLength \
        SmbdDataTransfer_NegativeParameter_DataLength_AgainstMaxReceiveSize \
        SmbdDataTransfer_NegativeParameter_AgainstMaxFragmentedSize \
        SmbdDataTransfer_NegativeParameter_RemainingDataLength_AgainstMaxFragmentedSize \
        SmbdDataTransfer_NegativeParameter_RemainingDataLength_Zero \
        SmbdDataTransfer_NegativeParameter_RemainingDataLength_AgainstFragmentReassemblyRemaining \
        SmbdDataTransfer_IdleConnection_Client SmbdDataTransfer_IdleConnection_Server \
        SmbdDataTransfer_IdleConnection_Server_Timeout
}

@test "conformance: SmbdCreditMgmt, all 6 cases PASS" {
    require_shim
    assert_pass BVT_SmbdCreditMgmt_OperationWithMinimumCredits \
        SmbdCreditMgmt_OperationWithLimitedCredits SmbdCreditMgmt_ConsumeAllSendCredits \
        SmbdCreditMgmt_ConsumeAllReceiveCredits SmbdCreditMgmt_ConsumeAllCreditServer_Timeout \
        SmbdCreditMgmt_NegativeParameter_CreditRequested
}

@test "conformance: the relay ended the malformed Data Transfer connections for the MS-SMBD rule broken" {
    require_shim
    local why
    for why in 'Data Transfer shorter than 20 bytes' 'DataOffset not 8-byte aligned' \
        'DataOffset + DataLength beyond the message' \
        'DataLength + RemainingDataLength exceed MaxFragmentedRecvSize' \
        'fragmented message ended with 100 bytes still missing' \
        'RemainingDataLength 201 contradicts the 200 bytes still expected' \
        'Data Transfer with CreditsRequested 0' 'did not answer a keepalive within 5000 ms'; do
        grep -q "relay: conn [0-9]* closed:.*$why" "$SENV_RELAY_LOG" ||
            { echo "no connection closed for: $why" >&2; tail -n 40 "$SENV_RELAY_LOG" >&2; return 1; }
    done
}

@test "conformance: Smb2OverRdma, all 9 cases PASS" {
    require_shim
    assert_pass BVT_Smb2OverRdmaChannel_ReadLargeFile BVT_Smb2OverRdmaChannel_WriteLargeFile \
        Smb2OverRdmaChannel_ReadMultipleOperation Smb2OverRdmaChannel_WriteMultipleOperation \
        Smb2OverRdmaChannel_ReadWriteMultipleBufferDescriptorList \
        Smb2OverRdmaChannel_InvalidBufferDescriptor_Offset \
        Smb2OverRdmaChannel_InvalidBufferDescriptor_Length \
        Smb2OverRdmaChannel_InvalidBufferDescriptor_Token \
        Smb2OverRdmaChannel_InvalidBufferDescriptor_DeregisteredBuffer
}

@test "conformance: RemoteInvalidation, all 6 cases PASS" {
    require_shim
    assert_pass BVT_SMB2OverRdma_SMB302_Write_RemoteInvalidation \
        BVT_SMB2OverRdma_SMB302_Read_RemoteInvalidation \
        SMB2OverRdma_SMB302_Write_NoRemoteInvalidation SMB2OverRdma_SMB302_Read_NoRemoteInvalidation \
        SMB2OverRdma_SMB300_Write_RemoteInvalidation SMB2OverRdma_SMB300_Read_RemoteInvalidation
}

# The relay holds no keys, but it forwards the binding SESSION_SETUP and inline signed
# READs and WRITEs unchanged (it rewrites only RDMA channel I/O, which these cases do not
# use), so smbd binds the relay's connection to the session made over TCP.
@test "conformance: Smb2Multichannel, both cases PASS through the keyless relay (3.0 and 3.1.1)" {
    require_shim
    assert_pass BVT_Smb2MultiChannel_2Channels_DiffNicTypeDiffTransport \
        Smb2Multichannel_2Channels_DiffTransport
    local out=$SENV_DIR/conformance.out
    grep -Eq "^BVT_Smb2MultiChannel_2Channels_DiffNicTypeDiffTransport +PASS +dialect 0x0300: session over TCP to $ADDR:445, channel bound over SMB Direct; 1048576 bytes written over TCP read back equal over SMB Direct; [1-9][0-9]*\+[1-9][0-9]* signatures verified$" "$out" ||
        { show_table; return 1; }
    grep -Eq "^Smb2Multichannel_2Channels_DiffTransport +PASS +dialect 0x0311: .*1048576 bytes written over SMB Direct read back equal over TCP" "$out" ||
        { show_table; return 1; }
}

@test "conformance: the relay refused the bad descriptors by ending those connections" {
    require_shim
    # the client's provider refuses the relay's RDMA Write/Read and terminates (RFC 5040)
    # (4 invalid descriptors, 2 reuses of an invalidated token: 6 connections)
    local n
    n=$(grep -c 'relay: conn [0-9]* closed:.*\(refused a remote memory access\|RDMA Read or Write of SMB2 data failed\)' "$SENV_RELAY_LOG")
    [ "$n" -eq 6 ] || { echo "$n such connections" >&2; tail -n 40 "$SENV_RELAY_LOG" >&2; return 1; }
}

@test "conformance: no test file is left on the share" {
    require_shim
    run find "$SENV_SHARE" -name 'sdconf-*'
    [ -z "$output" ] || { echo "left behind: $output" >&2; return 1; }
}

@test "conformance: the relay is still alive and serving after the cases" {
    require_shim
    kill -0 "$(cat "$SENV_DIR/relay.pid")"
    run "$PROBE" --transport soft "$ADDR"
    assert_success
    run_smb -c 'ls'
    assert_success
}

@test "conformance: a wrong password fails the case (exit 1, FAIL row)" {
    require_shim
    run "$PROBE" --conformance --transport soft --user "$SENV_USER%not-$SENV_PASS" \
        --cases BVT_Smb2OverRdmaChannel_ReadLargeFile "$ADDR"
    [ "$status" -eq 1 ] || { echo "status $status: $output" >&2; return 1; }
    grep -Eq '^BVT_Smb2OverRdmaChannel_ReadLargeFile +FAIL .*SESSION_SETUP' <<<"$output"
}

@test "conformance: bad arguments exit 2 naming the option" {
    run "$PROBE" --conformance --user no-password "$ADDR"
    [ "$status" -eq 2 ]
    grep -q -- "--user: 'no-password' is invalid" <<<"$output"
    run "$PROBE" --conformance --cases 'NoSuchCase*' "$ADDR"
    [ "$status" -eq 2 ]
    grep -q -- "--cases: no case matches 'NoSuchCase\*'" <<<"$output"
    run "$PROBE" --conformance --keepalive-wait 0 "$ADDR"
    [ "$status" -eq 2 ]
    grep -q -- "--keepalive-wait: '0' is invalid: use 1-600 seconds" <<<"$output"
    run "$PROBE" --cases '*' "$ADDR"
    [ "$status" -eq 2 ]
    grep -q -- "go with --conformance" <<<"$output"
}

@test "conformance: without a user the Smb2Multichannel cases SKIP naming --user" {
    require_shim
    run "$PROBE" --conformance --transport soft --cases 'Smb2Multichannel/*' "$ADDR"
    assert_success
    [ "$(grep -Ec '^[A-Za-z0-9_]+ +SKIP +binding a channel needs a signed session, which needs a user \(--user\)$' <<<"$output")" -eq 2 ] ||
        { echo "$output" >&2; return 1; }
}

# Last: it restarts smbd with mandatory signing.
@test "conformance: against a server that requires signing the unsigned SMB2 cases SKIP, the signed ones PASS" {
    require_shim
    senv_smbd_stop TERM
    senv_smbd_start signing=mandatory
    senv_add_user
    run "$PROBE" --conformance --transport soft --user "$SENV_USER%$SENV_PASS" \
        --cases 'BVT_Smb2*' "$ADDR"
    assert_success
    [ "$(grep -Ec '^BVT_Smb2OverRdmaChannel_[A-Za-z]+ +SKIP +the server requires signing' <<<"$output")" -eq 2 ] ||
        { echo "$output" >&2; return 1; }
    grep -Eq '^BVT_Smb2MultiChannel_2Channels_DiffNicTypeDiffTransport +PASS ' <<<"$output" ||
        { echo "$output" >&2; return 1; }
    grep -qx "3 cases: 1 passed, 0 failed, 2 skipped" <<<"$output"
}
