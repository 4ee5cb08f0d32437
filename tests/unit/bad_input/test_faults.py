# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Faults (issue 15): a tool missing, a tool failing after part of a change, sysfs refusing a
write with EINVAL/EPERM, the boot-loader update failing, and what the roce_qos role restores
after a failure midway. Each case asserts the exact state reported: what was applied, the
command that failed, what was not attempted, the state read back (``after``), ``changed``
from before vs after, and that nothing was half-applied without a report.

The fakes are the modules' own test doubles (FakeMlnxQos, FakeLldpad, the dcqcn sysfs tree,
the pcie_acs lspci/setpci host) so a fault here is the same device the module tests use."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import builtins
import errno
import os
import shlex
import subprocess

import jinja2
import pytest

from ansible_collections.rdma.fabric.plugins.filter.roce_qos import roce_qos_rollback, roce_qos_rollback_report
from ansible_collections.rdma.fabric.plugins.module_utils.areas.roce_qos import dcqcn_config, lldp_config, mlnx_qos_config
from ansible_collections.rdma.fabric.plugins.module_utils.common import _common
from ansible_collections.rdma.fabric.plugins.module_utils.resources import _pcie_acs
from ansible_collections.rdma.fabric.plugins.modules import (
    dcqcn, kernel_cmdline, lldp_dcb, mlnx_qos, node_files, pcie_acs,
)
from ansible_collections.rdma.fabric.tests.unit import helpers
from ansible_collections.rdma.fabric.tests.unit.bad_input.test_bad_input import _roce_settings
from ansible_collections.rdma.fabric.tests.unit.plugins.module_utils.resources.test_pcie_acs import SWITCH_TREE
from ansible_collections.rdma.fabric.tests.unit.plugins.modules.test_dcqcn import make_tree
from ansible_collections.rdma.fabric.tests.unit.plugins.modules.test_lldp_dcb import FakeLldpad
from ansible_collections.rdma.fabric.tests.unit.plugins.modules.test_mlnx_qos import FakeMlnxQos

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
SETTINGS = _roce_settings()


@pytest.fixture
def sysfs(tmp_path, monkeypatch):
    monkeypatch.setenv("SYSFS_PATH", str(tmp_path))
    (tmp_path / "class" / "net" / "eth2").mkdir(parents=True)
    return tmp_path


def _run(monkeypatch, main, args, device=None, bin_dir="/usr/bin/"):
    run_command = None if device is None else (lambda argv, **kw: device(argv))
    return helpers.run_module(monkeypatch, main, args, run_command=run_command, bin_dir=bin_dir)


def _one(result, key):
    """The per-interface dict of ``result[key]`` (a one-entry list)."""
    assert len(result[key]) == 1, result[key]
    return result[key][0]


def _refusing_open(monkeypatch, target, code, nth=1):
    """sysfs refuses the ``nth`` write to ``target`` (a path suffix) with OSError ``code``,
    the way a kernel store function returning -EINVAL/-EPERM does."""
    count = {"n": 0}

    def fake_open(path, mode="r", *args, **kwargs):
        if "w" in mode and str(path).endswith(target):
            count["n"] += 1
            if count["n"] == nth:
                raise OSError(code, os.strerror(code), str(path))
        return builtins.open(path, mode, *args, **kwargs)
    monkeypatch.setattr(_common, "open", fake_open, raising=False)


# ------------------------------------------------------------------ tool missing
def test_mlnx_qos_missing_is_named_and_nothing_runs(monkeypatch, sysfs):
    monkeypatch.setattr(mlnx_qos.AnsibleModule, "get_bin_path", lambda self, name, *a, **k: None)
    kind, res = _run(monkeypatch, mlnx_qos.main, {"state": "replaced", "config": [dict(mlnx_qos_config(SETTINGS),
                                                                                       interface="eth2")]},
                     device=FakeMlnxQos(), bin_dir=None)
    assert kind == "fail"
    assert "mlnx_qos was not found" in res["msg"] and "eth2" in res["msg"]
    assert not res.get("changed") and "applied" not in res


