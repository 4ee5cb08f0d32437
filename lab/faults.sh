# shellcheck shell=bash
# Faults for the lab's journey test, sourced by lab/journey.sh with `top` (the repository root, the
# working directory), INVENTORY (inventories/lab) and the Ansible environment of lab/env.sh. Each
# function says what it did and returns non-zero on failure; each fault has its clear.
#
#   fault_miswire / clear_miswire   Hca4's cable moved from Switch2 to Switch1 on the ibsim fabric:
#                                   playbooks/ib_fabric.yml fails with one ib.cabling error naming
#                                   Hca4 (rail 1), the switch and port it is on (Switch1 port 4) and
#                                   where it should be (Switch2 port 2). About 4 s each.
#   fault_nv HOST [DEV] [NAME=VALUE] / clear_nv HOST
#                                   an NV value changed behind Ansible's back (fabricsim nv-set, next
#                                   boot; default PCI_WR_ORDERING=per_mkey on mlx5_0, in every lab
#                                   profile): playbooks/drift_check.yml fails naming nv.NAME on DEV;
#                                   the clear re-runs playbooks/nic_firmware.yml on HOST (one write)
#
# Each function carries what it needs (fault_miswire and clear_miswire have their helpers inside,
# so `declare -f fault_miswire clear_miswire` is enough in a subshell). The lab's names, overridable
# from the environment: LAB_IBSIM (lab-ibsim), LAB_SMS ("lab-sm-01 lab-sm-02", master first),
# LAB_QUERY_NODE (Hca2, where fabric queries attach), LAB_SM_WAIT (60 s), top and INVENTORY (the
# working directory and its inventories/lab when unset).

# ---- the ibsim fabric -------------------------------------------------------------------------
# ibsim 0.10 reads its net file at start only, and runs here without a console (-n: on a closed
# stdin its console loop spins a core). The miswire starts it on another net file through a
# runtime drop-in (/run: gone when lab-ibsim restarts, so a restart also clears the fault), and
# the clear removes the drop-in. The SMs' umad2sim clients are registered with the ibsim that ran
# when they started, and an OpenSM whose ibsim went away does not stop on SIGTERM (systemd kills
# it after 90 s): the SMs stop first (standbys, then the master) while ibsim still runs, ibsim
# restarts, the master starts and sweeps the new fabric (the LIDs again, from its guid2lid
# cache), then the standbys, so the lab's roles stay as they were (lab-sm-01 master).

# A diagnostics command on the first SM node, attached at the query node.
__fault_ibquery() {
  local sms="${LAB_SMS:-lab-sm-01 lab-sm-02}"
  podman exec -e LD_PRELOAD=/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so \
    -e SIM_HOST="${LAB_QUERY_NODE:-Hca2}" -e IBSIM_SERVER_NAME="${LAB_IBSIM:-lab-ibsim}" "${sms%% *}" "$@"
}

# Stop the SMs, restart ibsim (its unit as it is now), start the SMs, wait for the sweep.
__fault_fabric_restart() {
  local ibsim="${LAB_IBSIM:-lab-ibsim}" sms="${LAB_SMS:-lab-sm-01 lab-sm-02}" wait="${LAB_SM_WAIT:-60}"
  local sm rev="" i count want=0 t0=$SECONDS
  for sm in $sms; do rev="$sm $rev"; want=$((want + 1)); done
  for sm in $rev; do
    podman exec "$sm" systemctl stop opensm.service || { echo "faults: opensm did not stop on $sm" >&2; return 1; }
  done
  podman exec "$ibsim" systemctl daemon-reload && podman exec "$ibsim" systemctl restart ibsim.service || return 1
  for i in $(seq 1 40); do
    # ibsim's control port (0x1B9E) is bound once the fabric is loaded
    podman exec "$ibsim" grep -q ':1B9E ' /proc/net/udp && break
    [ "$i" = 40 ] && { echo "faults: ibsim did not come back in $ibsim" >&2; return 1; }
    sleep 0.5
  done
  for sm in $sms; do
    podman exec "$sm" systemctl start opensm.service || { echo "faults: opensm did not start on $sm" >&2; return 1; }
    [ "$sm" = "${sms%% *}" ] || continue
    # the master first: the query node's port Active and an SM answering as MASTER
    for i in $(seq 1 "$wait"); do
      __fault_ibquery sh -c 'sminfo 2>/dev/null | grep -q SMINFO_MASTER && ibstat 2>/dev/null | grep -q "State: Active"' && break
      [ "$i" = "$wait" ] && { echo "faults: no master SM after $wait s" >&2; return 1; }
      sleep 1
    done
  done
  # every SM known to the master's SA (saquery -s: one SMInfoRecord per SM)
  for i in $(seq 1 "$wait"); do
    count=$(__fault_ibquery saquery -s 2>/dev/null | grep -c 'EndPortLid') || true
    [ "${count:-0}" -ge "$want" ] && break
    [ "$i" = "$wait" ] && { echo "faults: ${count:-0} of $want SMs on the fabric after $wait s" >&2; return 1; }
    sleep 1
  done
  echo "faults: ibsim restarted, $want SMs back ($(__fault_ibquery sminfo 2>/dev/null | sed 's/,.*//')), $((SECONDS - t0)) s"
}

