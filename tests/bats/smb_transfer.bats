#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# tests/bats/smb_transfer.bats — smbclient through the shim and relay moves files of every
# size intact in both directions and does the usual file operations (real smbd on
# 127.0.0.11). "put" checks the server's copy, "get" checks the local copy, each against
# an independent random file.

load helpers

setup_file() { suite_start 127.0.0.11; }
teardown_file() { suite_stop; }
teardown() { dump_logs_on_failure; remove_work_dir; }

# put_and_check BYTES — puts a random file of BYTES and compares the server's copy.
put_and_check() {
    local d src
    d=$(work_dir) src=$d/src.bin
    senv_random_file "$src" "$1"
    run_smb -c "put $src put-$1.bin"
    assert_success
    assert_same_file "$src" "$SENV_SHARE/put-$1.bin"
    rm -f "$SENV_SHARE/put-$1.bin"
}

# get_and_check BYTES — gets a random server file of BYTES and compares the local copy.
get_and_check() {
    local d
    d=$(work_dir)
    senv_random_file "$SENV_SHARE/get-$1.bin" "$1"
    run_smb -c "get get-$1.bin $d/got.bin"
    assert_success
    assert_same_file "$SENV_SHARE/get-$1.bin" "$d/got.bin"
    rm -f "$SENV_SHARE/get-$1.bin"
}

@test "put of a 0 B file arrives intact" { put_and_check 0; }
@test "get of a 0 B file arrives intact" { get_and_check 0; }
@test "put of a 1 B file arrives intact" { put_and_check 1; }
@test "get of a 1 B file arrives intact" { get_and_check 1; }
@test "put of a 4 KiB file arrives intact" { put_and_check 4096; }
@test "get of a 4 KiB file arrives intact" { get_and_check 4096; }
@test "put of a 1 MiB+1 file arrives intact" { put_and_check 1048577; }
@test "get of a 1 MiB+1 file arrives intact" { get_and_check 1048577; }
@test "put of a 64 MiB file arrives intact" { put_and_check 67108864; }
@test "get of a 64 MiB file arrives intact" { get_and_check 67108864; }
@test "put of a 512 MiB file arrives intact" { put_and_check 536870912; }
@test "get of a 512 MiB file arrives intact" { get_and_check 536870912; }

@test "ls lists the share's files, directories and sizes" {
    mkdir "$SENV_SHARE/ls-dir"
    senv_random_file "$SENV_SHARE/ls-file.bin" 12345
    run_smb -c 'ls'
    assert_success
    [[ "$output" =~ ls-dir[[:space:]]+D[[:space:]]+0 ]]
    [[ "$output" =~ ls-file\.bin[[:space:]]+[A-Z]+[[:space:]]+12345[[:space:]] ]]
    rm -rf "$SENV_SHARE/ls-dir" "$SENV_SHARE/ls-file.bin"
}

@test "mkdir creates a directory on the server" {
    run_smb -c 'mkdir made-dir'
    assert_success
    [ -d "$SENV_SHARE/made-dir" ]
    rmdir "$SENV_SHARE/made-dir"
}

@test "rm deletes a file on the server" {
    senv_random_file "$SENV_SHARE/doomed.bin" 100
    chmod 0666 "$SENV_SHARE/doomed.bin"
    run_smb -c 'rm doomed.bin'
    assert_success
    [ ! -e "$SENV_SHARE/doomed.bin" ]
}

@test "rmdir removes an empty directory on the server" {
    mkdir -m 0777 "$SENV_SHARE/empty-dir"
    run_smb -c 'rmdir empty-dir'
    assert_success
    [ ! -e "$SENV_SHARE/empty-dir" ]
}

@test "rename moves a file on the server and keeps its content" {
    local d
    d=$(work_dir)
    senv_random_file "$d/orig.bin" 70000
    cp "$d/orig.bin" "$SENV_SHARE/old-name.bin"
    chmod 0666 "$SENV_SHARE/old-name.bin"
    run_smb -c 'rename old-name.bin new-name.bin'
    assert_success
    [ ! -e "$SENV_SHARE/old-name.bin" ]
    assert_same_file "$d/orig.bin" "$SENV_SHARE/new-name.bin"
    rm -f "$SENV_SHARE/new-name.bin"
}

@test "mput of a directory of 1000 small files copies every file intact" {
    local d
    d=$(work_dir)
    make_small_files "$d/tree" 1000
    run_smb -c "prompt off; recurse on; lcd $d; mput tree"
    assert_success
    [ "$(tree_digest "$SENV_SHARE/tree")" = "$(tree_digest "$d/tree")" ]
    [ "$(find "$SENV_SHARE/tree" -type f | wc -l)" -eq 1000 ]
    rm -rf "$SENV_SHARE/tree"
}

