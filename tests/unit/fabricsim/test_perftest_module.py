# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""rdma.fabric.perftest (and nccl_test) main() against two fabricsim nodes in one test process.

Each node is a state/run dir pair; a module call runs "on" a node with that node's FABRICSIM_*
and SYSFS_PATH in the environment. Nothing is faked in the module: the tools are fabricsim's
shims (symlinks to bin/fabricsim in a scratch bin dir first in PATH), run as real processes -
the server job detached in its own session, the client over TCP to 127.0.0.1. numactl is a
scratch script that checks its options and runs the rest (the test machine may have one NUMA
node only, and the simulated NICs sit on node 1)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import time

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.acceptance import _kinds as K
from ansible_collections.rdma.fabric.plugins.modules import nccl_test, perftest
from ansible_collections.rdma.fabric.tests.unit import helpers

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
SIM_BIN = os.path.join(REPO, "tests", "fabricsim", "bin", "fabricsim")
SIM_TOOLS = os.path.join(REPO, "tests", "fabricsim", "fabricsim", "tools")
PARSER = os.path.join(REPO, "plugins", "module_utils", "parsers/_perftest.py")
NCCL_PARSER = os.path.join(REPO, "plugins", "module_utils", "parsers/_nccl_tests.py")

needs_shims = pytest.mark.skipif(not os.path.exists(os.path.join(SIM_TOOLS, "perftest.py")),
                                 reason="waits for fabricsim's perftest shims (H3: tools/perftest.py)")
needs_parser = pytest.mark.skipif(not os.path.exists(PARSER), reason="waits for parsers/_perftest.py (H1)")
needs_nccl = pytest.mark.skipif(not (os.path.exists(os.path.join(SIM_TOOLS, "nccltests.py")) and os.path.exists(NCCL_PARSER)),
                                reason="waits for fabricsim's nccltests shim (H3) and parsers/_nccl_tests.py (H1)")

FAKE_NUMACTL = """#!/bin/sh
# test stand-in: checks numactl's two options, runs the rest
case "$1" in --cpunodebind=*) ;; *) echo "numactl: bad option $1" >&2; exit 2;; esac
case "$2" in --membind=*) ;; *) echo "numactl: bad option $2" >&2; exit 2;; esac
shift 2
exec "$@"
"""


class Node(object):
    def __init__(self, root, name, profile, bin_dir):
        self.name = name
        self.state_dir = os.path.join(root, name, "state")
        self.run_dir = os.path.join(root, name, "run")
        self.sys = os.path.join(self.run_dir, "sys")
        self.job_dir = os.path.join(root, name, "jobs")
        self.bin_dir = bin_dir
        self.profile = profile

    def env(self):
        return {"FABRICSIM_STATE_DIR": self.state_dir, "FABRICSIM_RUN_DIR": self.run_dir,
                "FABRICSIM_SHIM_DIR": self.bin_dir, "SYSFS_PATH": self.sys}

    def enter(self, monkeypatch):
        for key, value in self.env().items():
            monkeypatch.setenv(key, value)

    def cli(self, monkeypatch, *args):
        from fabricsim import cli
        self.enter(monkeypatch)
        assert cli.main(list(args)) == 0, args


def _bin_dir(tmp_path):
    from fabricsim import main as sim_main
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in sim_main.TOOLS + ["fabricsim"]:
        os.symlink(SIM_BIN, str(bin_dir / tool))
    numactl = bin_dir / "numactl"
    numactl.write_text(FAKE_NUMACTL)
    numactl.chmod(0o755)
    return str(bin_dir)


@pytest.fixture
def nodes(tmp_path, monkeypatch):
    """Two healthy fabricsim nodes (hgx-h100-roce: 8 RoCE rails, GPUs, peer memory loaded)."""
    bin_dir = _bin_dir(tmp_path)
    monkeypatch.setenv("PATH", bin_dir + os.pathsep + os.environ.get("PATH", "/usr/bin:/bin"))
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setenv("FABRICSIM_PERFTEST_TIME_SCALE", "0.1")    # the shims' sleeps (connect, -D) x 0.1
    made = {}
    for name in ("a", "b"):
        node = Node(str(tmp_path), name, "hgx-h100-roce", bin_dir)
        node.cli(monkeypatch, "init", "--profile", node.profile)
        made[name] = node
    yield made
    for node in made.values():
        _kill_leftovers(node)


