# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""#39: perftest pinned only inside the CPUs (and memory nodes) this process may use; never a test
failed for pinning. Fake sysfs (SYSFS_PATH) and fake cgroup trees; one test really restricts its own
affinity in a child process and really runs the planned prefix."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import shutil
import subprocess
import sys

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.acceptance import _perftest_run as run

TASKSET = shutil.which("taskset")


def _sysfs(root, device, numa_node, local_cpulist, node_cpulist=None):
    dev = root / "class" / "infiniband" / device / "device"
    dev.mkdir(parents=True, exist_ok=True)
    (dev / "numa_node").write_text("%s\n" % numa_node)
    if local_cpulist is not None:
        (dev / "local_cpulist").write_text(local_cpulist + "\n")
    if node_cpulist is not None and int(numa_node) >= 0:
        node = root / "devices" / "system" / "node" / ("node%s" % numa_node)
        node.mkdir(parents=True, exist_ok=True)
        (node / "cpulist").write_text(node_cpulist + "\n")


def _node(cpus, mems=(0,), numactl=True, taskset=True):
    return {"_paths": {"numactl": "/usr/bin/numactl" if numactl else None, "taskset": "/usr/bin/taskset" if taskset else None},
            "_allowed": {"cpus": set(cpus), "mems": set(mems) if mems is not None else None, "where": "test"}}


@pytest.fixture
def sysfs(tmp_path, monkeypatch):
    root = tmp_path / "sys"
    root.mkdir()
    monkeypatch.setenv("SYSFS_PATH", str(root))
    _sysfs(root, "mlx5_0", 0, "0-55,112-167", "0-55,112-167")
    _sysfs(root, "mlx5_4", 1, "56-111", "56-111,168-223")
    _sysfs(root, "mlx5_9", -1, None)
    return root


def test_cpulists():
    assert run.parse_cpulist("0-3,8,10-11") == {0, 1, 2, 3, 8, 10, 11}
    assert run.parse_cpulist("") == set()
    assert run.parse_cpulist("0-3;reboot") is None and run.parse_cpulist("5-2") is None
    assert run.format_cpulist({0, 1, 2, 3, 8, 10, 11}) == "0-3,8,10-11"
    assert run.format_cpulist(set()) == ""


def test_outside_the_allowed_cpus_is_unpinned_and_says_why(sysfs):
    prefix, pinning = run.numa_prefix(_node({0, 1}), "mlx5_4", True)
    assert prefix == []
    assert pinning.startswith("none: HCA mlx5_4's local CPUs 56-111 are outside this process's allowed CPUs 0-1"), pinning


def test_overlap_is_pinned_to_the_overlap_with_taskset(sysfs):
    prefix, pinning = run.numa_prefix(_node({0, 1, 200}), "mlx5_0", True)
    assert prefix == ["/usr/bin/taskset", "-c", "0-1"], prefix
    assert pinning.startswith("taskset -c 0-1: HCA mlx5_0") and "0-55,112-167" in pinning


def test_overlap_without_taskset_uses_numactl_physcpubind(sysfs):
    prefix, dummy = run.numa_prefix(_node({0, 1}, numactl=True, taskset=False), "mlx5_0", True)
    assert prefix == ["/usr/bin/numactl", "--physcpubind=0-1", "--membind=0"]


def test_whole_node_allowed_uses_numactl_and_membind_only_when_allowed(sysfs):
    everything = set(range(0, 224))
    prefix, pinning = run.numa_prefix(_node(everything, mems=(0, 1)), "mlx5_4", True)
    assert prefix == ["/usr/bin/numactl", "--cpunodebind=1", "--membind=1"], prefix
    prefix, pinning = run.numa_prefix(_node(everything, mems=(0,)), "mlx5_4", True)
    assert prefix == ["/usr/bin/numactl", "--cpunodebind=1"], prefix
    assert "no --membind: memory node 1 is outside the allowed nodes 0" in pinning


def test_no_numa_information_or_disabled_or_no_tool(sysfs):
    assert run.numa_prefix(_node({0}), "mlx5_9", True) == ([], "none: HCA mlx5_9 has no NUMA node or local CPU list in sysfs")
    assert run.numa_prefix(_node({0}), "mlx5_0", False) == ([], "none: numa=false")
    assert run.numa_prefix(_node({0}, numactl=False, taskset=False), "mlx5_0", True)[1].startswith("none: neither")


def test_local_cpulist_missing_falls_back_to_the_node_cpulist(sysfs):
    _sysfs(sysfs, "mlx5_5", 1, None, "56-111,168-223")
    prefix, dummy = run.numa_prefix(_node({60, 61}), "mlx5_5", True)
    assert prefix == ["/usr/bin/taskset", "-c", "60-61"]


