# shellcheck shell=bash
# The lab's firmware reset: sourced by lab/lab.sh (`make lab`), with `top` (the repository root)
# and INVENTORY set and the Ansible environment of lab/env.sh.
#
# The lab's nodes are containers: the nic_firmware role never reboots them
# (nic_firmware_reboot: never in inventories/lab/group_vars/firmware_nodes.yml) and reports
# "REBOOT REQUIRED". fabricsim makes the next-boot NV values current when a container starts
# (its boot unit), so restarting the container is the node's reboot, as lab.sh's reboot_pending
# does for kernel arguments.

# firmware_reboot_pending [DRIFT_JSON]
#   Restarts, once, the containers of firmware_nodes that owe a firmware reset: the drift check's
#   nic_firmware records "CURRENT: pending reset" (a value set for the next boot, not yet current).
#   It runs the drift check on firmware_nodes itself (reports in .cache/drift-report-firmware),
#   or reads DRIFT_JSON, a drift.json written after the last restart. Then it waits for systemd in
#   each restarted container and says which ones it restarted. A value the firmware does not take
#   after the restart ("did not take") is never a reason for another restart here.
#   Returns non-zero when the check's report is missing or a container does not come back.
firmware_reboot_pending() {
  local report="${1:-}" dir="$top/.cache/drift-report-firmware" hosts host rc=0
  if [ -z "$report" ]; then
    report="$dir/drift.json"
    rm -f "$report"
    # non-zero on any drift: the report is what counts here
    ansible-playbook -i "$INVENTORY" "$top/playbooks/drift_check.yml" -e drift_check_hosts=firmware_nodes \
      -e drift_report_dir="$dir" >/dev/null 2>&1 || true
  fi
  if [ ! -s "$report" ]; then
    echo "lab: firmware_reboot_pending: no drift report at $report" >&2
    return 1
  fi
  hosts=$(python3 - "$report" <<'PY'
import json, sys
records = json.load(open(sys.argv[1])).get("records") or []
print(" ".join(sorted(set(r["host"] for r in records if r.get("area") == "nic_firmware"
                          and str(r.get("actual", "")).endswith("pending reset")))))
PY
  ) || return 1
  if [ -z "$hosts" ]; then
    echo "lab: no firmware reset owed"
    return 0
  fi
  for host in $hosts; do
    echo "lab: restarting $host (NIC firmware values set for the next boot, not yet current)"
    podman restart "$host" >/dev/null || rc=1
  done
  for host in $hosts; do
    # degraded is not our business here; a container that is not running is
    if ! podman exec "$host" systemctl is-system-running --wait >/dev/null 2>&1 \
      && [ "$(podman inspect -f '{{.State.Running}}' "$host" 2>/dev/null)" != true ]; then
      echo "lab: $host did not come back after the restart" >&2
      rc=1
    fi
  done
  return "$rc"
}
