#!/usr/bin/env bash
# The journey over the lab that `make lab` starts (a stage of `make test`: lab/test.sh journey).
# Not a scenario made for a feature: the inventory as it is (inventories/lab), every feature an
# operator runs, then each fault injected on the lab, named, cleared, and everything green again.
#
#   lab/journey.sh          make lab (lab/lab.sh up: converge and the round-3 proof), then the steps
#   lab/journey.sh --no-up  the steps on the running lab
#   lab/journey.sh --no-up --only PATTERN   only the steps whose name matches PATTERN (grep -E); a fault is
#                           injected only when its steps are chosen (to show one regression caught)
#
# Each step prints its time and its verdict; the exit code is non-zero when any step fails.
# Shortcuts (DOMAIN §9): the fabric tests run 2-second tests (fabric_test_duration=2, make lab's
# too: LAB_SHORT_TESTS=1), the node timer's unit is started by hand, not waited for.
set -uo pipefail

# shellcheck source=lab/env.sh
. "$(dirname "$0")/env.sh"
export ANSIBLE_FORKS=${ANSIBLE_FORKS:-20} ANSIBLE_PIPELINING=${ANSIBLE_PIPELINING:-true}
export INVENTORY="$top/inventories/lab"
OUT="$top/.cache/journey"
# the GPU node whose rail is degraded, the node reset and onboarded, the port whose PFC is cleared
BAD_NODE=lab-hgx-01 BAD_DEV=mlx5_3 BAD_RAIL=3
NEW_NODE=lab-hgx-02
PFC_NODE=lab-hgx-01 PFC_PORT=enp24s0np0
FAST=(-e fabric_test_duration=2
      -e '{"rdma_fabric_environment": {"SYSFS_PATH": "/run/fabricsim/sys", "FABRICSIM_PERFTEST_TIME_SCALE": "0"}}')
# the scheduler gate (docs/scheduler.md) on the lab's Slurm, with a recovery window of one run (DOMAIN §9);
# the node an administrator drains by hand, the node whose HealthCheckProgram acts alone, the node rebooted
GATE=(-e scheduler_gate=slurm -e scheduler_gate_recovery_runs=1)
SLURM_CTL=lab-sm-01 ADMIN_NODE=lab-hgx-03 ADMIN_REASON="hw ticket 4411 journey" HCP_NODE=lab-dgx-01 HCP_DEV=mlx5_0
REBOOT_NODE=lab-hgx-01
rm -rf "$OUT" && mkdir -p "$OUT"

UP=yes ONLY=
while [ $# -gt 0 ]; do
  case "$1" in
    --no-up) UP=no ;;
    --only) ONLY=$2; shift ;;
    *) echo "usage: $0 [--no-up] [--only PATTERN]" >&2; exit 2 ;;
  esac
  shift
done

failed=() timings=()
chosen() { [ -z "$ONLY" ] || echo "$1" | grep -Eq -- "$ONLY"; }
step() {  # step NAME CMD...: run, time, judge (exit 0)
  local name=$1 start=$SECONDS rc=0; shift
  chosen "$name" || return 0
  echo "==> journey: $name"
  "$@" >"$OUT/$(echo "$name" | tr -c 'A-Za-z0-9\n' _).log" 2>&1 || rc=$?
  record "$name" "$start" "$rc"
}
record() {
  local verdict=ok secs=$((SECONDS - $2))
  [ "$3" -eq 0 ] || { verdict=FAILED; failed+=("$1"); tail -40 "$OUT/$(echo "$1" | tr -c 'A-Za-z0-9\n' _).log"; }
  timings+=("$(printf '%-62s %5ss  %s' "$1" "$secs" "$verdict")")
  echo "    $verdict in ${secs}s"
}
fails() {  # fails CMD...: succeeds when CMD fails (a fault must be named by a non-zero exit)
  if "$@"; then echo "journey: expected a failure from: $*"; return 1; fi
  return 0
}
play() { ansible-playbook -i "$INVENTORY" "$@"; }
py() { python3 - "$@"; }

