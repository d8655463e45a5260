#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# tests/bats/smb_channel.bats — the SMB2 READ/WRITE RDMA channel end to end: smbclient
# through the shim (client role) and the relay (server role) in front of a real smbd on
# 127.0.0.17. At dialects 3.0 and 3.1.1 an unsigned session's large READ and WRITE data
# must travel by RDMA Write and RDMA Read (the relay's "channel:" line counts the bytes,
# and the SMB Direct messages then carry only requests and responses); at 2.1, in a
# signed session, or with SMBDIRECT_RDMA_THRESHOLD=0 the data travels inline. Every
# transfer is checked with sha256 both ways. Where I/O goes inline against a peer whose
# MaxFragmentedSize (128 KiB here, 170 KiB for ksmbd, 1 MiB for Windows) is below
# Samba's 8 MiB READ/WRITE, the shim lowers the sizes smbclient asks the connection
# for (preload/interpose_smb2cli.c), so each message still fits.

load helpers

teardown() { dump_logs_on_failure; suite_stop; }

SIZE=$((64 * 1024 * 1024))

# put_get [smbclient args...] — puts and gets a 64 MiB random file, both copies checked.
put_get() {
    local d src
    d=$(work_dir) src=$d/src.bin
    senv_random_file "$src" "$SIZE"
    run_smb "$@" -c "put $src c.bin; get c.bin $d/back.bin"
    assert_success
    assert_same_file "$src" "$SENV_SHARE/c.bin"
    assert_same_file "$src" "$d/back.bin"
}

# the bytes of a "channel:" line: "READS WRITES" (RDMA Read = WRITE data, RDMA Write =
# READ data).
channel_bytes() {
    sed -n 's/.*rdma_read [0-9]* ops \([0-9]*\) bytes.*rdma_write [0-9]* ops \([0-9]*\) bytes.*/\1 \2/p' <<<"$1"
}

# smbd_in_bytes — the payload bytes the relay received over SMB Direct on its latest
# connection (the "closed" line's smbd_in).
smbd_in_bytes() {
    last_conn_line closed | sed -n 's/.*smbd_in [0-9]* msgs \([0-9]*\) bytes.*/\1/p'
}

# assert_data_by_rdma — the latest connection moved the 64 MiB each way by RDMA and
# carried only SMB2 headers over SMB Direct Sends from the client.
assert_data_by_rdma() {
    local line bytes
    line=$(last_conn_line channel)
    [ -n "$line" ] || { echo "no channel line in the relay log" >&2; return 1; }
    bytes=$(channel_bytes "$line")
    [ "$bytes" = "$SIZE $SIZE" ] || { echo "channel moved '$bytes', want '$SIZE $SIZE'" >&2; return 1; }
    [ "$(smbd_in_bytes)" -lt 1048576 ] || { echo "the WRITE data also went inline" >&2; return 1; }
}

# assert_data_inline — the latest connection did not use the channel and carried the
# WRITE data in SMB Direct messages.
assert_data_inline() {
    [ -z "$(last_conn_line channel)" ] || { echo "unexpected channel use: $(last_conn_line channel)" >&2; return 1; }
    [ "$(smbd_in_bytes)" -gt "$SIZE" ] || { echo "the WRITE data did not go inline" >&2; return 1; }
}

@test "SMB 3.1.1: 64 MiB put and get move their data by RDMA Read and RDMA Write" {
    suite_start 127.0.0.17 signing=disabled
    put_get -m SMB3_11
    assert_data_by_rdma
}

@test "SMB 3.0: 64 MiB put and get move their data by RDMA Read and RDMA Write" {
    suite_start 127.0.0.17 signing=disabled
    put_get -m SMB3_00
    assert_data_by_rdma
}

@test "SMB 2.1 has no RDMA channel: 64 MiB put and get travel inline" {
    suite_start 127.0.0.17 signing=disabled
    put_get -m SMB2_10
    assert_data_inline
}

