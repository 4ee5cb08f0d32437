# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""rdma.fabric.health_findings on facts derived by rdma_facts' own reader from a tmp sysfs tree
laid out as the kernel does (build_host: mlx5_1 trained at 16 GT/s x8, mlx5_2 down, GPU1 at
2.5 GT/s) and the nvidia-smi topo matrix TOPO_TEXT."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import os

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.rdma.fabric.plugins.filter.health import FilterModule
from ansible_collections.rdma.fabric.plugins.module_utils.facts import _rdma_facts as rf
from ansible_collections.rdma.fabric.tests.unit.plugins.module_utils.facts.test_rdma_facts import TOPO_TEXT, build_host

health_findings = FilterModule().filters()["health_findings"]
GPU_LIST = [{"index": 0, "pci_address": "0000:18:00.0", "model": "H100", "uuid": "GPU-a"},
            {"index": 1, "pci_address": "0000:9b:00.0", "model": "H100", "uuid": "GPU-b"}]


def gather(root, subsets=("devices", "pci", "gpus", "counters")):
    subsets = set(subsets)
    raw = {"devices": rf.read_rdma_sysfs(subsets), "topo_text": TOPO_TEXT, "gpu_list": GPU_LIST,
           "gpu_pci": rf.read_gpu_pci([g["pci_address"] for g in GPU_LIST], "pci" in subsets), "errors": []}
    return rf.derive(raw, subsets)


@pytest.fixture
def facts(tmp_path, monkeypatch):
    root = str(tmp_path / "sys")
    build_host(root)
    monkeypatch.setenv("SYSFS_PATH", root)
    for dev in ("mlx5_0", "mlx5_1", "mlx5_10", "mlx5_2"):
        counters = os.path.join(root, "class", "infiniband", dev, "ports", "1", "counters")
        os.makedirs(counters)
        for name in ("symbol_error", "link_downed", "port_rcv_errors", "port_xmit_data"):
            with open(os.path.join(counters, name), "w") as handle:
                handle.write("123456\n" if name == "port_xmit_data" else "0\n")
    return {"root": root, "facts": gather(root)}


def by_check(findings):
    return sorted((f["check"], f["subject"]) for f in findings)


def test_findings_of_the_built_host(facts):
    findings = health_findings(facts["facts"])
    assert by_check(findings) == [
        ("link", "mlx5_2 port 1"),
        ("pcie", "NIC mlx5_1 (0000:9a:00.0)"),
    ]
    # GPU1 runs 2.5 GT/s at full width: idle power saving, judged only when asked
    assert ("pcie", "GPU GPU1 (0000:9b:00.0)") in by_check(health_findings(facts["facts"], {"gpu_pcie_speed": True}))
    link = [f for f in findings if f["check"] == "link"][0]
    assert (link["expected"], link["actual"]) == ("ACTIVE/LinkUp", "DOWN/Disabled")
    nic = [f for f in findings if f["subject"].startswith("NIC")][0]
    assert (nic["expected"], nic["actual"]) == ("32.0 GT/s x16", "16.0 GT/s x8")


def test_ignored_devices_and_checks_switched_off(facts):
    assert health_findings(facts["facts"], {"ignore_devices": ["mlx5_2"], "pcie": False}) == []


def test_counters_over_the_limit(facts):
    path = os.path.join(facts["root"], "class", "infiniband", "mlx5_0", "ports", "1", "counters", "symbol_error")
    with open(path, "w") as handle:
        handle.write("1200\n")
    findings = health_findings(gather(facts["root"]), {"ignore_devices": ["mlx5_2"], "pcie": False})
    assert findings == [{"check": "counters", "subject": "mlx5_0 port 1 (ens1np0) symbol_error",
                         "severity": "warning", "expected": "<= 0", "actual": 1200,
                         "diagnosis": "perfquery DEV PORT; ethtool -S IF",
                         "remedy": "check the cable and optics, then clear the counters"}]
    assert health_findings(gather(facts["root"]), {"ignore_devices": ["mlx5_2"], "pcie": False,
                                                   "counter_limits": {"symbol_error": 5000}}) == []
    # without the counters subset nothing is judged on counters
    assert [f for f in health_findings(gather(facts["root"], ("devices", "pci", "gpus")))
            if f["check"] == "counters"] == []


def test_rate_against_peers_and_against_a_minimum(facts):
    data = copy.deepcopy(facts["facts"])
    data["devices"]["mlx5_1"]["ports"][0]["rate_gbps"] = 100     # trained down from 200
    checks = {"ignore_devices": ["mlx5_2"], "pcie": False}
    assert [(f["subject"], f["expected"], f["actual"]) for f in health_findings(data, checks)] == [
        ("mlx5_1 port 1 (ens2np0)", ">= 200 Gb/s", "100 Gb/s")]
    checks["min_rate_gbps"] = 400
    assert by_check(health_findings(facts["facts"], checks)) == [
        ("rate", "mlx5_0 port 1 (ens1np0)"), ("rate", "mlx5_1 port 1 (ens2np0)")]