# ------------------------------------------------------------------ the checks of each step
fabric_test() {  # fabric_test DIR [ansible args]: the fabric test with its reports in DIR
  local dir=$1; shift
  play playbooks/fabric_test.yml -e fabric_test_report_dir="$dir" "${FAST[@]}" "$@"
}
assert_fabric_green() {  # every lab node passes; GPU memory on the GPU nodes; IB included
  py "$1/fabric_test.json" <<'PY'
import json, sys
meta = json.load(open(sys.argv[1]))["meta"]
nodes = dict((n["host"], n) for n in meta["nodes"])
assert not meta["failed"], "failed: %s" % meta["failed"]
want = {"lab-hgx-01", "lab-hgx-02", "lab-hgx-03", "lab-dgx-01", "lab-small-01"} & set(nodes)
assert want <= set(meta["passed"]), (want, meta["passed"])
for host in ("lab-hgx-01", "lab-dgx-01"):
    assert nodes[host]["gpu_memory"] == "yes", nodes[host]
assert nodes["lab-dgx-01"]["group"].startswith("InfiniBand"), nodes["lab-dgx-01"]
print("fabric test: %d nodes passed (%s)" % (len(meta["passed"]), ", ".join(meta["passed"])))
PY
}
assert_fabric_names() {  # DIR HOST RAIL: only HOST fails, and only on RAIL
  py "$1/fabric_test.json" "$2" "$3" <<'PY'
import json, sys
data = json.load(open(sys.argv[1]))
host, rail = sys.argv[2], sys.argv[3]
assert data["meta"]["failed"] == [host], "failed: %s" % data["meta"]["failed"]
subjects = sorted(set(r["subject"] for r in data["records"] if r["host"] == host))
assert subjects and all(s.startswith("rail%s/" % rail) for s in subjects), subjects
assert all(r["host"] == host for r in data["records"] if r["severity"] == "error"), data["records"]
print("fabric test names %s %s: %s" % (host, subjects, [r["actual"] for r in data["records"]][:2]))
PY
}
nv_writes() { podman exec "$1" fabricsim log --writes 2>/dev/null | grep -c mlxconfig || true; }
firmware_zero_writes() {
  local host before after
  declare -A before=()
  for host in $(ansible-inventory -i "$INVENTORY" --graph firmware_nodes 2>/dev/null | sed -n 's/.*--//p'); do
    before[$host]=$(nv_writes "$host")
  done
  [ "${#before[@]}" -gt 0 ] || { echo "no host in firmware_nodes"; return 1; }
  play playbooks/nic_firmware.yml || return 1
  for host in "${!before[@]}"; do
    after=$(nv_writes "$host")
    [ "$after" = "${before[$host]}" ] || { echo "$host: nic_firmware wrote on a converged node (${before[$host]} -> $after)"; return 1; }
  done
  echo "nic_firmware: 0 writes on ${!before[*]}"
}
onboard_gate_refuses() {  # HOST DEV: a reset node with DEV's link down: the health gate names it, nothing written
  lab/lab.sh reset "$1" || return 1
  podman exec "$1" fabricsim fault link-down "$2" >/dev/null || return 1
  fails play playbooks/onboard.yml --limit "$1" -e fabric_test_report_dir="$OUT/onboard-gate" \
    >"$OUT/onboard-gate.out" 2>&1 || { tail -20 "$OUT/onboard-gate.out"; return 1; }
  podman exec "$1" fabricsim clear >/dev/null || return 1
  grep -E "$1 failed the RDMA health gate .*$2" "$OUT/onboard-gate.out" \
    || { echo "the gate's message does not name $1 and $2"; tail -20 "$OUT/onboard-gate.out"; return 1; }
  local writes
  writes=$(podman exec "$1" fabricsim log --writes 2>/dev/null | grep -c . || true)
  [ "$writes" = 0 ] || { echo "$1: $writes write(s) behind a failed health gate"; return 1; }
  echo "health gate: $1 refused, $2 named, 0 writes"
}
onboard_admits() {  # onboard_admits HOST: a reset node onboarded with no option but the limit
  # reset again unless the health gate step just did (and cleared its fault)
  chosen "health gate" || lab/lab.sh reset "$1" || return 1
  play playbooks/onboard.yml --limit "$1" -e fabric_test_report_dir="$OUT/onboard" || return 1
  podman exec "$1" cat /var/lib/rdma-fabric/fabric-test.json >"$OUT/verdict-$1.json" || return 1
  py "$OUT/verdict-$1.json" <<'PY' || return 1
import json, sys
verdict = json.load(open(sys.argv[1]))
assert verdict["passed"] is True, verdict
print("admitted:", verdict["host"], "provisional" if verdict.get("provisional") else "")
PY
}
onboard_refuses() {  # onboard_refuses HOST RAIL [ansible args]: the onboarding gate names HOST and RAIL
  local host=$1 rail=$2; shift 2
  fails play playbooks/fabric_test.yml --limit "$host" -e '{"fabric_test_known_good": ["lab-hgx-02", "lab-hgx-03"]}' \
    -e fabric_test_report_dir="$OUT/onboard-fault" "${FAST[@]}" "$@" || return 1
  set -- "$host" "$rail"
  assert_fabric_names "$OUT/onboard-fault" "$1" "$2"
}
drift_names() {  # drift_names PATTERN [ansible args]: the drift check fails and a record matches PATTERN
  fails play playbooks/drift_check.yml -e drift_report_dir="$OUT/drift-fault" "${@:2}" || return 1
  py "$OUT/drift-fault/drift.json" "$1" <<'PY'
import json, re, sys
records = json.load(open(sys.argv[1]))["records"]
hits = [r for r in records if re.search(sys.argv[2], json.dumps(r, sort_keys=True))]
assert hits, "no drift record matches %s: %s" % (sys.argv[2], records)
print("drift check names:", [(r["host"], r.get("area"), r.get("object"), r.get("setting")) for r in hits])
PY
}
timer_drift() {  # timer_drift HOST EXPECT(0|1): the node timer's drift metric, its unit started by hand
  podman exec "$1" systemctl start rdma-fabric-health.service || return 1
  podman exec "$1" cat /var/lib/prometheus/node-exporter/rdma_fabric_node_drift.prom >"$OUT/timer-$1.prom" || return 1
  py "$OUT/timer-$1.prom" "$2" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
# rdma_fabric_node_drift_settings{host,area} N: what the alert rdma_fabric.rules.yml reads (> 0)
drifted = [l for l in text.splitlines() if re.match(r"rdma_fabric_node_drift_settings\{.*\} [1-9]", l)]
assert any(re.match(r"rdma_fabric_node_drift_settings\{", l) for l in text.splitlines()), "no drift series: %s" % text
want = sys.argv[2] == "1"
if want:
    assert any('area="roce_qos"' in l for l in drifted), drifted
assert bool(drifted) == want, "timer drift metric: %s (expected %s)" % (drifted or "none drifted", "drift" if want else "none")
print("node timer drift metric:", drifted or "all 0")
PY
}

