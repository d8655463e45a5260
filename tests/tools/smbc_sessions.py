#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# tests/tools/smbc_sessions.py — many SMB sessions live at once from one process, for the
# bats tier (smb_limits.bats): each session is its own libsmbclient context (python3-smbc),
# so its own connection to the server. Test-only, never installed. Run it with
# /usr/bin/python3 (the module is Debian's python3-smbc).
#
# Usage: smbc_sessions.py URL DIR FIRST COUNT GO
#   For each session i in FIRST .. FIRST+COUNT-1, in turn: a new context opens
#   URL/s<i>.bin for reading and writing (created or truncated) and writes the bytes of
#   DIR/up<i>.bin, keeping the file open. Once all are open it prints "open COUNT" and
#   waits (up to 120 s) for the file GO to exist; then each session reads its file back
#   from its start into DIR/got<i>.bin, checks that it holds what was written, and
#   closes. Prints "checked COUNT" at the end.
# Exit status 0 when every session did so, 1 at the first failure (the error on stderr),
# 2 for bad arguments. URL is smb://HOST/SHARE[/PATH]; the sessions are guests'.
import os
import sys
import time

import smbc

sys.dont_write_bytecode = True  # importing its neighbour leaves no __pycache__ in the tree
from smbc_copy import write_all  # noqa: E402

HOLD_S = 120


def usage(msg):
    sys.stderr.write("smbc_sessions: %s\nusage: smbc_sessions.py URL DIR FIRST COUNT GO\n"
                     % msg)
    sys.exit(2)


def parse(argv):
    if len(argv) != 5:
        usage("wrong number of arguments")
    url, folder, first, count, go = argv
    if not first.isdigit() or not count.isdigit() or int(count) == 0:
        usage("FIRST must be a whole number and COUNT a positive one")
    return url.rstrip("/"), folder, int(first), int(count), go


def read_all(remote, size):
    got = bytearray()
    while len(got) < size:
        data = remote.read(size - len(got))
        if not data:
            break
        got += data
    return bytes(got)


def main():
    url, folder, first, count, go = parse(sys.argv[1:])
    sessions, at = [], first
    try:
        for i in range(first, first + count):
            at = i
            with open(os.path.join(folder, "up%d.bin" % i), "rb") as src:
                data = src.read()
            ctx = smbc.Context(auth_fn=lambda *asked: ("WORKGROUP", "guest", ""))
            remote = ctx.open("%s/s%d.bin" % (url, i), os.O_CREAT | os.O_RDWR | os.O_TRUNC, 0o644)
            write_all(remote, data)
            sessions.append((i, ctx, remote, data))
        print("open %d" % len(sessions), flush=True)
        deadline = time.monotonic() + HOLD_S
        while not os.path.exists(go):
            if time.monotonic() > deadline:
                raise TimeoutError("%s did not appear within %d s" % (go, HOLD_S))
            time.sleep(0.05)
        for i, ctx, remote, data in sessions:
            at = i
            remote.seek(0)
            got = read_all(remote, len(data))
            with open(os.path.join(folder, "got%d.bin" % i), "wb") as dst:
                dst.write(got)
            if got != data:
                raise ValueError("session %d read back %d bytes that differ from the %d "
                                 "it wrote" % (i, len(got), len(data)))
            remote.close()
    # smbc.SmbError and its kinds are OSErrors; errnos it does not map come as RuntimeError
    except (OSError, RuntimeError, ValueError) as e:
        sys.stderr.write("smbc_sessions: session %d: %s\n" % (at, e))
        return 1
    print("checked %d" % len(sessions), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