def _cgroup_v1(tmp_path, job_cpus, job_mems):
    root = tmp_path / "cgroup"
    job = root / "cpuset" / "slurm" / "uid_0" / "job_7"
    job.mkdir(parents=True)
    (root / "cpuset" / "cpuset.effective_cpus").write_text("0-223\n")
    (job / "cpuset.effective_cpus").write_text(job_cpus + "\n")
    (job / "cpuset.effective_mems").write_text(job_mems + "\n")
    proc = tmp_path / "proc_cgroup"
    proc.write_text("12:memory:/slurm/uid_0/job_7\n3:cpuset:/slurm/uid_0/job_7\n0::/\n")
    return str(root), str(proc)


def _cgroup_v2(tmp_path, job_cpus, job_mems, visible=True):
    root = tmp_path / "cgroup2"
    root.mkdir()
    (root / "cgroup.controllers").write_text("cpuset cpu io memory pids\n")
    (root / "cpuset.cpus.effective").write_text("0-223\n")
    (root / "cpuset.mems.effective").write_text("0-1\n")
    job = root / "kubepods.slice" / "pod1"
    if visible:
        job.mkdir(parents=True)
        (job / "cpuset.cpus.effective").write_text(job_cpus + "\n")
        (job / "cpuset.mems.effective").write_text(job_mems + "\n")
    proc = tmp_path / "proc_cgroup2"
    proc.write_text("0::/kubepods.slice/pod1\n")
    return str(root), str(proc)


def test_cgroup_v1_cpuset(tmp_path):
    root, proc = _cgroup_v1(tmp_path, "2-3", "0")
    cpus, mems, where = run.cgroup_cpuset(root, proc)
    assert cpus == {2, 3} and mems == {0} and where.endswith("cpuset/slurm/uid_0/job_7/cpuset.effective_cpus")


def test_cgroup_v2_cpuset(tmp_path):
    root, proc = _cgroup_v2(tmp_path, "4-5,60", "1")
    cpus, mems, where = run.cgroup_cpuset(root, proc)
    assert cpus == {4, 5, 60} and mems == {1} and where.endswith("kubepods.slice/pod1/cpuset.cpus.effective")


def test_cgroup_v2_path_not_visible_reads_the_namespace_root(tmp_path):
    root, proc = _cgroup_v2(tmp_path, "4-5", "1", visible=False)
    cpus, mems, dummy = run.cgroup_cpuset(root, proc)
    assert cpus == set(range(224)) and mems == {0, 1}


def test_no_cgroup_cpuset_is_none(tmp_path):
    assert run.cgroup_cpuset(str(tmp_path / "none"), str(tmp_path / "none")) == (None, None, None)


@pytest.mark.parametrize("layout", ["v1", "v2"])
def test_allowed_intersects_affinity_with_the_cpuset_and_plans_by_it(tmp_path, monkeypatch, sysfs, layout):
    """The cpuset of a Slurm job (v1) or a pod (v2) decides the plan together with the affinity mask."""
    mine = sorted(os.sched_getaffinity(0))
    cpuset = "%d" % mine[0]
    root, proc = (_cgroup_v1 if layout == "v1" else _cgroup_v2)(tmp_path, cpuset, "1")
    limits = run.allowed(root, proc, str(tmp_path / "no_status"))
    assert limits["cpus"] == {mine[0]} and limits["mems"] == {1}
    node = {"_paths": {"numactl": None, "taskset": "/usr/bin/taskset"}, "_allowed": limits}
    _sysfs(sysfs, "mlx5_1", 0, "%d" % mine[0])
    _sysfs(sysfs, "mlx5_2", 1, "%d" % (mine[0] + 1000))
    assert run.numa_prefix(node, "mlx5_1", True)[0] == ["/usr/bin/taskset", "-c", "%d" % mine[0]]
    prefix, pinning = run.numa_prefix(node, "mlx5_2", True)
    assert prefix == [] and "outside this process's allowed CPUs %d" % mine[0] in pinning


CHILD = r"""
import json, os, subprocess, sys
from ansible_collections.rdma.fabric.plugins.module_utils.acceptance import _perftest_run as run
os.sched_setaffinity(0, {int(sys.argv[1])})
node = {"_paths": {"numactl": None, "taskset": sys.argv[2]}}
out = {}
for device in ("mlx5_0", "mlx5_1"):
    prefix, pinning = run.numa_prefix(node, device, True)
    rc = subprocess.call(prefix + ["/bin/true"]) if prefix else None
    out[device] = {"prefix": prefix, "pinning": pinning, "rc": rc}
out["affinity"] = sorted(os.sched_getaffinity(0))
print(json.dumps(out))
"""