@test "mget of a directory of 1000 small files copies every file intact" {
    local d
    d=$(work_dir)
    make_small_files "$SENV_SHARE/mtree" 1000
    chmod -R a+rX "$SENV_SHARE/mtree"
    mkdir "$d/dst"
    run_smb -c "prompt off; recurse on; lcd $d/dst; mget mtree"
    assert_success
    [ "$(tree_digest "$d/dst/mtree")" = "$(tree_digest "$SENV_SHARE/mtree")" ]
    [ "$(find "$d/dst/mtree" -type f | wc -l)" -eq 1000 ]
    rm -rf "$SENV_SHARE/mtree"
}

# end_line_counts OUTPUT fed|spliced|adopted — two counts from the shim's last end-of-tunnel
# line in OUTPUT: "fed", the program's bytes and how many of them its own thread sent
# (SMBDIRECT_DIRECT_SEND); "spliced", the bytes it was given and how many of them went into
# its socket by reference (SMBDIRECT_SPLICE); "adopted", the bytes it was given and how many
# of them waited for its socket in the buffer they arrived in, not copied. Fails, showing
# OUTPUT, without such a line.
end_line_counts() {
    local re counts
    case $2 in
        fed) re="of the program's \([0-9]*\) bytes, \([0-9]*\) sent from its own thread" ;;
        spliced) re="of the \([0-9]*\) it was given, \([0-9]*\) by reference" ;;
        adopted) re="of the \([0-9]*\) it was given, [0-9]* by reference, \([0-9]*\) queued without a copy" ;;
    esac
    counts=$(sed -n "s/.*$re.*/\1 \2/p" <<<"$1" | tail -n 1)
    [ -n "$counts" ] || { echo "no end-of-tunnel line in: $1" >&2; return 1; }
    echo "$counts"
}

# get_counts FILE DEST KIND — gets the share's FILE to DEST through the shim (the caller's
# environment applies), checks the copy and sets COUNTS to end_line_counts KIND.
get_counts() {
    run_smb -c "get $1 $2"
    assert_success
    assert_same_file "$SENV_SHARE/$1" "$2"
    COUNTS=$(end_line_counts "$output" "$3")
}

@test "the program's own thread sends its requests, and the engine thread with SMBDIRECT_DIRECT_SEND=off" {
    require_shim
    local d counts in fed mode
    d=$(work_dir)
    senv_random_file "$d/src.bin" 67108864
    for mode in on off; do
        SMBDIRECT_DIRECT_SEND=$mode run_smb -c "put $d/src.bin direct-$mode.bin; ls; get direct-$mode.bin $d/got-$mode.bin"
        assert_success
        assert_same_file "$d/src.bin" "$SENV_SHARE/direct-$mode.bin"
        assert_same_file "$d/src.bin" "$d/got-$mode.bin"
        counts=$(end_line_counts "$output" fed) || return 1
        read -r in fed <<<"$counts"
        echo "$mode: $fed of $in bytes sent from the program's thread" >&3
        if [ "$mode" = on ]; then
            [ "$fed" -gt $((in / 2)) ]   # smbclient writes one request at a time: nearly all
        else
            [ "$fed" -eq 0 ] # one test per line: a failed [ ] before && fails nothing
            [ "$in" -gt 0 ]
        fi
        rm -f "$SENV_SHARE/direct-$mode.bin"
    done
}

@test "a channel READ's data goes into the program's socket by reference, and with SMBDIRECT_SPLICE=off is written from its buffer, what the socket does not take queued there, not copied" {
    require_shim
    local d out spliced adopted mode
    d=$(work_dir)
    senv_random_file "$SENV_SHARE/splice.bin" 67108864
    for mode in on off; do
        SMBDIRECT_SPLICE=$mode get_counts splice.bin "$d/got-$mode.bin" spliced || return 1
        read -r out spliced <<<"$COUNTS"
        echo "$mode: $spliced of $out bytes by reference" >&3
        [ "$out" -gt 67108864 ]
        if [ "$mode" = on ]; then
            [ "$spliced" -eq 67108864 ] # every byte of READ data, none of the headers
        else
            [ "$spliced" -eq 0 ]
            read -r out adopted <<<"$(end_line_counts "$output" adopted)"
            echo "$mode: $adopted of $out bytes queued without a copy" >&3
            [ "$adopted" -gt 0 ]
        fi
    done
    rm -f "$SENV_SHARE/splice.bin"
}
