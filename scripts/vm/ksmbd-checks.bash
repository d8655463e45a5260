# SPDX-License-Identifier: BSD-3-Clause
# scripts/vm/ksmbd-checks.bash — the checks that tests/vm/ksmbd_*.bats run against the kernel's SMB
# Direct server over each path (TCP, shim on soft-iWARP, shim on verbs over siw or rxe), so every
# peer combination is held to the same assertions. Sourced after guest-lib.bash, inside bats tests.
# shellcheck shell=bash disable=SC2154  # output and status are set by bats' run
# Files: ksmbd_seed_share puts small.bin (1000 B) and get-1m.bin / get-16m.bin in ksmbd's share.

KSMBD_SHARE=$VM_KSMBD_DIR/share

# ksmbd_seed_share — the files the checks read back (once per suite).
ksmbd_seed_share() {
    senv_random_file "$KSMBD_SHARE/small.bin" 1000 &&
    senv_random_file "$KSMBD_SHARE/get-1m.bin" $((1024 * 1024)) &&
    senv_random_file "$KSMBD_SHARE/get-16m.bin" $((16 * 1024 * 1024))
}

# ksmbd_assert_same LOCAL SERVER_NAME — LOCAL and the share's file have one sha256.
ksmbd_assert_same() { vm_assert_same_file "$1" "$KSMBD_SHARE/$2"; }

# ksmbd_assert_smb_direct VIA — with the shim, the last run's output shows the tunnel was used.
ksmbd_assert_smb_direct() {
    [ "$1" = tcp ] && return 0
    [[ "$output" == *"tunneled over SMB Direct ($1"* ]] || { echo "SMB Direct was not used" >&2; return 1; }
}

# ksmbd_check_ls_get_put ADDR VIA — ls, get (1000 B and 1 MiB) and put (64 KiB, below ksmbd's
# ~170 KB MaxFragmentedSize) in one smbclient session; every file keeps its sha256.
ksmbd_check_ls_get_put() {
    local addr=$1 via=$2 d
    d=$(vm_client_tmpdir)
    senv_random_file "$d/put.bin" $((64 * 1024))
    run vm_smbclient_ksmbd "$addr" "$via" -c "ls; get small.bin $d/small.bin; get get-1m.bin $d/1m.bin; put $d/put.bin put-64k-$via.bin"
    echo "$output"
    [ "$status" -eq 0 ]
    ksmbd_assert_smb_direct "$via"
    [[ "$output" == *small.bin* ]]
    [[ "$output" == *get-16m.bin* ]]
    ksmbd_assert_same "$d/small.bin" small.bin
    ksmbd_assert_same "$d/1m.bin" get-1m.bin
    ksmbd_assert_same "$d/put.bin" "put-64k-$via.bin"
    rm -rf "$d"
}

# ksmbd_check_get_rate ADDR VIA LABEL — gets the 16 MiB file, checks it and notes the rate.
ksmbd_check_get_rate() {
    local addr=$1 via=$2 label=$3 d t0 t1
    d=$(vm_client_tmpdir)
    t0=$(senv_now)
    run vm_smbclient_ksmbd "$addr" "$via" -c "get get-16m.bin $d/16m.bin"
    t1=$(senv_now)
    echo "$output"
    [ "$status" -eq 0 ]
    ksmbd_assert_smb_direct "$via"
    ksmbd_assert_same "$d/16m.bin" get-16m.bin
    vm_note "$label: get 16 MiB in $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }') s, $(senv_rate $((16 * 1024 * 1024)) "$t0" "$t1") MiB/s (whole smbclient run)"
    rm -rf "$d"
}

# ksmbd_check_no_idle_reads ADDR VIA LABEL — 40 allinfo commands (3 SMB2 requests or more
# each) through the shim under strace, which lists the reads and writes that failed: on verbs
# the provider reads only the event fds its epoll set reports ready (a CM event, a device event,
# the completion channel, its wake fd), so requests and answers cost no read of an idle fd. At
# most 40 may fail with EAGAIN (8 did, all at connect and close); reading all four on every
# progress() failed about nine times per request.
ksmbd_check_no_idle_reads() {
    local addr=$1 via=$2 label=$3 d cmds='' i sent idle
    d=$(vm_client_tmpdir)
    for ((i = 0; i < 40; i++)); do cmds+="allinfo small.bin; "; done
    VM_SMBCLIENT_WRAP="strace -f -qq -Z -e trace=read,write -o $d/failed" \
        run vm_smbclient_ksmbd "$addr" "$via" -c "$cmds"
    grep 'smbdirect\[' <<<"$output" || true
    [ "$status" -eq 0 ]
    ksmbd_assert_smb_direct "$via"
    sent=$(sed -n 's/.*tunnel ended .*: \([0-9]*\) messages \/ .* sent, .*/\1/p' <<<"$output")
    [ -f "$d/failed" ] # strace ran and wrote its list
    idle=$(grep -c 'EAGAIN' "$d/failed" || true)
    vm_note "$label: $idle reads or writes failed with EAGAIN over ${sent:-(not logged)} messages sent"
    grep 'EAGAIN' "$d/failed" | head -n 5
    [ "$idle" -le 40 ]
    rm -rf "$d"
}