# ------------------------------------------------------------------ the scheduler gate's checks
slurm_state() {  # slurm_state NODE: "STATE|REASON" as sinfo prints them (the reason whole)
  podman exec "$SLURM_CTL" sinfo -h -N -n "$1" -o '%T|%250E' | head -1 | sed 's/ *$//'
}
expect_slurm() {  # expect_slurm NODE STATE-REGEX REASON-REGEX (a '*' after the state: slurmctld has not
  # heard from slurmd since the change, for a few seconds after an UNDRAIN)
  local got
  got=$(slurm_state "$1")
  echo "slurm: $1 $got"
  echo "$got" | grep -Eq -- "^($2)[*]?\|($3)\$" || { echo "journey: $1 expected state /$2/ reason /$3/, got: $got"; return 1; }
}
admin_drains() {  # an administrator drains a node by hand, with a reason of their own
  podman exec "$SLURM_CTL" scontrol update NodeName="$ADMIN_NODE" State=DRAIN Reason="$ADMIN_REASON" || return 1
  expect_slurm "$ADMIN_NODE" drained "$ADMIN_REASON"
}
gate_drains() {  # the fabric test with the gate: BAD_NODE drained naming the rail and figure, a job for it pending
  fabric_names fabric-fault "$BAD_NODE" "$BAD_RAIL" "${GATE[@]}" || return 1
  expect_slurm "$BAD_NODE" 'drained|draining' "rdma\.fabric: perftest\.[a-z_]+ rail$BAD_RAIL/$BAD_DEV .*[0-9.]+ Gb/s.*" || return 1
  expect_slurm "$ADMIN_NODE" drained "$ADMIN_REASON" || return 1
  local job
  job=$(podman exec "$SLURM_CTL" sbatch --parsable -w "$BAD_NODE" --wrap true) || return 1
  echo "$job" >"$OUT/gate-job"
  local i
  for i in 1 2 3 4 5 6 7 8 9 10; do   # the scheduler's first pass gives the pending job its reason
    podman exec "$SLURM_CTL" squeue -h -j "$job" -o '%i %T %r' >"$OUT/gate-job-state"
    grep -q 'ReqNodeNotAvail' "$OUT/gate-job-state" && break
    sleep 0.5
  done
  cat "$OUT/gate-job-state"
  grep -q 'PENDING.*ReqNodeNotAvail' "$OUT/gate-job-state" || { echo "journey: job $job for $BAD_NODE is not pending"; return 1; }
}
gate_keeps_out() {  # onboarding with the gate: the node not admitted stays drained
  onboard_refuses "$BAD_NODE" "$BAD_RAIL" "${GATE[@]}" || return 1
  expect_slurm "$BAD_NODE" 'drained|draining' "rdma\.fabric: perftest\.[a-z_]+ rail$BAD_RAIL/$BAD_DEV .*"
}
gate_resumes() {  # the fault cleared: resumed after the recovery window (one run), the job ran, the admin's drain kept
  fabric_test "$OUT/fabric-again" "${GATE[@]}" && assert_fabric_green "$OUT/fabric-again" || return 1
  expect_slurm "$BAD_NODE" 'idle|mixed|allocated|completing' 'none' || return 1
  expect_slurm "$ADMIN_NODE" drained "$ADMIN_REASON" || return 1
  local job i
  job=$(cat "$OUT/gate-job")
  # UNDRAIN asks slurmd to register again (the node shows '*' until it has), and a job pending on the
  # node starts at the scheduler's next pass: the backfill's (bf_interval, 30 s) or the main one's
  # (sched_interval, 60 s) when the registration does not queue one; so up to 90 s, not a fixed few
  for i in $(seq 1 90); do
    [ -z "$(podman exec "$SLURM_CTL" squeue -h -j "$job" -o %T 2>/dev/null)" ] && break
    sleep 1
  done
  [ -z "$(podman exec "$SLURM_CTL" squeue -h -j "$job" -o %T 2>/dev/null)" ] || {
    echo "journey: job $job still queued after 90 s: $(podman exec "$SLURM_CTL" squeue -h -j "$job" -o '%T %r')"
    expect_slurm "$BAD_NODE" 'idle|mixed|allocated|completing' 'none'
    return 1
  }
  echo "job $job ran on $BAD_NODE once it was resumed ($i s after the fabric test)"
  # the administrator ends their own drain (the gate never does)
  podman exec "$SLURM_CTL" scontrol update NodeName="$ADMIN_NODE" State=UNDRAIN
}
hcp() {  # the HealthCheckProgram as slurmd runs it (root, SLURMD_NODENAME), without Ansible
  podman exec -e SLURMD_NODENAME="$HCP_NODE" "$HCP_NODE" /usr/local/lib/rdma-fabric/rdma-fabric-scheduler-gate
}
node_timer() { podman exec "$HCP_NODE" systemctl start rdma-fabric-health.service; }
hcp_drains() {  # the node timer reports a failure: the node drains itself; cleared, it resumes after 2 new verdicts
  podman exec "$HCP_NODE" fabricsim fault link-down "$HCP_DEV" >/dev/null || return 1
  node_timer; hcp || return 1
  expect_slurm "$HCP_NODE" drained "rdma\.fabric: health\.[a-z_]+ .* failing \(node timer .*" || return 1
  podman exec "$HCP_NODE" fabricsim clear >/dev/null || return 1
  node_timer; hcp || return 1
  expect_slurm "$HCP_NODE" drained ".*\[healthy 1/2 since .*\]" || return 1
  hcp || return 1     # slurmd runs it again before the timer's next verdict: not counted twice
  expect_slurm "$HCP_NODE" drained ".*\[healthy 1/2 since .*\]" || return 1
  node_timer; hcp || return 1
  expect_slurm "$HCP_NODE" 'idle|mixed|allocated' 'none'
}
reboot_gated() {  # a node booted without iommu=pt: the gpudirect reboot drains it first (its job waited for), resumes it after
  local job boots i
  boots=$(podman exec "$REBOOT_NODE" sh -c 'wc -l < /var/lib/sim-boot/boots') || return 1
  podman exec "$REBOOT_NODE" sed -i 's/ *iommu=pt//' /run/fabricsim/proc/cmdline || return 1
  # a job still running when the drain comes: the reboot waits for it (draining, then drained); the job
  # ends (scancel, as a user would) a second after the node shows draining, so the wait is short and sure
  job=$(podman exec "$SLURM_CTL" sbatch --parsable -w "$REBOOT_NODE" --wrap 'sleep 300') || return 1
  for i in $(seq 1 20); do
    [ "$(podman exec "$SLURM_CTL" squeue -h -j "$job" -o %T)" = RUNNING ] && break
    sleep 0.5
  done
  ( for i in $(seq 1 240); do
      case "$(slurm_state "$REBOOT_NODE")" in draining*) sleep 1; podman exec "$SLURM_CTL" scancel "$job"; exit 0 ;; esac
      sleep 0.5
    done; podman exec "$SLURM_CTL" scancel "$job" ) &
  local ender=$!
  play playbooks/gpudirect.yml --limit "$REBOOT_NODE" "${GATE[@]}" -e scheduler_gate_wait_timeout=60 || { wait "$ender"; return 1; }
  wait "$ender"
  expect_slurm "$REBOOT_NODE" 'idle|mixed|allocated' 'none' || return 1
  # slurmctld's own record: drained for the reboot, then resumed
  podman exec "$SLURM_CTL" journalctl -u slurmctld --no-pager -o cat \
    | grep -E "node $REBOOT_NODE (reason set to: rdma\.fabric: maintenance reboot|state set to)" | tail -3 | tee "$OUT/reboot-slurmctld.log"
  grep -q "reason set to: rdma.fabric: maintenance reboot gpudirect" "$OUT/reboot-slurmctld.log" || return 1
  grep -q "state set to DRAINING" "$OUT/reboot-slurmctld.log" || { echo "journey: $REBOOT_NODE was not draining (its job had ended)"; return 1; }
  [ "$(podman exec "$REBOOT_NODE" sh -c 'wc -l < /var/lib/sim-boot/boots')" -gt "$boots" ] || { echo "journey: $REBOOT_NODE did not reboot"; return 1; }
  [ -z "$(podman exec "$SLURM_CTL" squeue -h -j "$job" -o %T 2>/dev/null)" ] || { echo "journey: job $job still queued"; return 1; }
  echo "gpudirect reboot: $REBOOT_NODE drained (job $job waited for), rebooted, resumed"
}

