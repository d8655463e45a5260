#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""tests/bench/smb_latency.py — small-request latency probe for scripts/bench (issue P3).

Opens one libsmbclient context (python3-smbc) on smb://ADDR/SHARE, opens FILE there once,
then times N fstat() calls on the open handle, one by one, with time.perf_counter_ns, after
WARMUP untimed ones. Each fstat() is exactly one SMB2 QUERY_INFO request and its response:
one round trip to the server, nothing answered from a libsmbclient cache (Samba 4.17.12;
checked with tshark on port 445: N=500 WARMUP=100 over TCP put 602 QUERY_INFO requests and
602 responses on the wire, N=10 WARMUP=0 put 12, over TCP and, through the shim, on the
relay's hop to smbd alike: one per fstat(), the one that reads the size included, plus one
sent by open(), beside the session's one-off NEGOTIATE, SESSION_SETUP, TREE_CONNECT,
CREATE, CLOSE...). scripts/bench runs it over TCP and with the shim preloaded.

Usage: smb_latency.py ADDR SHARE FILE N [WARMUP]
Credentials: SMB_LAT_USER and SMB_LAT_PASS from the environment (guest when unset).
Prints one line:  calls=N round_trips_per_call=1 p50_us=X p99_us=Y min_us=Z max_us=W
(percentiles by nearest rank over the N timed calls, per call = per round trip).
Exits non-zero, printing nothing on stdout, when a call fails.
"""

import gc
import math
import os
import sys
import time

import smbc

# SMB2 round trips one timed call makes (see above); the figures printed are per call.
ROUND_TRIPS_PER_CALL = 1


def percentile(sorted_ns, q):
    """Nearest-rank percentile q (0 < q <= 1) of an ascending list."""
    rank = max(1, math.ceil(q * len(sorted_ns)))
    return sorted_ns[rank - 1]


def main():
    if len(sys.argv) not in (5, 6):
        sys.stderr.write(__doc__.split("\n\n")[2] + "\n")
        return 2
    addr, share, name = sys.argv[1], sys.argv[2], sys.argv[3]
    n = int(sys.argv[4])
    warmup = int(sys.argv[5]) if len(sys.argv) == 6 else max(100, n // 10)
    if n < 1 or warmup < 0:
        sys.stderr.write("smb_latency: N must be at least 1, WARMUP at least 0\n")
        return 2
    user = os.environ.get("SMB_LAT_USER", "")
    password = os.environ.get("SMB_LAT_PASS", "")

    def auth(_server, _share, workgroup, _username, _password):
        return (workgroup, user or "guest", password)

    ctx = smbc.Context(auth_fn=auth)
    ctx.optionNoAutoAnonymousLogin = True   # a wrong password must fail, not turn anonymous
    f = ctx.open("smb://%s/%s/%s" % (addr, share, name), os.O_RDONLY)
    size = f.fstat()[6]
    for _ in range(warmup):
        f.fstat()

    samples = [0] * n
    clock = time.perf_counter_ns
    gc.disable()   # no collector pause inside a timed call
    for i in range(n):
        t0 = clock()
        st = f.fstat()
        samples[i] = clock() - t0
        if st[6] != size:
            raise RuntimeError("fstat returned size %d, expected %d" % (st[6], size))
    gc.enable()
    f.close()

    samples.sort()
    per_rt = [s / ROUND_TRIPS_PER_CALL / 1000.0 for s in samples]
    print("calls=%d round_trips_per_call=%d p50_us=%.1f p99_us=%.1f min_us=%.1f max_us=%.1f"
          % (n, ROUND_TRIPS_PER_CALL, percentile(per_rt, 0.50), percentile(per_rt, 0.99),
             per_rt[0], per_rt[-1]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
