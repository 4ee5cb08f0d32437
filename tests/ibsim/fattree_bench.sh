#!/usr/bin/env bash
# OpenSM failover at realistic size (a benchmark, never part of `make test`; `make bench-opensm`).
#
# For each size, tests/ibsim/gen_fattree.py writes a two-level fat tree and
# tests/ibsim/failover_bench.sh runs on it: first sweep time, healthy watch (spurious
# takeovers), DRILLS takeovers with the LID check and the handback. Prints a Markdown table,
# one row per fabric; a size the simulator cannot carry gets a row saying where it failed.
#
# Usage: tests/ibsim/fattree_bench.sh
# Env:   SIZES   "radix:hcas ..." (default "36:36 36:108 36:324 36:648 64:1024 64:2048")
#        DRILLS  takeovers per size (3); WATCH_S healthy watch seconds (default: the bench's,
#                5 x the detection window); POLL_MS / RETRIES as for failover_bench.sh
#        UP_TIMEOUT  first sweep limit per size, seconds (300)
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
SIZES=${SIZES:-"36:36 36:108 36:324 36:648 64:1024 64:2048"}
export DRILLS=${DRILLS:-3} UP_TIMEOUT=${UP_TIMEOUT:-300}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/fattree-bench.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

rows=()
for size in $SIZES; do
    radix=${size%%:*}; hcas=${size##*:}
    net="$WORK/net.ft$radix-$hcas"
    python3 "$HERE/gen_fattree.py" --radix "$radix" --hcas "$hcas" >"$net" || exit 2
    shape=$(sed -n 's/^# --radix [0-9]* --hcas [0-9]*: \(.*\)$/\1/p' "$net")
    nodes=$(grep -c '^\(Switch\|Hca\)' "$net"); switches=$(grep -c '^Switch' "$net")
    ibsim_args="-N $((nodes + 64)) -S $((switches + 16)) -P $(( (switches * (radix + 1) + (nodes - switches) * 2) * 2 ))"
    hosts=$(python3 "$HERE/gen_fattree.py" --radix "$radix" --hcas "$hcas" --bench-env)
    echo "==> $radix-port switches, $hcas HCAs ($shape)"
    : >"$WORK/result"
    t0=$SECONDS
    # shellcheck disable=SC2086
    env $hosts NETFILE="$net" IBSIM_ARGS="$ibsim_args" RESULT="$WORK/result" "$HERE/failover_bench.sh" 2>&1 | tee "$WORK/log" | sed 's/^/    /'
    took=$((SECONDS - t0))
    if [ -s "$WORK/result" ]; then
        read -r ports log_sweep sweep tk vis lidc spur stuck drills watch times <"$WORK/result"
        rows+=("| $radix | $hcas | $shape | $ports | $log_sweep s ($sweep s) | ${times// /, } | **$tk s** | $lidc | $spur in ${watch} s | $stuck | ${took} s |")
    else
        why=$(grep -m1 -E 'FAIL|error|Killed|cannot|not' "$WORK/log" | cut -c1-120)
        rows+=("| $radix | $hcas | $shape | - | - | - | - | - | - | - | failed after ${took} s: ${why:-see the log} |")
    fi
done

echo
echo "sminfo_polling_timeout x polling_retry_number: role defaults unless POLL_MS/RETRIES were set; $DRILLS drills per size; master killed with SIGKILL"
echo
echo "| radix | HCAs | shape | ports (ibnetdiscover -p) | first sweep: log to SUBNET UP (SM LID seen) | takeovers | median takeover | LID changes | spurious takeovers (healthy watch) | stuck handbacks | bench time |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