def _ours(node):
    """pids of live processes whose environment names this node's state dir (what a test started)."""
    found = []
    marker = ("FABRICSIM_STATE_DIR=%s" % node.state_dir).encode()
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open("/proc/%s/environ" % name, "rb") as handle:
                env = handle.read().split(b"\0")
            with open("/proc/%s/stat" % name) as handle:
                state = handle.read().rsplit(")", 1)[1].split()[0]
        except (IOError, OSError, IndexError):
            continue
        if marker in env and state != "Z":
            found.append(int(name))
    return found


def _kill_leftovers(node):
    import signal
    for pid in _ours(node):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def call(monkeypatch, node, args, main=perftest.main, check_mode=False):
    node.enter(monkeypatch)
    return helpers.run_module(monkeypatch, main, args, check_mode=check_mode, run_command=_real_run_command())


def _real_run_command():
    import subprocess

    def run_command(argv, **kwargs):
        env = dict(os.environ)
        env.update(kwargs.get("environ_update") or {})
        proc = subprocess.run([str(a) for a in argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                              universal_newlines=True, check=False)
        return proc.returncode, proc.stdout, proc.stderr
    return run_command


# perftest's TCP ports of this test run: apart from another run's on the same machine
BASE = 20000 + (os.getpid() % 1000) * 20


def rail_tests(rails, base=BASE, peer=None, devices=None):
    out = []
    for rail in rails:
        test = {"rail": rail, "device": (devices or {}).get(rail, "mlx5_%d" % rail), "tcp_port": base + rail}
        if peer:
            test["peer"] = peer
        out.append(test)
    return out


# ---------------------------------------------------------------- gathered, check mode

def test_gathered_reports_rails_tools_gpus(nodes, monkeypatch):
    how, res = call(monkeypatch, nodes["a"], {"state": "gathered"})
    assert how == "exit", res
    facts = res["gathered"]
    assert res["changed"] is False
    rail0 = [r for r in facts["rails"] if r["device"] == "mlx5_0"][0]
    assert rail0["link_layer"] == "Ethernet" and rail0["ib_port"] == 1 and rail0["rate_gbps"] == 400
    assert rail0["netdev"] == "enp24s0np0"
    assert isinstance(rail0["gid_index"], int) and rail0["lid"] is None
    assert facts["gpus"] == 8
    assert facts["tools"]["numactl"].endswith("/numactl") and facts["tools"]["timeout"]
    # the tool of every check kind (acceptance/_kinds.py), then the helpers
    assert set(facts["tools"]) == set(K.TOOLS) | {"numactl", "taskset", "timeout", "nvidia_smi"}
    assert {"ib_write_bw", "ib_write_lat", "ib_send_bw", "ib_read_bw"} <= set(facts["tools"])
    assert all(facts["tools"][tool].endswith("/" + tool) for tool in K.TOOLS)


def test_gathered_gid_index_is_the_ipv4_roce_v2_gid(nodes, monkeypatch):
    """The same index nccl_env writes to NCCL_IB_GID_INDEX: _nccl.gid_index over rdma_facts' GIDs."""
    from ansible_collections.rdma.fabric.plugins.module_utils.nccl import _nccl
    how, res = call(monkeypatch, nodes["a"], {"state": "gathered"})
    gids = {}
    for entry in os.listdir(os.path.join(nodes["a"].sys, "class/infiniband/mlx5_0/ports/1/gid_attrs/types")):
        with open(os.path.join(nodes["a"].sys, "class/infiniband/mlx5_0/ports/1/gid_attrs/types", entry)) as handle:
            try:
                gids[int(entry)] = handle.read().strip()
            except (IOError, OSError):
                pass
    rail0 = [r for r in res["gathered"]["rails"] if r["device"] == "mlx5_0"][0]
    assert gids[rail0["gid_index"]] == "RoCE v2"
    assert _nccl.gid_index  # the rule's one home


@pytest.mark.parametrize("state", ["server", "client", "collect"])
def test_check_mode_sends_no_traffic(nodes, monkeypatch, state):
    how, res = call(monkeypatch, nodes["a"], {"state": state, "tests": rail_tests([0], peer="127.0.0.1"),
                                              "job_dir": nodes["a"].job_dir}, check_mode=True)
    assert how == "exit" and res["skipped"] is True and "check mode" in res["msg"], res
    assert not os.path.exists(nodes["a"].job_dir)


# ---------------------------------------------------------------- a round


def round_trip(monkeypatch, server, client, rails, base=BASE, kinds=("bw", "lat"), duration=2, timeout=20,
               collect_timeout=None, client_tests=None, extra=None):
    args = {"kinds": list(kinds), "duration": duration, "timeout": timeout, "use_cuda": "false"}
    args.update(extra or {})
    how, srv = call(monkeypatch, server, dict(args, state="server", tests=rail_tests(rails, base),
                                              job_dir=server.job_dir))
    assert how == "exit", srv
    how, cli = call(monkeypatch, client, dict(args, state="client",
                                              tests=client_tests or rail_tests(rails, base, peer="127.0.0.1")))
    assert how == "exit", cli
    how, col = call(monkeypatch, server, dict(args, state="collect", tests=rail_tests(rails, base),
                                              job_dir=server.job_dir,
                                              timeout=collect_timeout or timeout))
    assert how == "exit", col
    return srv, cli, col


def by(results, rail, kind):
    found = [r for r in results if r["rail"] == rail and r["kind"] == kind]
    assert len(found) == 1, results
    return found[0]


@needs_shims
@needs_parser
def test_healthy_pair_every_rail_ok_with_figures(nodes, monkeypatch):
    srv, cli, col = round_trip(monkeypatch, nodes["a"], nodes["b"], [0, 1])
    assert [j["listening"] for j in srv["jobs"]] == [True, True], srv
    assert all(j["pgid"] and j["pid"] for j in srv["jobs"])
    for results, role in ((cli["results"], "client"), (col["results"], "server")):
        assert len(results) == 4, results
        for record in results:
            assert record["role"] == role and record["ok"] is True and record["error"] is None, record
        for rail in (0, 1):
            bw = by(results, rail, "bw")
            assert 300 < bw["bw_gbps"] <= 400, bw
            lat = by(results, rail, "lat")
            assert 0 < lat["lat_typical_us"] < 10 and lat["lat_avg_us"] > 0, lat
    bw0 = by(cli["results"], 0, "bw")
    cmd = bw0["command"]
    assert cmd[:3] == [cmd[0], "--kill-after=5", "20"] and cmd[0].endswith("timeout")
    # pinned inside the CPUs this process may use, or unpinned with the reason (#39: never a failure)
    node_id = open(os.path.join(nodes["b"].sys, "class/infiniband/mlx5_0/device/numa_node")).read().strip()
    pinning = bw0["pinning"] or ""
    assert ("--cpunodebind=%s" % node_id in cmd and pinning.startswith("numactl")) or \
        (pinning.startswith("taskset") and "-c" in cmd) or pinning.startswith("none:"), (pinning, cmd)
    assert bw0["ok"], bw0
    for word in ("-d", "mlx5_0", "-p", str(BASE), "-F", "--report_gbits", "-x", "-D", "2", "-s", "1048576", "-q"):
        assert word in cmd, cmd
    assert cmd[-1] == "127.0.0.1" and bw0["peer"] == "127.0.0.1"
    assert by(cli["results"], 0, "bw")["gid_index"] == by(col["results"], 0, "bw")["gid_index"]
    assert cli["changed"] is False and col["changed"] is False
    assert os.listdir(nodes["a"].job_dir) == []
    assert _ours(nodes["a"]) == [] and _ours(nodes["b"]) == []


@needs_shims
@needs_parser
def test_send_and_read_bandwidth_kinds_run_as_their_rows_say(nodes, monkeypatch):
    """ib_send_bw and ib_read_bw (opt-in kinds): their tools, their own result records; the read
    server prints the client's report (the client's last row), the send receiver its own figure."""
    srv, cli, col = round_trip(monkeypatch, nodes["a"], nodes["b"], [0, 1], kinds=("send_bw", "read_bw"))
    for results, role in ((cli["results"], "client"), (col["results"], "server")):
        assert sorted(r["kind"] for r in results) == ["read_bw", "read_bw", "send_bw", "send_bw"], results
        for record in results:
            assert record["role"] == role and record["ok"] is True and record["error"] is None, record
            assert 300 < record["bw_gbps"] <= 400 and record["lat_typical_us"] is None, record
    for kind, title in (("send_bw", "Send BW Test"), ("read_bw", "RDMA_Read BW Test")):
        client, server = by(cli["results"], 0, kind), by(col["results"], 0, kind)
        cmd = client["command"]
        at = [i for i, word in enumerate(cmd) if word.endswith("/" + K.row(kind)["tool"])]
        assert len(at) == 1, cmd
        own = K.tool_argv(kind, 2)
        assert cmd[at[0] + 8:at[0] + 8 + len(own)] == own, cmd
        assert title in client["output"] and title in server["output"]
    read_server = by(col["results"], 0, "read_bw")["output"]
    assert " Outstand reads  : 16" in read_server and "Max inline data" not in read_server
    assert " OUT 0x10 RKey " in read_server
    assert " RX depth        : 512" in by(col["results"], 0, "send_bw")["output"]
    assert os.listdir(nodes["a"].job_dir) == []


@needs_shims
@needs_parser
def test_degraded_rail_is_lower_on_that_rail_only(nodes, monkeypatch):
    nodes["a"].cli(monkeypatch, "fault", "rail-degrade", "mlx5_1", "0.5")    # a dirty optic on node a's rail 1
    srv, cli, col = round_trip(monkeypatch, nodes["a"], nodes["b"], [0, 1], kinds=["bw"])
    good, bad = by(cli["results"], 0, "bw"), by(cli["results"], 1, "bw")
    assert good["ok"] and bad["ok"], cli["results"]
    assert bad["bw_gbps"] < 0.6 * good["bw_gbps"], (good["bw_gbps"], bad["bw_gbps"])
    assert by(col["results"], 1, "bw")["bw_gbps"] < 0.6 * by(col["results"], 0, "bw")["bw_gbps"]
    assert good["bw_gbps"] > 300


@needs_shims
@needs_parser
def test_link_down_is_not_ok_with_the_tool_error(nodes, monkeypatch):
    nodes["a"].cli(monkeypatch, "fault", "link-down", "mlx5_1")
    srv, cli, col = round_trip(monkeypatch, nodes["a"], nodes["b"], [0, 1], kinds=["bw"], timeout=15,
                               collect_timeout=5)
    assert by(cli["results"], 0, "bw")["ok"] is True
    bad = by(cli["results"], 1, "bw")
    assert bad["ok"] is False and bad["bw_gbps"] is None
    assert bad["error"] and "timed out" not in bad["error"], bad
    assert by(col["results"], 1, "bw")["ok"] is False
    assert _ours(nodes["a"]) == [] and _ours(nodes["b"]) == []


@needs_shims
@needs_parser
def test_wrong_gid_index_is_not_ok_with_the_tool_error(nodes, monkeypatch):
    tests = rail_tests([0], peer="127.0.0.1")
    tests[0]["gid_index"] = 0      # the link-local RoCE v1 GID: not what the peer uses
    srv, cli, col = round_trip(monkeypatch, nodes["a"], nodes["b"], [0], kinds=["bw"], timeout=15,
                               collect_timeout=5, client_tests=tests)
    bad = by(cli["results"], 0, "bw")
    assert bad["ok"] is False and bad["error"], bad
    assert "-x" in bad["command"] and bad["command"][bad["command"].index("-x") + 1] == "0"
    assert _ours(nodes["a"]) == [] and _ours(nodes["b"]) == []


@needs_shims
@needs_parser
def test_client_never_came_collect_kills_by_timeout(nodes, monkeypatch):
    args = {"kinds": ["bw", "lat"], "duration": 2, "timeout": 30, "use_cuda": "false"}
    how, srv = call(monkeypatch, nodes["a"], dict(args, state="server", tests=rail_tests([0, 1]),
                                                  job_dir=nodes["a"].job_dir))
    assert how == "exit" and all(j["listening"] for j in srv["jobs"]), srv
    assert _ours(nodes["a"])
    start = time.time()
    how, col = call(monkeypatch, nodes["a"], dict(args, state="collect", tests=rail_tests([0, 1]),
                                                  job_dir=nodes["a"].job_dir, timeout=2))
    assert how == "exit", col
    assert time.time() - start < 15
    assert len(col["results"]) == 4
    for record in col["results"]:
        assert record["ok"] is False and record["role"] == "server", record
    assert "killed by collect" in by(col["results"], 0, "bw")["error"]
    assert "never started" in by(col["results"], 0, "lat")["error"]
    assert _ours(nodes["a"]) == []
    assert os.listdir(nodes["a"].job_dir) == []


@needs_shims
@needs_parser
def test_stale_job_on_the_same_rail_is_replaced(nodes, monkeypatch):
    args = {"kinds": ["bw"], "duration": 2, "timeout": 30, "use_cuda": "false", "job_dir": nodes["a"].job_dir}
    how, first = call(monkeypatch, nodes["a"], dict(args, state="server", tests=rail_tests([0])))
    how, second = call(monkeypatch, nodes["a"], dict(args, state="server", tests=rail_tests([0])))
    assert how == "exit", second
    assert second["jobs"][0]["replaced"] and second["jobs"][0]["replaced"][0]["pid"] == first["jobs"][0]["pid"]
    assert second["jobs"][0]["listening"] is True
    how, col = call(monkeypatch, nodes["a"], dict(args, state="collect", tests=rail_tests([0]), timeout=1))
    assert _ours(nodes["a"]) == []


@needs_parser
def test_missing_tool_is_a_failed_result_not_a_pass(nodes, monkeypatch, tmp_path):
    """No ib_write_bw on the node: every result ok=false naming the tool; the module does not fail."""
    monkeypatch.setenv("PATH", nodes["a"].bin_dir + os.pathsep + "/usr/bin:/bin")
    for name in ("ib_write_bw", "ib_write_lat"):
        path = os.path.join(nodes["a"].bin_dir, name)
        if os.path.lexists(path):
            os.unlink(path)
    how, res = call(monkeypatch, nodes["b"], {"state": "client", "tests": rail_tests([0], peer="127.0.0.1"),
                                              "use_cuda": "false"})
    assert how == "exit", res
    assert [(r["kind"], r["ok"]) for r in res["results"]] == [("bw", False), ("lat", False)]
    assert res["results"][0]["error"] == "ib_write_bw not found (install perftest)"
    assert res["results"][1]["error"] == "ib_write_lat not found (install perftest)"


def test_use_cuda_auto_picks_the_rail_gpu_and_dmabuf_without_peermem(nodes, monkeypatch):
    from ansible_collections.rdma.fabric.plugins.module_utils.acceptance import _perftest_run as run
    node = nodes["a"]
    node.enter(monkeypatch)

    class M(object):
        def get_bin_path(self, name, required=False, opt_dirs=None):
            import shutil
            return shutil.which(name)

        def run_command(self, argv, **kwargs):
            return _real_run_command()(argv, **kwargs)

        def warn(self, msg):
            pass
    facts = run.gather(M())
    assert facts["gpus"] == 8
    args, why = run.cuda_args(facts, "auto", "mlx5_1", None)
    expected = [g["index"] for g in facts["gpu_list"] if g["rail"] == "mlx5_1"][0]
    assert args[0] == "--use_cuda=%d" % expected
    assert ("--use_cuda_dmabuf" in args) == (not facts["peermem"])
    facts["gpus"], facts["gpu_list"] = 0, []
    assert run.cuda_args(facts, "auto", "mlx5_1", None) == ([], None)
    with pytest.raises(run.RunError, match="use_cuda=true"):
        run.cuda_args(facts, "true", "mlx5_1", None)


def test_nccl_test_without_binary_is_skipped(tmp_path, monkeypatch):
    """nccl_test with no binary: skipped with the reason, never ok."""
    monkeypatch.setenv("PATH", str(tmp_path))
    how, res = helpers.run_module(monkeypatch, nccl_test.main, {"env_file": str(tmp_path / "none.conf")},
                                  run_command=_real_run_command())
    assert how == "fail" and "env_file" in res["msg"]
    how, res = helpers.run_module(monkeypatch, nccl_test.main, {}, run_command=_real_run_command())
    assert how == "exit" and res["skipped"] is True and res["ok"] is False, res
    assert "all_reduce_perf not found" in res["reason"]


# ---------------------------------------------------------------- nccl_test

@needs_nccl
def test_nccl_all_reduce_on_the_node(nodes, monkeypatch):
    how, res = call(monkeypatch, nodes["a"], {"env_file": str(os.path.join(nodes["a"].state_dir, "none.conf"))},
                    main=nccl_test.main)
    assert how == "fail" and "env_file=" in res["msg"], res       # a given env_file that is missing: bad input
    how, res = call(monkeypatch, nodes["a"], {"args": ["-b", "8M", "-e", "256M", "-f", "2", "-g", "8"]},
                    main=nccl_test.main)
    assert how == "exit", res
    assert res["ok"] is True and res["skipped"] is False and res["error"] is None, res
    assert res["rc"] == 0 and res["rows"] and res["out_of_bounds"] == 0
    assert res["avg_busbw_gbps"] > 0 and res["max_busbw_gbps"] >= res["avg_busbw_gbps"]
    assert res["command"][1:3] == ["--kill-after=5", "600"] and res["command"][3].endswith("all_reduce_perf")
    assert res["changed"] is False


@needs_nccl
def test_nccl_env_file_reaches_the_test_and_a_degraded_rail_shows(nodes, monkeypatch):
    """The env_file's NCCL_* lines are the process's environment: with P2P and SHM off every ring hop
    crosses a rail, so a degraded rail lowers the bus bandwidth (fabricsim's model)."""
    conf = os.path.join(nodes["a"].state_dir, "nccl.conf")
    with open(conf, "w") as handle:
        handle.write("# test\nNCCL_P2P_DISABLE=1\nNCCL_SHM_DISABLE=1\nNOT_NCCL=1\n")
    args = {"env_file": conf, "args": ["-b", "64M", "-e", "256M", "-f", "2", "-g", "8"]}
    how, healthy = call(monkeypatch, nodes["a"], args, main=nccl_test.main)
    assert how == "exit" and healthy["ok"], healthy
    assert healthy["env"] == {"NCCL_P2P_DISABLE": "1", "NCCL_SHM_DISABLE": "1"}
    nodes["a"].cli(monkeypatch, "fault", "rail-degrade", "mlx5_3", "0.5")
    how, degraded = call(monkeypatch, nodes["a"], args, main=nccl_test.main)
    assert how == "exit" and degraded["ok"], degraded
    assert degraded["max_busbw_gbps"] < 0.8 * healthy["max_busbw_gbps"], (healthy["max_busbw_gbps"],
                                                                          degraded["max_busbw_gbps"])


@needs_nccl
def test_nccl_skipped_without_gpu_or_launcher(nodes, monkeypatch, tmp_path):
    how, res = call(monkeypatch, nodes["a"], {"launcher": ["mpirun-not-here", "-np", "2"]}, main=nccl_test.main)
    assert how == "exit" and res["skipped"] is True and res["ok"] is False
    assert res["reason"] == "launcher mpirun-not-here not found"
    small = Node(str(tmp_path), "c", "small-roce", nodes["a"].bin_dir)
    small.cli(monkeypatch, "init", "--profile", "small-roce")
    how, res = call(monkeypatch, small, {}, main=nccl_test.main)
    assert how == "exit" and res["skipped"] is True and res["ok"] is False, res
    assert res["reason"] == "no NVIDIA GPU on this host"
    how, res = call(monkeypatch, small, {}, main=nccl_test.main, check_mode=True)
    assert res["skipped"] is True and "check mode" in res["reason"]


def test_a_device_or_port_the_host_lacks_is_refused_naming_it(nodes, monkeypatch, tmp_path):
    how, res = call(monkeypatch, nodes["b"], {"state": "client", "tests": rail_tests([0], peer="127.0.0.1", devices={0: "mlx5_99"})})
    assert how == "fail" and res["msg"].startswith("tests[0].device=mlx5_99: no such RDMA device on this host (devices: mlx5_0,"), res
    tests = rail_tests([0], peer="127.0.0.1")
    tests[0]["ib_port"] = 2
    how, res = call(monkeypatch, nodes["b"], {"state": "client", "tests": tests})
    assert how == "fail" and res["msg"] == "tests[0].ib_port=2: mlx5_0 has no port 2 (ports: 1)", res
    small = Node(str(tmp_path), "c", "small-roce", nodes["a"].bin_dir)
    small.cli(monkeypatch, "init", "--profile", "small-roce")
    how, res = call(monkeypatch, small, {"state": "server", "tests": rail_tests([0]), "use_cuda": "true",
                                         "job_dir": small.job_dir})
    assert how == "fail" and "use_cuda=true: this host has no NVIDIA GPU" in res["msg"], res
    assert not os.path.exists(small.job_dir)
