# SPDX-License-Identifier: BSD-3-Clause
# scripts/lib/bench-small.sh — sourced by scripts/bench: its small-request measures, small files
# (P5), event loops (P7), latency (P3) and the small-request cost (P9), each as a function over
# one path that keeps its figures in the bench's arrays. Uses the bench's globals.

# ---- small files ----

declare -A small_best small_rounds
# small_run PATH OP — one mput (OP put) or mget (get) of the small-file tree over PATH
# (tcp, hop, bare, channel); keeps the lowest seconds, and every round's. The copy must equal the
# source tree, and through the shim the connection must have been tunneled and the relay
# must have logged it.
small_run() {
    local path=$1 op=$2 t0 t1 secs conns0 src dst cmd key=$1${place_key[$pl]}
    if [ "$op" = put ]; then
        src=$work/up/small dst=$SENV_SHARE/small-up
        rm -rf "$dst"
        cmd=$(senv_tree_cmd put "$src" small-up)
    else
        src=$SENV_SHARE/small dst=$work/down/small
        rm -rf "$work/down"; mkdir -p "$dst"
        cmd=$(senv_tree_cmd get "$dst" small)
    fi
    sync
    conns0=$(relay_conns)
    t0=$EPOCHREALTIME
    smbclient_on "$path" -c "$cmd" >/dev/null 2>"$work/err.log" ||
        fail "small-file $op over $path: $(tail -n 5 "$work/err.log")"
    t1=$EPOCHREALTIME
    if [ "$path" = channel ]; then
        grep -q 'tunneled over SMB Direct' "$work/err.log" ||
            fail "small-file $op over channel: not tunneled: $(tail -n 5 "$work/err.log")"
        [ "$(relay_conns)" = $((conns0 + 1)) ] ||
            fail "small-file $op over channel: the relay did not log exactly one new connection"
    fi
    diff -r "$src" "$dst" >/dev/null || fail "small-file $op over $path: the copy differs from $src"
    [ "$(find "$dst" -type f | wc -l)" = "$nfiles" ] || fail "small-file $op over $path: not $nfiles files"
    secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.2f", b - a}')
    printf '  round %d  m%-3s %-18s %8s s for %d files\n' "$round" "$op" "${label[$path]}${place_label[$pl]}" "$secs" "$nfiles"
    small_rounds[$key.$op]+=" $secs"
    if [ -z "${small_best[$key.$op]:-}" ] || awk -v a="$secs" -v b="${small_best[$key.$op]}" 'BEGIN{exit !(a<b)}'; then
        small_best[$key.$op]=$secs
    fi
}

# ---- event loops ----

declare -A multi_best multi_rcpu
# multi_run PATH OP — $streams smbclients at once over PATH (tcp; loops1: the one-loop
# relay; loopsN: the suite's relay), each a get (OP get) of part.bin or a put of its own
# copy; keeps the best aggregate MiB/s (all bytes / the wall time until the last ends)
# and that run's relay CPU s/GiB. Every copy is checked.
multi_run() {
    local path=$1 op=$2 t0 t1 i f rate relay_pid=$SENV_RELAY_PID r0 rcpu='-' cmd
    local -a pids=()
    [ "$path" = loops1 ] && relay_pid=$RELAY1_PID
    rm -f "$work"/mgot* "$SENV_SHARE"/mup*
    sync
    group_scan "$relay_pid"; r0=$G_TICKS
    t0=$EPOCHREALTIME
    for ((i = 0; i < streams; i++)); do
        if [ "$op" = get ]; then cmd="get part.bin $work/mgot$i"; else cmd="put $work/part.bin mup$i"; fi
        if [ "$path" = tcp ]; then
            senv_smbclient_via tcp -c "$cmd" >/dev/null 2>"$work/merr$i.log" &
        else
            (
                export SMBDIRECT_LOG=info
                [ "$path" = loops1 ] && export SMBDIRECT_PORTMAP="445:$one_port"
                senv_smbclient_via shim -c "$cmd"
            ) >/dev/null 2>"$work/merr$i.log" &
        fi
        pids+=($!)
    done
    for ((i = 0; i < streams; i++)); do
        wait "${pids[$i]}" || fail "$op x$streams over $path: stream $i: $(tail -n 3 "$work/merr$i.log")"
    done
    t1=$EPOCHREALTIME
    [ "$path" = tcp ] || { group_scan "$relay_pid"; rcpu=$(per_gib $((G_TICKS - r0))); }
    for ((i = 0; i < streams; i++)); do
        if [ "$path" != tcp ]; then
            grep -q 'tunneled over SMB Direct' "$work/merr$i.log" ||
                fail "$op x$streams over $path: stream $i was not tunneled"
        fi
        if [ "$op" = get ]; then f=$work/mgot$i; else f=$SENV_SHARE/mup$i; fi
        [ "$(senv_sha256 "$f")" = "$part_want" ] || fail "$op x$streams over $path: stream $i's data differs"
    done
    rate=$(senv_rate "$bytes" "$t0" "$t1")
    printf '  round %d  %-4s x%-2d %-10s %8s MiB/s  relay CPU %6s s/GiB\n' "$round" "$op" "$streams" \
        "${mlabel[$path]}" "$rate" "$rcpu"
    if [ -z "${multi_best[$path.$op]:-}" ] || awk -v a="$rate" -v b="${multi_best[$path.$op]}" 'BEGIN{exit !(a>b)}'; then
        multi_best[$path.$op]=$rate multi_rcpu[$path.$op]=$rcpu
    fi
}