@test "SMBDIRECT_RDMA_THRESHOLD=0 keeps 64 MiB put and get inline" {
    suite_start 127.0.0.17 signing=disabled
    SMBDIRECT_RDMA_THRESHOLD=0 put_get -m SMB3_11
    assert_data_inline
}

@test "a signed session is never rewritten: 64 MiB put and get travel inline" {
    suite_start 127.0.0.17 signing=mandatory min_protocol=SMB3_11 guest=no
    senv_add_user
    put_get -m SMB3_11 "$(senv_user_auth)"
    grep -q "signed connect to service share initially as user $SENV_USER " "$SENV_SMBD_LOG"
    assert_data_inline
}

# small_fragments_start [smbd options...] — smbd, and a relay offering the smallest
# MaxFragmentedSize MS-SMBD allows (128 KiB): an inline 8 MiB WRITE could not reach it.
small_fragments_start() {
    require_shim
    suite_start_smbd 127.0.0.17 "$@"
    senv_relay_start --max-fragmented-size 131072
}

# put_get_small_fragments [smbclient args...] — put_get with the shim also reassembling
# at most 128 KiB, logging at debug level (the lowered sizes are logged there).
put_get_small_fragments() {
    SMBDIRECT_LOG=debug SMBDIRECT_MAX_FRAGMENTED_SIZE=131072 put_get "$@"
}

# assert_channel_io_size — smbclient's WRITE and READ sizes were lowered to the channel's
# I/O size (2 MiB, SMBDIRECT_CHANNEL_IO_SIZE's default), not to fit the inline limit.
assert_channel_io_size() {
    local kind
    for kind in WRITE READ; do
        grep -q "SMB2 $kind size 8388608 lowered to 2097152, the RDMA channel's I/O size" <<<"$output" || {
            echo "the $kind size was not lowered to the channel's I/O size" >&2; return 1; }
    done
    if grep -q "to fit the SMB Direct connection" <<<"$output"; then
        echo "smbclient's I/O size was lowered to fit inline" >&2; return 1
    fi
}

# assert_sizes_lowered — smbclient's WRITE and READ sizes were lowered to fit 128 KiB.
assert_sizes_lowered() {
    grep -q "SMB2 WRITE size 8388608 lowered to 126976 to fit the SMB Direct connection" <<<"$output" || {
        echo "the WRITE size was not lowered" >&2; return 1; }
    grep -q "SMB2 READ size 8388608 lowered to 126976 to fit the SMB Direct connection" <<<"$output" || {
        echo "the READ size was not lowered" >&2; return 1; }
}

@test "signed SMB 3.1.1 against a 128 KiB MaxFragmentedSize: smbclient's I/O is sized to fit, 64 MiB put and get succeed" {
    small_fragments_start signing=mandatory min_protocol=SMB3_11 guest=no
    senv_add_user
    put_get_small_fragments -m SMB3_11 "$(senv_user_auth)"
    assert_sizes_lowered
    assert_data_inline
}

@test "encrypted SMB 3.1.1 against a 128 KiB MaxFragmentedSize: 64 MiB put and get succeed" {
    small_fragments_start min_protocol=SMB3_11 guest=no
    senv_add_user
    put_get_small_fragments -m SMB3_11 --client-protection=encrypt "$(senv_user_auth)"
    assert_sizes_lowered
    assert_data_inline
}

# A logged-in user's session signs the requests every SMB 3.x client signs (the 3.1.1
# TREE_CONNECT; the 3.0 VALIDATE_NEGOTIATE_INFO IOCTL) but not its data when the server
# does not require signing: READ/WRITE keep the channel and its I/O size (2 MiB), even
# where inline I/O would have to be cut to 128 KiB.
@test "a logged-in SMB 3.1.1 session without signing required keeps 2 MiB I/O on the RDMA channel against a 128 KiB MaxFragmentedSize" {
    small_fragments_start guest=no
    senv_add_user
    put_get_small_fragments -m SMB3_11 "$(senv_user_auth)"
    assert_channel_io_size
    assert_data_by_rdma
}

