#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# tests/bats/shim_tunnel.bats — the socketpair swap seen from a program, without Samba:
# smbdirect-relay (soft-iWARP) in front of a TCP echo server that returns the SMB2
# Direct-TCP frames it gets, and a Python client under LD_PRELOAD=build/libsmbdirect.so
# that connects to the echo port (tunneled through SMBDIRECT_PORTS/_PORTMAP). Checks
# what the program sees: non-blocking connect returns 0 with O_NONBLOCK and FD_CLOEXEC
# kept, inet names and options, EISCONN, framed data both ways, a fork child using the
# inherited fd, and EOF/an error (never a hang) when the relay dies.

load local_net

ROOT="$BATS_TEST_DIRNAME/../.."
BUILD_DIR="$(cd "${SENV_BUILD:-$ROOT/build}" && pwd)" # the build under test
SHIM="$BUILD_DIR/libsmbdirect.so"
RELAY="$BUILD_DIR/smbdirect-relay"

# The client: one line per check, "ok NAME" or "FAIL NAME ...".
CLIENT='
import fcntl, os, select, socket, struct, sys
port, mode = int(sys.argv[1]), sys.argv[2]
def frame(b): return struct.pack(">I", len(b)) + b
def check(name, cond, extra=""):
    print(("ok " if cond else "FAIL ") + name, extra, flush=True)
def recv_exact(s, n, timeout=10):
    got = bytearray()
    while len(got) < n:
        if not select.select([s], [], [], timeout)[0]:
            break
        d = s.recv(min(n - len(got), 1 << 20))
        if not d:
            break
        got += d
    return bytes(got)
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
s.setblocking(False)
try:
    rc = s.connect_ex(("127.0.0.1", port))
except OSError as e:
    rc = e.errno
check("connect-returns-0", rc == 0, rc)
check("nonblock-kept", fcntl.fcntl(s.fileno(), fcntl.F_GETFL) & os.O_NONBLOCK)
check("cloexec-kept", fcntl.fcntl(s.fileno(), fcntl.F_GETFD) & fcntl.FD_CLOEXEC)
check("peername", s.getpeername() == ("127.0.0.1", port), s.getpeername())
check("sockname-inet", isinstance(s.getsockname(), tuple), s.getsockname())
check("so-domain", s.getsockopt(socket.SOL_SOCKET, socket.SO_DOMAIN) == socket.AF_INET)
check("tcp-nodelay", s.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 1)
check("eisconn", s.connect_ex(("127.0.0.1", port)) == 106)
s.setblocking(True)
msg = b"\xfeSMB" + os.urandom(300000)
s.sendall(frame(msg))
check("echo", recv_exact(s, 4 + len(msg)) == frame(msg))
if mode == "fork":
    pid = os.fork()
    if pid == 0:
        s.sendall(frame(b"\xfeSMBchild"))
        os._exit(0 if recv_exact(s, 13) == frame(b"\xfeSMBchild") else 1)
    check("fork-child", os.WEXITSTATUS(os.waitpid(pid, 0)[1]) == 0)
    s.sendall(frame(b"\xfeSMBparent"))
    check("parent-after-fork", recv_exact(s, 14) == frame(b"\xfeSMBparent"))
if mode == "random":
    # Randomized traffic between two processes (this one and the relay): frames of
    # 0 B .. 8 MiB, sent by one thread while another reads the echo and compares.
    import random, threading
    rng = random.Random(int(sys.argv[3]))
    sizes = [rng.choice([0, 1, 4, 100, 1364, 8136, 8137, 65536, 1 << 20, 8 << 20])
             + rng.randrange(0, 64) for _ in range(int(sys.argv[4]))]
    sizes = [max(1, min(n, 8 << 20)) for n in sizes]   # SMB2 never sends an empty frame
    frames = [frame(os.urandom(n)) for n in sizes]
    t = threading.Thread(target=lambda: [s.sendall(f) for f in frames])
    t.start()
    bad = [i for i, f in enumerate(frames) if recv_exact(s, len(f), 30) != f]
    t.join()
    check("random-echo", not bad, "frames %d bytes %d bad %s" % (len(frames), sum(sizes), bad[:3]))
if mode == "empty":
    # An empty frame cannot cross SMB Direct (an empty Data Transfer is a credit or
    # keepalive message): the connection ends with EOF instead of losing it silently.
    s.sendall(frame(b""))
    check("eof-after-empty-frame", recv_exact(s, 1, 10) == b"")
    try:
        s.sendall(frame(b"\xfeSMB after"))   # discarded, no EPIPE/SIGPIPE
        check("write-after-end-no-epipe", True)
    except OSError as e:
        check("write-after-end-no-epipe", False, e.errno)
if mode == "lost":
    print("waiting", flush=True)
    sys.stdin.readline()          # the test kills the relay, then writes a line
    try:
        r = select.select([s], [], [], 15)[0]
        d = s.recv(100) if r else None
        check("eof-after-loss", d == b"", d)
    except OSError as e:
        check("eof-after-loss", True, e.errno)
s.close()
'