def test_lldptool_missing_is_named_and_nothing_runs(monkeypatch, sysfs):
    device = FakeLldpad(dcbx="OS")
    monkeypatch.setattr(lldp_dcb.AnsibleModule, "get_bin_path",
                        lambda self, name, *a, **k: None if name == "lldptool" else "/usr/sbin/" + name)
    kind, res = helpers.run_module(monkeypatch, lldp_dcb.main,
                                   {"config": [dict(lldp_config(SETTINGS), interface="eth2")]},
                                   run_command=lambda argv, **kw: device(argv))
    assert kind == "fail" and "lldptool was not found" in res["msg"]
    assert device.writes == [] and not res.get("changed")


def test_lspci_and_setpci_missing(monkeypatch):
    calls = []

    def host(argv):
        calls.append(argv)
        return 0, SWITCH_TREE, ""
    monkeypatch.setattr(pcie_acs.AnsibleModule, "get_bin_path", lambda self, name, *a, **k: None)
    kind, res = helpers.run_module(monkeypatch, pcie_acs.main, {}, run_command=lambda argv, **kw: host(argv))
    assert kind == "fail" and "lspci was not found" in res["msg"] and calls == []
    monkeypatch.setattr(pcie_acs.AnsibleModule, "get_bin_path",
                        lambda self, name, *a, **k: None if name == "setpci" else "/usr/bin/" + name)
    kind, res = helpers.run_module(monkeypatch, pcie_acs.main, {"state": "redirect_disabled"},
                                   run_command=lambda argv, **kw: host(argv))
    assert kind == "fail" and "setpci was not found" in res["msg"]
    assert [c[0] for c in calls] == ["/usr/bin/lspci"]               # read, never written
    assert res["commands"] == [] and not res.get("changed")


def test_boot_loader_update_missing_writes_no_grub_file(monkeypatch, tmp_path):
    grub = tmp_path / "grub"
    grub.write_text('GRUB_CMDLINE_LINUX="quiet"\n')
    (tmp_path / "cmdline").write_text("BOOT_IMAGE=/vmlinuz quiet\n")
    monkeypatch.setattr(kernel_cmdline.AnsibleModule, "get_bin_path", lambda self, name, *a, **k: None)
    kind, res = helpers.run_module(monkeypatch, kernel_cmdline.main, {
        "arguments": [{"name": "iommu", "value": "pt"}], "backend": "grub", "grub_file": str(grub),
        "proc_cmdline": str(tmp_path / "cmdline")})
    assert kind == "fail" and "update-grub" in res["msg"] and "update_command" in res["msg"]
    assert grub.read_text() == 'GRUB_CMDLINE_LINUX="quiet"\n' and sorted(os.listdir(str(tmp_path))) == [
        "cmdline", "grub"]


# ------------------------------------------------------------------ a tool failing on the 2nd write
def test_mlnx_qos_fails_on_the_second_write(monkeypatch, sysfs):
    device = FakeMlnxQos(fail_on_call=2, fail_text="Error: dscp2prio failed")
    kind, res = _run(monkeypatch, mlnx_qos.main, {"state": "replaced", "config": [
        dict(mlnx_qos_config(SETTINGS), interface="eth2")]}, device=device)
    assert kind == "fail"
    assert len(res["applied"]) == 1 and res["applied"][0] == res["commands"][0]
    assert res["failed_command"] == res["commands"][1]
    assert res["not_attempted"] == res["commands"][2:]
    assert res["failed_on"] == {"interface": "eth2"}
    assert _one(res, "after")["pfc"] == [3]                 # read back: the first write took
    assert _one(res, "before")["pfc"] == []
    assert res["changed"] is True
    assert "failed midway on eth2" in res["msg"] and "Error: dscp2prio failed" in res["msg"]
    assert "State read back: " in res["msg"]


def test_dcqcn_kernel_refuses_the_second_write_with_eperm(monkeypatch, sysfs):
    make_tree(sysfs, interface="eth3")
    _refusing_open(monkeypatch, "/ecn/roce_np/enable/3", errno.EPERM)
    config = dict(dcqcn_config(SETTINGS), interface="eth3")
    config.pop("roce_tos")
    config.pop("rdma_cm_tos", None)
    config.pop("rdma_cm_roce_mode", None)     # no rdma_cm configfs in this tree
    kind, res = _run(monkeypatch, dcqcn.main, {"state": "replaced", "config": [config]})
    assert kind == "fail"
    base = str(sysfs) + "/class/net/eth3/ecn/roce_np/"
    assert res["applied"] == [base + "cnp_802p_prio=6", base + "cnp_dscp=48"]
    assert res["failed_command"] == base + "enable/3=1"
    assert "Operation not permitted" in res["msg"]
    after = _one(res, "after")
    assert after["np"]["params"]["cnp_dscp"] == 48 and after["np"]["enabled_priorities"] == []
    assert res["changed"] is True and res["failed_on"]["interface"] == "eth3"


