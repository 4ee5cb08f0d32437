#!/usr/bin/env bash
# The execution environment (EE) end to end, with no container registry:
#   1. ansible-builder create: the build context from execution-environment.yml (keeps it valid);
#   2. the EE base image: the node image's Debian rootfs (lab/image.sh) plus a Python venv;
#   3. the EE image: ansible-builder's own Containerfile built with podman on that base
#      (ansible-core, ansible-runner, the collection tarball built from this tree, its bindep and
#      Python dependencies); cached by a key of its inputs, like the node image;
#   4. an ee-* lab node with sshd and fabricsim;
#   5. jobs run the way AWX runs them (ansible-runner with the EE as its container) over SSH,
#      with ansible-runner's artifacts landing outside the container: roce_qos converges the
#      node, then the drift check must pass on it, and fail, naming the interface and the value,
#      once a setting drifted behind Ansible's back.
# Environment: RDMA_FABRIC_NODE_IMAGE (else lab/image.sh is asked), EE_KEEP=1 keeps the node.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
export CONTAINERS_CONF="${CONTAINERS_CONF:-$top/lab/containers.conf}"
out="$top/.cache/ee"
node=ee-node-01
node_profile=small-roce
mkdir -p "$out"

say() { echo "ee: $*" >&2; }
die() { echo "ee: FAILED: $*" >&2; exit 1; }
key_of() { sha256sum | cut -c1-12; }

node_image=${RDMA_FABRIC_NODE_IMAGE:-$(lab/image.sh)}
node_id=$(podman image inspect -f '{{.Id}}' "$node_image") || die "no node image $node_image"

# --- 1. the build context ------------------------------------------------------------------
version=$(sed -n 's/^version: *//p' galaxy.yml)
mkdir -p build
ansible-galaxy collection build --force --output-path build . >/dev/null
cp "build/rdma-fabric-$version.tar.gz" build/rdma-fabric.tar.gz
rm -rf "$out/context"
ansible-builder create -f execution-environment.yml -c "$out/context" >/dev/null \
  || die "ansible-builder create rejected execution-environment.yml"
[ -f "$out/context/Containerfile" ] || die "ansible-builder wrote no Containerfile"
say "build context in $out/context"

# --- 2. the EE base image: the node image's rootfs and a Python environment for the EE ------
# Debian disables ensurepip (which ansible-builder's pip_install runs) for the system Python,
# and PEP 668 keeps pip off it: the EE's Python is a venv on Debian's python3 (/opt/ee), first
# on PATH. The apt lists stay for bindep's packages; pip trusts the system CA bundle.
base_recipe='FROM NODE_IMAGE
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-venv ca-certificates >/dev/null \
 && python3 -m venv --without-pip /opt/ee \
 && printf "[global]\ncert = /etc/ssl/certs/ca-certificates.crt\n" >/etc/pip.conf
ENV PATH=/opt/ee/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
CMD ["bash"]'
base="localhost/rdma-fabric-ee-base:$(printf '%s\n' "$node_id" "$base_recipe" | key_of)"
if podman image exists "$base"; then
  say "reusing cached $base"
else
  say "building $base"
  mkdir -p "$out/base"
  printf '%s\n' "${base_recipe/NODE_IMAGE/$node_image}" >"$out/base/Containerfile"
  podman build -q --network host -t "$base" "$out/base" >/dev/null || die "base image build"
fi

# --- 3. the EE image, from ansible-builder's context -----------------------------------------
# The definition targets an RPM base (dnf, python3.11); these build arguments point the same
# Containerfile at the Debian base. The collection enters the key by its MANIFEST.json (the
# checksums of every file), not by the tarball's bytes (which carry timestamps).
ee_args=(--build-arg "EE_BASE_IMAGE=$base" --build-arg PKGMGR=/usr/bin/apt-get
         --build-arg PYPKG=python3 --build-arg PYCMD=/opt/ee/bin/python3
         --build-arg PKGMGR_PRESERVE_CACHE=always)
manifest=$(tar -xzOf build/rdma-fabric.tar.gz MANIFEST.json)
ee_key=$( (podman image inspect -f '{{.Id}}' "$base"; printf '%s\n' "${ee_args[@]}" "$manifest";
           cd "$out/context" && find . -type f ! -name '*.tar.gz' | LC_ALL=C sort | xargs sha256sum) | key_of)
ee_image="localhost/rdma-fabric-ee:$ee_key"
if podman image exists "$ee_image"; then
  say "reusing cached $ee_image"
