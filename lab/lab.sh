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
#   lab/lab.sh slurm  Slurm 22.05 on the lab (slurmctld on slurm_controllers, slurmd on gpu_nodes), then sinfo
set -euo pipefail

# shellcheck source=lab/env.sh
. "$(dirname "$0")/env.sh"
# More forks than lab hosts, so that every task reaches all of them at once (the default 5
# would run each task in two rounds on the 7 lab nodes); pipelining: one exec per module.
export ANSIBLE_FORKS=${ANSIBLE_FORKS:-20} ANSIBLE_PIPELINING=${ANSIBLE_PIPELINING:-true}
INVENTORY="$top/inventories/lab"
LABEL=rdma-fabric-lab

# the inventory as JSON: read once by the commands that ask it often (ansible-inventory takes a second or two)
LAB_INV=""
inventory() { if [ -n "$LAB_INV" ]; then printf '%s\n' "$LAB_INV"; else ansible-inventory -i "$INVENTORY" --list 2>/dev/null; fi; }

lab_hosts() {
  inventory \
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
  slurm
  # The simulated InfiniBand fabric: ibsim in lab-ibsim, umad2sim on the SM nodes.
  mkdir -p .cache/lab
  ansible-playbook -i "$INVENTORY" tests/ibsim/prepare.yml -e ibsim_sm_group=sm_nodes
  ansible-playbook -i "$INVENTORY" playbooks/site.yml -e site_report_dir="$top/.cache/site-report"
  sms
  proof
  podman exec "$(slurm_controller)" sinfo -N -o '%N %P %T %E'
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
  ansible-playbook -i inventories/lab playbooks/fabric_test.yml -e scheduler_gate=slurm
                                                       the fabric test drains a failing node in Slurm (docs/scheduler.md)
  podman exec lab-sm-01 sinfo -R -o '%100E %U %N'      the drains and their reasons
  make bench                                           roce_qos benchmark on the lab
  make lab-destroy                                     remove the lab
MSG
}

lab_ip() {  # lab_ip HOST: the node's fixed address on podman's default network (10.88.0.0/16)
  local i=0 h
  for h in $(lab_hosts); do
    [ "$h" = "$1" ] && { echo "10.88.0.$((200 + i))"; return 0; }
    i=$((i + 1))
  done
  echo "lab: $1 is not a lab host" >&2
  return 1
}

node_spec() {  # node_spec IMAGE: the key of a lab container (the image and start_node's recipe)
  printf '%s\n' "$1" "$(declare -f start_node install_boot lab_ip)" "$(cat tests/fabricsim/boot/* 2>/dev/null)" | sha256sum | cut -c1-12
}

start_node() {  # start_node HOST IMAGE: a new container for the lab node
  echo "lab: starting $1"
  # /dev/fuse + SYS_ADMIN (+ no AppArmor mount denial): fabricsim-sysfsd serves the
  # simulated sysfs over FUSE, so invalid writes fail with EINVAL like the kernel's.
  # A node that reboots (the roles' reboots: gpudirect kernel arguments, NIC firmware) comes
  # back as a server does (--restart=always), with its own boot id (sim-boot early, then
  # sim-boot.service: tests/fabricsim/boot, installed by install_boot)
  podman run -d --name "$1" --hostname "$1" --ip "$(lab_ip "$1")" --label "$LABEL=1" --label "$LABEL-spec=$(node_spec "$2")" --restart=always \
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

slurm_controller() {  # the first host of slurm_controllers
  inventory \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["slurm_controllers"]["hosts"][0])'
}

slurm_nodes() {  # the hosts that run slurmd: gpu_nodes
  inventory \
    | python3 -c 'import json,sys; print("\n".join(sorted(json.load(sys.stdin)["gpu_nodes"]["hosts"])))'
}