def test_numa_and_rails(facts):
    data = copy.deepcopy(facts["facts"])
    data["devices"]["mlx5_1"]["numa_node"] = 0          # GPU1 is on node 1
    findings = health_findings(data, {"ignore_devices": ["mlx5_2"], "pcie": False})
    assert [(f["check"], f["subject"], f["actual"]) for f in findings] == [
        ("numa", "GPU1 -> mlx5_1", "GPU on 1, NIC on 0 (PIX)")]
    data["rails"] = data["rails"][:1]
    findings = health_findings(data, {"ignore_devices": ["mlx5_2"], "pcie": False})
    assert [(f["check"], f["subject"]) for f in findings] == [("rails", "GPU1")]
    data["rails"][0]["relation"] = "SYS"
    assert ("numa", "GPU0 -> mlx5_0") in by_check(health_findings(data, {"ignore_devices": ["mlx5_2"], "pcie": False}))


def test_counts_and_gather_errors(facts):
    data = copy.deepcopy(facts["facts"])
    data["errors"] = [{"tool": "nvidia-smi", "cmd": ["nvidia-smi", "topo", "-m"], "rc": 9, "stderr": "",
                       "msg": "nvidia-smi topo -m failed (rc=9): NVIDIA-SMI has failed"}]
    findings = health_findings(data, {"ignore_devices": ["mlx5_2"], "pcie": False,
                                      "expected_devices": 4, "expected_gpus": 8})
    assert by_check(findings) == [("facts", "nvidia-smi"), ("gpus", "GPUs")]
    assert [f["actual"] for f in findings if f["check"] == "gpus"] == [2]
    # not a GPU node: nvidia-smi without a driver is normal
    assert health_findings(data, {"ignore_devices": ["mlx5_2"], "pcie": False}) == []
    data["gpus"], data["rails"] = [], []
    findings = health_findings(data, {"ignore_devices": ["mlx5_2"], "pcie": False, "gpus_required": True})
    assert [(f["check"], f["expected"], f["actual"]) for f in findings] == [
        ("facts", "readable", data["errors"][0]["msg"]), ("gpus", "at least one", 0)]
    findings = health_findings(data, {"expected_devices": 3, "ignore_devices": ["mlx5_2"], "pcie": False})
    assert ("devices", "RDMA devices") in by_check(findings)


@pytest.mark.parametrize("checks, words", [
    ({"min_rate": 400}, "unknown check 'min_rate'"),
    ({"min_rate_gbps": "fast"}, "min_rate_gbps='fast'"),
    ({"expected_gpus": -1}, "expected_gpus=-1"),
    ({"counter_limits": {"symbol_error": -1}}, "counter_limits.symbol_error=-1"),
    ({"counter_limits": [1]}, "counter_limits=[1]"),
])
def test_bad_checks_are_refused(facts, checks, words):
    with pytest.raises(AnsibleFilterError) as exc:
        health_findings(facts["facts"], checks)
    assert words in str(exc.value)


def test_not_facts_is_refused():
    with pytest.raises(AnsibleFilterError, match="ansible_facts.rdma"):
        health_findings({"gpus": []})


def test_a_link_limited_by_its_slot_is_not_degraded(tmp_path, monkeypatch):
    # Gen4 x16 NIC below a Gen3 x16 root port (real sysfs nesting): 8 GT/s is all the link can do
    root = tmp_path / "sys"
    bridge = root / "devices" / "pci0000:3a" / "0000:3a:00.0"
    nic = bridge / "0000:3b:00.0"
    nic.mkdir(parents=True)
    for directory, cap, sta in ((bridge, "8.0 GT/s PCIe", "8.0 GT/s PCIe"), (nic, "16.0 GT/s PCIe", "8.0 GT/s PCIe")):
        for name, value in (("max_link_speed", cap), ("current_link_speed", sta), ("max_link_width", "16"),
                            ("current_link_width", "16"), ("numa_node", "0")):
            (directory / name).write_text(value + "\n")
    info = rf.read_pci_function(str(nic), True)["pcie"]
    assert (info["upstream_max_link_speed"], info["upstream_max_link_width"], info["downgraded"]) == (8.0, 16, False)
    (nic / "current_link_width").write_text("8\n")
    info = rf.read_pci_function(str(nic), True)["pcie"]
    assert info["downgraded"] is True
    facts = {"devices": {"mlx5_0": {"pci_address": "0000:3b:00.0", "pcie": info, "ports": []}},
             "gather_subset": ["devices", "pci"], "gpus": [], "rails": [], "errors": []}
    assert [(f["expected"], f["actual"]) for f in health_findings(facts)] == [("8.0 GT/s x16", "8.0 GT/s x8")]