def test_dcqcn_kernel_refuses_the_first_write_with_einval(monkeypatch, sysfs):
    make_tree(sysfs, interface="eth3")
    _refusing_open(monkeypatch, "/ecn/roce_np/cnp_802p_prio", errno.EINVAL)
    config = {"interface": "eth3", "np": {"params": {"cnp_802p_prio": 6, "cnp_dscp": 48}}}
    kind, res = _run(monkeypatch, dcqcn.main, {"config": [config]})
    assert kind == "fail" and res["applied"] == []
    assert "Invalid argument" in res["msg"] and res["failed_command"].endswith("cnp_802p_prio=6")
    assert res["not_attempted"] == [str(sysfs) + "/class/net/eth3/ecn/roce_np/cnp_dscp=48"]
    assert _one(res, "after") == _one(res, "before") and res["changed"] is False     # nothing took


def test_lldp_dcb_fails_on_the_second_write(monkeypatch, sysfs):
    device = FakeLldpad(dcbx="OS")
    real = device.__call__

    def failing(argv):
        if argv[1:2] == ["-T"]:
            return 1, "Device not capable\n", ""
        return real(argv)
    kind, res = helpers.run_module(monkeypatch, lldp_dcb.main,
                                   {"config": [dict(lldp_config(SETTINGS), interface="eth2")]},
                                   run_command=lambda argv, **kw: failing(argv), bin_dir="/usr/sbin/")
    assert kind == "fail"
    assert res["applied"] == ["lldptool set-lldp -i eth2 adminStatus=rxtx"]
    assert res["failed_command"].startswith("lldptool -T -i eth2 -V PFC")
    assert _one(res, "after")["admin_status"] == "rxtx" and _one(res, "before")["admin_status"] == "disabled"
    assert res["changed"] is True and res["failed_on"] == {"interface": "eth2"}


def test_setpci_fails_on_the_second_bridge(monkeypatch):
    text = {"lspci": SWITCH_TREE.replace("ReqRedir- CmpltRedir- UpstreamFwd- EgressCtrl-",
                                         "ReqRedir+ CmpltRedir+ UpstreamFwd- EgressCtrl-")}
    writes = []

    def host(argv):
        if argv[0].endswith("lspci"):
            return 0, text["lspci"], ""
        writes.append(argv)
        if len(writes) == 2:
            return 1, "", "setpci: Device or resource busy"
        blocks = text["lspci"].split("0000:")
        for i, block in enumerate(blocks):
            if block.startswith(argv[2][5:] + " "):
                blocks[i] = block.replace("ReqRedir+ CmpltRedir+", "ReqRedir- CmpltRedir-")
        text["lspci"] = "0000:".join(blocks)
        return 0, "", ""
    kind, res = helpers.run_module(monkeypatch, pcie_acs.main, {"state": "redirect_disabled"},
                                   run_command=lambda argv, **kw: host(argv), bin_dir="/usr/bin/")
    assert kind == "fail"
    assert [w[2] for w in writes] == ["0000:17:00.0", "0000:17:01.0"]      # never the root port 15:01.0
    assert res["applied"] == ["/usr/bin/setpci -s 0000:17:00.0 ECAP_ACS+0x6.w=0000:002c"]
    assert "Device or resource busy" in res["msg"] and res["changed"] is True
    assert res["after"]["0000:17:00.0"]["redirect"] is False and res["after"]["0000:17:01.0"]["redirect"] is True
    assert res["after"]["0000:15:01.0"]["redirect"] is True