# __fault_miswire_apply on|off
__fault_miswire_apply() {
  local ibsim="${LAB_IBSIM:-lab-ibsim}" net="${top:-$PWD}/tests/ibsim/net.2sw4hca-miswired"
  local dropin=/run/systemd/system/ibsim.service.d/60-fault-miswire.conf remote=/run/ibsim-miswired.net
  if [ "$1" = on ]; then
    [ -f "$net" ] || { echo "faults: $net missing" >&2; return 1; }
    podman cp "$net" "$ibsim:$remote" || return 1
    printf '%s\n' '# lab/faults.sh fault_miswire: clear_miswire removes this file (/run: a restart drops it too)' \
      '[Service]' 'ExecStart=' "ExecStart=/usr/bin/ibsim -s -n -r $remote" \
      | podman exec -i "$ibsim" sh -c "mkdir -p ${dropin%/*} && cat > $dropin" || return 1
    __fault_fabric_restart || return 1
    echo "faults: miswire: ibsim in $ibsim runs tests/ibsim/net.2sw4hca-miswired:" \
      "Hca4 (0x000000000010000a) on Switch1 port 4 instead of Switch2 port 2"
  else
    podman exec "$ibsim" rm -f "$dropin" "$remote" || return 1
    __fault_fabric_restart || return 1
    echo "faults: miswire cleared: ibsim in $ibsim runs its own /etc/ibsim.net again (tests/ibsim/net.2sw4hca)"
  fi
}

# The public functions carry the helpers (defined again when they run).
eval "fault_miswire() {
$(declare -f __fault_ibquery __fault_fabric_restart __fault_miswire_apply)
  __fault_miswire_apply on
}"
eval "clear_miswire() {
$(declare -f __fault_ibquery __fault_fabric_restart __fault_miswire_apply)
  __fault_miswire_apply off
}"

# ---- NV configuration -------------------------------------------------------------------------
# fabricsim nv-set stores a next-boot value as someone running mlxconfig by hand would, without a
# logged write. The drift check compares against next boot: the record is nv.NAME on DEV.
fault_nv() {
  local host="${1:?usage: fault_nv HOST [DEV] [NAME=VALUE]}" dev="${2:-mlx5_0}" setting="${3:-PCI_WR_ORDERING=per_mkey}"
  podman exec "$host" fabricsim nv-set "$dev" "$setting" || return 1
  echo "faults: nv: $host $dev $setting at next boot, behind Ansible's back (fabricsim nv-set)"
}

clear_nv() {
  local host="${1:?usage: clear_nv HOST}" dir="${top:-$PWD}"
  ansible-playbook -i "${INVENTORY:-$dir/inventories/lab}" "$dir/playbooks/nic_firmware.yml" --limit "$host" >/dev/null || {
    echo "faults: nv: playbooks/nic_firmware.yml failed on $host" >&2
    return 1
  }
  echo "faults: nv cleared: playbooks/nic_firmware.yml set $host's values back (next boot = current, no reset owed)"
}
