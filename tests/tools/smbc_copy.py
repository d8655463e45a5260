#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# tests/tools/smbc_copy.py — a libsmbclient program for the bats tier (smb_clients.bats):
# it moves files through python3-smbc (Samba's libsmbclient) rather than smbclient, so
# the shim is tried under a second real SMB client stack, one loaded by dlopen into an
# interpreter. Test-only, never installed. Run it with /usr/bin/python3 (the module is
# Debian's python3-smbc).
#
# Usage: smbc_copy.py [--chunk BYTES] [--user USER%PASSWORD] COMMAND... where each
# COMMAND is one of
#   put LOCAL URL    open URL for writing (created or truncated) and write LOCAL's
#                    bytes in CHUNK-sized smbc writes (default 1 MiB)
#   get URL LOCAL    read URL in CHUNK-sized smbc reads into LOCAL
#   ls URL           list the directory URL: one "NAME TYPE SIZE" line per entry
#                    (TYPE file or dir; . and .. left out), sorted by name
#   rm URL           delete the file URL
# URLs are smb://HOST/SHARE/PATH. The commands run in order in one libsmbclient
# context, so they share its connection to the server. Logs in as USER, by default as
# guest. Exit status 0 when every command succeeded, 1 at the first that failed (the
# error on stderr), 2 for bad arguments.
import os
import stat
import sys

import smbc

ARITY = {"put": 2, "get": 2, "ls": 1, "rm": 1}


def usage(msg):
    sys.stderr.write("smbc_copy: %s\nusage: smbc_copy.py [--chunk BYTES] [--user USER%%PASSWORD] "
                     "{put LOCAL URL | get URL LOCAL | ls URL | rm URL}...\n" % msg)
    sys.exit(2)


def parse(argv):
    chunk, user, password = 1 << 20, "guest", ""
    while argv[:1] in (["--chunk"], ["--user"]):
        if len(argv) < 2:
            usage("%s needs a value" % argv[0])
        if argv[0] == "--chunk":
            if not argv[1].isdigit() or int(argv[1]) == 0:
                usage("--chunk needs a positive number of bytes")
            chunk = int(argv[1])
        else:
            user, _, password = argv[1].partition("%")
        argv = argv[2:]
    cmds = []
    while argv:
        name = argv[0]
        if name not in ARITY:
            usage("unknown command %r" % name)
        if len(argv) < 1 + ARITY[name]:
            usage("%s needs %d arguments" % (name, ARITY[name]))
        cmds.append((name, argv[1:1 + ARITY[name]]))
        argv = argv[1 + ARITY[name]:]
    if not cmds:
        usage("no command")
    return chunk, (user, password), cmds


def write_all(remote, data):
    """Writes all of data to the smbc file remote (smbc_sessions.py uses it too)."""
    view = memoryview(data)
    while view:
        n = remote.write(view.tobytes())
        if n <= 0:
            raise OSError("smbc write returned %d" % n)
        view = view[n:]


def put(ctx, local, url, chunk):
    total = 0
    remote = ctx.open(url, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
    with open(local, "rb") as src:
        while True:
            data = src.read(chunk)
            if not data:
                break
            write_all(remote, data)
            total += len(data)
    remote.close()
    print("put %s -> %s: %d bytes" % (local, url, total))


def get(ctx, url, local, chunk):
    total = 0
    remote = ctx.open(url, os.O_RDONLY)
    with open(local, "wb") as dst:
        while True:
            data = remote.read(chunk)
            if not data:
                break
            dst.write(data)
            total += len(data)
    remote.close()
    print("get %s -> %s: %d bytes" % (url, local, total))


def ls(ctx, url):
    names = sorted(d.name for d in ctx.opendir(url).getdents() if d.name not in (".", ".."))
    for name in names:
        st = ctx.stat(url.rstrip("/") + "/" + name)
        kind = "dir" if stat.S_ISDIR(st[0]) else "file"
        print("%s %s %d" % (name, kind, st[6]))


def main():
    chunk, (user, password), cmds = parse(sys.argv[1:])
    ctx = smbc.Context(auth_fn=lambda server, share, workgroup, user_, password_:
                       ("WORKGROUP", user, password))
    for name, args in cmds:
        try:
            if name == "put":
                put(ctx, args[0], args[1], chunk)
            elif name == "get":
                get(ctx, args[0], args[1], chunk)
            elif name == "ls":
                ls(ctx, args[0])
            else:
                ctx.unlink(args[0])
                print("rm %s" % args[0])
        # smbc.SmbError and its kinds are OSErrors; errnos it does not map come as RuntimeError
        except (OSError, RuntimeError, ValueError) as e:
            sys.stderr.write("smbc_copy: %s %s: %s\n" % (name, " ".join(args), e))
            return 1
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
