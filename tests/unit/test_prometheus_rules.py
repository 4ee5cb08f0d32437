# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The alert pack (extensions/prometheus/*.rules.yml) against its promtool tests and its docs.

- every alert has a ``for:``, a ``severity`` label (critical or warning), a ``summary`` naming
  the host (and the device and port when its series has them) and a ``runbook_url`` on a
  heading of docs/monitoring.md;
- every alert has a promtool case where it fires and one where it stays silent
  (tests/prometheus/*.test.yml), so a new alert without tests fails here;
- every series the rules read is one the collection writes, and docs/monitoring.md names every
  metric family the collection writes.
``lab/test.sh rules`` runs the promtool tests themselves.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import glob
import os
import re
import shutil
import subprocess

import pytest
import yaml

from ansible_collections.rdma.fabric.plugins.module_utils.reports import _health
from ansible_collections.rdma.fabric.plugins.module_utils.reports import _report as R

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
RULE_FILES = sorted(glob.glob(os.path.join(REPO, "extensions", "prometheus", "*.rules.yml")))
TEST_FILES = sorted(glob.glob(os.path.join(REPO, "tests", "prometheus", "*.test.yml")))
DOC = os.path.join(REPO, "docs", "monitoring.md")
RUNBOOK = "https://github.com/rdma-fabric/rdma.fabric/blob/main/docs/monitoring.md#"
SEVERITIES = ("critical", "warning")
_DURATION = re.compile(r"(\d+[smhd])+\Z")


def _load(path):
    with open(path) as handle:
        return yaml.safe_load(handle)


def _rules():
    out = []
    for path in RULE_FILES:
        for group in _load(path)["groups"]:
            out.extend(group["rules"])
    return out


def _alerts():
    return [r for r in _rules() if "alert" in r]


def _anchors(path):
    """GitHub's heading anchors of a Markdown file: lower case, punctuation but - and _ dropped,
    spaces as -."""
    with open(path) as handle:
        text = handle.read()
    return set(re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-")
               for m in re.finditer(r"^#+ (.*)$", text, re.M))


def test_there_is_a_rule_file_and_tests():
    assert RULE_FILES and TEST_FILES
    assert len(_alerts()) >= 15


def test_every_test_file_loads_the_rule_files():
    for path in TEST_FILES:
        wanted = set(os.path.relpath(p, os.path.dirname(path)) for p in RULE_FILES)
        assert set(_load(path)["rule_files"]) == wanted, path


def test_every_alert_has_for_severity_summary_and_runbook():
    anchors = _anchors(DOC)
    names = [a["alert"] for a in _alerts()]
    assert len(names) == len(set(names)), "an alert name twice"
    for alert in _alerts():
        name = alert["alert"]
        assert _DURATION.match(str(alert.get("for", ""))), "%s: no for:" % name
        assert alert.get("labels", {}).get("severity") in SEVERITIES, name
        annotations = alert.get("annotations") or {}
        summary = annotations.get("summary") or ""
        assert summary, "%s: no summary" % name
        url = annotations.get("runbook_url") or ""
        assert url == RUNBOOK + name.lower(), "%s: runbook_url %r" % (name, url)
        assert name.lower() in anchors, "%s: no section '%s' in docs/monitoring.md" % (name, name)
        expr = alert["expr"]
        if "absent(" not in expr:
            assert "$labels.host" in summary, "%s: the summary does not name the host" % name
        if _per_port(expr):
            assert "$labels.device" in summary and "$labels.port" in summary, \
                "%s: the summary does not name the device and port" % name


def _per_port(expr):
    """Whether the alert's series carry device and port: the raw port counters, or check
    verdicts of port checks only (a ``check`` matcher naming PORT_CHECKS)."""
    if "rdma_fabric_port_" in expr:
        return True
    match = re.search(r'rdma_fabric_health_check_failing\{[^}]*check(=~?)"([^"]*)"', expr)
    if not match:
        return False
    checks = match.group(2).split("|")
    return all(c in R.PORT_CHECKS for c in checks)


def _cases():
    """{alertname: [(test file, group index, fires?)]} of every alert_rule_test."""
    out = {}
    for path in TEST_FILES:
        for index, group in enumerate(_load(path)["tests"]):
            assert group.get("input_series"), "%s test %d: no input series" % (path, index)
            for case in group.get("alert_rule_test") or []:
                out.setdefault(case["alertname"], []).append((path, index, bool(case.get("exp_alerts"))))
    return out


def test_every_alert_fires_and_stays_silent_in_a_promtool_test():
    cases = _cases()
    for alert in _alerts():
        name = alert["alert"]
        seen = cases.get(name) or []
        assert any(fires for _p, _i, fires in seen), "%s: no promtool case where it fires" % name
        firing_groups = set((p, i) for p, i, fires in seen if fires)
        silent_groups = set((p, i) for p, i, fires in seen if not fires) - firing_groups
        assert silent_groups, "%s: no promtool test (group) where it stays silent" % name
    unknown = set(cases) - set(a["alert"] for a in _alerts())
    assert not unknown, "tests of alerts that do not exist: %s" % sorted(unknown)


def _written_text():
    """What the collection writes: every textfile writer's output, and the node timers' sources."""
    text = R.prometheus([{"host": "h", "area": "a", "object": "o", "setting": "s", "expected": 1, "actual": 2}],
                        [("h", "a")], [], 0.0, {"inventory": "i"})
    findings = [{"host": "h", "check": "link", "subject": "mlx5_0 port 1", "severity": "error"}]
    text += R.prometheus_health(findings, ["h"], [], 0.0, {}, sorted(_health.CHECKS), {"h": {"mlx5_0/1": {}}})
    text += R.prometheus_health(findings, ["h"], [], 0.0, {}, ["link"], prefix="rdma_fabric_fabric_test")
    ethtool = {"rx_prio3_pause": 1, "tx_prio3_pause_duration": 2, "rx_discards_phy": 3, "tx_pause_storm_error_events": 4}
    sysfs = {"np_cnp_sent": 1, "rp_cnp_handled": 2, "np_ecn_marked_roce_packets": 3}
    text += R.prometheus_port_counters("h", {"mlx5_0/1": {"sysfs": sysfs, "ethtool": ethtool}})
    for name in ("reports/_health_timer.py", "drift/_drift_timer.py"):
        with open(os.path.join(REPO, "plugins", "module_utils", name)) as handle:
            text += handle.read()
    return text


def _families(text):
    return set(re.findall(r"^# TYPE (\S+) ", text, re.M))


def test_every_series_the_rules_read_is_written():
    written = _written_text()
    for rule in _rules():
        for name in re.findall(r"(?<![:\w])(rdma_fabric_[a-z_]+)(?![:\w(])", rule["expr"]):
            assert re.search(r"\b%s\b" % name, written), "%s reads %s: nothing writes it" % (
                rule.get("alert") or rule.get("record"), name)


def test_the_docs_name_every_metric_family():
    with open(DOC) as handle:
        doc = handle.read()
    families = _families(_written_text()) | set(["rdma_fabric_health_timer_last_success_timestamp_seconds"])
    for family in families:
        shown = re.sub(r"^rdma_fabric_fabric_test_", "rdma_fabric_health_", family)   # one table for both
        assert "`%s`" % shown in doc, "docs/monitoring.md does not describe %s" % family
    for rule in _rules():
        if "record" in rule:
            assert "`%s`" % rule["record"] in doc, "docs/monitoring.md does not describe %s" % rule["record"]


@pytest.mark.skipif(not shutil.which("promtool"), reason="promtool not installed (Debian: prometheus)")
def test_promtool_accepts_the_rules_and_their_tests():
    for argv in (["promtool", "check", "rules"] + RULE_FILES, ["promtool", "test", "rules"] + TEST_FILES):
        proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                              check=False, cwd=REPO)
        assert proc.returncode == 0, proc.stdout
