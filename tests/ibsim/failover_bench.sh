#!/usr/bin/env bash
# OpenSM failover benchmark on the ibsim fabric simulator (a benchmark, not a timed test).
#
# Starts ibsim, a MASTER and a STANDBY opensm on two HCAs with the role's default HA timeouts,
# checks there is no spurious takeover while the master is healthy, then runs N drills:
# kill the master, time how long until the standby reports MASTER (sminfo on the standby's
# LID) and until the fabric's SM LID points at it (bare sminfo from a third HCA), check that
# no LID changed, restart the old master and wait for the roles to settle again.
# Prints every drill and the median. Cleans up everything it started.
#
# Usage: tests/ibsim/failover_bench.sh            (role defaults, 5 drills)
#        POLL_MS=10000 RETRIES=4 DRILLS=1 tests/ibsim/failover_bench.sh   (OpenSM defaults)
# Env:   POLL_MS RETRIES     sminfo_polling_timeout / polling_retry_number (default: read
#                            from roles/opensm/defaults/main.yml)
#        DRILLS (5)          number of drills
#        WATCH_S             healthy-pair watch for spurious takeovers (default 5 polling periods x RETRIES)
#        SETTLE_S (0)        wait after a takeover before restarting the old master
#        KILL_SIGNAL (KILL)  signal sent to the master (KILL = crash; TERM = clean stop)
#        IBSIM_REMOTE (0)    1: run ibsim -r (UDP 7070) and clients with IBSIM_SERVER_NAME=127.0.0.1
#        NETFILE             fabric file (default tests/ibsim/net.2sw4hca)
#        UMAD2SIM_TIMEOUTS (1)  1: preload tests/ibsim/umad2sim_timeouts.c (built here with gcc)
#                            into the SMs: the MAD timeouts/retries umad2sim lacks. 0 reproduces
#                            the stuck handback of docs/opensm.md
#        KEEP (0)            1: keep the work directory (logs)
#        A_HOST B_HOST Q_HOST   ibsim nodes of SM A (master), SM B (standby) and the queries
#                            (default Hca1 Hca3 Hca2; tests/ibsim/gen_fattree.py --bench-env prints
#                            them for a generated fat tree). Port GUIDs are read with ibstat -p.
#        UP_TIMEOUT (60)     seconds the first sweep may take (large fabrics: more)
#        IBSIM_ARGS          extra ibsim options (-N nodes -S switches -P ports for large fabrics)
#        RESULT              file to append one machine-readable summary line to (fattree_bench.sh)
# A spurious takeover during the healthy watch is reported (and counted in RESULT) and fails
# the bench at the end, after the drills.
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
NETFILE=${NETFILE:-$HERE/net.2sw4hca}
UMAD2SIM=${UMAD2SIM:-/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so}
DEFAULTS=$REPO/roles/opensm/defaults/main.yml

role_default() {  # role_default VAR FALLBACK
    local v
    v=$(sed -n "s/^$1: *\([0-9][0-9]*\).*/\1/p" "$DEFAULTS" 2>/dev/null | head -1)
    echo "${v:-$2}"
}
POLL_MS=${POLL_MS:-$(role_default opensm_sminfo_polling_timeout 1000)}
RETRIES=${RETRIES:-$(role_default opensm_polling_retry_number 3)}
DRILLS=${DRILLS:-5}
WATCH_S=${WATCH_S:-$(( (POLL_MS * RETRIES * 5 + 999) / 1000 ))}
[ "$WATCH_S" -gt 120 ] && WATCH_S=120
SETTLE_S=${SETTLE_S:-0}
KILL_SIGNAL=${KILL_SIGNAL:-KILL}
IBSIM_REMOTE=${IBSIM_REMOTE:-0}
UMAD2SIM_TIMEOUTS=${UMAD2SIM_TIMEOUTS:-1}
KEEP=${KEEP:-0}

# The pair: SM A on Hca1 (priority 10, master), SM B on Hca3 (priority 5, standby); queries from Hca2.
A_HOST=${A_HOST:-Hca1}; A_PRIO=10
B_HOST=${B_HOST:-Hca3}; B_PRIO=5
Q_HOST=${Q_HOST:-Hca2}
UP_TIMEOUT=${UP_TIMEOUT:-60}
RESULT=${RESULT:-}
SM_KEY=0x00000000c0ffee01   # any non-default key, the same on both SMs