@test "a logged-in SMB 3.0 session without signing required keeps 2 MiB I/O on the RDMA channel against a 128 KiB MaxFragmentedSize" {
    small_fragments_start guest=no
    senv_add_user
    put_get_small_fragments -m SMB3_00 "$(senv_user_auth)"
    assert_channel_io_size
    assert_data_by_rdma
}

@test "SMB 2.1 and SMBDIRECT_RDMA_THRESHOLD=0 against a 128 KiB MaxFragmentedSize: sized to fit inline" {
    small_fragments_start signing=disabled
    put_get_small_fragments -m SMB2_10
    assert_sizes_lowered
    assert_data_inline
    SMBDIRECT_RDMA_THRESHOLD=0 put_get_small_fragments -m SMB3_11
    assert_sizes_lowered
    assert_data_inline
}

@test "unsigned SMB 3.1.1 against a 128 KiB MaxFragmentedSize keeps the channel's 2 MiB I/O, and with SMBDIRECT_CHANNEL_IO_SIZE=8388608 Samba's 8 MiB" {
    small_fragments_start signing=disabled
    put_get_small_fragments -m SMB3_11
    assert_channel_io_size
    assert_data_by_rdma
    SMBDIRECT_CHANNEL_IO_SIZE=8388608 put_get_small_fragments -m SMB3_11
    if grep -q "lowered" <<<"$output"; then echo "smbclient's I/O size was lowered" >&2; return 1; fi
    assert_data_by_rdma
}

# buffers_peak — the "buffers peak" bytes of the relay's latest channel line.
buffers_peak() {
    last_conn_line channel | sed -n 's/.*buffers peak \([0-9]*\) bytes.*/\1/p'
}

# memory_waits TEXT — "N MS" from the "memory waits N (MS ms)" of a channel line in TEXT.
memory_waits() {
    sed -n 's/.*buffers peak [0-9]* bytes, memory waits \([0-9]*\) (\([0-9]*\) ms).*/\1 \2/p' <<<"$1"
}

@test "channel buffer memory is bounded: with 1 MiB per connection each side holds one 8 MiB I/O at a time and counts its waits, 64 MiB put and get intact" {
    require_shim
    suite_start_smbd 127.0.0.17 signing=disabled
    senv_relay_start --channel-memory 1048576
    # smbclient keeps two 8 MiB I/Os outstanding: the shim holds the second back each time
    SMBDIRECT_CHANNEL_IO_SIZE=8388608 SMBDIRECT_CHANNEL_MEMORY=1048576 put_get -m SMB3_11
    assert_data_by_rdma
    # one I/O always proceeds (it alone is over the budget), never two; the peak counts
    # each buffer's allocation (a READ's data stays in the buffer it arrived in, which
    # has room for its headers too)
    local peak waits
    peak=$(buffers_peak)
    [ "$peak" -ge $((8 << 20)) ]
    [ "$peak" -lt $((9 << 20)) ]
    waits=$(memory_waits "$(grep -F 'info: RDMA channel:' <<<"$output")")
    echo "shim: memory waits $waits"
    [ "${waits% *}" -ge 7 ] # of the 7 WRITEs and 7 READs after the first of each, most
    # the relay never had a second I/O to hold back
    [ "$(memory_waits "$(last_conn_line channel)")" = "0 0" ]
    # the shim sends all eight 2 MiB I/Os smbclient keeps outstanding: the relay holds
    # all but one back, and says so
    put_get -m SMB3_11
    assert_data_by_rdma
    peak=$(buffers_peak)
    [ "$peak" -ge $((2 << 20)) ]
    [ "$peak" -lt $((3 << 20)) ]
    waits=$(memory_waits "$(last_conn_line channel)")
    echo "relay: memory waits $waits"
    [ "${waits% *}" -ge 1 ]
}