# ---- latency ----

declare -A lat_p50 lat_p99
# lat_probe LABEL SERVER [VAR=VALUE...] — one smb_latency.py run against SERVER; with
# variables, through the shim with them set (and checked to be tunneled). Sets LAT_P50 and
# LAT_P99 (us per round trip).
lat_probe() {
    local label=$1 server=$2 out
    shift 2
    local -a cmd=("$python" "$latency_py" "$server" "$SENV_SHARE_NAME" lat.bin "$lat_n")
    [ $# -gt 0 ] && cmd=(env "$@" "$SENV_WRAPPER_BIN" "${cmd[@]}")
    out=$(SMB_LAT_USER=$SENV_USER SMB_LAT_PASS=$SENV_PASS "${cmd[@]}" 2>"$work/lat.log") ||
        fail "latency over $label: $(tail -n 5 "$work/lat.log")"
    if [ $# -gt 0 ]; then
        grep -q 'tunneled over SMB Direct' "$work/lat.log" ||
            fail "latency over $label: not tunneled: $(tail -n 5 "$work/lat.log")"
    fi
    LAT_P50=$(sed -n 's/.* p50_us=\([0-9.]*\) .*/\1/p' <<<"$out")
    LAT_P99=$(sed -n 's/.* p99_us=\([0-9.]*\) .*/\1/p' <<<"$out")
    if [ -z "$LAT_P50" ] || [ -z "$LAT_P99" ]; then fail "latency over $label: unexpected output '$out'"; fi
}

# latency_run PATH — smb_latency.py over PATH (tcp, hop, bare, shim); keeps the run with the
# lowest p50 (and that run's p99).
latency_run() {
    local path=$1 p50 p99 server=$addr key=$1${place_key[$pl]}
    local -a set=()
    [ "$path" = hop ] && server=$addr:$hop_port
    [ "$path" = bare ] && server=$addr:$bare_port
    [ "$path" = shim ] && set=(SMBDIRECT_LOG=debug)
    lat_probe "$path" "$server" "${set[@]}"
    p50=$LAT_P50 p99=$LAT_P99
    printf '  round %d  lat  %-18s p50 %8s us  p99 %8s us\n' "$round" "$path${place_label[$pl]}" "$p50" "$p99"
    if [ -z "${lat_p50[$key]:-}" ] || awk -v a="$p50" -v b="${lat_p50[$key]}" 'BEGIN{exit !(a<b)}'; then
        lat_p50[$key]=$p50 lat_p99[$key]=$p99
    fi
}

# ---- small-request cost ----

# child_ms — sets C_MS to the user+sys ms of this shell's reaped children, from the times
# builtin (to the ms; it forks nothing, so only the programs the bench waited for count).
child_ms() {
    local t secs
    local -a w
    times >"$work/times"
    { read -r _; read -r -a w; } <"$work/times"
    C_MS=0
    for t in "${w[@]}"; do   # MmS.SSSs
        secs=${t#*m}; secs=${secs%s}
        C_MS=$((C_MS + 10#${t%%m*} * 60000 + 10#${secs%.*} * 1000 + 10#${secs#*.}))
    done
}

# relay_ns — sets RELAY_NS to the ns the relay's threads have run (schedstat, to the ns).
relay_ns() {
    local f ns rest
    RELAY_NS=0
    for f in /proc/"$SENV_RELAY_PID"/task/*/schedstat; do
        { read -r ns rest <"$f"; } 2>/dev/null || continue   # a thread gone meanwhile
        RELAY_NS=$((RELAY_NS + ns))
    done
}

poll_us=${SMBDIRECT_BUSY_POLL:-1000} # the shim's default is 0: poll is the other setting
declare -A cost_label=([tcp]=tcp [poll]="shim, busy poll $poll_us"
                       [nopoll]="shim, busy poll 0")
declare -A cost_client cost_added cost_relay cost_p50
# cost_session PATH N — N allinfo in one smbclient session over PATH (tcp; poll: through
# the shim polling $poll_us; nopoll: the same with SMBDIRECT_BUSY_POLL=0), each answered,
# through the shim
# tunneled and through one new relay connection; sets S_CLIENT_MS to the client's CPU ms
# and S_RELAY_NS to the relay's CPU ns over it.
cost_session() {
    local path=$1 n=$2 cmds='' i conns0 c0 r0
    for ((i = 0; i < n; i++)); do cmds+='allinfo lat.bin; '; done
    conns0=$(relay_conns)
    relay_ns; r0=$RELAY_NS
    child_ms; c0=$C_MS
    case "$path" in   # nothing forks from here to the samples after it
        tcp) senv_smbclient_via tcp -c "$cmds" ;;
        poll) SMBDIRECT_LOG=info SMBDIRECT_BUSY_POLL=$poll_us senv_smbclient_via shim -c "$cmds" ;;
        nopoll) SMBDIRECT_LOG=info SMBDIRECT_BUSY_POLL=0 senv_smbclient_via shim -c "$cmds" ;;
    esac >"$work/cost.out" 2>"$work/cost.log" ||
        fail "$n allinfo over ${cost_label[$path]}: $(tail -n 5 "$work/cost.log")"
    child_ms; S_CLIENT_MS=$((C_MS - c0))
    relay_ns; S_RELAY_NS=$((RELAY_NS - r0))
    [ "$(grep -c '^altname: lat.bin' "$work/cost.out")" = "$n" ] ||
        fail "allinfo over ${cost_label[$path]}: not $n answers: $(tail -n 3 "$work/cost.out")"
    [ "$path" = tcp ] && return 0
    grep -q 'tunneled over SMB Direct' "$work/cost.log" ||
        fail "allinfo over ${cost_label[$path]}: not tunneled: $(tail -n 5 "$work/cost.log")"
    [ "$(relay_conns)" = $((conns0 + 1)) ] ||
        fail "allinfo over ${cost_label[$path]}: the relay did not log exactly one new connection"
}

# cost_run PATH — a session of one allinfo and one of $cost_n over PATH (cost_session), then
# smb_latency.py with the same settings; adds to PATH's lists the client's CPU us per allinfo
# (the long session's over $cost_n, and what it took beyond the short one's over the
# allinfo it had more), the relay's (the long session's) and the p50.
cost_run() {
    local path=$1 short client added relay=-
    cost_session "$path" 1; short=$S_CLIENT_MS
    cost_session "$path" "$cost_n"
    client=$(awk -v ms="$S_CLIENT_MS" -v n="$cost_n" 'BEGIN { printf "%.1f", ms * 1000 / n }')
    added=$(awk -v ms=$((S_CLIENT_MS - short)) -v n="$cost_n" 'BEGIN { printf "%.1f", ms * 1000 / (n > 1 ? n - 1 : 1) }')
    case "$path" in
        tcp) lat_probe tcp "$addr" ;;
        poll) lat_probe "${cost_label[$path]}" "$addr" SMBDIRECT_LOG=info SMBDIRECT_BUSY_POLL="$poll_us" ;;
        nopoll) lat_probe "${cost_label[$path]}" "$addr" SMBDIRECT_LOG=info SMBDIRECT_BUSY_POLL=0 ;;
    esac
    [ "$path" = tcp ] ||
        relay=$(awk -v ns="$S_RELAY_NS" -v n="$cost_n" 'BEGIN { printf "%.1f", ns / 1000 / n }')
    printf '  run %d    cost %-24s client CPU %7s us (beyond the start %7s)  relay CPU %6s us per allinfo  p50 %8s us\n' \
        "$run" "${cost_label[$path]}" "$client" "$added" "$relay" "$LAT_P50"
    cost_client[$path]+=" $client" cost_added[$path]+=" $added" cost_relay[$path]+=" $relay"
    cost_p50[$path]+=" $LAT_P50"
}

# median "V1 V2 ..." — the median of the values ("-" when they are not numbers).
median() {
    awk -v l="$1" 'BEGIN { n = split(l, v, " ")
        if (v[1] == "-") { print "-"; exit }
        for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j - 1] + 0 > v[j] + 0; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
        printf "%.1f", n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2 }'
}