slurm_conf() {  # slurm.conf of the lab: one partition of the GPU nodes, addresses given (no DNS)
  local ctl host nodes
  ctl=$(slurm_controller)
  nodes=$(slurm_nodes | paste -sd, -)
  cat <<CONF
# The lab's Slurm (lab/lab.sh slurm): Debian 12's 22.05, slurmctld on $ctl, slurmd on the GPU nodes.
ClusterName=rdmalab
SlurmctldHost=$ctl($(lab_ip "$ctl"))
AuthType=auth/munge
SlurmUser=slurm
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
MpiDefault=none
SelectType=select/cons_tres
StateSaveLocation=/var/lib/slurm/slurmctld
SlurmdSpoolDir=/var/lib/slurm/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
ReturnToService=2
# the scheduler gate without Ansible (health_scheduler_gate: slurm installs it; docs/scheduler.md)
HealthCheckProgram=/usr/local/lib/rdma-fabric/rdma-fabric-scheduler-gate
HealthCheckInterval=300
HealthCheckNodeState=ANY
CONF
  for host in $(slurm_nodes); do
    echo "NodeName=$host NodeAddr=$(lab_ip "$host") CPUs=1 State=UNKNOWN"
  done
  echo "PartitionName=gpu Nodes=$nodes Default=YES MaxTime=INFINITE State=UP"
}

slurm_host() {  # slurm_host HOST DAEMON CONF: the config, the limits drop-in, the daemon enabled and started
  # The units raise LimitNOFILE/LimitMEMLOCK/LimitSTACK above what a lab container may (no
  # CAP_SYS_RESOURCE): the drop-in keeps the container's own hard limits, or the unit fails.
  local host=$1 daemon=$2 conf=$3
  podman exec -i "$host" sh -c "cat >/etc/slurm/slurm.conf" <"$conf" || return 1
  podman exec "$host" sh -c "mkdir -p /var/lib/slurm /etc/systemd/system/$daemon.service.d
    printf '[Service]\nLimitNOFILE=%s\nLimitMEMLOCK=%s\nLimitSTACK=%s\n' \"\$(ulimit -H -n)\" \
      \"\$(ulimit -H -l | sed 's/^unlimited\$/infinity/; t; s/\$/K/')\" \"\$(ulimit -H -s | sed 's/^unlimited\$/infinity/; t; s/\$/K/')\" \
      >/etc/systemd/system/$daemon.service.d/rdma-fabric-lab.conf
    systemctl daemon-reload && systemctl enable --quiet $daemon && systemctl restart $daemon" || return 1
}

slurm() {  # Slurm on the lab: slurmctld on slurm_controllers, slurmd on gpu_nodes (munge and its key: the image's)
  local ctl host conf t0=$SECONDS i
  ctl=$(slurm_controller)
  conf=$(mktemp)
  slurm_conf >"$conf"
  slurm_host "$ctl" slurmctld "$conf" || { rm -f "$conf"; echo "lab: slurmctld did not start on $ctl" >&2; return 1; }
  local pids=() failed=0
  for host in $(slurm_nodes); do
    slurm_host "$host" slurmd "$conf" & pids+=($!)
  done
  for i in "${pids[@]}"; do wait "$i" || failed=1; done
  rm -f "$conf"
  [ "$failed" = 0 ] || { echo "lab: slurmd did not start on every GPU node" >&2; return 1; }
  # every node registered (not unknown, no '*': slurmd answers)
  for i in $(seq 1 30); do
    podman exec "$ctl" sinfo -h -N -o '%t' | grep -Eq '[*]|unk' || break
    sleep 1
  done
  podman exec "$ctl" sinfo -N -o '%N %P %T %E'
  echo "lab: Slurm up in $((SECONDS - t0)) s (slurmctld on $ctl)"
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
  if slurm_nodes | grep -x "$host" >/dev/null; then
    local conf
    conf=$(mktemp)
    slurm_conf >"$conf"
    slurm_host "$host" slurmd "$conf" || { rm -f "$conf"; return 1; }
    rm -f "$conf"
  fi
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
  up|reset|slurm) LAB_INV=$(ansible-inventory -i "$INVENTORY" --list 2>/dev/null) ;;
esac
case "${1:-}" in
  up) up ;;
  down) down ;;
  check) check ;;
  health) shift; health "$@" ;;
  sms) sms ;;
  drill) drill ;;
  reset) reset "${2:-}" ;;
  proof) proof ;;
  slurm) slurm ;;
  *) echo "usage: $0 up|down|check|health|sms|drill|reset HOST|proof|slurm" >&2; exit 2 ;;
esac