# ------------------------------------------------------------------ the journey
fabric_green() { fabric_test "$OUT/$1" && assert_fabric_green "$OUT/$1"; }
fabric_names() {  # fabric_names DIR HOST RAIL [ansible args]
  local dir=$1 host=$2 rail=$3; shift 3
  fails fabric_test "$OUT/$dir" "$@" && assert_fabric_names "$OUT/$dir" "$host" "$rail"
}
ib_clean() {  # ib_clean DIR: the report there (make lab's own run), or a run of ib_fabric into it
  [ -s "$1/ib_fabric.json" ] || play playbooks/ib_fabric.yml -e ib_fabric_report_dir="$1" || return 1
  py "$1/ib_fabric.json" <<'PY'
import json, sys
data = json.load(open(sys.argv[1]))
assert data["records"] == [] and data["meta"]["failed"] == [], data["records"]
print("ib_fabric: clean,", data["meta"]["summary"])
PY
}
miswire_named() {
  fault_miswire || return 1
  fails play playbooks/ib_fabric.yml -e ib_fabric_report_dir="$OUT/ib-fault"
  local rc=$?
  clear_miswire || return 1
  [ "$rc" -eq 0 ] || return "$rc"
  py "$OUT/ib-fault/ib_fabric.json" <<'PY'
import json, sys
records = [r for r in json.load(open(sys.argv[1]))["records"] if r["check"] == "ib.cabling"]
assert records and all("Hca4" in json.dumps(r) for r in records), records
print("ib_fabric names:", [(r["subject"], r["expected"], r["actual"]) for r in records])
PY
}
DRIFT_GATE=("${GATE[@]}" -e scheduler_gate_drift=true)
pfc_drift_drains() {  # the drift check with the gate (scheduler_gate_drift): the node drained naming port and setting
  drift_names "\"$PFC_PORT\".*pfc|pfc.*\"$PFC_PORT\"" "${DRIFT_GATE[@]}" || return 1
  expect_slurm "$PFC_NODE" 'drained|draining' "rdma\.fabric: drift\.roce_qos $PFC_PORT pfc .*"
}
pfc_cleared() {  # roce_qos re-applied: the drift check with the gate is clean and resumes the node
  play playbooks/roce_qos.yml --limit "$PFC_NODE" || return 1
  play playbooks/drift_check.yml -e drift_report_dir="$OUT/drift-again" "${DRIFT_GATE[@]}" || return 1
  expect_slurm "$PFC_NODE" 'idle|mixed|allocated|completing' 'none'
}