WORK=$(mktemp -d "${TMPDIR:-/tmp}/opensm-bench.XXXXXX")
IBSIM_PID=""; A_PID=""; B_PID=""

stop_pid() {  # TERM, up to 3 s, then KILL (opensm can hang in exit once ibsim is gone)
    local pid=$1
    [ -n "$pid" ] || return 0
    kill "$pid" 2>/dev/null
    for _ in 1 2 3 4 5 6; do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    kill -9 "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
}
cleanup() {
    # SMs before the simulator they talk to.
    stop_pid "$A_PID"; stop_pid "$B_PID"; stop_pid "$IBSIM_PID"
    if [ "$KEEP" = 1 ]; then echo "logs kept in $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

die() { echo "FAIL: $*" >&2; exit 1; }
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

sim_env() {  # sim_env HOST -> env assignments for a client attached at HOST
    local e="LD_PRELOAD=$UMAD2SIM SIM_HOST=$1"
    [ "$IBSIM_REMOTE" = 1 ] && e="$e IBSIM_SERVER_NAME=127.0.0.1"
    echo "$e"
}
q() {  # q CMD... : run an infiniband-diags tool from the query HCA, 5 s bound
    env $(sim_env $Q_HOST) timeout 5 "$@" 2>&1
}
sm_state() {  # sm_state LID -> MASTER|STANDBY|DISCOVER|NOTACT|DOWN
    local out
    out=$(q sminfo -t 200 "$1")
    case "$out" in
        *SMINFO_MASTER*) echo MASTER ;;
        *SMINFO_STANDBY*) echo STANDBY ;;
        *SMINFO_DISCOVER*) echo DISCOVER ;;
        *SMINFO_NOTACT*) echo NOTACT ;;
        *) echo DOWN ;;
    esac
}
default_master_guid() {  # GUID (0x%016x) of the SM the query port's SMLid points at, or NONE
    local g
    g=$(q sminfo -t 200 | sed -n 's/^sminfo: sm lid [0-9]* sm guid 0x\([0-9a-f]*\),.*state 3 SMINFO_MASTER.*/\1/p')
    if [ -n "$g" ]; then printf '0x%016x\n' "0x$g"; else echo NONE; fi
}
lid_map() {  # "guid port lid" for every port, sorted (ibnetdiscover -p; saquery NR is cut to one record by ibsim)
    q ibnetdiscover -p | awk '$1 == "CA" || $1 == "SW" { print $4, $3, $2 }' | sort -u
}
lid_of() {  # lid_of GUID
    lid_map | awk -v g="$1" '$1 == g { print $3; exit }'
}

start_sm() {  # start_sm NAME HOST GUID PRIO -> sets <NAME>_PID
    local name=$1 host=$2 guid=$3 prio=$4 dir=$WORK/$1
    mkdir -p "$dir"
    # shellcheck disable=SC2046
    (cd "$dir" && exec env $(sim_env "$host") LD_PRELOAD="$SM_PRELOAD" OSM_TMP_DIR="$dir" OSM_CACHE_DIR="$dir" \
        opensm -F "$WORK/opensm.conf" -g "$guid" -p "$prio" -f "$dir/opensm.log" >>"$dir/stdout" 2>&1 </dev/null) &
    eval "${name}_PID=$!"
}

wait_for() {  # wait_for SECONDS CMD... : poll every 0.2 s until CMD (a function, re-run each time) succeeds
    local limit=$1; shift
    local t0; t0=$(now)
    while :; do
        "$@" && return 0
        [ "$(awk -v a="$t0" -v b="$(now)" -v l="$limit" 'BEGIN { print (b - a > l) }')" = 1 ] && return 1
        sleep 0.2
    done
}
master_is() {  # master_is GUID: the query port's SM is GUID, in MASTER state
    [ "$(default_master_guid)" = "$1" ]
}
state_is() {  # state_is LID STATE
    [ "$(sm_state "$1")" = "$2" ]
}
states() {  # one-line picture for failure messages
    echo "bare sminfo: $(q sminfo -t 200 | tail -1); lid $A_LID: $(sm_state "$A_LID"); lid $B_LID: $(sm_state "$B_LID")"
}
pair_ok() {  # pair_ok MASTER_LID STANDBY_LID: each SM answers for itself (a third port's SMLid can lag)
    [ "$(sm_state "$1")" = MASTER ] && [ "$(sm_state "$2")" = STANDBY ]
}

