# SPDX-License-Identifier: BSD-3-Clause
# tests/bats/local_net.bash — loopback helpers for the shim suites that need no Samba:
# a threaded TCP echo server, a free port, and waiting for a listener.

# A threaded TCP echo server: python3 -c "$ECHO_SERVER" PORT.
ECHO_SERVER='
import socketserver, sys
class Echo(socketserver.BaseRequestHandler):
    def handle(self):
        try:
            while True:
                data = self.request.recv(65536)
                if not data:
                    return
                self.request.sendall(data)
        except OSError:
            return
socketserver.ThreadingTCPServer.allow_reuse_address = True
socketserver.ThreadingTCPServer(("127.0.0.1", int(sys.argv[1])), Echo).serve_forever()
'

# free_port — prints a TCP port free on 127.0.0.1.
free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# wait_listening PORT — up to 5 s for a listener on 127.0.0.1:PORT (checked with ss, so
# the wait itself opens no connection).
wait_listening() {
    local i
    for i in $(seq 50); do
        ss -ltnH "sport = :$1" | grep -q . && return 0
        sleep 0.1
    done
    echo "nothing listens on 127.0.0.1:$1" >&2
    return 1
}
