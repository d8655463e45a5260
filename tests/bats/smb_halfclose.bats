#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# tests/bats/smb_halfclose.bats — TCP's half-close through the tunnel, against a real smbd
# on 127.0.0.24 behind the relay: a program under the shim sends an SMB2 NEGOTIATE and
# at once shutdown(SHUT_WR)s its socket, as a TCP client may; a TCP server still answers
# what it was asked before it closes, so the program must read the NEGOTIATE response,
# then EOF. (SMB Direct has no half-close: the shim keeps the connection up until every
# request has its answer, MS-SMB2 3.2.1.2 OutstandingRequests.)

load helpers

teardown() { dump_logs_on_failure; suite_stop; }

# The program: sends NEGOTIATE (SMB 2.1) in one Direct-TCP frame, shuts its write side,
# reads until EOF (a timeout or a reset raises and fails the program); prints the
# response's command, status, dialect and length, then "EOF after N bytes".
HALF_CLOSE='
import socket, struct, sys
s = socket.create_connection((sys.argv[1], 445))
hdr = b"\xfeSMB" + struct.pack("<HHIHHIIQIIQ16s", 64, 0, 0, 0, 1, 0, 0, 0, 0xFEFF, 0, 0, b"")
body = struct.pack("<HHHHI16sQH", 36, 1, 1, 0, 0, b"halfclose-test00", 0, 0x0210)
msg = hdr + body
s.sendall(struct.pack(">I", len(msg)) + msg)
s.shutdown(socket.SHUT_WR)
got = b""
s.settimeout(15)
while True:
    d = s.recv(65536)
    if not d:
        break
    got += d
if len(got) >= 4 + 64 + 6:
    cmd, status = struct.unpack_from("<H", got, 4 + 12)[0], struct.unpack_from("<I", got, 4 + 8)[0]
    dialect = struct.unpack_from("<H", got, 4 + 64 + 4)[0]
    print("response command %d status 0x%08x dialect 0x%04x, %d bytes" % (cmd, status, dialect, len(got)))
print("EOF after %d bytes" % len(got))
'

@test "a program that half-closes after its request still reads the answer, then EOF" {
    require_shim
    suite_start 127.0.0.24 signing=disabled
    run timeout 30 env SMBDIRECT_TRANSPORT=soft SMBDIRECT_FALLBACK=none SMBDIRECT_LOG=info \
        "$SENV_BUILD/smbdirect" python3 -c "$HALF_CLOSE" "$SENV_ADDR"
    [ "$status" -eq 0 ]
    [[ "$output" == *"tunneled over SMB Direct"* ]]
    [[ "$output" =~ "response command 0 status 0x00000000 dialect 0x0210, "([0-9]+)" bytes" ]]
    # EOF came right after the whole response: nothing lost, nothing after it
    [[ "$output" == *"EOF after ${BASH_REMATCH[1]} bytes"* ]]
}