@pytest.mark.skipif(not TASKSET, reason="taskset (util-linux) not installed")
@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two CPUs to restrict to one")
def test_really_restricted_affinity_plans_inside_it_and_the_prefix_runs(tmp_path):
    """A child really restricts itself to one CPU (sched_setaffinity), then plans a rail whose HCA is
    local to another CPU (unpinned, with the reason) and one whose list overlaps (pinned to the overlap),
    and really runs the planned prefix with taskset on /bin/true."""
    one, other = sorted(os.sched_getaffinity(0))[:2]
    root = tmp_path / "sys"
    _sysfs(root, "mlx5_0", 0, "%d" % other)
    _sysfs(root, "mlx5_1", 0, "%d-%d" % (min(one, other), max(one, other)))
    env = dict(os.environ, SYSFS_PATH=str(root), PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    text = subprocess.check_output([sys.executable, "-c", CHILD, str(one), TASKSET], env=env)
    out = json.loads(text.decode())
    assert out["affinity"] == [one]
    assert out["mlx5_0"]["prefix"] == [], out
    assert out["mlx5_0"]["pinning"].startswith(
        "none: HCA mlx5_0's local CPUs %d are outside this process's allowed CPUs %d" % (other, one)), out
    assert out["mlx5_1"]["prefix"] == [TASKSET, "-c", "%d" % one], out
    assert out["mlx5_1"]["rc"] == 0, out


def _fake_perftest():
    class Fake(object):
        @staticmethod
        def parse(text):
            if "RESULT" not in text:
                raise ValueError("no result")
            return {"rows": [{"bytes": 1, "bw_average": 1.0}], "units": "Gb/sec", "errors": []}

        @staticmethod
        def gbps(value, units):
            return value
    return Fake


@pytest.mark.skipif(not TASKSET, reason="taskset (util-linux) not installed")
def test_client_pinning_refused_for_real_runs_once_unpinned():
    """taskset really refuses a CPU this process may not use (EINVAL); the client runs once more
    unpinned and the record says so."""
    item = {"kind": "bw", "argv": [TASKSET, "-c", "4095", "/bin/echo", "RESULT pinned"],
            "unpinned_argv": ["/bin/echo", "RESULT unpinned"], "pinning": "taskset -c 4095: HCA mlx5_0"}
    rc, text, attempts, extra = run.run_one(item, 10, retry=0)
    assert rc == 0 and "RESULT unpinned" in text
    assert extra["pinning"].startswith("none: pinned run failed (taskset: failed to set pid"), extra
    assert "ran unpinned" in extra["pinning"] and extra["argv"] == item["unpinned_argv"]
    test = {"rail": 0, "device": "mlx5_0", "ib_port": 1, "tcp_port": 18515, "peer": "10.0.0.1"}
    record = run.result(_fake_perftest(), test, dict(item, pinning=extra["pinning"], argv=extra["argv"]), "client", rc, text)
    assert record["ok"] is True and record["pinning"] == extra["pinning"]


def test_a_tool_error_that_is_not_pinning_is_not_retried():
    item = {"kind": "bw", "argv": ["/bin/sh", "-c", "echo 'Failed to modify QP 1 to RTR'; exit 1"],
            "unpinned_argv": ["/bin/echo", "RESULT"], "pinning": "taskset -c 0: HCA mlx5_0"}
    rc, text, attempts, extra = run.run_one(item, 10, retry=0)
    assert rc == 1 and "RTR" in text and extra["pinning"] == item["pinning"] and attempts == 1


@pytest.mark.skipif(not TASKSET, reason="taskset (util-linux) not installed")
def test_server_pinning_refused_for_real_runs_once_unpinned(tmp_path):
    """The detached server job falls back the same way; collect's record says so."""
    job_dir = str(tmp_path / "jobs")
    run.prepare_job_dir(job_dir)
    test = {"rail": 3, "device": "mlx5_0", "ib_port": 1, "tcp_port": 1029}
    item = {"kind": "bw", "argv": [TASKSET, "-c", "4095", "/bin/echo", "RESULT pinned"], "error": None,
            "unpinned_argv": ["/bin/echo", "RESULT unpinned"], "pinning": "taskset -c 4095: HCA mlx5_0",
            "gpu": None, "gid_index": None, "link_layer": "InfiniBand"}
    job = run.start_server(job_dir, test, [item], 10)
    assert job["sid"] and not job["errors"], job
    records = run.collect(_fake_perftest(), job_dir, [test], ["bw"], 10)
    assert len(records) == 1 and records[0]["ok"] is True, records
    assert "RESULT unpinned" in records[0]["output"]
    assert records[0]["pinning"].startswith("none: pinned run failed (taskset: failed to set pid"), records[0]
    assert os.listdir(job_dir) == []
