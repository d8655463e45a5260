#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# tests/bats/smb_signing.bats — the shim learns each signed session's signing key inside
# the program (preload/interpose_gnutls.c: the GnuTLS calls through which Samba signs) and
# proves it holds the right one: it checks every signed request of at most 64 KiB the
# program sends on the tunnel with the learned key, and its end-of-tunnel line counts them
# ("its signed requests: N verified, N failed, N without a key, N too large to check").
# Nothing on the wire changes. Against
# a real smbd with "server signing = mandatory" on 127.0.0.35, smbclient through the shim
# and relay puts and gets 4 MiB at SMB 3.1.1 with each signing algorithm smbclient 4.17
# can ask for (AES-128-GMAC, what both sides choose by default; AES-128-CMAC; HMAC-SHA256),
# at 3.0 (AES-128-CMAC) and at 2.1 (HMAC-SHA256); smbget and Python's libsmbclient
# (dlopen()ed without RTLD_GLOBAL) too. Samba's "debug encryption" makes smbclient print
# its session and signing keys: none of their bytes may appear in the shim's debug log. A
# sealed session's encryption keys are not learned, LOGOFF wipes its session's key, and a
# program using GnuTLS for something else (wget over TLS) is untouched.

load helpers

setup_file() {
    suite_start 127.0.0.35 signing=mandatory guest=no || return 1
    senv_add_user || { suite_stop; return 1; }
    export SENV_USER SENV_PASS
    senv_random_file "$BATS_FILE_TMPDIR/src.bin" $((4 << 20))
}
teardown_file() { suite_stop; }
setup() { require_shim; }
teardown() { dump_logs_on_failure; remove_work_dir; }

# debug_client COMMAND... — run_client (one SMB Direct connection, no error from the shim)
# with the shim logging at debug.
debug_client() { SMBDIRECT_LOG=debug run_client "$@"; }

# smb_signed [smbclient args...] — smbclient as the real user through the shim, at debug.
smb_signed() { debug_client smbclient "//$SENV_ADDR/share" "$(senv_user_auth)" "$@"; }

# signed_counts — "VERIFIED FAILED NO_KEY" from the shim's end-of-tunnel line in $output.
signed_counts() {
    sed -n 's/.*tunnel ended .*its signed requests: \([0-9]*\) verified, \([0-9]*\) failed, \([0-9]*\) without a key.*/\1 \2 \3/p' <<<"$output"
}

# assert_all_verified — the run's one tunnel checked some signed requests, every one with
# the learned key.
assert_all_verified() {
    local counts
    counts=$(signed_counts)
    echo "signed requests (verified failed without-key): $counts" >&3
    [[ "$counts" =~ ^[1-9][0-9]*\ 0\ 0$ ]] || { echo "counts: '$counts'" >&2; return 1; }
}

# assert_learned ALGORITHM — the shim learned one signing key, of ALGORITHM, and a request
# on the tunnel proved it.
assert_learned() {
    [ "$(grep -Ec "debug: learned signing key for SMB2 session 0x[0-9a-f]{16} \($1\)" <<<"$output")" -eq 1 ]
    grep -Eq "debug: signing key of SMB2 session 0x[0-9a-f]{16} \($1\) proved by a request on its tunnel" <<<"$output"
}

# put_get_signed ALGORITHM [smbclient args...] — puts and gets the 4 MiB file in a signed
# session; both copies intact, the key of ALGORITHM learned, every signed request verified.
put_get_signed() {
    local algo=$1 d
    shift
    d=$(work_dir)
    smb_signed "$@" -c "put $BATS_FILE_TMPDIR/src.bin t$BATS_TEST_NUMBER.bin; get t$BATS_TEST_NUMBER.bin $d/back.bin"
    assert_success
    assert_same_file "$BATS_FILE_TMPDIR/src.bin" "$SENV_SHARE/t$BATS_TEST_NUMBER.bin"
    assert_same_file "$BATS_FILE_TMPDIR/src.bin" "$d/back.bin"
    assert_learned "$algo"
    assert_all_verified
    # the relay holds no keys and says so in its reply: the signed data stayed inline
    grep -q "debug: the server is a keyless relay" <<<"$output"
    ! grep -q "RDMA channel: " <<<"$output"
}

# dumped_key NAME — the key smbclient printed as "NAME [0000] XX XX ..." ("debug
# encryption = yes"), as 32 hex digits.
dumped_key() {
    awk -v name="$1" 'index($0, name " ") == 1 && $0 ~ /\[0000\]/ {
        for (i = 1; i <= NF; i++) if ($i == "[0000]") break
        for (j = i + 1; j <= i + 16; j++) printf "%s", $j
        print ""; exit }' <<<"$output"
}

