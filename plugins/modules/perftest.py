#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: perftest
short_description: Run perftest pair tests (ib_write_bw, ib_write_lat and the other check kinds) between two nodes, rail by rail
version_added: 0.1.0
author: rdma.fabric contributors (@rdma-fabric)
extends_documentation_fragment: [rdma.fabric.attributes]
description:
  - One side of a perftest pair test per rail. A round is three tasks, in this order - V(server) on
    the server node (starts the servers and returns at once), V(client) on the client node (runs the
    clients and returns their figures), V(collect) on the server node (waits for the servers, kills
    what is left, returns the server side's figures).
  - Every rail of a test runs at once, each on its own O(tests[].tcp_port) (perftest's out-of-band TCP
    port, C(-p)); the kinds of one rail run one after the other on that same port - the C(ib_write_bw)
    test, then the C(ib_write_lat) test, whose server starts when the bandwidth server exits (the client
    retries C(Couldn't connect) for 30 seconds meanwhile).
  - "Bandwidth: C(ib_write_bw -F -s 1048576 -q 2 -D DURATION --report_gbits): 1 MiB messages as
    azurehpc-health-checks runs it (far past the size where a write stream reaches line rate), two queue
    pairs as oci-hpc runs it (C(ib_write_bw -F -q 2 -x 3)), C(-F) since the CPU frequency warning is moot."
  - "Latency: C(ib_write_lat -F -s 2) (perftest's default size) in perftest's iteration mode (its default
    1000 iterations); perftest's duration mode prints no typical or 99th-percentile latency, so
    O(duration) applies to the bandwidth test only."
  - On RoCE the GID index is the one the node really uses, the RoCE v2 GID of the port's netdev IPv4 (the
    rule C(nccl_env) uses for C(NCCL_IB_GID_INDEX)), unless O(tests[].gid_index) says otherwise. On
    InfiniBand no C(-x) is passed and perftest uses the LID.
  - Every perftest process runs as C(timeout --kill-after=5 TIMEOUT [numactl ...] TOOL ...) in a session of
    its own, so nothing is left running after a failure or an interrupted controller for longer than
    O(timeout) (plus 5 s); V(collect) kills what is left of a server job.
  - A test that cannot run or fails is a result with C(ok=false) and the tool's own error text (or the
    timeout, or C(ib_write_bw not found)), never a pass; the module fails only on bad input (an option, a
    device or port the host does not have, O(use_cuda=true) without a GPU).
  - With O(state=gathered) it only reports what the tests would use; with O(state=parsed) it reads
    perftest output from O(running_config).