def test_node_files_second_file_refused(monkeypatch, tmp_path):
    """The second file's parent is a regular file: the kernel refuses (ENOTDIR/EEXIST) even as root."""
    first, blocker = tmp_path / "a.conf", tmp_path / "blocker"
    blocker.write_text("a file, not a directory\n")
    second = blocker / "b.conf"
    kind, res = helpers.run_module(monkeypatch, node_files.main, {"files": [
        {"path": str(first), "content": "new\n"}, {"path": str(second), "content": "new\n"}]})
    assert kind == "fail", res
    assert len(res["applied"]) == 1 and res["applied"][0].startswith("write %s" % first)
    assert str(second) in res["failed_command"] or str(blocker) in res["failed_command"]
    assert str(second) in res["msg"] or str(blocker) in res["msg"]
    assert first.read_text() == "new\n" and blocker.read_text() == "a file, not a directory\n"
    assert res["changed"] is True
    assert res["after"]["files"][str(first)]["state"] == "present"
    assert res["before"]["files"][str(first)]["state"] == "absent"
    assert sorted(os.listdir(str(tmp_path))) == ["a.conf", "blocker"]         # no temporary file left


# ------------------------------------------------------------------ rollback (roce_qos_rollback_on_failure)
def test_rollback_restores_mlnx_qos_through_the_same_module(monkeypatch, sysfs):
    device = FakeMlnxQos(fail_on_call=2)
    config = [dict(mlnx_qos_config(SETTINGS), interface="eth2")]
    kind, failed = _run(monkeypatch, mlnx_qos.main, {"state": "replaced", "config": config}, device=device)
    assert kind == "fail" and failed["changed"] is True
    rollback = roce_qos_rollback({"mlnx_qos": failed, "dcqcn": {}, "lldp_dcb": {}}, failed)
    assert rollback["interfaces"] == ["eth2"] and [e["interface"] for e in rollback["mlnx_qos"]] == ["eth2"]
    assert rollback["dcqcn"] == [] and rollback["lldp_dcb"] == []
    device.fail_on_call = None
    kind, restored = _run(monkeypatch, mlnx_qos.main, {"state": "replaced", "config": rollback["mlnx_qos"]},
                          device=device)
    assert kind == "exit" and restored["changed"] is True
    assert _one(restored, "after") == _one(failed, "before")            # read back: as before the run
    message = roce_qos_rollback_report(rollback, failed, {"mlnx_qos": restored})
    assert "applying failed: mlnx_qos failed midway on eth2" in message
    assert "Rolled back eth2 to the state read before this run through mlnx_qos" in message


def test_rollback_restores_dcqcn_and_keeps_an_unset_tos(monkeypatch, sysfs):
    make_tree(sysfs, interface="eth3", tos=None)
    _refusing_open(monkeypatch, "/ecn/roce_rp/enable/3", errno.EPERM)
    config = dict(dcqcn_config(SETTINGS), interface="eth3", rdma_device="mlx5_0", port=1)
    config.pop("rdma_cm_tos", None)
    config.pop("rdma_cm_roce_mode", None)     # no rdma_cm configfs in this tree
    kind, failed = _run(monkeypatch, dcqcn.main, {"state": "replaced", "config": [config]})
    assert kind == "fail" and failed["changed"] is True
    rollback = roce_qos_rollback({"mlnx_qos": {"changed": False, "before": [], "after": []}, "dcqcn": failed}, failed)
    restore = rollback["dcqcn"]
    assert len(restore) == 1 and restore[0]["interface"] == "eth3" and "roce_tos" not in restore[0]
    assert restore[0]["np"] == _one(failed, "before")["np"]
    monkeypatch.setattr(_common, "open", builtins.open, raising=False)
    kind, restored = _run(monkeypatch, dcqcn.main, {"state": "replaced", "config": restore})
    assert kind == "exit", restored
    after = _one(restored, "after")
    assert after["np"] == _one(failed, "before")["np"] and after["rp"] == _one(failed, "before")["rp"]


def test_rollback_restores_lldp_through_the_same_module(monkeypatch, sysfs):
    device = FakeLldpad(dcbx="OS")
    real = device.__call__
    state = {"fail": True}

    def failing(argv):
        if state["fail"] and argv[1:2] == ["-T"] and "APP" in argv:
            return 1, "Device not capable\n", ""
        return real(argv)

    def run(args):
        return helpers.run_module(monkeypatch, lldp_dcb.main, args, run_command=lambda argv, **kw: failing(argv),
                                  bin_dir="/usr/sbin/")
    kind, failed = run({"config": [dict(lldp_config(SETTINGS), interface="eth2")]})
    assert kind == "fail" and failed["changed"] is True
    rollback = roce_qos_rollback({"lldp_dcb": failed}, failed)
    assert [e["interface"] for e in rollback["lldp_dcb"]] == ["eth2"]
    state["fail"] = False
    kind, restored = run({"state": "replaced", "config": rollback["lldp_dcb"]})
    assert kind == "exit", restored
    before, after = _one(failed, "before"), _one(restored, "after")
    assert after["admin_status"] == before["admin_status"] == "disabled"
    assert after["pfc"]["enabled"] == before["pfc"]["enabled"]


