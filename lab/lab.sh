#!/usr/bin/env bash
# The built-in lab: simulated GPU and SM nodes as podman containers (systemd as PID 1,
# fabricsim inside), converged with playbooks/site.yml through inventories/lab.
#   lab/lab.sh up     build what is missing, start the nodes, converge, print the recap
#   lab/lab.sh down   remove the lab containers
#   lab/lab.sh check  the fleet drift check against the running lab (table and reports, fails on drift)
#   lab/lab.sh health playbooks/health.yml on the running lab (findings table, reports in .cache/health-report);
#                     its exit code: 0 on a freshly converged lab (no finding; what cannot be read is skipped)
#   lab/lab.sh drill  the OpenSM failover drill on the lab's SM pair (lab-sm-01/02 on ibsim)
#   lab/lab.sh sms    the subnet's SMs (GUID, priority, state) from rdma.fabric.sm_info
#   lab/lab.sh reset HOST  the node as a new machine (a new container, nothing converged), for onboard.yml --limit HOST
#   lab/lab.sh proof  round 3 on the running lab: ib_fabric, the fabric test (its table)
set -euo pipefail

# shellcheck source=lab/env.sh
. "$(dirname "$0")/env.sh"
# More forks than lab hosts, so that every task reaches all of them at once (the default 5
# would run each task in two rounds on the 7 lab nodes); pipelining: one exec per module.
export ANSIBLE_FORKS=${ANSIBLE_FORKS:-20} ANSIBLE_PIPELINING=${ANSIBLE_PIPELINING:-true}
INVENTORY="$top/inventories/lab"
LABEL=rdma-fabric-lab

lab_hosts() {
  ansible-inventory -i "$INVENTORY" --list 2>/dev/null \
    | python3 -c 'import json,sys; print("\n".join(sorted(json.load(sys.stdin)["_meta"]["hostvars"])))'
}

