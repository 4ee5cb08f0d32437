# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""rdma.fabric.ib_fabric against the real simulator: ibsim on tests/ibsim/net.cabling, a real
OpenSM for LIDs (ibqueryerrors reads counters by LID), the real iblinkinfo and ibqueryerrors
through libumad2sim. The miscabled HCA, the 1X link, the EDR link and the error counter of the
net file are each named; then ibsim's console gives one HCA another's GUID and the duplicate is
named. Skipped with the reason when ibsim, opensm, the diags or libumad2sim are missing (CI
installs them: lab/install-deps.sh). Each run has its own ibsim socket name (IBSIM_SOCKNAME)
and working directory, so parallel runs do not meet.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import shutil
import subprocess
import time
import uuid

import pytest

from ansible_collections.rdma.fabric.plugins.modules import ib_fabric
from ansible_collections.rdma.fabric.tests.unit import helpers

HERE = os.path.dirname(os.path.abspath(__file__))
NETFILE = os.path.join(HERE, "..", "..", "..", "ibsim", "net.cabling")
UMAD2SIM = os.environ.get("UMAD2SIM", "/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so")
NEEDED = ("ibsim", "opensm", "iblinkinfo", "ibqueryerrors")
MISSING = [tool for tool in NEEDED if not shutil.which(tool, path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin")]
if not os.path.exists(UMAD2SIM):
    MISSING.append(UMAD2SIM)

pytestmark = pytest.mark.skipif(bool(MISSING), reason="ibsim fabric test needs %s (Debian: ibsim-utils, opensm, "
                                "infiniband-diags, libumad2sim0; lab/install-deps.sh)" % ", ".join(MISSING))

# OpenSM by default sets LinkWidthEnabled/LinkSpeed(Ext)Enabled to what the port supports; ibsim
# then retrains every link at full width and speed and the net file's degraded links are gone.
OSM_CONF = "force_link_speed 0\nforce_link_speed_ext 0\nforce_link_width 0\n"
PLAN = [{"hca": "node%d mlx5_%d" % (node, rail), "leaf": "leaf-r%d" % rail, "rail": rail}
        for node in range(1, 5) for rail in (0, 1)]


def _stop(proc):
    if proc is None or proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=3)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=3)