if [ "$UP" = yes ]; then
  # make lab ends with the round-3 proof: its ib_fabric and fabric test reports are this journey's
  # a test starts from nothing: no container of an earlier lab, run or fault left behind
  lab/lab.sh down
  step "make lab (converge with reboots, ib_fabric, the fabric test)" env LAB_SHORT_TESTS=1 lab/lab.sh up
  step "fabric test of make lab: every node passes (GPU memory, IB included)" \
    assert_fabric_green "$top/.cache/fabric-test-report"
  step "ib_fabric of make lab: clean against the cabling plan" ib_clean "$top/.cache/ib-fabric-report"
else
  step "fabric test: every node passes (GPU memory, IB included)" fabric_green fabric
  step "ib_fabric: clean against the cabling plan" ib_clean "$OUT/ib"
fi
step "drift check: clean" lab/lab.sh check
step "health: no error (and the node timer installed, and Slurm's HealthCheckProgram)" \
  lab/lab.sh health -e health_timer=true -e health_scheduler_gate=slurm -e health_scheduler_gate_recovery_runs=2
step "nic_firmware: converged, 0 writes" firmware_zero_writes
step "onboard a reset node ($NEW_NODE) with a link down: the health gate refuses it, 0 writes" \
  onboard_gate_refuses "$NEW_NODE" mlx5_0
