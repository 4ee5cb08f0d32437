# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""health_report: collecting per-host findings, and the shared writers (_report) on findings."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import xml.etree.ElementTree as ET

import json

from ansible_collections.rdma.fabric.plugins.action.health_report import collect, collect_skipped, summary
from ansible_collections.rdma.fabric.plugins.module_utils.reports import _health
from ansible_collections.rdma.fabric.plugins.module_utils.reports import _report as R


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
    # each check's verdict per port observed (0 when healthy), the rates left to Prometheus
    assert 'rdma_fabric_health_check_failing{host="sick",check="pfc_storm",subject="mlx5_0 port 1",device="mlx5_0",' \
        'port="1",severity="error"} 1' in lines
    assert 'rdma_fabric_health_check_failing{host="clean",check="pfc_storm",subject="mlx5_0 port 1",device="mlx5_0",' \
        'port="1",severity="error"} 0' in lines
    assert 'rdma_fabric_health_check_failing{host="clean",check="gdr",subject="clean",device="",port="",' \
        'severity="error"} 0' in lines
    assert not any("_port_rate" in line for line in lines)
    assert "rdma_fabric_health_hosts_checked 2" in lines and "rdma_fabric_health_hosts_unreachable 0" in lines
    # no timestamps: one value after the name and labels (label values may hold spaces)
    assert not any(line and not line.startswith("#") and len(line.rsplit("}", 1)[-1].split()) != (1 if "}" in line else 2)
                   for line in lines)


LLDPAD = "lldpad is not running (lldptool -t -n -i eth0: ...): the switch's PFC/ETS/APP TLVs cannot be read"
SKIPPING = {
    "clean": dict(RESULTS["clean"], skipped_checks=[{"check": "lossless_agreement", "reason": LLDPAD}]),
    "sick": dict(RESULTS["sick"], findings=RESULTS["sick"]["findings"] + [_finding("gid_ipv4", "mlx5_0 port 1 (eth0)")],
                 skipped_checks=[{"check": "gid_ipv4", "subject": "eth1", "reason": "IPv4 addresses unknown (x)"}]),
    "gone": None,
}


def test_skipped_checks_in_the_table_json_and_junit():
    findings, checked, unreachable, ports = collect(["clean", "sick", "gone"], ["clean", "sick"], SKIPPING)
    findings = R.sort_findings(findings)
    skipped = R.sort_records(collect_skipped(checked, SKIPPING), R.SKIP_KEYS)
    assert skipped == [{"host": "clean", "check": "lossless_agreement", "subject": "", "reason": LLDPAD},
                       {"host": "sick", "check": "gid_ipv4", "subject": "eth1", "reason": "IPv4 addresses unknown (x)"}]
    assert summary(findings, checked, unreachable, skipped) == \
        "1 of 3 hosts with findings, 2 error(s), 1 warning(s); 1 unreachable; 2 check(s) skipped on 2 host(s)"
    # the end-of-run section: one line per skipped check with its reason
    text = R.skipped_table(skipped).splitlines()
    assert text[0].startswith("skipped") and text[1].split() == ["HOST", "CHECK", "SUBJECT", "REASON"]
    assert text[3].split()[:3] == ["clean", "lossless_agreement", "lldpad"]
    assert text[4].split()[:4] == ["sick", "gid_ipv4", "eth1", "IPv4"]
    assert R.skipped_table([]) == ""
    data = json.loads(R.to_json(findings, {"skipped": len(skipped)}, R.FINDING_KEYS, skipped))
    assert data["skipped"] == skipped and data["meta"]["skipped"] == 2 and len(data["records"]) == 4
    checks = sorted(_health.CHECKS)
    root = ET.fromstring(R.junit_xml(findings, [(h, c) for h in checked for c in checks], suite="rdma.fabric health",
                                     case_key="check", message=R.finding_message, failure_type="health",
                                     keys=R.FINDING_KEYS, skipped=skipped))
    cases = dict(((c.get("classname"), c.get("name")), c) for c in root.iter("testcase"))
    suite = root.find("testsuite")
    # lossless_agreement on clean: a skipped case (not a pass); gid_ipv4 on sick failed on one port and
    # was skipped on another: the failure stays, the skip is a case of its own
    assert cases[("clean", "lossless_agreement")].find("skipped").get("message") == LLDPAD
    assert cases[("clean", "lossless_agreement")].find("failure") is None
    assert cases[("sick", "gid_ipv4")].find("failure") is not None and cases[("sick", "gid_ipv4")].find("skipped") is None
    assert cases[("sick", "gid_ipv4 (skipped)")].find("skipped").get("message") == "eth1: IPv4 addresses unknown (x)"
    assert suite.get("skipped") == "2" and suite.get("tests") == str(2 * len(checks) + 2) and suite.get("failures") == "4"
    assert ("gone", "host") in cases


def test_without_skips_the_writers_print_what_they_did():
    # the drift check calls the writers without skipped: its output is unchanged
    records = [{"host": "h", "area": "roce_qos", "object": "eth0", "setting": "pfc", "expected": [3], "actual": []}]
    assert R.junit_xml(records, [("h", "roce_qos")]) == R.junit_xml(records, [("h", "roce_qos")], skipped=[])
    assert 'skipped="0"' in R.junit_xml(records, [("h", "roce_qos")])
    assert "skipped" not in json.loads(R.to_json(records, {}))
