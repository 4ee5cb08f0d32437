# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""main() of rdma.fabric.pcie_acs with a fake lspci/setpci (switch tree of test_pcie_acs.SWITCH_TREE,
sample LSPCI-REAL-CX6DX-FULL for parsed)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.rdma.fabric.plugins.modules import pcie_acs
from ansible_collections.rdma.fabric.tests.unit import helpers, samples
from ansible_collections.rdma.fabric.tests.unit.plugins.module_utils.resources.test_pcie_acs import SWITCH_TREE

LSPCI = samples.load("lspci_pcie.txt")
REDIR = "ACSCtl:\tSrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-"
CLEAR = "ACSCtl:\tSrcValid+ TransBlk- ReqRedir- CmpltRedir- UpstreamFwd+ EgressCtrl- DirectTrans-"


def run_main(capsys, args):
    return helpers.run_main_json(capsys, pcie_acs.main, args)


@pytest.fixture
def host(monkeypatch, tmp_path):
    """lspci answers from ``state['text']``; a setpci on 17:00.0 clears its redirect bits."""
    monkeypatch.setenv("SYSFS_PATH", str(tmp_path))      # flat sysfs: paths from lspci bus numbers
    state = {"text": SWITCH_TREE, "calls": [], "fail_on": None}

    def fake_run(self, argv, **kwargs):
        state["calls"].append(list(argv))
        if argv[0].endswith("lspci"):
            return 0, state["text"], ""
        if argv[2] == state["fail_on"]:
            return 1, "", "setpci: %s: Instance #0 of Extended capability 000d not found" % argv[2]
        blocks = state["text"].split("0000:")
        for i, block in enumerate(blocks):
            if block.startswith(argv[2][5:] + " "):
                blocks[i] = block.replace(REDIR, CLEAR)
        state["text"] = "0000:".join(blocks)
        return 0, "", ""

    monkeypatch.setattr(pcie_acs.AnsibleModule, "run_command", fake_run)
    monkeypatch.setattr(pcie_acs.AnsibleModule, "get_bin_path", lambda self, name, *a, **kw: "/usr/bin/" + name)
    return state


def test_audit_only_reads(capsys, host):
    rc, result = run_main(capsys, {})
    assert rc == 0, result
    assert result["changed"] is False and result["commands"] == []
    assert result["redirect_enabled"] == ["0000:15:01.0", "0000:17:00.0"]
    assert result["pairs"] == {"0000:18:00.0": {"0000:1a:00.0": ["0000:17:00.0", "0000:17:01.0", "0000:16:00.0"]}}
    assert host["calls"] == [["/usr/bin/lspci", "-D", "-nn", "-vvv"]]


def test_redirect_disabled_then_idempotent(capsys, host):
    rc, result = run_main(capsys, {"state": "redirect_disabled", "_ansible_diff": True})
    assert rc == 0, result
    setpci = ["/usr/bin/setpci", "-s", "0000:17:00.0", "ECAP_ACS+0x6.w=0000:002c"]
    assert result["commands"] == [" ".join(setpci)]
    assert [c for c in host["calls"] if "setpci" in c[0]] == [setpci]
    assert result["changes"] == [{"bdf": "0000:17:00.0", "before": "001d", "after": "0011"}]
    assert result["before"]["0000:17:00.0"]["ctl_word"] == "001d"
    assert result["after"]["0000:17:00.0"]["ctl_word"] == "0011"         # read back
    assert result["diff"]["before"] == result["before"] and result["diff"]["after"] == result["after"]
    assert result["diff"]["after_header"] == "pcie_acs (after)"
    # the root port above the shared switch is reported, not written
    assert result["redirect_enabled"] == ["0000:15:01.0"]
    rc, again = run_main(capsys, {"state": "redirect_disabled"})
    assert again["changed"] is False and again["commands"] == []


def test_check_mode_predicts_without_setpci(capsys, host):
    rc, result = run_main(capsys, {"state": "redirect_disabled", "_ansible_check_mode": True})
    assert result["changed"] is True
    assert result["after"]["0000:17:00.0"]["redirect"] is False
    assert [c[0] for c in host["calls"]] == ["/usr/bin/lspci"]


def test_setpci_failure_reports_changed(capsys, host):
    host["text"] = SWITCH_TREE.replace(
        "ACSCtl:\tSrcValid+ TransBlk- ReqRedir- CmpltRedir- UpstreamFwd- EgressCtrl- DirectTrans-", REDIR)
    host["fail_on"] = "0000:17:01.0"
    rc, result = run_main(capsys, {"state": "redirect_disabled"})
    assert rc == 1
    assert result["applied"] == ["/usr/bin/setpci -s 0000:17:00.0 ECAP_ACS+0x6.w=0000:002c"]
    assert result["failed_command"] == "/usr/bin/setpci -s 0000:17:01.0 ECAP_ACS+0x6.w=0000:002c"
    assert result["not_attempted"] == []
    assert result["changed"] is True                 # 17:00.0 reads back changed
    assert result["after"]["0000:17:00.0"]["redirect"] is False
    assert result["after"]["0000:17:01.0"]["redirect"] is True
    assert "setpci failed on 0000:17:01.0" in result["msg"]


def test_parsed_sample_and_bad_device(capsys):
    text = LSPCI["LSPCI-REAL-CX6DX-FULL"].raw
    rc, result = run_main(capsys, {"state": "parsed", "running_config": text, "devices": ["1b:00.0"]})
    assert rc == 0, result
    assert result["endpoints"] == {"0000:1b:00.0": []}
    assert result["parsed"] == {} and result["redirect_enabled"] == []
    rc, result = run_main(capsys, {"devices": ["1b:00"]})
    assert rc == 1 and result["msg"].startswith("devices: '1b:00' not PCI addresses")
