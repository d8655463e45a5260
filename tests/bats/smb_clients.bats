#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# tests/bats/smb_clients.bats — SMB clients other than smbclient through the shim and the
# relay, in front of a real smbd on 127.0.0.25: smbget (Samba's libsmbclient, linked in)
# and tests/tools/smbc_copy.py (python3-smbc: libsmbclient dlopen()ed by Python, without
# RTLD_GLOBAL). Every copy is checked with sha256 against its source. Through the shim
# SMB Direct is mandatory (SMBDIRECT_FALLBACK=none) and each run must add exactly one
# connection at the relay; where a client's I/O is large enough the relay's channel line
# must show the data moved by RDMA Read / RDMA Write. In a signed session against a relay
# offering only 128 KiB MaxFragmentedSize the shim must lower libsmbclient's I/O sizes in
# Python as it does smbclient's (preload/interpose_smb2cli.c: Samba's definitions found
# from the dlopen()ed library). SD_VIA=tcp runs the copies without the shim.
#
# Which way the data goes (SMBDIRECT_RDMA_THRESHOLD 4096: an SMB2 READ or WRITE asking
# for more goes by the channel; what decides is the request's Length, not the file):
# smbget reads in its block size (-b, 64000 bytes by default), one SMB2 READ of 64000
# bytes per block, so its downloads, even of the small files, travel by RDMA Write, about
# 1049 of them for 64 MiB. smbc_copy.py reads and writes 1 MiB per smbc call, each one
# SMB2 READ or WRITE (Samba's own limit, 8 MiB, is larger), so 32 MiB take 32 RDMA
# Reads and 32 RDMA Writes.

load helpers

# Each test has its own smbd and relay (one test needs other settings for both).
setup() { suite_start 127.0.0.25; }
teardown() { dump_logs_on_failure; suite_stop; }

# smbget_via URL [smbget args...] — smbget as guest, non-interactive, quiet.
smbget_via() {
    local url=$1
    shift
    run_client smbget --guest --nonprompt --quiet "$@" "$url"
}

# url PATH — the smb:// URL of PATH in the share.
url() { echo "smb://$SENV_ADDR/share/$1"; }

# channel_counts — "RDMA-READ-OPS RDMA-READ-BYTES RDMA-WRITE-OPS RDMA-WRITE-BYTES" of
# the relay's latest connection (RDMA Read carries WRITE data, RDMA Write READ data);
# "0 0 0 0" when it used no channel.
channel_counts() {
    local line
    line=$(last_conn_line channel)
    if [ -z "$line" ]; then echo "0 0 0 0"; return; fi
    sed -n 's/.*rdma_read \([0-9]*\) ops \([0-9]*\) bytes.*rdma_write \([0-9]*\) ops \([0-9]*\) bytes.*/\1 \2 \3 \4/p' <<<"$line"
}

# assert_read_by_rdma BYTES — the latest connection's READ data, BYTES in all, moved by
# RDMA Write, and nothing by RDMA Read.
assert_read_by_rdma() {
    local c
    read -r -a c <<<"$(channel_counts)"
    if [ "${c[1]}" -ne 0 ] || [ "${c[3]}" -ne "$1" ]; then
        echo "relay channel: rdma_read ${c[0]} ops ${c[1]} B, rdma_write ${c[2]} ops ${c[3]} B; want 0 B and $1 B" >&2
        return 1
    fi
}

@test "smbget through the shim downloads a 64 MiB file intact, its data by RDMA Write" {
    local d
    d=$(work_dir)
    senv_random_file "$SENV_SHARE/big.bin" $((64 << 20))
    chmod 0644 "$SENV_SHARE/big.bin"
    smbget_via "$(url big.bin)" --outputfile "$d/big.bin"
    assert_success
    assert_same_file "$SENV_SHARE/big.bin" "$d/big.bin"
    [ "$SD_VIA" = tcp ] || assert_read_by_rdma $((64 << 20))
}

@test "smbget through the shim downloads a 1 KiB file intact" {
    local d
    d=$(work_dir)
    senv_random_file "$SENV_SHARE/small.bin" 1024
    chmod 0644 "$SENV_SHARE/small.bin"
    smbget_via "$(url small.bin)" --outputfile "$d/small.bin"
    assert_success
    assert_same_file "$SENV_SHARE/small.bin" "$d/small.bin"
}

@test "smbget -R through the shim downloads a directory tree intact" {
    local d
    d=$(work_dir)
    mkdir -p "$SENV_SHARE/tree/sub/deeper"
    senv_random_file "$SENV_SHARE/tree/a.bin" 3000000
    senv_random_file "$SENV_SHARE/tree/b.bin" 65536
    senv_random_file "$SENV_SHARE/tree/c.bin" 1
    : >"$SENV_SHARE/tree/empty.bin"
    make_small_files "$SENV_SHARE/tree/sub" 5
    senv_random_file "$SENV_SHARE/tree/sub/deeper/d.bin" 200000
    chmod -R a+rX "$SENV_SHARE/tree"
    mkdir "$d/dst"
    # smbget -R writes what is under the URL's directory into the current one
    cd "$d/dst"
    smbget_via "$(url tree)" --recursive
    assert_success
    [ "$(find . -type f | wc -l)" -eq 10 ]
    [ "$(tree_digest .)" = "$(tree_digest "$SENV_SHARE/tree")" ]
}