up() {
  lab/install-deps.sh
  lab/venv.sh
  mkdir -p .cache/collections/ansible_collections/rdma
  ln -sfn "$top" .cache/collections/ansible_collections/rdma/fabric
  local image
  image=$(lab/image.sh)
  local host
  for host in $(lab_hosts); do
    # a container of another image or another start_node (an older lab, another checkout) is
    # made anew: a lab only ever runs this tree's node recipe
    if podman container exists "$host" \
       && [ "$(podman inspect -f "{{index .Config.Labels \"$LABEL-spec\"}}" "$host" 2>/dev/null)" = "$(node_spec "$image")" ]; then
      podman start "$host" >/dev/null
    else
      podman rm -f "$host" >/dev/null 2>&1 || true
      start_node "$host" "$image"
    fi
  done
  ansible-playbook -i "$INVENTORY" tests/molecule/prepare.yml \
    -e prepare_fabricsim_source="$top/tests/fabricsim/"
  # shellcheck disable=SC2046
  install_boot $(gpu_hosts)
  # The simulated InfiniBand fabric: ibsim in lab-ibsim, umad2sim on the SM nodes.
  mkdir -p .cache/lab
  ansible-playbook -i "$INVENTORY" tests/ibsim/prepare.yml -e ibsim_sm_group=sm_nodes
  ansible-playbook -i "$INVENTORY" playbooks/site.yml -e site_report_dir="$top/.cache/site-report"
  sms
  proof
  cat <<MSG

lab: converged. Next:
  podman exec lab-hgx-01 mlnx_qos -i enp24s0np0        the live QoS of a simulated RoCE port
  podman exec lab-hgx-01 cat /etc/nccl.conf            the NCCL settings derived from its topology
  podman exec lab-hgx-01 fabricsim log --writes        every write the run made
  lab/lab.sh check                                     drift check: table and reports, fails on drift
  ansible-playbook -i inventories/lab playbooks/fabric_test.yml      pair tests per rail (GPU memory), loopback where peers are short
  ansible-playbook -i inventories/lab playbooks/ib_fabric.yml        IB links, counters and the cabling plan
  ansible-playbook -i inventories/lab playbooks/nic_firmware.yml     NV config: converged, 0 writes
  lab/lab.sh reset lab-hgx-02 && ansible-playbook -i inventories/lab playbooks/onboard.yml --limit lab-hgx-02
                                                       a fresh node: health gate, converge, verify, admitted by the fabric test
  lab/lab.sh health                                    fabric health: findings table and reports, fails on an error
  lab/lab.sh sms                                       the subnet's SMs (GUID, priority, state)
  lab/lab.sh drill                                     OpenSM failover drill on lab-sm-01/02
  make bench                                           roce_qos benchmark on the lab
  make lab-destroy                                     remove the lab
MSG
}

node_spec() {  # node_spec IMAGE: the key of a lab container (the image and start_node's recipe)
  printf '%s\n' "$1" "$(declare -f start_node install_boot)" "$(cat tests/fabricsim/boot/* 2>/dev/null)" | sha256sum | cut -c1-12
}

start_node() {  # start_node HOST IMAGE: a new container for the lab node
  echo "lab: starting $1"
  # /dev/fuse + SYS_ADMIN (+ no AppArmor mount denial): fabricsim-sysfsd serves the
  # simulated sysfs over FUSE, so invalid writes fail with EINVAL like the kernel's.
  # A node that reboots (the roles' reboots: gpudirect kernel arguments, NIC firmware) comes
  # back as a server does (--restart=always), with its own boot id (sim-boot early, then
  # sim-boot.service: tests/fabricsim/boot, installed by install_boot)
  podman run -d --name "$1" --hostname "$1" --label "$LABEL=1" --label "$LABEL-spec=$(node_spec "$2")" --restart=always \
    --systemd=always --ulimit nofile=1024:1024 --ulimit nproc=1000:1000 \
    --device /dev/fuse --cap-add SYS_ADMIN --security-opt apparmor=unconfined \
    "$2" /bin/sh -c '[ ! -x /usr/local/sbin/sim-boot ] || /usr/local/sbin/sim-boot early; exec /sbin/init' >/dev/null
}

install_boot() {  # install_boot HOST...: a boot id per boot (ansible.builtin.reboot waits for it)
  local host
  for host in "$@"; do
    podman exec "$host" test -x /usr/local/sbin/sim-boot && continue
    podman cp tests/fabricsim/boot/sim-boot "$host":/usr/local/sbin/sim-boot
    podman cp tests/fabricsim/boot/sim-update-grub "$host":/usr/local/sbin/sim-update-grub
    podman cp tests/fabricsim/boot/sim-boot.service "$host":/etc/systemd/system/sim-boot.service
    podman exec "$host" sh -c 'systemctl unmask --quiet systemd-logind.service; systemctl daemon-reload;
      systemctl start systemd-logind.service; systemctl enable --quiet --now sim-boot.service
      systemctl is-active --quiet systemd-logind.service' \
      || { echo "lab: $host: systemd-logind is not running: its reboot would fail" >&2; return 1; }
  done
}

gpu_hosts() {  # the nodes that reboot: GPU and RDMA nodes (kernel arguments, NIC firmware)
  ansible-inventory -i "$INVENTORY" --list 2>/dev/null | python3 -c 'import json, sys
inv = json.load(sys.stdin)
print("\n".join(sorted(set(h for g in ("gpu_nodes", "roce_nodes", "ib_nodes", "firmware_nodes")
                            for h in inv.get(g, {}).get("hosts", [])))))'
}

proof() {
  # Round 3 on the freshly converged lab (site.yml set the NIC firmware and rebooted the nodes
  # that owed it): the IB links and the cabling plan, and the fabric test, whose table ends the
  # recap. Each prints its own table; make lab fails when one fails.
  # LAB_SHORT_TESTS=1 (the journey of make test): 2-second tests with no simulated wait, the
  # journey's own shortcut (DOMAIN §9); make lab itself runs the role's durations
  local -a short=()
  [ "${LAB_SHORT_TESTS:-0}" = 0 ] || short=(-e fabric_test_duration=2
    -e '{"rdma_fabric_environment": {"SYSFS_PATH": "/run/fabricsim/sys", "FABRICSIM_PERFTEST_TIME_SCALE": "0"}}')
  rm -rf "$top/.cache/ib-fabric-report" "$top/.cache/fabric-test-report"
  ansible-playbook -i "$INVENTORY" playbooks/ib_fabric.yml -e ib_fabric_report_dir="$top/.cache/ib-fabric-report"
  ansible-playbook -i "$INVENTORY" playbooks/fabric_test.yml -e fabric_test_report_dir="$top/.cache/fabric-test-report" "${short[@]}" \
    | sed -n '/^rdma.fabric fabric test/,/^reports:/p'
}

reset() {
  # reset HOST: the node as a new machine arrives (a new container, fabricsim loaded, nothing
  # converged), for `playbooks/onboard.yml --limit HOST`
  local host=$1 image
  [ -n "$host" ] || { echo "usage: $0 reset HOST" >&2; return 2; }
  lab_hosts | grep -x "$host" >/dev/null || { echo "lab: $host is not a lab host ($(lab_hosts | tr '\n' ' '))" >&2; return 2; }
  image=$(lab/image.sh)
  podman rm -f "$host" >/dev/null 2>&1 || true
  start_node "$host" "$image"
  ansible-playbook -i "$INVENTORY" tests/molecule/prepare.yml --limit "$host" \
    -e prepare_fabricsim_source="$top/tests/fabricsim/" >/dev/null
  ! gpu_hosts | grep -x "$host" >/dev/null || install_boot "$host"
  echo "lab: $host reset (fabricsim loaded, nothing converged)"
}

down() {
  local ids
  ids=$(podman ps -aq --filter "label=$LABEL")
  [ -z "$ids" ] || podman rm -f $ids >/dev/null
  echo "lab: removed"
}

check() {
  ansible-playbook -i "$INVENTORY" playbooks/drift_check.yml -e drift_report_dir="$top/.cache/drift-report"
}

health() {
  local report="$top/.cache/health-report" rc=0
  ansible-playbook -i "$INVENTORY" playbooks/health.yml -e health_report_dir="$report" "$@" || rc=$?
  echo "lab: health reports in $report (health.json, health-junit.xml, rdma_fabric_health.prom); exit code $rc"
  return "$rc"
}

sms() {
  ansible-playbook -i "$INVENTORY" lab/sms.yml
}

drill() {
  ansible-playbook -i "$INVENTORY" playbooks/opensm_failover_drill.yml -e opensm_drill_hosts=sm_nodes
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  check) check ;;
  health) shift; health "$@" ;;
  sms) sms ;;
  drill) drill ;;
  reset) reset "${2:-}" ;;
  proof) proof ;;
  *) echo "usage: $0 up|down|check|health|sms|drill|reset HOST|proof" >&2; exit 2 ;;
esac