options:
  state:
    description:
      - V(gathered) returns RV(gathered) - the node's RDMA ports, tools, GPUs.
      - V(server) starts the servers of O(tests) (detached) and returns RV(jobs) once the first server of
        each rail listens (at most 10 s). A job of this module still running on the same rail or
        O(tests[].tcp_port) is the leftover of an interrupted run - it is killed first (RV(jobs[].replaced));
        a port used by any other process makes that rail's results C(ok=false) with the reason. Two runs
        at once on one node (two controllers) are not supported.
      - V(client) runs the clients of O(tests) against O(tests[].peer) and returns RV(results).
      - V(collect) waits at most O(timeout) seconds for the server jobs of O(tests) (matched by rail),
        kills what is left, returns the server side's RV(results) and removes the job files.
      - V(parsed) parses O(running_config) (perftest's output) and returns RV(parsed).
    type: str
    choices: [gathered, server, client, collect, parsed]
    default: gathered
  tests:
    description:
      - One entry per rail. Required with V(server), V(client) and V(collect). Rails and TCP ports must be
        distinct within one call.
    type: list
    elements: dict
    suboptions:
      rail:
        description: Rail index (0, 1, ...); names the job's files and the results.
        type: int
        required: true
      device:
        description: RDMA device of the rail (C(mlx5_N)), perftest's C(-d). It must exist on the host.
        type: str
        required: true
      ib_port:
        description: Port of the device, perftest's C(-i).
        type: int
        default: 1
      tcp_port:
        description: perftest's out-of-band TCP port C(-p), 1024-65535; the same on both sides of a rail,
          distinct per rail.
        type: int
        required: true
      gid_index:
        description:
          - GID index (perftest's C(-x)). Default on RoCE - the index NCCL jobs on the node use, C(NCCL_IB_GID_INDEX)
            of C(/etc/nccl.conf) (what rdma.fabric.nccl_env writes), where it is set; else the RoCE v2 GID of the
            netdev's IPv4 address (no such GID makes the rail's results C(ok=false) naming the reason); on
            InfiniBand none (LID).
        type: int
      peer:
        description: The server's address for perftest's TCP out-of-band connection. Required with
          V(client).
        type: str
  kinds:
    description:
      - The tests to run on each rail, in this order; one row each in C(plugins/module_utils/acceptance/_kinds.py)
        (tool, arguments, figure, the side that measures), listed in C(docs/fabric_test.md) "Check kinds" - V(bw)
        C(ib_write_bw), V(lat) C(ib_write_lat) by default.
    type: list
    elements: str
    choices: [bw, lat, send_bw, read_bw]
    default: [bw, lat]
  duration:
    description: Seconds of the bandwidth test (perftest's C(-D)), 1-3600.
    type: int
    default: 10
  timeout:
    description:
      - Hard bound in seconds for each perftest process (coreutils C(timeout)), and what V(collect)
        waits at most. Default O(duration) + 20 (perftest adds a few seconds of warm-up and sync).
    type: int
  use_cuda:
    description:
      - GPU memory for the test buffers, so that the GPUDirect path is what is tested.
      - V(auto) uses a GPU when the node has NVIDIA GPUs (C(nvidia-smi) lists one, or
        C(/proc/driver/nvidia/gpus) is not empty) - C(--use_cuda=N) with N the GPU nearest the NIC (the
        GPU whose rail the NIC is in C(nvidia-smi topo -m), that is behind the same PCIe switch; else the
        first GPU on the NIC's NUMA node; else GPU 0) - plus C(--use_cuda_dmabuf) when no peer-memory module
        (C(nvidia_peermem), C(nv_peer_mem)) is loaded.
      - V(true) is the same but a host without a GPU is an error; V(false) uses host memory.
    type: str
    choices: [auto, 'true', 'false']
    default: auto
  numa:
    description:
      - Pin each perftest process to the HCA's local CPUs (C(/sys/class/infiniband/DEV/device/local_cpulist), else
        the CPUs of its NUMA node C(numa_node); under C($SYSFS_PATH) when set) that this process may use - its
        affinity mask (C(sched_getaffinity), which reflects cgroups and isolated CPUs) and its cgroup cpuset (v1
        C(/sys/fs/cgroup/cpuset/PATH/cpuset.effective_cpus), v2 C(/sys/fs/cgroup/PATH/cpuset.cpus.effective), PATH
        from C(/proc/self/cgroup)).
      - With numactl - C(--cpunodebind=N) when every CPU of node N is allowed, else C(--physcpubind=) the allowed
        ones, and C(--membind=N) only when node N's memory is allowed; without numactl C(taskset -c) the allowed
        local CPUs.
      - Pinning is an optimisation and never fails a test. Where none of the HCA's local CPUs is allowed (a
        container, a Slurm job cgroup, a Kubernetes pod, isolated CPUs) the test runs unpinned and the result's
        C(pinning) says why; where the pinning tool still refuses (C(Invalid argument)) the test runs once more
        unpinned and C(pinning) says so.
    type: bool
    default: true
  bind_address:
    description:
      - An IPv4 address of the server node that the perftest servers listen on for the out-of-band TCP connection
        (perftest's C(--bind_source_ip), perftest 23.07 or later; older versions refuse the option). Default - every
        address (perftest's own default). Used by V(server) only, ignored by the other states.
      - The client connects to O(tests[].peer), so give the same address there.
    type: str
  job_dir:
    description: Directory (mode C(0700), created when missing, never a symlink, an absolute path without C(..)
      components) of the server jobs' files - C(RAIL.job), C(RAIL.KIND.out), C(RAIL.KIND.rc), C(RAIL.KIND.pin).
      V(collect) removes them.
    type: path
    default: /run/rdma-fabric/perftest
  running_config:
    description: perftest output to parse with O(state=parsed).
    type: str
  extra_args:
    description:
      - Extra perftest arguments appended to every command, one word per item (no blanks or shell syntax).
      - Checked against perftest's own option table - an option perftest does not have, an option without its
        argument, one that the tool of a kind of O(kinds) refuses (C(-b) or C(-N) with V(lat), C(-C) with V(bw),
        C(-o) with a write or send kind), one the module sets itself (C(-d), C(-i), C(-p), C(-s), C(-q), C(-D), C(-x), C(-F), C(--report_gbits),
        C(--use_cuda), C(--use_cuda_dmabuf), C(--bind_source_ip); perftest refuses an option given twice) or a word
        that is no option (the server's address is O(tests[].peer)) is refused, naming C(extra_args[i]).
    type: list
    elements: str
    default: []
attributes:
  check_mode:
    description: Reads run in check mode; traffic does not.
    support: partial
    details: V(gathered) and V(parsed) run the same; V(server), V(client) and V(collect) would send
      traffic, so they do nothing and return C(skipped) with a message.
  diff_mode:
    description: Nothing to diff.
    support: none
  action_group:
    membership:
      - rdma.fabric.fabric_test
  platform:
    description: Linux hosts with RDMA devices and perftest (the tests); coreutils C(timeout).
notes:
  - The module never reports C(changed) - the job files it writes in O(job_dir) are temporary (removed by
    V(collect)) and nothing on the node is configured.
  - Results carry C(ok); judging a figure against a threshold is the caller's part (the fabric_test role).
requirements:
  - perftest (C(ib_write_bw), C(ib_write_lat)) and coreutils C(timeout) on both nodes; C(numactl) or
    C(taskset) for the NUMA pinning.
"""

EXAMPLES = r"""
- name: Servers on node A, rails 0 and 1
  rdma.fabric.perftest:
    state: server
    tests:
      - {rail: 0, device: mlx5_0, tcp_port: 18515}
      - {rail: 1, device: mlx5_1, tcp_port: 18516}
  delegate_to: nodeA

- name: Clients on node B
  rdma.fabric.perftest:
    state: client
    tests:
      - {rail: 0, device: mlx5_0, tcp_port: 18515, peer: 10.0.0.1}
      - {rail: 1, device: mlx5_1, tcp_port: 18516, peer: 10.0.0.1}
  delegate_to: nodeB
  register: client

- name: Server side's figures, nothing left running
  rdma.fabric.perftest:
    state: collect
    tests:
      - {rail: 0, device: mlx5_0, tcp_port: 18515}
      - {rail: 1, device: mlx5_1, tcp_port: 18516}
  delegate_to: nodeA

- name: What a test would use
  rdma.fabric.perftest:
  register: perf_facts

- name: Read the figures of an ib_write_bw output saved earlier
  rdma.fabric.perftest:
    state: parsed
    running_config: "{{ lookup('ansible.builtin.file', 'ib_write_bw.txt') }}"
"""

RETURN = r"""
dropped_keys:
  description:
    - Keys of the node's result the controller acts on (C(ansible_facts), C(add_host), C(add_group), C(ansible_stats))
      that this module never returns, dropped on the controller (the node may be compromised); a warning says so.
  returned: when the node's result held any
  type: list
  elements: str
gathered:
  description: The node's facts for the tests (O(state=gathered)).
  returned: when O(state=gathered)
  type: dict
  contains:
    rails:
      description: Every RDMA device port - C(device), C(ib_port), C(link_layer), C(state), C(rate_gbps),
        C(netdev), C(gid_index) (RoCE, the default O(tests[].gid_index); with C(gid_error) when there is
        none), C(lid) (InfiniBand), C(numa_node).
      type: list
      elements: dict
    tools:
      description: Path or null of the tool of every kind of O(kinds) (C(ib_write_bw), C(ib_write_lat), ...),
        C(numactl), C(taskset), C(timeout), C(nvidia_smi).
      type: dict
    gpus:
      description: Number of NVIDIA GPUs.
      type: int
    peermem:
      description: Whether a peer-memory module (C(nvidia_peermem), C(nv_peer_mem)) is loaded.
      type: bool
    address:
      description:
        - The IPv4 address of the interface of the node's default route (C(/proc/net/route)), or null; where the fabric
          test's peers reach the node without name resolution (rdma.fabric.fabric_test's C(fabric_test_address)).
      type: str
jobs:
  description: The server jobs started, one per test.
  returned: when O(state=server)
  type: list
  elements: dict
  contains:
    rail: {description: The rail., type: int}
    tcp_port: {description: The port., type: int}
    pid: {description: The job's shell (null when nothing could start)., type: int}
    pgid: {description: Its process group and session id (every process of the job is in this session)., type: int}
    listening: {description: Whether the first server listened within 10 s., type: bool}
    outputs: {description: Output file per kind., type: dict}
    errors:
      description: Kinds that could not start and why (the tool missing, the port taken).
      type: dict
    replaced: {description: Leftover jobs on the same rail or port that were killed., type: list}
results:
  description:
    - One record per rail and kind, C(role) V(client) (O(state=client)) or V(server) (O(state=collect)).
    - "C(rail), C(device), C(ib_port), C(tcp_port), C(kind) (one of O(kinds)), C(role), C(peer), C(command)
      (argv list), C(rc), C(ok) (rc 0 and a result row), C(error) (the tool's own error lines joined with
      C(; ), or the timeout, or C(ib_write_bw not found); null when ok), C(bw_gbps), C(bw_peak_gbps) (Gb/s,
      the row with the largest message), C(lat_typical_us), C(lat_avg_us), C(lat_p99_us), C(gid_index),
      C(link_layer), C(pinning), C(gpu), C(output) (the last 4000 characters), C(attempts) (client)."
    - "C(pinning) - what the test was pinned with and why (C(taskset -c 0-7: HCA mlx5_0)), or C(none: ...) with
      the reason when it ran unpinned (the HCA's local CPUs outside this process's allowed CPUs, the pinning tool
      refused and the test ran again unpinned)."
    - "C(output_dropped_bytes) - bytes of the tool's output dropped from the front (it is read keeping only its
      last MiB, where perftest prints its results); when not 0, C(output) starts with a line saying so."
    - "C(remote) - the other end as perftest exchanged with it (C(lid), C(gid)), or null: the fabric test checks that
      the measuring client reached the peer's rail and not another HCA."
  returned: when O(state=client) or O(state=collect)
  type: list
  elements: dict
parsed:
  description: perftest's output parsed (test, kind, units, rows, errors, ...) plus the figures C(bw_gbps),
    C(bw_peak_gbps), C(lat_typical_us), C(lat_avg_us), C(lat_p99_us).
  returned: when O(state=parsed)
  type: dict
skipped:
  description: True in check mode for V(server), V(client), V(collect).
  returned: in check mode
  type: bool
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.rdma.fabric.plugins.module_utils.parsers import _perftest
from ansible_collections.rdma.fabric.plugins.module_utils.acceptance import _kinds
from ansible_collections.rdma.fabric.plugins.module_utils.acceptance import _perftest_run as run


def argument_spec():
    return dict(
        state=dict(type="str", choices=["gathered", "server", "client", "collect", "parsed"], default="gathered"),
        tests=dict(type="list", elements="dict", options=dict(
            rail=dict(type="int", required=True),
            device=dict(type="str", required=True),
            ib_port=dict(type="int", default=1),
            tcp_port=dict(type="int", required=True),
            gid_index=dict(type="int"),
            peer=dict(type="str"),
        )),
        kinds=dict(type="list", elements="str", choices=list(_kinds.NAMES), default=list(_kinds.DEFAULT)),
        duration=dict(type="int", default=10),
        timeout=dict(type="int"),
        use_cuda=dict(type="str", choices=["auto", "true", "false"], default="auto"),
        numa=dict(type="bool", default=True),
        bind_address=dict(type="str"),
        job_dir=dict(type="path", default="/run/rdma-fabric/perftest"),
        running_config=dict(type="str"),
        extra_args=dict(type="list", elements="str", default=[]),
    )


def main():
    module = AnsibleModule(argument_spec=argument_spec(), supports_check_mode=True,
                           required_if=[("state", "parsed", ["running_config"])])
    params = dict(module.params)
    state = params["state"]
    if not 1 <= params["duration"] <= 3600:
        module.fail_json(msg="duration=%s: expected seconds 1-3600" % params["duration"])
    if params["timeout"] is None:
        params["timeout"] = params["duration"] + 20
    elif not 1 <= params["timeout"] <= 86400:
        module.fail_json(msg="timeout=%s: expected seconds 1-86400" % params["timeout"])
    if not params["kinds"]:
        module.fail_json(msg="kinds=[]: give at least one of %s" % ", ".join(_kinds.NAMES))
    if len(set(params["kinds"])) != len(params["kinds"]):
        module.fail_json(msg="kinds=%s: a kind is given twice" % params["kinds"])
    try:
        params["extra_args"] = run.check_perftest_args(params["extra_args"], params["kinds"])
        run.check_bind_address(params["bind_address"])
        if state in ("server", "client", "collect"):
            run.check_tests(params["tests"], state)
        elif params["tests"]:
            module.fail_json(msg="tests: only used with state=server, client or collect, not state=%s" % state)
        if state in ("server", "collect"):
            run.check_job_dir(params["job_dir"])
    except run.RunError as exc:
        module.fail_json(msg=str(exc))

    if state == "parsed":
        perftest = _perftest
        try:
            parsed = perftest.parse(params["running_config"])
        except ValueError as exc:
            module.fail_json(msg="running_config: %s" % exc)
        parsed = dict(parsed)
        parsed.update(run.figures(parsed.get("kind"), parsed, perftest))
        module.exit_json(changed=False, parsed=parsed)

    if state in ("server", "client", "collect") and module.check_mode:
        module.exit_json(changed=False, skipped=True,
                         msg="check mode: state=%s would send RDMA traffic; nothing was run" % state)

    if state == "collect":
        results = run.collect(_perftest, params["job_dir"], params["tests"], params["kinds"], params["timeout"])
        module.exit_json(changed=False, results=results)

    node = run.gather(module)
    if state == "gathered":
        module.exit_json(changed=False, gathered=run.public_facts(node))

    try:
        work = [(test,) + run.plan(node, test, position, params, state) for position, test in enumerate(params["tests"])]
        if state == "server":
            run.prepare_job_dir(params["job_dir"])
    except run.RunError as exc:
        module.fail_json(msg=str(exc))

    if state == "server":
        jobs = [run.start_server(params["job_dir"], test, planned, params["timeout"]) for test, dummy, planned in work]
        run.wait_listening(jobs, min(run.LISTEN_WAIT, params["timeout"]))
        module.exit_json(changed=False, jobs=[
            {"rail": job["rail"], "tcp_port": job["tcp_port"], "pid": job["pid"], "pgid": job["sid"],
             "listening": job["listening"], "outputs": job["outputs"], "errors": job["errors"],
             "replaced": job["replaced"]} for job in jobs])

    results = run.run_clients(_perftest, [(test, planned) for test, dummy, planned in work], params["timeout"])
    module.exit_json(changed=False, results=results)


if __name__ == "__main__":
    main()