setup() {
    [ -f "$SHIM" ] && [ -x "$RELAY" ] || { echo "build first: make" >&2; return 1; }
    WORK=$(mktemp -d)
    ECHO_PORT=$(free_port)
    RELAY_PORT=$(free_port)
    python3 -c "$ECHO_SERVER" "$ECHO_PORT" >"$WORK/echo.log" 2>&1 &
    ECHO_PID=$!
    # SIGTERM ends it at once (the relay-dies case), no status socket
    "$RELAY" --listen "127.0.0.1:$RELAY_PORT" --backend "127.0.0.1:$ECHO_PORT" \
        --drain-time 0 --status-socket none >"$WORK/relay.log" 2>&1 &
    RELAY_PID=$!
    wait_listening "$ECHO_PORT"
    wait_listening "$RELAY_PORT"
    export LD_PRELOAD="$SHIM" SMBDIRECT_TRANSPORT=soft SMBDIRECT_PORTS="$ECHO_PORT" \
        SMBDIRECT_PORTMAP="$ECHO_PORT:$RELAY_PORT" SMBDIRECT_FALLBACK=none SMBDIRECT_LOG=info
}

teardown() {
    unset LD_PRELOAD
    kill "$RELAY_PID" "$ECHO_PID" 2>/dev/null || true
    wait "$RELAY_PID" "$ECHO_PID" 2>/dev/null || true
    [ -z "${BATS_TEST_COMPLETED:-}" ] && cat "$WORK/relay.log" >&2
    rm -rf "$WORK"
}

assert_all_ok() {
    if [[ "$output" == *FAIL* ]] || [ "$status" -ne 0 ]; then
        echo "$output" >&2
        return 1
    fi
}

@test "a tunneled socket looks like a connected TCP socket and carries frames both ways" {
    run timeout 30 python3 -c "$CLIENT" "$ECHO_PORT" plain
    assert_all_ok
    [[ "$output" == *"ok echo"* ]]
    [[ "$output" == *"tunneled over SMB Direct (soft, port $RELAY_PORT)"* ]]
    grep -q 'relay: conn 1 from .* established' "$WORK/relay.log"
}

# An event loop that registers the socket with epoll before connect() (libuv, libevent,
# asyncio do): the registration must report the tunnel's readiness after the swap.
EPOLL_FIRST='
import os, select, socket, struct, sys
port = int(sys.argv[1])
def check(name, cond, extra=""):
    print(("ok " if cond else "FAIL ") + name, extra, flush=True)
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.setblocking(False)
ep = select.epoll()
ep.register(s.fileno(), select.EPOLLIN | select.EPOLLOUT)
rc = s.connect_ex(("127.0.0.1", port))
check("connect", rc in (0, 115), rc)
ev = ep.poll(10)
check("epoll-writable-after-connect", any(e & select.EPOLLOUT for _, e in ev), ev)
ep.modify(s.fileno(), select.EPOLLIN)
msg = b"\xfeSMB" + os.urandom(2000)
s.send(struct.pack(">I", len(msg)) + msg)
got = b""
while len(got) < len(msg) + 4:
    ev = ep.poll(10)
    if not ev:
        break
    got += s.recv(65536)
check("epoll-reports-the-echo", got == struct.pack(">I", len(msg)) + msg, len(got))
'

@test "an epoll registration made before connect() reports the tunnel's readiness" {
    run timeout 30 python3 -c "$EPOLL_FIRST" "$ECHO_PORT"
    assert_all_ok
    [[ "$output" == *"ok epoll-writable-after-connect"* ]]
    [[ "$output" == *"ok epoll-reports-the-echo"* ]]
    [[ "$output" == *"tunneled over SMB Direct"* ]]
}

@test "a fork child uses the inherited tunnel, and the parent keeps using it" {
    run timeout 30 python3 -c "$CLIENT" "$ECHO_PORT" fork
    assert_all_ok
    [[ "$output" == *"ok fork-child"* ]]
    [[ "$output" == *"ok parent-after-fork"* ]]
}

@test "randomized SMB2 frames between two processes over soft-iWARP come back intact" {
    local seed=$RANDOM
    echo "seed $seed" >&2
    run timeout 120 python3 -c "$CLIENT" "$ECHO_PORT" random "$seed" 200
    assert_all_ok
    [[ "$output" == *"ok random-echo"* ]]
    grep -q 'relay: conn 1 from .* established' "$WORK/relay.log"
}

@test "an empty SMB2 frame ends the tunnel with EOF and a log line, never vanishes silently" {
    run timeout 30 python3 -c "$CLIENT" "$ECHO_PORT" empty
    assert_all_ok
    [[ "$output" == *"ok eof-after-empty-frame"* ]]
    [[ "$output" == *"ok write-after-end-no-epipe"* ]]
    [[ "$output" == *"error: SMB Direct connection closed: stream: a zero-length SMB2 message"* ]]
}

@test "the relay dies: the program reads EOF or an error, no hang" {
    coproc CL { timeout 30 python3 -c "$CLIENT" "$ECHO_PORT" lost 2>&1; }
    local line out=""
    while IFS= read -r -u "${CL[0]}" line; do
        out+="$line"$'\n'
        [ "$line" = waiting ] && break
    done
    kill "$RELAY_PID"
    wait "$RELAY_PID" 2>/dev/null || true
    echo go >&"${CL[1]}"
    while IFS= read -r -u "${CL[0]}" line; do out+="$line"$'\n'; done
    wait "$CL_PID" || true
    output=$out status=0
    assert_all_ok
    [[ "$output" == *"ok eof-after-loss"* ]]
}
