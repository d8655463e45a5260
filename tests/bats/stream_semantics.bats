#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# tests/bats/stream_semantics.bats — the tunnel behaves like the TCP connection it
# replaces, seen from a program under the shim: smbdirect-relay (soft-iWARP) in front of
# a plain TCP backend that pushes Direct-TCP frames (4-byte length + payload), no Samba.
# An orderly close by the backend delivers every byte to a slow reader before EOF, a
# reader that stops reading for longer than the keepalive interval and timeout holds the
# peer back (credits) instead of losing the connection, and what a program writes just
# before it exits (its socket still open) reaches the backend, as with TCP.

load local_net

ROOT="$BATS_TEST_DIRNAME/../.."
BUILD_DIR="$(cd "${SENV_BUILD:-$ROOT/build}" && pwd)" # the build under test
SHIM="$BUILD_DIR/libsmbdirect.so"
RELAY="$BUILD_DIR/smbdirect-relay"

# The backend: PORT COUNT SIZE CLOSE. Each connection gets COUNT frames of SIZE bytes
# (frame i is filled with byte i), then the backend closes at once (CLOSE=close) or waits
# for the program's EOF (CLOSE=wait).
PUSHER='
import socket, socketserver, struct, sys
port, count, size, close = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
class Push(socketserver.BaseRequestHandler):
    def handle(self):
        try:
            for i in range(count):
                self.request.sendall(struct.pack(">I", size) + bytes([i & 0xFF]) * size)
            if close == "wait":
                while self.request.recv(65536):
                    pass
            self.request.shutdown(socket.SHUT_WR)
        except OSError:
            return
socketserver.ThreadingTCPServer.allow_reuse_address = True
socketserver.ThreadingTCPServer(("127.0.0.1", port), Push).serve_forever()
'

# The program: PORT COUNT SIZE PAUSE_S CHUNK GAP_MS. Connects (tunneled), sleeps PAUSE_S
# without reading, then reads CHUNK bytes every GAP_MS until it has every frame or the
# connection ends, then waits up to 10 s for what follows (EOF, an error, or nothing);
# prints what it got and whether every frame was intact.
READER='
import socket, struct, sys, time
port, count, size, pause, chunk, gap = [int(a) for a in sys.argv[1:7]]
want = b"".join(struct.pack(">I", size) + bytes([i & 0xFF]) * size for i in range(count))
s = socket.create_connection(("127.0.0.1", port))
time.sleep(pause)
got = bytearray()
end = None
while len(got) < len(want):
    try:
        d = s.recv(min(chunk, len(want) - len(got)))
    except OSError as e:
        end = e.strerror
        break
    if not d:
        end = "EOF"
        break
    got += d
    time.sleep(gap / 1000.0)
if end is None:
    s.settimeout(10)
    try:
        end = "EOF" if s.recv(1) == b"" else "more data"
    except socket.timeout:
        end = "nothing (still open)"
    except OSError as e:
        end = e.strerror
print("read %d of %d bytes, then %s" % (len(got), len(want), end))
print("intact" if bytes(got) == want else "CORRUPT")
'

# The backend for writers: PORT. Reads each connection to its end and prints, flushed,
# "received N bytes, intact" (frame i filled with byte i) or "..., CORRUPT".
SINK='
import socketserver, struct, sys
class Sink(socketserver.BaseRequestHandler):
    def handle(self):
        got = bytearray()
        while True:
            d = self.request.recv(1 << 20)
            if not d:
                break
            got += d
        ok, off, i = True, 0, 0
        while off < len(got) and ok:
            size = struct.unpack(">I", got[off:off + 4])[0]
            ok = got[off + 4:off + 4 + size] == bytes([i & 0xFF]) * size
            off, i = off + 4 + size, i + 1
        print("received %d bytes, %s" % (len(got), "intact" if ok else "CORRUPT"), flush=True)
socketserver.ThreadingTCPServer.allow_reuse_address = True
socketserver.ThreadingTCPServer(("127.0.0.1", int(sys.argv[1])), Sink).serve_forever()
'

# The program that writes and exits: PORT COUNT SIZE. Writes COUNT frames through a
# duplicate of its socket fd, which it never closes, and returns from main at once: the
# socket is still open when the process exits.
WRITER='
import os, socket, struct, sys
port, count, size = [int(a) for a in sys.argv[1:4]]
s = socket.create_connection(("127.0.0.1", port))
fd = os.dup(s.fileno())
for i in range(count):
    data = struct.pack(">I", size) + bytes([i & 0xFF]) * size
    while data:
        data = data[os.write(fd, data):]
