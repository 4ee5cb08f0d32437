# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""main() of rdma.fabric.gdr_readiness: a tmp SYSFS_PATH tree (test_rdma_facts.build_host),
tmp /proc, fake nvidia-smi/lspci/modinfo; captured mode with sample TOPO-REAL-OLDFMT-2GPU."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible_collections.rdma.fabric.plugins.modules import gdr_readiness
from ansible_collections.rdma.fabric.tests.unit import helpers, samples
from ansible_collections.rdma.fabric.tests.unit.plugins.module_utils.facts.test_gdr_readiness import (
    LSPCI, OPEN_DRIVER, PROC_MODULES)
from ansible_collections.rdma.fabric.tests.unit.plugins.module_utils.facts.test_rdma_facts import GPU_QUERY, TOPO_TEXT, host_sysfs

TOPO = samples.load("nvidia_smi_topo.txt")


def run_main(capsys, args):
    return helpers.run_main_json(capsys, gdr_readiness.main, args)


@pytest.fixture
def host(tmp_path, monkeypatch):
    root = host_sysfs(tmp_path, monkeypatch)
    proc = tmp_path / "proc"
    (proc / "sys" / "kernel").mkdir(parents=True)
    (proc / "modules").write_text(PROC_MODULES)
    (proc / "sys" / "kernel" / "osrelease").write_text("5.15.0-91-generic\n")
    (proc / "cmdline").write_text("BOOT_IMAGE=/vmlinuz root=/dev/sda1 iommu=pt\n")
    state = {"calls": [], "tools": {"nvidia-smi", "lspci", "modinfo"}, "modinfo_rc": 0, "sys": root}
    answers = {"topo -m": (0, TOPO_TEXT, ""),
               "--query-gpu=index,pci.bus_id,name,uuid --format=csv,noheader": (0, GPU_QUERY, ""),
               "-D -nn -vvv": (0, LSPCI, "")}

    def run_command(self, argv, **kwargs):
        state["calls"].append(list(argv))
        if argv[0].endswith("modinfo"):
            return state["modinfo_rc"], "", ""
        return answers[" ".join(argv[1:])]

    def get_bin_path(self, name, *args, **kwargs):
        return "/usr/bin/" + name if name in state["tools"] else None

    monkeypatch.setattr(gdr_readiness.AnsibleModule, "run_command", run_command)
    monkeypatch.setattr(gdr_readiness.AnsibleModule, "get_bin_path", get_bin_path)
    state["args"] = {"proc_root": str(proc)}
    state["proc"] = proc
    return state


def test_host_one_read_verdicts(capsys, host):
    rc, result = run_main(capsys, host["args"])
    assert rc == 0 and result["changed"] is False
    facts = result["ansible_facts"]["gdr"]
    assert facts["source"] == "host"
    assert [(g["gpu"], g["nic"], g["relation"], g["expected_to_work"]) for g in facts["gpus"]] == [
        ("GPU0", "mlx5_0", "PIX", False), ("GPU1", "mlx5_1", "PIX", True)]
    assert facts["gpus"][0]["reasons"] == ["ACS redirect still enabled on bridge 0000:17:00.0 (ACSCtl 001d)"]
    assert facts["acs"]["targets"] == ["0000:17:00.0", "0000:17:01.0", "0000:99:00.0", "0000:99:01.0"]
    assert facts["peer_memory"]["method"] == "nvidia_peermem"
    assert facts["iommu"] == {"passthrough": True, "arguments": ["iommu=pt"]}
    # nvidia is in /proc/modules: modinfo is asked only about nvidia_peermem
    assert [c for c in host["calls"] if c[0].endswith("modinfo")] == [
        ["/usr/bin/modinfo", "-F", "filename", "nvidia_peermem"]]
    assert facts["nvidia_driver"] == {"loaded": True, "installed": True, "version": None,
                                      "open_kernel_module": False, "peermem_available": True}


def test_host_without_driver_and_peer_memory(capsys, host):
    (host["proc"] / "modules").write_text("ib_core 434176 9 - Live 0x0\n")
    host["modinfo_rc"] = 1
    rc, result = run_main(capsys, host["args"])
    facts = result["ansible_facts"]["gdr"]
    assert facts["nvidia_driver"]["installed"] is False and facts["nvidia_driver"]["loaded"] is False
    assert facts["not_ready"] == ["GPU0", "GPU1"]
    assert [c[-1] for c in host["calls"] if c[0].endswith("modinfo")] == ["nvidia"]


def test_host_simulated_modules_in_sysfs(capsys, host):
    (host["proc"] / "modules").write_text("")
    for name in ("nvidia", "nvidia_peermem"):
        os.makedirs(os.path.join(host["sys"], "module", name))
        with open(os.path.join(host["sys"], "module", name, "initstate"), "w") as handle:
            handle.write("live\n")
    (host["proc"] / "driver" / "nvidia").mkdir(parents=True)
    (host["proc"] / "driver" / "nvidia" / "version").write_text(OPEN_DRIVER)
    rc, result = run_main(capsys, host["args"])
    facts = result["ansible_facts"]["gdr"]
    assert facts["peer_memory"] == {"method": "nvidia_peermem", "modules_loaded": ["nvidia_peermem"], "dma_buf": True}
    assert facts["nvidia_driver"]["loaded"] is True and facts["nvidia_driver"]["version"] == "535.129.03"


def test_host_without_lspci_is_not_a_failure(capsys, host):
    host["tools"].discard("lspci")
    rc, result = run_main(capsys, host["args"])
    facts = result["ansible_facts"]["gdr"]
    assert rc == 0 and facts["acs"]["audited"] is False
    assert facts["acs"]["error"] == "lspci not found (install pciutils)"
    assert facts["gpus"][1]["reasons"] == ["ACS along the GPU-NIC path not audited (lspci not found (install pciutils))"]


def test_host_without_nvidia_smi(capsys, host):
    host["tools"].discard("nvidia-smi")
    rc, result = run_main(capsys, host["args"])
    facts = result["ansible_facts"]["gdr"]
    assert rc == 0 and facts["gpus"] == [] and facts["ready"] is False
    assert facts["summary"] == ["no GPU found (nvidia-smi absent or failing): nothing to check"]


def test_gdr_level_choice_refused(capsys, host):
    rc, result = run_main(capsys, dict(host["args"], gdr_level="NODE"))
    assert rc == 1 and "gdr_level" in result["msg"] and "NODE" in result["msg"]


def test_captured_does_not_touch_the_host(capsys, monkeypatch):
    helpers.forbid_host(monkeypatch)
    rc, result = run_main(capsys, {"gdr_level": "SYS", "captured": {
        "nvidia_smi_topo": TOPO["TOPO-REAL-OLDFMT-2GPU"].raw, "proc_modules": PROC_MODULES}})
    facts = result["ansible_facts"]["gdr"]
    assert rc == 0 and facts["source"] == "captured"
    assert [(g["gpu"], g["nic"], g["relation"]) for g in facts["gpus"]] == [
        ("GPU0", "mlx5_0", "NODE"), ("GPU1", "mlx5_1", "NODE")]
    assert facts["gpus"][0]["reasons"] == ["ACS along the GPU-NIC path not audited (no lspci text captured)"]


def test_captured_empty_is_refused(capsys):
    rc, result = run_main(capsys, {"captured": {"lspci": ""}})
    assert rc == 1 and result["msg"].startswith("captured: give at least one of")