@pytest.fixture(scope="module")
def fabric(tmp_path_factory):
    work = tmp_path_factory.mktemp("ibsim")
    sock = "rdma-fabric-%s" % uuid.uuid4().hex[:12]
    env = dict(os.environ, IBSIM_SOCKNAME=sock, LC_ALL="C")
    with open(str(work / "ibsim.log"), "w") as log:
        # stdin stays an open pipe: ibsim's console spins on a closed stdin; it also takes commands.
        sim = subprocess.Popen(["ibsim", "-s", os.path.abspath(NETFILE)], cwd=str(work), env=env,
                               stdin=subprocess.PIPE, stdout=log, stderr=subprocess.STDOUT)
    sm = None
    try:
        client = dict(env, LD_PRELOAD=UMAD2SIM)
        deadline = time.time() + 10
        while time.time() < deadline:
            probe = subprocess.run(["iblinkinfo", "--line"], env=dict(client, SIM_HOST="node2-mlx5_1"),
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=10, check=False)
            if probe.returncode == 0 and b"==(" in probe.stdout:
                break
            time.sleep(0.2)
        else:
            pytest.fail("ibsim did not answer iblinkinfo within 10 s: %s" % (work / "ibsim.log").read_text())
        (work / "opensm.conf").write_text(OSM_CONF)
        with open(str(work / "opensm.out"), "w") as log:
            sm = subprocess.Popen(["opensm", "-F", str(work / "opensm.conf"), "-f", str(work / "opensm.log")],
                                  cwd=str(work), env=dict(client, SIM_HOST="node1-mlx5_0", OSM_TMP_DIR=str(work),
                                                          OSM_CACHE_DIR=str(work)),
                                  stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.time() + 20
        while time.time() < deadline:
            probe = subprocess.run(["iblinkinfo", "--line"], env=dict(client, SIM_HOST="node2-mlx5_1"),
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=10, check=False)
            if probe.stdout.count(b"Active/") >= 20:
                break
            time.sleep(0.3)
        else:
            pytest.fail("OpenSM did not bring the links to Active within 20 s")
        yield {"sim": sim, "env": dict(client, SIM_HOST="node2-mlx5_1"), "work": work}
    finally:
        _stop(sm)
        _stop(sim)


def _run(capsys, monkeypatch, fabric, **args):
    for key in ("LD_PRELOAD", "SIM_HOST", "IBSIM_SOCKNAME"):
        monkeypatch.setenv(key, fabric["env"][key])
    args.setdefault("host", "sm1")
    rc, result = helpers.run_main_json(capsys, ib_fabric.main, args)
    assert rc == 0, result
    return result


def test_ibsim_cabling_links_and_errors(capsys, monkeypatch, fabric):
    started = time.time()
    result = _run(capsys, monkeypatch, fabric, expected_width="4X", expected_speed="HDR", cabling=PLAN)
    by_check = {}
    for record in result["records"]:
        by_check.setdefault(record["check"], []).append(record)
    # The miscabled HCA: named with the switch and port it is on and the leaf it should be on.
    (cab,) = by_check["ib.cabling"]
    assert cab["object"] == "rail1/node3 mlx5_1 port 1"
    assert (cab["switch"], cab["switch_port"], cab["expected_leaf"]) == ("leaf-r0", 5, "leaf-r1")
    assert cab["expected"] == "leaf-r1" and cab["actual"] == "leaf-r0 port 5"
    assert "node3 mlx5_1 port 1 (rail 1) is cabled to leaf-r0 port 5; it should be on leaf-r1" in cab["diagnosis"]
    # The narrow and the slow link, each once, named from the switch side.
    (width,) = by_check["ib.link_width"]
    assert (width["object"], width["expected"], width["actual"]) == ("leaf-r1/4 peer node4 mlx5_1/1", "4X", "1X")
    (speed,) = by_check["ib.link_speed"]
    assert speed["object"] == "leaf-r0/2 peer node2 mlx5_0/1"
    assert speed["actual"] == "EDR (25.78125 Gbps)" and speed["expected"] == "HDR (53.125 Gbps)"
    # The counter set with ibsim's PerformanceSet, read by the real ibqueryerrors.
    (err,) = by_check["ib.port_errors"]
    assert err["object"] == "leaf-r1/2 peer node2 mlx5_1/1" and err["actual"] == 120 and err["setting"] == "SymbolErrorCounter"
    assert "ib.duplicate_guid" not in by_check
    ok = [row["hca"] for row in result["cabling"] if row["ok"]]
    assert len(ok) == 7 and "node3 mlx5_1" not in ok
    assert "$ iblinkinfo --line" in result["running_config"] and "$ ibqueryerrors -r" in result["running_config"]
    # The capture gives the same records with state=parsed.
    again = _run(capsys, monkeypatch, fabric, state="parsed", running_config=result["running_config"],
                 expected_width="4X", expected_speed="HDR", cabling=PLAN)
    assert again["records"] == result["records"]
    assert time.time() - started < 20


def test_ibsim_duplicate_guid(capsys, monkeypatch, fabric):
    # ibsim's console: node4 mlx5_1 answers with node1 mlx5_0's node GUID (so its port GUID too).
    fabric["sim"].stdin.write(b'Guid "node4-mlx5_1" 0x100000\n')
    fabric["sim"].stdin.flush()
    deadline = time.time() + 10
    while True:
        result = _run(capsys, monkeypatch, fabric, port_errors=False)
        dups = [r for r in result["records"] if r["check"] == "ib.duplicate_guid"]
        if dups or time.time() > deadline:
            break
        time.sleep(0.3)
    assert len(dups) == 1, result["records"]
    assert dups[0]["object"] == "0x0000000000100001"
    assert "leaf-r1/4 (peer not available)" in dups[0]["actual"]
    assert result["duplicate_guids"][0]["guid"] == "0x0000000000100001"