# ksmbd_check_large_put_get ADDR VIA LABEL [channel|signed|signed-3.0|required] — puts and gets 64 MiB in
# one session: smbclient writes and reads up to 8 MiB per SMB2 request, far above ksmbd's
# MaxFragmentedSize (173910), so the put can only succeed over the RDMA read/write channel (ksmbd
# RDMA-reads the WRITE data from and RDMA-writes the READ data into the shim's registered
# buffers; inline, the shim would refuse the first WRITE naming MaxFragmentedSize). "signed"
# (smbclient --client-protection=sign: SMB 3.1.1, AES-128-GMAC or -CMAC as negotiated) and
# "signed-3.0" (the same at SMB 3.0: AES-128-CMAC) move the data by the channel too: the shim
# signs each rewritten request again with the session's key, checks ksmbd's signed responses
# and signs the rebuilt READ responses; its end line counts those I/Os ("N of them signed
# again") and smbclient's sizes are never lowered to fit inline; ksmbd logs no signature
# failure. "required": smbclient asks for nothing (as "channel"), against a ksmbd whose "server
# signing = mandatory" signs the session all the same, and the data goes by the channel, signed
# as above. Both copies keep their sha256. The rate is noted, with the shim's channel counts.
ksmbd_check_large_put_get() {
    local addr=$1 via=$2 label=$3 mode=${4:-channel} d name t0 t1 line size=$((64 * 1024 * 1024))
    local args=() signed_ios bad0 bad1
    case $mode in
    signed) args=(--client-protection=sign) ;;
    signed-3.0) args=(--client-protection=sign -m SMB3_00) ;;
    esac
    d=$(vm_client_tmpdir)
    name=put-64m-$via-$mode.bin
    senv_random_file "$d/put.bin" "$size"
    bad0=$(dmesg | grep -c 'bad smb2 signature' || true)
    t0=$(senv_now)
    SMBDIRECT_LOG=debug run vm_smbclient_ksmbd "$addr" "$via" "${args[@]}" \
        -c "put $d/put.bin $name; get $name $d/back.bin"
    t1=$(senv_now)
    grep -v ' debug: ' <<<"$output" || true
    # A failed transfer shows the shim's last debug lines too: what it waited for at the end.
    [ "$status" -eq 0 ] || { echo "the shim's last debug lines:"; grep ' debug: ' <<<"$output" | tail -n 40; }
    [ "$status" -eq 0 ]
    ksmbd_assert_smb_direct "$via"
    ksmbd_assert_same "$d/put.bin" "$name"
    cmp "$d/put.bin" "$d/back.bin"
    if grep -q 'exceeds the peer' <<<"$output"; then echo "a message exceeded MaxFragmentedSize" >&2; return 1; fi
    if grep -q 'lowered to [0-9]* to fit the SMB Direct connection' <<<"$output"; then echo "I/O sizes lowered to fit inline" >&2; return 1; fi
    signed_ios=$(grep -m1 -o 'RDMA channel: .*, [0-9]* of them signed again' <<<"$output" | grep -o '[0-9]* of them' | tr -dc 0-9)
    [ -n "$signed_ios" ] || { echo "no RDMA channel line from the shim" >&2; return 1; }
    if [ "$mode" = channel ]; then
        [ "$signed_ios" -eq 0 ]
    else
        # 64 MiB each way in I/Os of at most 8 MiB: at least 16 went by the channel, signed
        [ "$signed_ios" -ge 16 ] || { echo "only $signed_ios signed I/Os by the channel" >&2; return 1; }
        bad1=$(dmesg | grep -c 'bad smb2 signature' || true)
        [ "$bad1" -eq "$bad0" ] || { echo "ksmbd logged a bad signature" >&2; return 1; }
    fi
    line=$(grep -m1 'RDMA channel: ' <<<"$output" | sed 's/.*RDMA channel: /; /') || true
    vm_note "$label: $mode put + get 64 MiB in $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }') s, $(senv_rate $((2 * size)) "$t0" "$t1") MiB/s (whole smbclient run)$line"
    rm -rf "$d"
}