command -v ibsim >/dev/null || die "ibsim not found (Debian package ibsim-utils)"
command -v opensm >/dev/null || die "opensm not found"
[ -r "$UMAD2SIM" ] || die "$UMAD2SIM not found (Debian package libumad2sim0)"

SM_PRELOAD=$UMAD2SIM
if [ "$UMAD2SIM_TIMEOUTS" = 1 ]; then
    command -v gcc >/dev/null || die "gcc not found (needed for umad2sim_timeouts.so; UMAD2SIM_TIMEOUTS=0 runs without)"
    gcc -shared -fPIC -O2 -o "$WORK/umad2sim_timeouts.so" "$HERE/umad2sim_timeouts.c" -ldl -lpthread \
        || die "could not build umad2sim_timeouts.so"
    SM_PRELOAD="$WORK/umad2sim_timeouts.so $UMAD2SIM"
fi

cat >"$WORK/opensm.conf" <<EOF
# written by failover_bench.sh: the HA options the role renders
sm_key $SM_KEY
sminfo_polling_timeout $POLL_MS
polling_retry_number $RETRIES
honor_guid2lid_file TRUE
force_log_flush TRUE
EOF

echo "fabric $NETFILE; sminfo_polling_timeout $POLL_MS ms x polling_retry_number $RETRIES; $DRILLS drills; kill -$KILL_SIGNAL"
if [ "$IBSIM_REMOTE" = 1 ]; then
    ibsim -s -n -r ${IBSIM_ARGS:-} "$NETFILE" >"$WORK/ibsim.log" 2>&1 &
else
    ibsim -s -n ${IBSIM_ARGS:-} "$NETFILE" >"$WORK/ibsim.log" 2>&1 &
fi
IBSIM_PID=$!
sleep 1
# A large fabric takes ibsim a while to parse: wait for its socket (or its death).
for _ in $(seq 1 120); do
    env $(sim_env "$A_HOST") timeout 5 ibstat -p >/dev/null 2>&1 && break
    kill -0 "$IBSIM_PID" 2>/dev/null || break
    sleep 1
done
kill -0 "$IBSIM_PID" 2>/dev/null || die "ibsim did not start: $(tail -3 "$WORK/ibsim.log")"

port_guid() {  # port_guid HOST -> the port GUID (0x%016x) ibsim gives HOST's first port
    local g
    g=$(env $(sim_env "$1") timeout 10 ibstat -p 2>/dev/null | head -1)
    [ -n "$g" ] && printf '0x%016x\n' "$g"
}
A_GUID=$(port_guid "$A_HOST"); B_GUID=$(port_guid "$B_HOST")
[ -n "$A_GUID" ] && [ -n "$B_GUID" ] || die "could not read the port GUIDs of $A_HOST / $B_HOST (ibstat -p)"

start_sm A $A_HOST $A_GUID $A_PRIO; t_start=$(now)
wait_for "$UP_TIMEOUT" master_is $A_GUID || die "SM A never became master within ${UP_TIMEOUT}s"
sweep_s=$(elapsed "$t_start" "$(now)")
# OpenSM's own view: its first log line to its first "SUBNET UP" (log time stamps HH:MM:SS usec;
# force_log_flush in the bench's opensm.conf, so the line is there once the pair is up).
log_sweep() {
    awk '{ split($3, t, ":"); s = t[1] * 3600 + t[2] * 60 + t[3] + $4 / 1e6 }
        NR == 1 { t0 = s } /SUBNET UP/ { printf "%.2f", s - t0; exit }' "$WORK/A/opensm.log"
}
start_sm B $B_HOST $B_GUID $B_PRIO
B_LID=$(lid_of $B_GUID); A_LID=$(lid_of $A_GUID)
[ -n "$B_LID" ] && [ -n "$A_LID" ] || die "could not read the SM LIDs"
wait_for "$UP_TIMEOUT" pair_ok "$A_LID" "$B_LID" || die "no MASTER/STANDBY pair (A lid $A_LID, B lid $B_LID)"
log_sweep_s=$(log_sweep)
echo "first sweep: OpenSM log start to SUBNET UP ${log_sweep_s:-?} s; fabric SM LID points at SM A ${sweep_s} s after its start"
echo "pair up: MASTER $A_GUID lid $A_LID prio $A_PRIO, STANDBY $B_GUID lid $B_LID prio $B_PRIO"
lid_map >"$WORK/lids.before"
n_ports=$(wc -l <"$WORK/lids.before")
echo "ports and LIDs: $n_ports"

