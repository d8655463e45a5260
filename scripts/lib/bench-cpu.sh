# SPDX-License-Identifier: BSD-3-Clause
# scripts/lib/bench-cpu.sh — sourced by scripts/bench: the CPU accounting that brackets a run without
# a fork between its samples, and the placement of client and server sides on CPUs. Uses the
# bench's globals (hz, bytes, fail).

# ---- CPU accounting, without a fork between the samples that bracket a run ----

# group_scan PGID — sets G_TICKS to the user+sys clock ticks of every live process of
# process group PGID plus its leader's reaped children's (cutime+cstime: smbd's
# per-connection processes once smbd has waited for them), and G_PIDS to the live pids.
group_scan() {
    local f line
    local -a s
    G_TICKS=0 G_PIDS=''
    for f in /proc/[0-9]*/stat; do
        { read -r line <"$f"; } 2>/dev/null || continue   # gone meanwhile
        read -r -a s <<<"${line##*) }"   # s[0] is field 3 (state), s[2] the pgid
        [ "${s[2]}" = "$1" ] || continue
        G_TICKS=$((G_TICKS + s[11] + s[12]))                   # utime stime
        [ "${f#/proc/}" = "$1/stat" ] && G_TICKS=$((G_TICKS + s[13] + s[14]))   # cutime cstime
        G_PIDS+=" ${f//[!0-9]/}"
    done
}

# paths_ticks — sets P_TICKS to the ticks of smbd's, the relay's and socat's process
# groups, once smbd's group is back to the processes it had when idle (SMBD_IDLE_PIDS),
# i.e. the last connection's process has ended and been counted in its parent (5 s at
# most).
paths_ticks() {
    local deadline=$((SECONDS + 5)) relay_ticks
    group_scan "$SENV_RELAY_PID"; relay_ticks=$G_TICKS
    group_scan "$HOP_PID"; relay_ticks=$((relay_ticks + G_TICKS))
    group_scan "$SENV_SMBD_PID"
    while [ "$G_PIDS" != "$SMBD_IDLE_PIDS" ]; do
        [ "$SECONDS" -lt "$deadline" ] ||
            fail "smbd's processes did not settle: '$G_PIDS', idle '$SMBD_IDLE_PIDS'"
        sleep 0.02
        group_scan "$SENV_SMBD_PID"
    done
    P_TICKS=$((relay_ticks + G_TICKS))
}

# self_ticks — sets S_TICKS to this shell's reaped children's ticks (cutime+cstime): the
# smbclient just run (with the shim's engine thread) once it has been waited for.
self_ticks() {
    local line
    local -a s
    read -r line </proc/$BASHPID/stat
    read -r -a s <<<"${line##*) }"
    S_TICKS=$((s[13] + s[14]))
}

# per_gib TICKS — CPU seconds per GiB moved, for TICKS spent moving $bytes.
per_gib() { awk -v t="$1" -v hz="$hz" -v b="$bytes" 'BEGIN { printf "%.2f", t / hz / (b / 1073741824) }'; }

# ---- placement ----

# The CPUs this script may run on, as a list, and how split splits them.
read -r -a bench_cpus <<<"$("$python" -c 'import os; print(*sorted(os.sched_getaffinity(0)))')"
client_cpu=${bench_cpus[0]}
server_cpus=$(IFS=,; echo "${bench_cpus[*]:1}")
all_cpus=$(IFS=,; echo "${bench_cpus[*]}")
placements=(shared)
[ "${#bench_cpus[@]}" -ge 2 ] && placements+=(split)
declare -A place_label=([shared]="" [split]=" split")
# Each placement's suffix on the keys of the small-file and latency results.
declare -A place_key=([shared]="" [split]=@split)

# place shared|split — shared: every process on every CPU; split: the server side
# (smbd's process group, whose new connection processes inherit it, both relays,
# socat and bare_hop, every thread) on server_cpus, and this shell, so every client it starts, on
# client_cpu.
place() {
    local server=$all_cpus client=$all_cpus pid
    if [ "$1" = split ]; then server=$server_cpus client=$client_cpu; fi
    group_scan "$SENV_SMBD_PID"
    for pid in $G_PIDS "$SENV_RELAY_PID" "$RELAY1_PID" "$HOP_PID" "$BARE_PID"; do
        taskset -a -p -c "$server" "$pid" >/dev/null 2>&1 || [ ! -e "/proc/$pid" ] ||
            fail "cannot place $pid on CPUs $server"   # (one of smbd's may have just ended)
    done
    taskset -p -c "$client" $$ >/dev/null || fail "cannot place the bench on CPU $client"
}