step "onboard it, the link back up: admitted" onboard_admits "$NEW_NODE"

# fault 1: one rail of one GPU node degraded (a dirty optic), the scheduler gate on (Slurm), and a node an
# administrator drained by hand with a reason of their own
step "fault rail-degrade, gate: an administrator drains $ADMIN_NODE by hand" admin_drains
! chosen "fault rail-degrade" || podman exec "$BAD_NODE" fabricsim fault rail-degrade "$BAD_DEV" 0.4 >/dev/null
step "fault rail-degrade $BAD_NODE rail $BAD_RAIL: the fabric test names it, drains it, a job waits" gate_drains
step "fault rail-degrade: onboarding names it, the node stays drained" gate_keeps_out
! chosen "fault rail-degrade" || podman exec "$BAD_NODE" fabricsim clear >/dev/null
step "cleared, gate: the fabric test passes, $BAD_NODE resumed, the admin's drain kept" gate_resumes
step "gate: the HealthCheckProgram drains $HCP_NODE on its node timer's failure, resumes after 2 verdicts" hcp_drains
step "gate: a gpudirect reboot of $REBOOT_NODE drains first, waits for its job, resumes after" reboot_gated

# fault 2: an HCA moved to the wrong leaf; fault 3: an NV value changed behind Ansible's back
# shellcheck source=lab/faults.sh
. "$top/lab/faults.sh"
step "fault miswire: ib_fabric names the HCA" miswire_named
step "cleared: ib_fabric clean again" ib_clean "$OUT/ib-again"
! chosen "fault NV" || fault_nv "$BAD_NODE" >"$OUT/fault_nv.log" 2>&1
step "fault NV value on $BAD_NODE: the drift check names it" drift_names '"nic_firmware"'
! chosen "fault NV" || clear_nv "$BAD_NODE" >"$OUT/clear_nv.log" 2>&1
step "cleared: the drift check is clean again" lab/lab.sh check

# fault 4: PFC cleared on one port behind Ansible's back
! chosen "fault PFC" || podman exec "$PFC_NODE" mlnx_qos -i "$PFC_PORT" --pfc 0,0,0,0,0,0,0,0 >/dev/null
step "fault PFC cleared on $PFC_NODE $PFC_PORT: the drift check names it, the gate drains the node" pfc_drift_drains
step "fault PFC: the node timer's drift metric says so" timer_drift "$PFC_NODE" 1
step "cleared (roce_qos re-applied): drift check clean, the node resumed" pfc_cleared
step "cleared: the node timer's drift metric back to 0" timer_drift "$PFC_NODE" 0

echo
echo "==> journey timings (logs in $OUT)"
printf '%s\n' "${timings[@]}"
if [ "${#failed[@]}" -gt 0 ]; then
  for f in "${failed[@]}"; do  # again here, so that the end of the output says why
    echo "--- $f (the end of $OUT/$(echo "$f" | tr -c 'A-Za-z0-9\n' _).log)"
    tail -12 "$OUT/$(echo "$f" | tr -c 'A-Za-z0-9\n' _).log"
  done
  echo "journey FAILED: ${failed[*]}"
  exit 1
fi
echo "journey passed"