# No spurious takeover while the master is healthy: sample every second for WATCH_S seconds.
spurious=0
for _ in $(seq 1 "$WATCH_S"); do
    pair_ok "$A_LID" "$B_LID" || spurious=$((spurious + 1))
    sleep 1
done
b_master_lines=$(grep -c "Entering MASTER state" "$WORK/B/opensm.log")
echo "healthy watch ${WATCH_S}s: $spurious bad samples, standby entered MASTER $b_master_lines times"
spurious_takeovers=$b_master_lines
[ "$spurious" -eq 0 ] && [ "$b_master_lines" -eq 0 ] || echo "SPURIOUS takeover while the master was healthy"

takeovers=(); visibles=(); lid_changes=0; stuck=0
for i in $(seq 1 "$DRILLS"); do
    kill -"$KILL_SIGNAL" "$A_PID"; t0=$(now)
    { wait "$A_PID"; } 2>/dev/null; A_PID=""
    wait_for $((UP_TIMEOUT + 60)) state_is "$B_LID" MASTER || die "drill $i: standby never became MASTER"
    t1=$(now)
    wait_for 60 master_is $B_GUID || die "drill $i: fabric SM LID never moved to the standby"
    t2=$(now)
    lid_map >"$WORK/lids.after$i"
    if cmp -s "$WORK/lids.before" "$WORK/lids.after$i"; then lids=unchanged
    else lids=CHANGED; lid_changes=$((lid_changes + 1)); diff "$WORK/lids.before" "$WORK/lids.after$i"; fi
    takeovers+=("$(elapsed "$t0" "$t1")"); visibles+=("$(elapsed "$t0" "$t2")")
    echo "drill $i: standby MASTER after ${takeovers[-1]} s, fabric SM LID moved after ${visibles[-1]} s, LIDs $lids"

    # The old master comes back with the higher priority and the same sm_key: it takes over again
    # (no settle wait needed: the stuck handback was the simulator's missing MAD timeouts).
    [ "$SETTLE_S" != 0 ] && sleep "$SETTLE_S"
    start_sm A $A_HOST $A_GUID $A_PRIO; t3=$(now)
    if wait_for $((UP_TIMEOUT + 30)) pair_ok "$A_LID" "$B_LID"; then
        echo "drill $i: old master back as MASTER after $(elapsed "$t3" "$(now)") s"
    else
        # Without umad2sim_timeouts.so: the returning SM sits in DISCOVERING, the master never hands over.
        stuck=$((stuck + 1))
        echo "drill $i: handback STUCK ($(states)); restarting the old master once"
        stop_pid "$A_PID"; A_PID=""; sleep 2
        start_sm A $A_HOST $A_GUID $A_PRIO
        wait_for $((UP_TIMEOUT + 60)) pair_ok "$A_LID" "$B_LID" || die "drill $i: old master did not come back as MASTER: $(states)"
    fi
    lid_map >"$WORK/lids.back$i"
    cmp -s "$WORK/lids.before" "$WORK/lids.back$i" || { echo "drill $i: LIDs changed on handback"; lid_changes=$((lid_changes + 1)); }
    sleep 2
done

median() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
echo "takeover (standby reports MASTER): ${takeovers[*]} -> median $(median "${takeovers[@]}") s"
echo "fabric SM LID moved (bare sminfo):  ${visibles[*]} -> median $(median "${visibles[@]}") s"
echo "LID changes: $lid_changes; stuck handbacks (needed a second restart): $stuck"
if [ -n "$RESULT" ]; then
    # ports log_sweep_s sweep_s takeover_median visible_median lid_changes spurious stuck drills watch_s takeovers
    echo "$n_ports ${log_sweep_s:-?} $sweep_s $(median "${takeovers[@]}") $(median "${visibles[@]}") $lid_changes $((spurious + spurious_takeovers)) $stuck $DRILLS $WATCH_S ${takeovers[*]}" >>"$RESULT"
fi
[ "$lid_changes" -eq 0 ] && [ "$spurious" -eq 0 ] && [ "$spurious_takeovers" -eq 0 ] || exit 1
