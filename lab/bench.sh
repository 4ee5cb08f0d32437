#!/usr/bin/env bash
# Benchmark (not a test): the roce_qos converge on the lab's RoCE nodes, host by host.
# For each node: back to firmware defaults, first converge, then a converged re-run; prints
# wall time, tool calls (fabricsim's call log: every mlnx_qos/lldptool/... run) and writes.
# Then, side by side with a one-task ping play on all lab hosts: the converged site.yml
# re-run and the drift check (lab/bench_ratio.py; BENCH_PAIRS pairs, default 5).
# Needs the lab running (`make lab`); run with `make bench`.
set -euo pipefail

# shellcheck source=lab/env.sh
. "$(dirname "$0")/env.sh"
# More forks than lab hosts, so that every task reaches all of them at once (the default 5
# would run each task in two rounds on the 7 lab nodes); pipelining: one exec per module.
export ANSIBLE_FORKS=${ANSIBLE_FORKS:-20} ANSIBLE_PIPELINING=${ANSIBLE_PIPELINING:-true}
INVENTORY="$top/inventories/lab"

hosts=$(ansible-inventory -i "$INVENTORY" --list \
  | python3 -c 'import json,sys; print(" ".join(json.load(sys.stdin)["roce_nodes"]["hosts"]))')
for host in $hosts; do
  podman container exists "$host" || { echo "bench: $host is not running: run 'make lab' first" >&2; exit 1; }
done

printf '%-14s %-15s %-10s %8s %11s %7s\n' host profile run wall_s tool_calls writes
for host in $hosts; do
  profile=$(podman exec "$host" python3 -c 'import json; print(json.load(open("/var/lib/fabricsim/profile.json"))["name"])')
  podman exec "$host" fabricsim reset >/dev/null
  podman exec "$host" fabricsim log --clear >/dev/null
  for run in first rerun; do
    start=$(date +%s%N)
    ansible-playbook -i "$INVENTORY" playbooks/roce_qos.yml --limit "$host" >/dev/null
    end=$(date +%s%N)
    calls=$(podman exec "$host" fabricsim log --json | grep -vc '"tool": "sysfs"' || true)
    writes=$(podman exec "$host" fabricsim log --writes --json --clear | grep -c . || true)
    printf '%-14s %-15s %-10s %8.1f %11s %7s\n' "$host" "$profile" "$run" "$(python3 -c "print(($end - $start) / 1e9)")" "$calls" "$writes"
  done
done

# Side by side against a one-task ping play on all lab hosts (alternating, median of
# BENCH_PAIRS pairs): the converged site.yml re-run and the fleet drift check.
pairs=${BENCH_PAIRS:-5}
echo
echo "ratio to a one-task ping play on all lab hosts ($pairs alternating pairs, podman connection)"
ansible-playbook -i "$INVENTORY" playbooks/site.yml >/dev/null    # converged before measuring
python3 lab/bench_ratio.py --pairs "$pairs" --inventory "$INVENTORY" --name "site.yml re-run (converged)" \
  --json "$top/.cache/bench.jsonl" -- ansible-playbook -i "$INVENTORY" playbooks/site.yml
python3 lab/bench_ratio.py --pairs "$pairs" --inventory "$INVENTORY" --name "drift check (all areas)" \
  --json "$top/.cache/bench.jsonl" -- ansible-playbook -i "$INVENTORY" playbooks/drift_check.yml \
  -e drift_report_dir="$top/.cache/drift-report"
