# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""rdma.fabric.rdma_health main() against fabricsim in a scratch directory (SYSFS_PATH = the
simulated tree, every tool answered by fabricsim's shims): a healthy node gives no finding,
each fault gives exactly its (check, subject, severity), and a bundle of the faulty node
gives the same findings offline."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

import pytest

from ansible.module_utils import basic

from ansible_collections.rdma.fabric.plugins.modules import rdma_health
from ansible_collections.rdma.fabric.tests.unit import helpers


def _wire(sim, monkeypatch, tmp_path):
    from fabricsim import main as sim_main
    monkeypatch.setenv("SYSFS_PATH", sim.sys)

    def run_command(self, argv, **kwargs):
        out, err, rc = sim_main.run_tool(os.path.basename(argv[0]), [str(a) for a in argv[1:]])
        return rc, out, err

    def get_bin_path(self, name, *args, **kwargs):
        return "/usr/local/sbin/" + name if name in sim_main.TOOLS else None

    monkeypatch.setattr(basic.AnsibleModule, "run_command", run_command)
    monkeypatch.setattr(basic.AnsibleModule, "get_bin_path", get_bin_path)
    return str(tmp_path / "health-state.json")


def run(monkeypatch, args):
    monkeypatch.setattr(basic.AnsibleModule, "exit_json", helpers._exit_json)
    monkeypatch.setattr(basic.AnsibleModule, "fail_json", helpers._fail_json)
    from ansible.module_utils.testing import patch_module_args
    with patch_module_args(args):
        try:
            rdma_health.main()
        except helpers.ExitJson as exc:
            return "exit", exc.args[0]
        except helpers.FailJson as exc:
            return "fail", exc.args[0]
    raise AssertionError("no exit_json")


def healthy(sim, profile):
    """A converged node: the profile plus what the gpudirect role does (peer memory loaded)."""
    sim.init(profile)
    if profile != "small-roce":
        sim.out("modprobe", "nvidia_peermem")


def triples(result):
    return sorted((f["check"], f["subject"], f["severity"]) for f in result["findings"])


@pytest.mark.parametrize("profile", ["hgx-h100-roce", "dgx-h100-ib", "small-roce"])
def test_healthy_node_has_no_finding(sim, monkeypatch, tmp_path, profile):
    healthy(sim, profile)
    state_file = _wire(sim, monkeypatch, tmp_path)
    how, result = run(monkeypatch, {"interval": 0.2, "state_file": state_file, "host": "node1",
                                    "boot_grace": 0})
    assert how == "exit", result
    assert result["findings"] == [], [(f["check"], f["subject"], f["actual"]) for f in result["findings"]]
    assert result["changed"] is False
    with open(state_file) as handle:
        assert json.load(handle)["ports"]          # the flap baseline is kept


def test_link_down_and_pcie_downgrade(sim, monkeypatch, tmp_path):
    healthy(sim, "hgx-h100-roce")
    state_file = _wire(sim, monkeypatch, tmp_path)
    assert sim.cli("fault", "link-down", "mlx5_1") == 0
    how, result = run(monkeypatch, {"interval": 0, "state_file": state_file, "host": "node1"})
    assert how == "exit", result
    assert [t for t in triples(result) if t[0] == "link"] == [("link", "mlx5_1 port 1 (enp64s0np0)", "error")]
    assert all(f["host"] == "node1" and f["diagnosis"] and f["remedy"] for f in result["findings"])


def test_bundle_gives_the_same_findings(sim, monkeypatch, tmp_path):
    healthy(sim, "hgx-h100-roce")
    state_file = _wire(sim, monkeypatch, tmp_path)
    assert sim.cli("fault", "link-down", "mlx5_1") == 0
    how, online = run(monkeypatch, {"interval": 0, "state_file": state_file, "host": "node1", "return_raw": True})
    assert how == "exit", online
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    (bundle / "health-raw.json").write_text(json.dumps(online["raw"]))
    sim.cli("clear")
    how, offline = run(monkeypatch, {"bundle": str(bundle), "host": "node1"})
    assert how == "exit", offline
    assert offline["source"] == "bundle"
    assert offline["findings"] == online["findings"] and online["findings"]