def _result(before, after, failed_on=None, failed=False):
    out = {"before": before, "after": after, "changed": before != after, "failed": failed}
    if failed_on:
        out["failed_on"] = failed_on
    return out


def test_rollback_takes_only_the_failed_interface_and_the_modules_that_changed_it():
    mlnx = _result([{"interface": "eth2", "pfc": []}, {"interface": "eth3", "pfc": []}],
                   [{"interface": "eth2", "pfc": [3]}, {"interface": "eth3", "pfc": [3]}])
    dcq = _result([{"interface": "eth2", "rdma_device": "mlx5_0", "port": 1, "np": None, "rp": None,
                    "roce_tos": None},
                   {"interface": "eth3", "rdma_device": "mlx5_1", "port": 1,
                    "np": {"enabled_priorities": [], "params": {"cnp_dscp": 0}}, "rp": None, "roce_tos": 0}],
                  [{"interface": "eth2", "rdma_device": "mlx5_0", "port": 1, "np": None, "rp": None,
                    "roce_tos": None},
                   {"interface": "eth3", "rdma_device": "mlx5_1", "port": 1,
                    "np": {"enabled_priorities": [], "params": {"cnp_dscp": 48}}, "rp": None, "roce_tos": 0}],
                  failed_on={"interface": "eth3", "rdma_device": "mlx5_1", "port": 1}, failed=True)
    rollback = roce_qos_rollback({"mlnx_qos": mlnx, "dcqcn": dcq, "lldp_dcb": {"skipped": True}}, dcq)
    assert rollback["interfaces"] == ["eth3"]
    assert rollback["mlnx_qos"] == [{"interface": "eth3", "pfc": []}]
    assert rollback["dcqcn"] == [{"interface": "eth3", "rdma_device": "mlx5_1", "port": 1,
                                  "np": {"enabled_priorities": [], "params": {"cnp_dscp": 0}}, "roce_tos": 0}]
    assert rollback["lldp_dcb"] == [] and rollback["order"] == ["lldp_dcb", "dcqcn", "mlnx_qos"]
    # a failure that names no interface (refused input, a read error): nothing is restored
    refused = {"failed": True, "msg": "config[0].pfc[0]=9: priority must be 0-7"}
    none = roce_qos_rollback({"mlnx_qos": refused}, refused)
    assert none["interfaces"] == [] and "not midway on an interface" in none["reason"]
    assert "Rollback: none (the failure was not midway" in roce_qos_rollback_report(none, refused, {})
    off = roce_qos_rollback({"mlnx_qos": mlnx, "dcqcn": dcq}, dcq, False)
    assert off["mlnx_qos"] == off["dcqcn"] == [] and off["reason"] == "roce_qos_rollback_on_failure is false"


def test_rollback_report_names_a_restore_that_failed_too():
    rollback = {"interfaces": ["eth3"], "order": ["lldp_dcb", "dcqcn", "mlnx_qos"], "lldp_dcb": [],
                "dcqcn": [{"interface": "eth3"}], "mlnx_qos": [{"interface": "eth3"}], "reason": ""}
    message = roce_qos_rollback_report(rollback, {"msg": "dcqcn failed midway on eth3"},
                                       {"dcqcn": {"failed": True, "msg": "writing '0' failed: Permission denied"},
                                        "mlnx_qos": {"changed": True}})
    assert "applying failed: dcqcn failed midway on eth3" in message
    assert "Rollback of eth3 INCOMPLETE: restored through mlnx_qos; FAILED dcqcn: writing '0' failed" in message


