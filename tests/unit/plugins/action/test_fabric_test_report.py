# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""fabric_test_report: the verdict in the four formats, under its own name for ib_fabric."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import xml.etree.ElementTree as ET

from unittest import mock

from ansible_collections.rdma.fabric.plugins.action.fabric_test_report import ActionModule

VERDICT = {"passed": ["a", "b"], "failed": {"c": []}, "skipped": [
    {"host": "a", "check": "nccl.all_reduce", "subject": "pairs", "reason": "no launcher configured"}],
    "findings": [{"host": "c", "check": "perftest.write_bw", "subject": "rail1/mlx5_1", "severity": "error",
                  "expected": ">= 90 Gb/s with a peer that passes", "actual": "fail: 47.4 Gb/s with a; 47.3 Gb/s with b",
                  "diagnosis": "failed with 2 distinct peers", "remedy": "clean the optic"}]}


def run(args):
    task = mock.MagicMock()
    task.args = args
    task.async_val = 0
    plugin = ActionModule(task, mock.MagicMock(), mock.MagicMock(), loader=None, templar=None, shared_loader_obj=None)
    with mock.patch("ansible.plugins.action.ActionBase.run", return_value={}):
        return plugin.run(task_vars={"ansible_inventory_sources": ["inv"]})


def test_four_formats_carry_the_records(tmp_path):
    result = run({"report_dir": str(tmp_path), "verdict": VERDICT})
    assert not result.get("failed") and result["failed_hosts"] == ["c"] and result["passed"] == ["a", "b"]
    data = json.loads((tmp_path / "fabric_test.json").read_text())
    assert [(r["host"], r["subject"]) for r in data["records"]] == [("c", "rail1/mlx5_1")]
    assert data["meta"]["failed"] == ["c"] and data["skipped"][0]["reason"] == "no launcher configured"
    root = ET.fromstring((tmp_path / "fabric_test-junit.xml").read_text())
    failed = [(c.get("classname"), c.get("name")) for c in root.iter("testcase") if c.find("failure") is not None]
    assert failed == [("c", "perftest.write_bw")]
    prom = (tmp_path / "rdma_fabric_fabric_test.prom").read_text()
    assert 'rdma_fabric_fabric_test_findings{host="c",check="perftest.write_bw",severity="error"} 1' in prom
    assert 'rdma_fabric_fabric_test_findings{host="a",check="perftest.write_bw",severity="error"} 0' in prom
    assert "1 of 3 hosts failed the fabric test" in result["summary"]
    assert run({"report_dir": str(tmp_path), "verdict": VERDICT, "fail_on": "error"})["failed"]


def test_ib_fabric_records_under_their_own_name(tmp_path):
    record = {"host": "sm1", "check": "ib.cabling", "object": "rail0/Hca2 port 1", "expected": "Switch1",
              "actual": "Switch2 port 1", "severity": "error", "diagnosis": "Hca2 port 1 is cabled to Switch2 port 1"}
    warn = dict(record, check="ib.port_errors", severity="warning", object="Switch1/3")
    verdict = {"findings": [record, warn], "passed": [], "failed": {"sm1": True}, "skipped": [],
               "checks": ["ib.cabling", "ib.link_width"]}
    result = run({"report_dir": str(tmp_path), "verdict": verdict, "report_name": "ib_fabric", "fail_on": "error"})
    assert result["failed"]
    data = json.loads((tmp_path / "ib_fabric.json").read_text())
    assert sorted(r["subject"] for r in data["records"]) == ["Switch1/3", "rail0/Hca2 port 1"]
    prom = (tmp_path / "rdma_fabric_ib_fabric.prom").read_text()
    assert 'rdma_fabric_ib_fabric_findings{host="sm1",check="ib.cabling",severity="error"} 1' in prom
    assert 'rdma_fabric_ib_fabric_findings{host="sm1",check="ib.link_width",severity="error"} 0' in prom
    only_warning = dict(verdict, findings=[warn])
    assert not run({"report_dir": str(tmp_path), "verdict": only_warning, "report_name": "ib_fabric",
                    "fail_on": "error"}).get("failed")