else
  say "building $ee_image (a few minutes)"
  # The builder trusts the CAs this host trusts (pip inside the build reaches PyPI through
  # them); the bundle is mounted for the build only, never copied into the image.
  ca=/etc/ssl/certs/ca-certificates.crt
  vol=(); [ -f "$ca" ] && vol=(-v "$ca:$ca:ro")
  podman build --network host "${vol[@]}" "${ee_args[@]}" -t "$ee_image" "$out/context" \
    >"$out/build.log" 2>&1 || { tail -30 "$out/build.log" >&2; die "EE image build (log: $out/build.log)"; }
fi
podman run --rm "$ee_image" ansible-doc -t module rdma.fabric.mlnx_qos >/dev/null \
  || die "the collection is not installed in $ee_image"
say "EE image $ee_image"

# --- 4. a lab node reachable over SSH --------------------------------------------------------
node_recipe='FROM NODE_IMAGE
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends openssh-server >/dev/null \
 && rm -rf /var/lib/apt/lists/* && systemctl enable ssh >/dev/null 2>&1'
ssh_node_image="localhost/rdma-fabric-ee-node:$(printf '%s\n' "$node_id" "$node_recipe" | key_of)"
if ! podman image exists "$ssh_node_image"; then
  say "building $ssh_node_image"
  mkdir -p "$out/node"
  printf '%s\n' "${node_recipe/NODE_IMAGE/$node_image}" >"$out/node/Containerfile"
  podman build -q --network host -t "$ssh_node_image" "$out/node" >/dev/null || die "node image build"
fi

# The test's key pair: generated here, kept under .cache/, never committed.
ssh_dir="$out/ssh"
if [ ! -f "$ssh_dir/id_ed25519" ]; then
  mkdir -p "$ssh_dir" && ssh-keygen -q -t ed25519 -N '' -C rdma-fabric-ee-test -f "$ssh_dir/id_ed25519"
fi
chmod 0600 "$ssh_dir/id_ed25519"

cleanup() { [ "${EE_KEEP:-0}" = 1 ] || podman rm -f "$node" >/dev/null 2>&1 || true; }
trap cleanup EXIT
podman rm -f "$node" >/dev/null 2>&1 || true
podman run -d --name "$node" --hostname "$node" --systemd=always \
  --ulimit nofile=1024:1024 --ulimit nproc=1000:1000 \
  --device /dev/fuse --cap-add SYS_ADMIN --security-opt apparmor=unconfined \
  "$ssh_node_image" /sbin/init >/dev/null
podman exec -i "$node" sh -c 'mkdir -p -m 0700 /root/.ssh && cat >/root/.ssh/authorized_keys && chmod 0600 /root/.ssh/authorized_keys' \
  <"$ssh_dir/id_ed25519.pub"
ip=$(podman inspect -f '{{.NetworkSettings.IPAddress}}' "$node")
[ -n "$ip" ] || die "$node has no IP address"

# The inventory an AWX inventory source would give: the node's address, root over SSH, the
# machine credential's key mounted at /runner/ssh, as AWX mounts its credentials.
job="$out/job"
rm -rf "$job" && mkdir -p "$job/runner/inventory" "$job/reports"
inventory() {  # inventory KEYFILE
  cat <<INV
all:
  vars:
    ansible_user: root
    ansible_python_interpreter: /usr/bin/python3
    ansible_ssh_private_key_file: $1
    ansible_ssh_common_args: -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null
    rdma_fabric_environment: {SYSFS_PATH: /run/fabricsim/sys}
  children:
    roce_nodes:
      hosts:
        $node: {ansible_host: $ip, fabricsim_profile: $node_profile}
INV
}
inventory /runner/ssh/id_ed25519 >"$job/runner/inventory/hosts.yml"
ssh_ok() {
  ssh -q -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o ConnectTimeout=2 \
    -i "$ssh_dir/id_ed25519" "root@$ip" true 2>/dev/null
}
for _ in $(seq 30); do ssh_ok && break; sleep 1; done
ssh_ok || die "no SSH to root@$ip ($node)"
# fabricsim in the node: what tests/molecule/prepare.yml does for a RoCE node, in three commands
# (its copy task, one round trip per file, took minutes on a loaded CI host).
podman exec "$node" mkdir -p /opt/fabricsim && podman cp tests/fabricsim/. "$node:/opt/fabricsim/" \
  || die "copying fabricsim into $node"
podman exec "$node" sh -c "python3 /opt/fabricsim/bin/fabricsim install >/dev/null \
  && fabricsim init --profile $node_profile >/dev/null && systemctl start fabricsim-sysfsd.service" \
  || die "fabricsim did not start in $node"
say "$node ($ip) reachable over SSH, fabricsim profile $node_profile"

# --- 5. the drift check in the EE, over SSH, as an AWX job ----------------------------------
# ansible-runner's private data directory (what AWX hands to ansible-runner for each job) is
# mounted at /runner and the job writes its events there. This host's runner creates it as root,
# so the job runs as root here (--user=0); on AWX the EE's own user (1000) owns it in the job pod.

run_job() {  # run_job NAME PLAYBOOK: the playbook in the EE, the way AWX runs a job; its exit code
  ansible-runner run "$job/runner" --ident "$1" -p "$2" \
    --process-isolation --process-isolation-executable podman --container-image "$ee_image" \
    --container-volume-mount "$ssh_dir:/runner/ssh:ro" --container-volume-mount "$job/reports:/runner/reports" \
    --container-option=--network=host --container-option=--user=0 \
    --cmdline "-e drift_report_dir=/runner/reports" >"$job/$1.out" 2>&1
}

# check_job NAME WANT_RC WANT_FAILURES: the job's exit code, its recap and its artifacts
check_job() {
  python3 - "$job" "$1" "$2" "$3" "$node" <<'PY'
import json, pathlib, sys
job, name, want_rc, want_failures, node = pathlib.Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
errors = []
rc = int((job / f"{name}.rc").read_text())
if rc != want_rc:
    errors.append(f"exit code {rc}, expected {want_rc}")
# ansible-runner's artifacts (what AWX stores per job), written outside the container
art = job / "runner" / "artifacts" / name
events = [json.loads(p.read_text()) for p in sorted((art / "job_events").glob("*.json"))] if (art / "job_events").is_dir() else []
if not events:
    errors.append(f"no ansible-runner job_events in {art}")
if (art / "rc").is_file() and int((art / "rc").read_text()) != rc:
    errors.append(f"ansible-runner's rc file says {(art / 'rc').read_text()}, the command {rc}")
stats = [e for e in events if e.get("event") == "playbook_on_stats"]
if not stats:
    errors.append("no play recap in the job events")
else:
    d = stats[-1]["event_data"]
    for what, want in (("ok", None), ("failures", want_failures), ("dark", 0)):
        got = (d.get(what) or {}).get(node, 0)
        if want is None and got == 0:
            errors.append(f"recap: no task ok on {node}")
        elif want is not None and got != want:
            errors.append(f"recap: {what}={got} on {node}, expected {want}")
if not any(e.get("event") == "runner_on_ok" and e["event_data"].get("host") == node for e in events):
    errors.append(f"no task ran on {node}")
# The drift reports (issue 12): required once the playbook writes them.
if name != "converge" and "drift_report_dir" in pathlib.Path("playbooks/drift_check.yml").read_text():
    if not (job / "reports" / "drift.json").is_file():
        errors.append("drift_check.yml takes drift_report_dir but wrote no drift.json")
recap = {k: (stats[-1]["event_data"].get(k) or {}).get(node, 0) for k in ("ok", "changed", "failures", "dark")} if stats else "missing"
print(f"ee: job {name}: rc={rc}, recap {recap}", file=sys.stderr)
for e in errors:
    print(f"ee: job {name}: {e}", file=sys.stderr)
sys.exit(1 if errors else 0)
PY
}

# The three job templates of the README's AWX how-to that need no survey: converge, then the
# drift check on the converged node, then the drift check after a setting drifted.
rc=0; run_job converge rdma.fabric.roce_qos || rc=$?; echo "$rc" >"$job/converge.rc"
check_job converge 0 0 || { tail -40 "$job/converge.out" >&2; die "converge in the EE"; }
rc=0; run_job clean rdma.fabric.drift_check || rc=$?; echo "$rc" >"$job/clean.rc"
check_job clean 0 0 || { tail -40 "$job/clean.out" >&2; die "drift check on the converged node"; }

# Drift one setting behind Ansible's back: the same job must now fail on that node.
iface=$(podman exec "$node" sh -c 'ls /run/fabricsim/sys/class/net | grep -v "^lo$" | head -1')
podman exec "$node" mlnx_qos -i "$iface" --trust pcp >/dev/null
rc=0; run_job drifted rdma.fabric.drift_check || rc=$?; echo "$rc" >"$job/drifted.rc"
check_job drifted 2 1 || { tail -40 "$job/drifted.out" >&2; die "drift check on the drifted node"; }
# the report names the interface and the drifted value (loosely matched: the report's layout is
# the drift check's own)
grep -F "$iface" "$job/drifted.out" | grep -w pcp >/dev/null \
  || die "the drifted job does not report $iface with its actual trust pcp"
say "passed: the drift check ran in $ee_image over SSH; artifacts in $job/runner/artifacts, reports in $job/reports"