@test "smbc_copy.py (libsmbclient in Python) through the shim: 32 MiB upload, download, listing in one session, data by RDMA Read and Write; then delete" {
    local d
    d=$(work_dir)
    mkdir -m 0777 "$SENV_SHARE/py"
    senv_random_file "$d/src.bin" $((32 << 20))
    run_client "$PYTHON" "$SMBC_COPY" put "$d/src.bin" "$(url py/up.bin)" \
        get "$(url py/up.bin)" "$d/back.bin" ls "$(url py)"
    assert_success
    assert_same_file "$d/src.bin" "$SENV_SHARE/py/up.bin"
    assert_same_file "$d/src.bin" "$d/back.bin"
    grep -qx "up.bin file $((32 << 20))" <<<"$output"
    if [ "$SD_VIA" = shim ]; then
        # 1 MiB per SMB2 WRITE and READ: 32 of each. Many more would mean libsmbclient
        # was given a smaller I/O size than Samba's own (the shim's smb2cli_conn_max_*
        # interposers could not reach Samba's definitions from the dlopen()ed library).
        [ "$(channel_counts)" = "32 $((32 << 20)) 32 $((32 << 20))" ] || {
            echo "relay channel: $(channel_counts), want 32 $((32 << 20)) 32 $((32 << 20))" >&2
            return 1
        }
    fi
    run_client "$PYTHON" "$SMBC_COPY" rm "$(url py/up.bin)" ls "$(url py)"
    assert_success
    [ ! -e "$SENV_SHARE/py/up.bin" ]
    refute grep -q '^up.bin ' <<<"$output"
}

@test "smbc_copy.py over plain TCP without the shim (harness check): the same copy, no relay connection" {
    local d before
    d=$(work_dir)
    senv_random_file "$d/src.bin" $((32 << 20))
    before=$(relay_established_count)
    run timeout 300 "$PYTHON" "$SMBC_COPY" put "$d/src.bin" "$(url tcp.bin)" \
        get "$(url tcp.bin)" "$d/back.bin" ls "$(url '')"
    assert_success
    assert_same_file "$d/src.bin" "$SENV_SHARE/tcp.bin"
    assert_same_file "$d/src.bin" "$d/back.bin"
    grep -qx "tcp.bin file $((32 << 20))" <<<"$output"
    [ "$(relay_established_count)" -eq "$before" ]
}

@test "with the relay stopped, SMBDIRECT_FALLBACK=none makes smbget and smbc_copy.py fail instead of using TCP" {
    require_shim
    local d
    d=$(work_dir)
    senv_random_file "$SENV_SHARE/nofb.bin" 1024
    chmod 0644 "$SENV_SHARE/nofb.bin"
    senv_relay_stop
    run client smbget --guest --nonprompt --quiet --outputfile "$d/got.bin" "$(url nofb.bin)"
    [ "$status" -ne 0 ]
    [ "$status" -ne 124 ] # not by the timeout
    grep -q 'error: SMB Direct to .*SMBDIRECT_FALLBACK=none' <<<"$output"
    [ ! -s "$d/got.bin" ]
    run client "$PYTHON" "$SMBC_COPY" get "$(url nofb.bin)" "$d/got-py.bin"
    [ "$status" -eq 1 ]
    grep -q 'error: SMB Direct to .*SMBDIRECT_FALLBACK=none' <<<"$output"
    [ ! -s "$d/got-py.bin" ]
}

@test "smbc_copy.py in a signed SMB 3.1.1 session against a 128 KiB MaxFragmentedSize: the shim sizes libsmbclient's I/O to fit, 16 MiB up and down intact" {
    require_shim
    local d
    suite_stop
    suite_start_smbd 127.0.0.25 signing=mandatory min_protocol=SMB3_11 guest=no
    senv_add_user
    senv_relay_start --max-fragmented-size 131072
    d=$(work_dir)
    senv_random_file "$d/src.bin" $((16 << 20))
    SMBDIRECT_LOG=debug SMBDIRECT_MAX_FRAGMENTED_SIZE=131072 \
        run_client "$PYTHON" "$SMBC_COPY" --user "$SENV_USER%$SENV_PASS" \
        put "$d/src.bin" "$(url signed.bin)" get "$(url signed.bin)" "$d/back.bin"
    assert_success
    assert_same_file "$d/src.bin" "$SENV_SHARE/signed.bin"
    assert_same_file "$d/src.bin" "$d/back.bin"
    grep -q "signed connect to service share initially as user $SENV_USER " "$SENV_SMBD_LOG"
    grep -q "SMB2 WRITE size 8388608 lowered to 126976 to fit the SMB Direct connection" <<<"$output"
    grep -q "SMB2 READ size 8388608 lowered to 126976 to fit the SMB Direct connection" <<<"$output"
    [ "$(channel_counts)" = "0 0 0 0" ]
}