# refute_key_in_shim_log HEX — no line of the shim holds 4 bytes in a row of key HEX, as
# hex in either case, in a row or spaced.
refute_key_in_shim_log() {
    local shim i w spaced
    shim=$(grep -E '^smbdirect\[[0-9]+\] ' <<<"$output")
    [ -n "$shim" ]
    for ((i = 0; i + 8 <= ${#1}; i += 2)); do
        w=${1:i:8}
        spaced="${w:0:2} ${w:2:2} ${w:4:2} ${w:6:2}"
        if grep -iqF -e "$w" -e "$spaced" <<<"$shim"; then
            echo "key bytes $w appear in the shim's log" >&2
            return 1
        fi
    done
}

@test "SMB 3.1.1, AES-128-GMAC (both sides' default): 4 MiB put and get intact, every signed request verified with the learned key" {
    put_get_signed AES-128-GMAC -m SMB3_11
}

@test "SMB 3.1.1, AES-128-CMAC (client smb3 signing algorithms): every signed request verified" {
    put_get_signed AES-128-CMAC -m SMB3_11 --option='client smb3 signing algorithms=AES-128-CMAC'
}

@test "SMB 3.1.1, HMAC-SHA256 (client smb3 signing algorithms): every signed request verified" {
    put_get_signed HMAC-SHA256 -m SMB3_11 --option='client smb3 signing algorithms=HMAC-SHA256'
}

@test "SMB 3.0, AES-128-CMAC: 4 MiB put and get intact, every signed request verified" {
    put_get_signed AES-128-CMAC -m SMB3_00
}

@test "SMB 2.1, HMAC-SHA256: 4 MiB put and get intact, every signed request verified" {
    put_get_signed HMAC-SHA256 -m SMB2_10
}

@test "no byte of the session or signing key smbclient dumps (debug encryption) is in the shim's debug log, at 3.1.1 and 3.0" {
    local m sig sk
    for m in SMB3_11 SMB3_00; do
        smb_signed -m "$m" --option='debug encryption=yes' -c 'ls'
        assert_success
        sig=$(dumped_key 'Signing Key') sk=$(dumped_key 'Session Key')
        [[ "$sig" =~ ^[0-9A-F]{32}$ && "$sk" =~ ^[0-9A-F]{32}$ ]] || { echo "no keys dumped: '$sig' '$sk'" >&2; return 1; }
        assert_all_verified
        grep -Eq "debug: learned signing key for SMB2 session 0x[0-9a-f]{16} \(AES-128-(GMAC|CMAC)\)" <<<"$output"
        refute_key_in_shim_log "$sig"
        refute_key_in_shim_log "$sk"
    done
}

@test "LOGOFF wipes the session's key; the tunnel's end wipes the rest" {
    smb_signed -m SMB3_11 -c 'ls; logoff'
    assert_success
    grep -Eq "debug: signing key of SMB2 session 0x[0-9a-f]{16} wiped: the session ended \(LOGOFF\)" <<<"$output"
    smb_signed -m SMB3_11 -c 'ls'
    assert_success
    grep -q "debug: 1 signing key(s) wiped: their tunnel ended" <<<"$output"
}

@test "a sealed session: its encryption keys are never learned, the data arrives intact" {
    local d
    d=$(work_dir)
    smb_signed -m SMB3_11 --client-protection=encrypt \
        -c "put $BATS_FILE_TMPDIR/src.bin sealed.bin; get sealed.bin $d/back.bin"
    assert_success
    assert_same_file "$BATS_FILE_TMPDIR/src.bin" "$d/back.bin"
    # only the signing key (the final SESSION_SETUP response is signed, not sealed); every
    # later message is sealed, so no signed SMB2 header goes by
    [ "$(grep -c 'debug: learned signing key' <<<"$output")" -eq 1 ]
    [ "$(signed_counts)" = "0 0 0" ]
}

@test "smbget (libsmbclient linked in) and Python's libsmbclient (dlopen()ed): keys learned, every signed request verified" {
    local d
    d=$(work_dir)
    cp "$BATS_FILE_TMPDIR/src.bin" "$SENV_SHARE/lib.bin"
    debug_client smbget "--user=$SENV_USER%$SENV_PASS" --nonprompt --quiet \
        --outputfile "$d/smbget.bin" "smb://$SENV_ADDR/share/lib.bin"
    assert_success
    assert_same_file "$BATS_FILE_TMPDIR/src.bin" "$d/smbget.bin"
    assert_learned AES-128-GMAC
    assert_all_verified
    debug_client "$PYTHON" "$SMBC_COPY" --user "$SENV_USER%$SENV_PASS" \
        put "$BATS_FILE_TMPDIR/src.bin" "smb://$SENV_ADDR/share/py.bin" \
        get "smb://$SENV_ADDR/share/py.bin" "$d/py.bin"
    assert_success
    assert_same_file "$BATS_FILE_TMPDIR/src.bin" "$SENV_SHARE/py.bin"
    assert_same_file "$BATS_FILE_TMPDIR/src.bin" "$d/py.bin"
    assert_learned AES-128-GMAC
    assert_all_verified
}

@test "a program using GnuTLS for TLS, not SMB, works through the shim: wget fetches a page over HTTPS" {
    local d pid
    d=$(work_dir)
    openssl req -x509 -newkey rsa:2048 -nodes -keyout "$d/key.pem" -out "$d/cert.pem" \
        -subj /CN=smbdirect-test -days 1 2>/dev/null
    openssl s_server -accept "$SENV_ADDR:8443" -cert "$d/cert.pem" -key "$d/key.pem" -www \
        -naccept 1 </dev/null >"$d/server.log" 2>&1 &
    pid=$!
    senv_wait_listen "$SENV_ADDR" 8443 10 "$pid"
    run env SMBDIRECT_LOG=debug timeout 60 "$SENV_WRAPPER_BIN" wget -q -O - --no-check-certificate \
        "https://$SENV_ADDR:8443/"
    wait "$pid" || true
    assert_success
    grep -q "Ciphers supported in s_server binary" <<<"$output"
    refute grep -q "signing key" <<<"$output"
}