def test_the_role_rescues_the_apply_block_only():
    """The rollback is a rescue of the apply block: no task of it runs on the success path."""
    import yaml
    with open(os.path.join(REPO, "roles", "roce_qos", "tasks", "apply.yml")) as handle:
        tasks = yaml.safe_load(handle)
    assert len(tasks) == 1 and set(tasks[0]) >= {"block", "rescue"}
    modules = [next(k for k in t if k.startswith(("rdma.fabric.", "ansible.builtin."))) for t in tasks[0]["rescue"]]
    assert modules == ["ansible.builtin.set_fact", "rdma.fabric.lldp_dcb", "rdma.fabric.dcqcn",
                       "rdma.fabric.mlnx_qos", "ansible.builtin.fail"]
    assert all(t.get(m, {}).get("state") == "replaced" for t, m in zip(tasks[0]["rescue"][1:4], modules[1:4]))
    with open(os.path.join(REPO, "roles", "roce_qos", "defaults", "main.yml")) as handle:
        assert yaml.safe_load(handle)["roce_qos_rollback_on_failure"] is True


# ------------------------------------------------------------------ pcie_acs: only a GPU and its own NIC
def _shift(text, old, new):
    for a, b in zip(old, new):
        text = text.replace("0000:%s:" % a, "0000:%s:" % b).replace("=%s," % a, "=%s," % b) \
            .replace("=%s, " % a, "=%s, " % b).replace("subordinate=%s" % a, "subordinate=%s" % b)
    return text


ALL_REDIRECT = "ACSCtl:\tSrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-"
RAIL0 = SWITCH_TREE.replace("ACSCtl:\tSrcValid+ TransBlk- ReqRedir- CmpltRedir- UpstreamFwd- EgressCtrl- DirectTrans-",
                            ALL_REDIRECT)
TWO_RAILS = RAIL0 + _shift(RAIL0, ("1b", "1a", "18", "17", "16", "15"), ("9b", "9a", "98", "97", "96", "95"))


def test_two_rails_writes_only_switch_ports_never_root_ports(monkeypatch):
    devices = _pcie_acs.parse_lspci(TWO_RAILS)
    assert sorted(b for b, d in devices.items() if _pcie_acs.is_gpu(d)) == ["0000:18:00.0", "0000:98:00.0"]
    writes = []

    def host(argv):
        if argv[0].endswith("lspci"):
            return 0, TWO_RAILS, ""
        writes.append(argv[2])
        return 0, "", ""
    kind, res = helpers.run_module(monkeypatch, pcie_acs.main, {"state": "redirect_disabled"},
                                   run_command=lambda argv, **kw: host(argv), bin_dir="/usr/bin/")
    assert kind == "exit", res
    assert sorted(writes) == ["0000:17:00.0", "0000:17:01.0", "0000:97:00.0", "0000:97:01.0"]
    assert sorted(res["rails"]) == ["0000:18:00.0", "0000:98:00.0"]
    assert res["rails"]["0000:18:00.0"] == {"0000:1a:00.0": ["0000:17:00.0", "0000:17:01.0", "0000:16:00.0"]}
    # the cross-rail pairs are still audited (reported), never written
    assert res["pairs"]["0000:18:00.0"]["0000:9a:00.0"][0] == "0000:17:00.0"


@pytest.mark.parametrize("devices", [["0000:18:00.0", "0000:9a:00.0"], ["0000:15:01.0", "0000:95:01.0"],
                                     ["0000:18:00.0"]], ids=["cross-rail-pair", "root-ports", "gpu-alone"])
def test_a_cross_rail_pair_given_explicitly_writes_nothing(monkeypatch, devices):
    writes, warnings = [], []
    monkeypatch.setattr(pcie_acs.AnsibleModule, "warn", lambda self, msg: warnings.append(msg))

    def host(argv):
        if argv[0].endswith("lspci"):
            return 0, TWO_RAILS, ""
        writes.append(argv)
        return 0, "", ""
    kind, res = helpers.run_module(monkeypatch, pcie_acs.main,
                                   {"state": "redirect_disabled", "devices": devices},
                                   run_command=lambda argv, **kw: host(argv), bin_dir="/usr/bin/")
    assert kind == "exit" and writes == [] and res["changed"] is False and res["rails"] == {}
    assert any("no GPU and NIC of the same rail" in w for w in warnings)
    assert res["commands"] == []


