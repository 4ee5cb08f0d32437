# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""main() of rdma.fabric.sm_info: parsed state, argument checks, error path (samples sminfo.txt/saquery.txt)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.rdma.fabric.plugins.modules import sm_info
from ansible_collections.rdma.fabric.tests.unit import helpers, samples

SMINFO = samples.load("sminfo.txt")
SAQUERY = samples.load("saquery.txt")


def run_main(capsys, args):
    return helpers.run_main_json(capsys, sm_info.main, args)


def test_parsed_two_sm_capture(capsys):
    text = SAQUERY["SAQUERY-SIM-saquery_smir_2sm"].raw + SMINFO["SMINFO-SIM-STANDBY"].raw
    rc, result = run_main(capsys, {"state": "parsed", "running_config": text})
    assert rc == 0
    assert result["changed"] is False
    assert result["parsed"]["master"]["guid"] == "0x0000000000100001"
    assert [(e["lid"], e["state"]) for e in result["parsed"]["sm_ports"]] == [(1, "master"), (5, "standby")]


def test_parsed_needs_running_config(capsys):
    rc, result = run_main(capsys, {"state": "parsed"})
    assert rc == 1
    assert "running_config" in result["msg"]


def test_bad_lid_refused(capsys):
    rc, result = run_main(capsys, {"lids": [5, 0, 50000]})
    assert rc == 1
    assert result["msg"] == "lids must be unicast LIDs 1-49151, got [0, 50000]"


def test_gathered_failure_is_clear(capsys, monkeypatch):
    def fake_run(self, argv, **kwargs):
        return 255, "sminfo: iberror: failed: query\n", "ibwarn: [7] mad_rpc: _do_madrpc failed; dport (Lid 1)\n"

    monkeypatch.setattr(sm_info.AnsibleModule, "run_command", fake_run)
    monkeypatch.setattr(sm_info.AnsibleModule, "get_bin_path", lambda self, name, **kw: "/usr/sbin/" + name)
    rc, result = run_main(capsys, {})
    assert rc == 1
    assert result["msg"].startswith("no subnet manager answered: sminfo (local port's SM LID) failed (rc=255)")
    assert "dport (Lid 1)" in result["msg"]