# ksmbd_wait_no_rdma_connection — waits (up to 30 s) until the kernel holds no RDMA CM id but
# listeners: ksmbd has torn down every SMB Direct connection (it destroys the connection's CM id
# just before its per-connection slab caches), then 0.5 s more when it had one. Debian 6.1's
# ksmbd creates a new connection's caches while a connection that ended in an error may still
# be destroying its own; a cache of the same size then fails on the same sysfs name ("sysfs:
# cannot create duplicate filename '/kernel/slab/:0001472'", "Can't init RDMA pool: -12") and
# ksmbd's worker and the next RDMA connect hang in the kernel (seen in CI, and on the first
# round of a VM run that repeated the RemoteInvalidation cases, whose reuse ends the connection).
ksmbd_wait_no_rdma_connection() {
    local i
    for ((i = 0; i < 150; i++)); do
        if ! rdma resource show cm_id 2>/dev/null | grep -v ' state LISTEN ' | grep -q ' state '; then
            [ "$i" -eq 0 ] || sleep 0.5
            return 0
        fi
        sleep 0.2
    done
    echo "an RDMA connection is still up after 30 s:" >&2
    rdma resource show cm_id >&2
    return 1
}

# ksmbd_run_case ADDR TRANSPORT CASE — once ksmbd holds no RDMA connection, smbdirect-probe runs
# conformance case CASE alone against ksmbd as its user (run: $output, $status); it must exit 0.
ksmbd_run_case() {
    ksmbd_wait_no_rdma_connection
    run timeout 300 "$VM_BUILD/smbdirect-probe" --conformance --transport "$2" \
        --user "$VM_KSMBD_USER%$VM_KSMBD_PASS" --share share --cases "$3" "$1"
    echo "$output"
    [ "$status" -eq 0 ]
}

# ksmbd_check_conformance ADDR TRANSPORT LABEL — smbdirect-probe --conformance against ksmbd as
# its user, the positive READ/WRITE channel cases only: an 8 MiB READ by RDMA Write and a WRITE
# by RDMA Read read back equal, several of each, and at 3.0.2 RDMA_V1_INVALIDATE (answered by
# Send with Invalidate of the token; a reuse refused) and RDMA_V1. Each must PASS (SKIP where
# the provider cannot see remote invalidation), which checks our client against a server nobody
# here wrote. Each case runs alone, once ksmbd has torn down the one before
# (ksmbd_wait_no_rdma_connection). The other cases are not run here: against Debian 6.1's
# ksmbd their quick connection churn (refused negotiations, descriptor errors) takes it into
# the same hang; docs/PEERS.md records what ksmbd answered to them in a full run.
ksmbd_check_conformance() {
    local addr=$1 transport=$2 label=$3 case row
    vm_require_bin "$VM_BUILD/smbdirect-probe"
    for case in BVT_Smb2OverRdmaChannel_ReadLargeFile BVT_Smb2OverRdmaChannel_WriteLargeFile \
        Smb2OverRdmaChannel_ReadMultipleOperation Smb2OverRdmaChannel_WriteMultipleOperation \
        BVT_SMB2OverRdma_SMB302_Write_RemoteInvalidation BVT_SMB2OverRdma_SMB302_Read_RemoteInvalidation \
        SMB2OverRdma_SMB302_Write_NoRemoteInvalidation SMB2OverRdma_SMB302_Read_NoRemoteInvalidation; do
        ksmbd_run_case "$addr" "$transport" "$case"
        grep -Eq '^1 cases: (1 passed, 0 failed, 0|0 passed, 0 failed, 1) skipped$' <<<"$output"
        while IFS= read -r row; do
            vm_note "$label: $row"
        done < <(grep -E '^[A-Za-z0-9_]+ +(PASS|SKIP) ' <<<"$output" | sed 's/  */ /g' | cut -c1-160)
    done
}

# ksmbd_check_multichannel ADDR TRANSPORT LABEL — smbdirect-probe's Smb2Multichannel cases against
# ksmbd as its user, each alone once ksmbd holds no RDMA connection: a signed session over TCP to
# ADDR:445 (3.0, and the highest of 3.0-3.1.1), a channel bound to it over SMB Direct with a
# SESSION_SETUP signed with the session's key, 1 MiB written on one read back equal on the other,
# every response's signature verified. Both must PASS (ksmbd runs with multichannel on).
ksmbd_check_multichannel() {
    local addr=$1 transport=$2 label=$3 case
    vm_require_bin "$VM_BUILD/smbdirect-probe"
    for case in BVT_Smb2MultiChannel_2Channels_DiffNicTypeDiffTransport \
        Smb2Multichannel_2Channels_DiffTransport; do
        ksmbd_run_case "$addr" "$transport" "$case"
        grep -Eq "^$case +PASS +dialect 0x03(00|11): session over TCP to $addr:445, channel bound over SMB Direct;" <<<"$output"
        grep -qx '1 cases: 1 passed, 0 failed, 0 skipped' <<<"$output"
        vm_note "$label: $(grep -E "^$case +PASS " <<<"$output" | sed 's/  */ /g' | cut -c1-240)"
    done
}