def test_unreadable_acs_refuses_redirect_disabled_before_any_write(monkeypatch):
    denied = RAIL0.replace("\tCapabilities: [200 v1] Access Control Services\n", "\tCapabilities: <access denied>\n")
    denied = denied.replace("\t\tACSCap:\tSrcValid+ TransBlk+ ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl+ "
                            "DirectTrans+\n\t\t" + ALL_REDIRECT + "\n", "")
    writes = []

    def host(argv):
        if argv[0].endswith("lspci"):
            return 0, denied, ""
        writes.append(argv)
        return 0, "", ""
    kind, res = helpers.run_module(monkeypatch, pcie_acs.main, {"state": "redirect_disabled"},
                                   run_command=lambda argv, **kw: host(argv), bin_dir="/usr/bin/")
    assert writes == [] and kind == "fail" and not res.get("changed")
    assert "ACS state of 0000:17:00.0, 0000:17:01.0 unknown: lspci printed '<access denied>'" in res["msg"]
    assert "nothing is written" in res["msg"]


# ------------------------------------------------------------------ the boot-time QoS applier
def _applier(tmp_path):
    env = jinja2.Environment(keep_trailing_newline=True)
    env.filters["quote"] = shlex.quote
    with open(os.path.join(REPO, "roles", "roce_qos", "templates", "rdma-fabric-roce-qos-apply.sh.j2")) as handle:
        text = env.from_string(handle.read()).render(ansible_managed="test",
                                                     roce_qos_persist_dir=str(tmp_path / "state dir"))
    script = tmp_path / "apply.sh"
    script.write_text(text)
    (tmp_path / "state dir").mkdir()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "mlnx_qos"
    fake.write_text('#!/bin/sh\nfor a in "$@"; do printf "<%%s>" "$a"; done >> %s\necho >> %s\n'
                    % (shlex.quote(str(tmp_path / "argv")), shlex.quote(str(tmp_path / "argv"))))
    fake.chmod(0o755)
    return script, bin_dir


def test_boot_applier_never_expands_a_line_into_argv(tmp_path):
    script, bin_dir = _applier(tmp_path)
    sysfile = tmp_path / "sys" / "enable"
    sysfile.parent.mkdir()
    sysfile.write_text("0\n")
    (tmp_path / "state dir" / "desired.conf").write_text("\n".join([
        "# header",
        "eth2 mlnx_qos -i eth2 --pfc 0,0,0,1,0,0,0,0 --trust dscp",
        "eth2 mlnx_qos -i eth2 --dscp2prio set,26,3",
        "eth2 mlnx_qos -i eth2 --trust $(touch %s)" % (tmp_path / "pwned"),
        "eth2 mlnx_qos -i eth2 --pfc *",
        "eth2 mlnx_qos -i eth2 `id`",
        "eth2 sysfs %s=1" % sysfile,
        "eth2 sysfs %s/../x=1" % sysfile.parent,
        "../x sysfs %s=0" % sysfile,
    ]) + "\n")
    proc = subprocess.run(["sh", str(script)], env={"PATH": "%s:/usr/bin:/bin" % bin_dir}, check=False,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, cwd=str(tmp_path))
    assert proc.returncode == 1
    assert (tmp_path / "argv").read_text() == ("<-i><eth2><--pfc><0,0,0,1,0,0,0,0><--trust><dscp>\n"
                                               "<-i><eth2><--dscp2prio><set,26,3>\n")
    assert not (tmp_path / "pwned").exists() and not (tmp_path / "x").exists()
    assert sysfile.read_text() == "1\n"
    assert proc.stderr.count("line skipped") == 5
    with open(str(script)) as handle:
        body = handle.read()
    assert "$(mlnx_qos $" not in body and 'out=$(mlnx_qos "$@" 2>&1)' in body


def _role_specs_defaults():
    import yaml
    with open(os.path.join(REPO, "roles", "roce_qos", "defaults", "main.yml")) as handle:
        return yaml.safe_load(handle)


def test_the_roce_qos_files_have_explicit_modes():
    """Every file the roce_qos role installs names its mode (node_files writes them atomically, root:root)."""
    from ansible_collections.rdma.fabric.plugins.plugin_utils import _role_specs
    from ansible_collections.rdma.fabric.plugins.module_utils.areas import roce_qos
    spec = roce_qos.spec(_role_specs_defaults(), lambda term, extra=None: "text of " + term)
    plan = roce_qos.plan({"device_names": [], "devices": {}}, spec)
    files = plan["boot_applier"]["files"]
    assert files and all(f.get("mode") in ("0644", "0755") for f in files if f.get("state") != "absent"), files
