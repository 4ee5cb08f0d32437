# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""health_report: collecting per-host findings, and the shared writers (_report) on findings."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import xml.etree.ElementTree as ET

from ansible_collections.rdma.fabric.plugins.action.health_report import collect, summary
from ansible_collections.rdma.fabric.plugins.module_utils import _health
from ansible_collections.rdma.fabric.plugins.module_utils import _report as R


def _finding(check, subject, severity="error"):
    default, diagnosis, remedy = _health.CHECKS[check]
    return {"check": check, "subject": subject, "severity": severity, "expected": "x", "actual": "y",
            "diagnosis": diagnosis, "remedy": remedy}


RESULTS = {
    "clean": {"findings": [], "ports": {"mlx5_0/1": {"rates": {"rx_pause": 0.0, "cnp_sent": 1.5}}}},
    "sick": {"findings": [_finding("pfc_storm", "mlx5_0 port 1 (eth0)"),
                          _finding("ecn", "mlx5_0 port 1 (eth0)", "warning")],
             "ports": {"mlx5_0/1": {"rates": {"rx_pause": 9000.0}}}},
    "failed": {"failed": True, "msg": "sminfo exploded"},
}


def test_collect_clean_sick_failed_and_unreachable():
    findings, checked, unreachable, ports = collect(["clean", "sick", "failed", "gone"], ["clean", "sick", "failed"],
                                                    RESULTS)
    assert checked == ["clean", "sick"] and unreachable == ["failed", "gone"]
    assert [(f["host"], f["check"], f["severity"]) for f in findings] == [
        ("sick", "pfc_storm", "error"), ("sick", "ecn", "warning"), ("failed", "host", "error"),
        ("gone", "host", "error")]
    assert findings[2]["actual"] == "not checked: sminfo exploded" and findings[3]["actual"] == "unreachable"
    assert summary(findings, checked, unreachable) == \
        "1 of 4 hosts with findings, 1 error(s), 1 warning(s); 2 unreachable"


def test_writers_on_findings():
    findings, checked, unreachable, ports = collect(["clean", "sick"], ["clean", "sick"], RESULTS)
    findings = R.sort_findings(findings)
    text = R.table(findings, R.FINDING_TABLE, keys=R.FINDING_KEYS)
    assert text.splitlines()[0].split() == ["HOST", "SEVERITY", "CHECK", "SUBJECT", "EXPECTED", "ACTUAL", "DIAGNOSIS"]
    rows = [line.split()[:3] for line in text.splitlines()[2:]]
    assert rows == [["sick", "warning", "ecn"], ["sick", "error", "pfc_storm"]]
    checks = sorted(_health.CHECKS)
    root = ET.fromstring(R.junit_xml(findings, [(h, c) for h in checked for c in checks], suite="rdma.fabric health",
                                     case_key="check", message=R.finding_message, failure_type="health",
                                     keys=R.FINDING_KEYS))
    assert root.get("tests") == str(2 * len(checks)) and root.get("failures") == "2"
    failed = [(c.get("classname"), c.get("name")) for c in root.iter("testcase") if c.find("failure") is not None]
    assert failed == [("sick", "ecn"), ("sick", "pfc_storm")]
    storm = [c for c in root.iter("testcase") if c.get("name") == "pfc_storm" and c.get("classname") == "sick"][0]
    assert "remedy: adjust the PFC buffers" in storm.find("failure").get("message")
    prom = R.prometheus_health(findings, checked, [], 1700000000.0, {"inventory": "inv"}, checks, ports)
    lines = prom.splitlines()
    assert 'rdma_fabric_health_findings{host="sick",check="pfc_storm",severity="error"} 1' in lines
    assert 'rdma_fabric_health_findings{host="clean",check="pfc_storm",severity="error"} 0' in lines
    assert 'rdma_fabric_health_port_findings{host="sick",port="mlx5_0/1",check="pfc_storm"} 1' in lines
    assert 'rdma_fabric_health_port_rate{host="clean",port="mlx5_0/1",counter="cnp_sent"} 1.5' in lines
    assert "rdma_fabric_health_hosts_checked 2" in lines and "rdma_fabric_health_hosts_unreachable 0" in lines
    assert not any(line and not line.startswith("#") and len(line.split()) != 2 for line in lines)   # no timestamps