# ksmbd_check_probe ADDR TRANSPORT LABEL — smbdirect-probe negotiates with ksmbd and prints the
# parameters ksmbd granted; notes them.
ksmbd_check_probe() {
    local addr=$1 transport=$2 label=$3
    vm_require_bin "$VM_BUILD/smbdirect-probe"
    run timeout 60 "$VM_BUILD/smbdirect-probe" --transport "$transport" "$addr"
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *"version: 0x0100"* ]]
    [[ "$output" == *"MaxReadWriteSize: "[1-9]* ]]
    vm_note "$label: $(grep -E '^(MaxSendSize|MaxReceiveSize|MaxFragmentedSize.send|MaxReadWriteSize|credits.send_granted|IRD|ORD):' <<<"$output" | tr '\n' ' ')"
}

# ksmbd_check_memlock ADDR VIA LABEL KIB — the shim on verbs under RLIMIT_MEMLOCK KIB (the client
# user's soft limit; "unlimited" raises it). 8192 (Debian's default) and above: 64 MiB put and
# get, unsigned and signed (both by the channel), keep sha256 with no word of the limit; at 8192,
# three 2 MiB channel I/Os at a time. 1024: the connection is planned smaller at connect (one
# warning naming RLIMIT_MEMLOCK, the value found and the value for full speed) and both
# transfers still complete. Below the smallest connection (256): refused at connect naming
# RLIMIT_MEMLOCK, smbclient fails at once, nothing hangs.
ksmbd_check_memlock() {
    local addr=$1 via=$2 label=$3 kib=$4
    if [ "$kib" = 256 ]; then
        VM_CLIENT_MEMLOCK=$kib run vm_smbclient_ksmbd "$addr" "$via" -c ls
        echo "$output"
        [ "$status" -ne 0 ]
        grep -q "RLIMIT_MEMLOCK is 256 KiB .*needs at least [0-9]* KiB more" <<<"$output"
        vm_note "$label, RLIMIT_MEMLOCK 256 KiB: refused at connect: $(grep -m1 -o 'RLIMIT_MEMLOCK is 256 KiB.*KiB more' <<<"$output")"
        return
    fi
    VM_CLIENT_MEMLOCK=$kib ksmbd_check_large_put_get "$addr" "$via" "$label, RLIMIT_MEMLOCK $kib KiB"
    ksmbd_assert_memlock_words "$kib"
    [ "$kib" != 8192 ] || ksmbd_assert_three_ios_at_8m
    VM_CLIENT_MEMLOCK=$kib ksmbd_check_large_put_get "$addr" "$via" "$label, RLIMIT_MEMLOCK $kib KiB" signed
    ksmbd_assert_memlock_words "$kib"
}

# ksmbd_assert_three_ios_at_8m — the last channel run at Debian's default 8 MiB: the receives and
# the permanent send buffers took the 1364 bytes ksmbd sends and receives (not the 8192 and 8136
# configured), which gave 2400 KiB of the plan back (the receives alone: 1688) and leaves room
# for three 2 MiB channel I/Os at a time (the buffers' peak), where 8 KiB receives left two.
ksmbd_assert_three_ios_at_8m() {
    local peak left
    local line='info: the peer receives messages of at most 1364 bytes and sends at most 1364: '
    line+='[0-9]* KiB of registered memory planned for buffers is left to I/O'
    left=$(grep -m1 -o "$line" <<<"$output" | grep -o '[0-9]* KiB' | tr -dc 0-9)
    if [ -z "$left" ] || [ "$left" -lt 2300 ]; then
        echo "${left:-no} KiB of the plan given back: fewer than 2300" >&2; return 1
    fi
    peak=$(grep -m1 -o 'buffers peak [0-9]* bytes' <<<"$output" | tr -dc 0-9)
    [ -n "$peak" ] && [ "$peak" -ge $((3 * 2 * 1024 * 1024)) ] || { echo "buffers peak ${peak:-?} bytes: fewer than three 2 MiB I/Os at once" >&2; return 1; }
}

# ksmbd_assert_memlock_words KIB — the last run's output speaks of RLIMIT_MEMLOCK as designed.
ksmbd_assert_memlock_words() {
    # (the engine's own waits for room within the limit are debug lines, not refusals)
    if grep -q 'ibv_reg_mr of .* failed\|no registered memory for' <<<"$output"; then
        echo "the kernel refused a registration" >&2; return 1
    fi
    case "$1" in
        1024) grep -q "warn: RLIMIT_MEMLOCK is 1024 KiB .* KiB or more gives full speed" <<<"$output" ;;
        *) if grep -q 'warn: RLIMIT_MEMLOCK' <<<"$output"; then echo "a needless warning" >&2; return 1; fi ;;
    esac
}