'

# start RELAY_ARGS... — the pusher (PUSH_COUNT, PUSH_SIZE, PUSH_CLOSE; PUSH_CLOSE=sink:
# the sink instead) and the relay.
start() {
    WORK=$(mktemp -d)
    PUSH_PORT=$(free_port)
    RELAY_PORT=$(free_port)
    if [ "${PUSH_CLOSE:-}" = sink ]; then
        python3 -c "$SINK" "$PUSH_PORT" >"$WORK/pusher.log" 2>&1 &
    else
        python3 -c "$PUSHER" "$PUSH_PORT" "$PUSH_COUNT" "$PUSH_SIZE" "$PUSH_CLOSE" \
            >"$WORK/pusher.log" 2>&1 &
    fi
    PUSH_PID=$!
    # SIGTERM ends it at once, no status socket; the caller's flags win
    "$RELAY" --listen "127.0.0.1:$RELAY_PORT" --backend "127.0.0.1:$PUSH_PORT" \
        --drain-time 0 --status-socket none "$@" >"$WORK/relay.log" 2>&1 &
    RELAY_PID=$!
    wait_listening "$PUSH_PORT"
    wait_listening "$RELAY_PORT"
}

# read_via_shim PAUSE_S CHUNK GAP_MS [VAR=VALUE...] — the program through the shim.
read_via_shim() {
    run timeout 120 env LD_PRELOAD="$SHIM" SMBDIRECT_TRANSPORT=soft \
        SMBDIRECT_PORTS="$PUSH_PORT" SMBDIRECT_PORTMAP="$PUSH_PORT:$RELAY_PORT" \
        SMBDIRECT_FALLBACK=none SMBDIRECT_LOG=info "${@:4}" \
        python3 -c "$READER" "$PUSH_PORT" "$PUSH_COUNT" "$PUSH_SIZE" "$1" "$2" "$3"
}

teardown() {
    kill "$RELAY_PID" "$PUSH_PID" 2>/dev/null || true
    wait "$RELAY_PID" "$PUSH_PID" 2>/dev/null || true
    if [ -z "${BATS_TEST_COMPLETED:-}" ]; then
        echo "$output" >&2
        cat "$WORK/relay.log" >&2
    fi
    rm -rf "$WORK"
}

@test "the backend sends 16 MiB and closes at once: a slow reader gets every byte, then EOF" {
    PUSH_COUNT=16 PUSH_SIZE=1048576 PUSH_CLOSE=close
    start
    read_via_shim 0 262144 20
    [ "$status" -eq 0 ]
    [[ "$output" == *"read 16777280 of 16777280 bytes, then EOF"* ]]
    [[ "$output" == *intact* ]]
}

@test "a reader paused past the keepalive interval and timeout holds the peer back and then gets all 32 MiB" {
    PUSH_COUNT=32 PUSH_SIZE=1048576 PUSH_CLOSE=wait
    start --keepalive 1
    read_via_shim 12 1048576 0 SMBDIRECT_KEEPALIVE=1
    [ "$status" -eq 0 ]
    [[ "$output" == *"read 33554560 of 33554560 bytes, then nothing (still open)"* ]]
    [[ "$output" == *intact* ]]
    [[ "$output" != *"did not answer a keepalive"* ]]
    if grep -q "did not answer a keepalive" "$WORK/relay.log"; then false; fi
}

@test "a program that writes 32 MiB and exits with its socket open: every byte reaches the backend, and the tunnel ends in order before the exit" {
    PUSH_COUNT=32 PUSH_SIZE=1048576 PUSH_CLOSE=sink
    start
    run timeout 60 env LD_PRELOAD="$SHIM" SMBDIRECT_TRANSPORT=soft \
        SMBDIRECT_PORTS="$PUSH_PORT" SMBDIRECT_PORTMAP="$PUSH_PORT:$RELAY_PORT" \
        SMBDIRECT_FALLBACK=none SMBDIRECT_LOG=info \
        python3 -c "$WRITER" "$PUSH_PORT" "$PUSH_COUNT" "$PUSH_SIZE"
    [ "$status" -eq 0 ]
    # logged by the engine thread before the process was gone, not "still open"
    [[ "$output" == *"tunnel ended (closed by the program)"* ]]
    [[ "$output" != *"still open after"* ]]
    for _ in $(seq 50); do
        grep -q "^received" "$WORK/pusher.log" && break
        sleep 0.1
    done
    grep -qx "received 33554560 bytes, intact" "$WORK/pusher.log"
}
