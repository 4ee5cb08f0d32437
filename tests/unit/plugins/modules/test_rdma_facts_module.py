# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""main() of rdma.fabric.rdma_facts against a tmp SYSFS_PATH tree, with nvidia-smi faked,
failing or absent, and from captured texts (samples nvidia_smi_topo.txt, show_gids.txt, ibstat.txt)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.rdma.fabric.plugins.modules import rdma_facts
from ansible_collections.rdma.fabric.tests.unit import helpers, samples
from ansible_collections.rdma.fabric.tests.unit.plugins.module_utils.facts.test_rdma_facts import GPU_QUERY, TOPO_TEXT, host_sysfs

SHOW_GIDS = samples.load("show_gids.txt")
IBSTAT = samples.load("ibstat.txt")
TOPO = samples.load("nvidia_smi_topo.txt")


def run_main(capsys, args):
    return helpers.run_main_json(capsys, rdma_facts.main, args)


@pytest.fixture
def host(tmp_path, monkeypatch):
    host_sysfs(tmp_path, monkeypatch)
    calls = []
    return {"calls": calls, "monkeypatch": monkeypatch}


def fake_nvidia_smi(host, answers):
    def run_command(self, argv, **kwargs):
        host["calls"].append(argv)
        return answers[" ".join(argv[1:])]
    host["monkeypatch"].setattr(rdma_facts.AnsibleModule, "run_command", run_command)
    host["monkeypatch"].setattr(rdma_facts.AnsibleModule, "get_bin_path",
                                lambda self, name, **kw: "/usr/bin/" + name if name == "nvidia-smi" else None)


def test_host_with_gpus(capsys, host):
    fake_nvidia_smi(host, {"topo -m": (0, TOPO_TEXT, ""),
                           "--query-gpu=index,pci.bus_id,name,uuid --format=csv,noheader": (0, GPU_QUERY, "")})
    rc, result = run_main(capsys, {})
    assert rc == 0 and result["changed"] is False
    facts = result["ansible_facts"]["rdma"]
    assert facts["source"] == "host"
    assert facts["device_names"] == ["mlx5_0", "mlx5_1", "mlx5_2", "mlx5_10"]
    assert [(r["device"], r["netdev"]) for r in facts["rails"]] == [("mlx5_0", "ens1np0"), ("mlx5_1", "ens2np0")]
    assert facts["gpus"][0]["uuid"] == "GPU-a" and facts["gpus"][0]["numa_node"] == 0
    assert facts["extra_nics"] == ["mlx5_2", "mlx5_10"]
    assert facts["errors"] == []
    assert host["calls"][0] == ["/usr/bin/nvidia-smi", "topo", "-m"]


def test_host_nvidia_smi_failing_is_reported(capsys, host):
    message = "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver."
    fake_nvidia_smi(host, {"topo -m": (9, message + "\n", "")})
    rc, result = run_main(capsys, {})
    assert rc == 0
    facts = result["ansible_facts"]["rdma"]
    assert facts["gpus"] == [] and facts["rails"] == []
    assert len(facts["devices"]) == 4
    assert facts["errors"] == [{"tool": "nvidia-smi", "cmd": ["/usr/bin/nvidia-smi", "topo", "-m"], "rc": 9,
                                "stderr": "", "msg": "/usr/bin/nvidia-smi topo -m failed (rc=9): " + message}]


def test_host_gpu_query_failing_falls_back_to_sysfs_order(capsys, host):
    fake_nvidia_smi(host, {"topo -m": (0, TOPO_TEXT, ""),
                           "--query-gpu=index,pci.bus_id,name,uuid --format=csv,noheader": (2, "", "bad option")})
    rc, result = run_main(capsys, {})
    facts = result["ansible_facts"]["rdma"]
    assert [g["pci_address"] for g in facts["gpus"]] == ["0000:18:00.0", "0000:9b:00.0"]
    assert facts["errors"][0]["stderr"] == "bad option"


def test_host_without_nvidia_smi_is_normal(capsys, host):
    host["monkeypatch"].setattr(rdma_facts.AnsibleModule, "get_bin_path", lambda self, name, **kw: None)
    rc, result = run_main(capsys, {"gather_subset": ["gids"]})
    facts = result["ansible_facts"]["rdma"]
    assert rc == 0 and facts["gpus"] == [] and facts["topology"] is None and facts["errors"] == []
    assert facts["gather_subset"] == ["devices", "gids"]
    assert facts["devices"]["mlx5_0"]["role"] is None
    assert facts["devices"]["mlx5_0"]["pcie"] is None  # pci subset not asked
    assert facts["devices"]["mlx5_1"]["ports"][0]["ipv4"] == ["10.0.1.1", "10.100.0.1"]


def test_host_without_rdma_devices(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("SYSFS_PATH", str(tmp_path))
    monkeypatch.setattr(rdma_facts.AnsibleModule, "get_bin_path", lambda self, name, **kw: None)
    rc, result = run_main(capsys, {})
    facts = result["ansible_facts"]["rdma"]
    assert rc == 0 and facts["devices"] == {} and facts["rails"] == [] and facts["errors"] == []


def test_captured_does_not_touch_the_host(capsys, monkeypatch):
    helpers.forbid_host(monkeypatch)
    captured = {"nvidia_smi_topo": TOPO["TOPO-REAL-OLDFMT-2GPU"].raw,
                "show_gids": SHOW_GIDS["SHOWGIDS-REAL-CX5"].raw}
    rc, result = run_main(capsys, {"captured": captured})
    facts = result["ansible_facts"]["rdma"]
    assert rc == 0 and facts["source"] == "captured"
    assert [(r["gpu"], r["device"], r["netdev"], r["relation"]) for r in facts["rails"]] == [
        ("GPU0", "mlx5_0", "mce0", "NODE"), ("GPU1", "mlx5_1", None, "NODE")]
    assert [g["ipv4"] for g in facts["rails"][0]["ipv4_gids"]] == ["192.168.6.132", "192.168.6.132"]
    assert facts["topology"]["nics"] == ["mlx5_0", "mlx5_1"]


def test_captured_empty_is_refused(capsys):
    rc, result = run_main(capsys, {"captured": {"show_gids": ""}})
    assert rc == 1 and result["msg"].startswith("captured: give at least one of")


def test_captured_unknown_key_is_refused(capsys):
    rc, result = run_main(capsys, {"captured": {"lspci": "x"}})
    assert rc == 1 and "lspci" in result["msg"]


def test_bad_subset_refused(capsys):
    rc, result = run_main(capsys, {"gather_subset": ["gpu"]})
    assert rc == 1 and "gather_subset" in result["msg"]


def test_all_runs_no_qos_tool(capsys, host):
    fake_nvidia_smi(host, {})
    host["monkeypatch"].setattr(rdma_facts.AnsibleModule, "get_bin_path", lambda self, name, **kw: None)
    rc, result = run_main(capsys, {})
    assert rc == 0 and "qos" not in result["ansible_facts"]["rdma"]
    assert result["ansible_facts"]["rdma"]["gather_subset"] == ["devices", "gids", "pci", "gpus"]
    assert not any("mlnx_qos" in " ".join(c) for c in host["calls"])
