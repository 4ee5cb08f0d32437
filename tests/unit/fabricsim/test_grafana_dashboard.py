"""The Grafana dashboard (extensions/grafana/rdma_fabric.json): a dashboard JSON model Grafana
imports (a Prometheus datasource variable, a host variable, panels with PromQL targets), whose
every query names only series the collection exports (the health timer's textfile of a fabricsim
node, with its drift check's, and the controller's reports), and parses as PromQL (promtool, when
installed). The Molecule scenario `health` runs every query against a real Prometheus fed by the
node's node_exporter (molecule/health/prometheus.yml)."""
import json
import os
import re
import shutil
import subprocess

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.drift import _drift_timer
from ansible_collections.rdma.fabric.plugins.module_utils.reports import _health, _health_timer, _report
from test_rdma_health_sim import SimNode, _ticking_sleep, _wire, healthy

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
DASHBOARD = os.path.join(REPO, "extensions", "grafana", "rdma_fabric.json")
# Grafana's built-in interval variables, as Grafana substitutes them
GRAFANA_VARS = {"__rate_interval": "1m", "__interval": "15s", "__range": "1h"}
PROMQL_WORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "bool", "and", "or", "unless",
                "offset", "inf", "nan"}


def load():
    with open(DASHBOARD, encoding="utf-8") as handle:
        return json.load(handle)


def all_panels(items):
    for panel in items:
        yield panel
        yield from all_panels(panel.get("panels", []))


def queries(dashboard):
    """(where, expr) of every PromQL expression: panel targets and the query variables."""
    out = [(panel["title"], target["expr"]) for panel in all_panels(dashboard["panels"])
           for target in panel.get("targets", []) if target.get("expr")]
    for var in dashboard["templating"]["list"]:
        if var["type"] == "query":
            text = var["query"]["query"] if isinstance(var["query"], dict) else var["query"]
            out.append(("variable " + var["name"], re.match(r"^label_values\((.*),\s*\w+\)$", text).group(1)))
    return out


def expand(expr, host=".*"):
    for name, value in list(GRAFANA_VARS.items()) + [("host", host)]:
        expr = re.sub(r"\$\{%s(:[a-z]+)?\}|\$%s\b" % (name, name), value, expr)
    return expr


def metric_names(expr):
    """The series names an expression selects: identifiers that are not functions, keywords,
    label names (inside {} or the () of by/without/on/ignoring), durations or strings."""
    expr = re.sub(r'"(\\.|[^"\\])*"', '""', expr)
    expr = re.sub(r"\{[^}]*\}", "", expr)
    expr = re.sub(r"\[[^\]]*\]", "", expr)
    expr = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", "", expr)
    names = set()
    for match in re.finditer(r"(?<![\w.])([a-zA-Z_:][a-zA-Z0-9_:]*)(\s*\()?", expr):
        if not match.group(2) and match.group(1).lower() not in PROMQL_WORDS:
            names.add(match.group(1))
    return names


@pytest.fixture(scope="module", name="exported")
def exported_names(tmp_path_factory):
    """Every series name the collection writes: the node timer's textfile on a fabricsim RoCE node
    with a PFC storm (findings, verdicts, raw port counters, its run time), the node's drift
    check's textfile, the controller's health and drift reports."""
    names = set()
    with pytest.MonkeyPatch.context() as monkeypatch:
        tmp_path = tmp_path_factory.mktemp("timer")
        monkeypatch.setenv("FABRICSIM_STATE_DIR", str(tmp_path / "state"))
        monkeypatch.setenv("FABRICSIM_RUN_DIR", str(tmp_path / "run"))
        monkeypatch.setenv("FABRICSIM_SHIM_DIR", str(tmp_path / "sbin"))
        from conftest import Sim
        sim = Sim(str(tmp_path))
        healthy(sim, "hgx-h100-roce")
        state_file = _wire(sim, monkeypatch, tmp_path)
        _ticking_sleep(monkeypatch)
        assert sim.cli("fault", "pause-storm", "enp24s0np0") == 0
        _findings, text = _health_timer.run({"host": "node1", "interval": 0.2, "state_file": state_file,
                                             "boot_grace": 0}, SimNode())
    finding = {"host": "gpu-01", "check": "link", "severity": "error", "subject": "mlx5_0 port 1 (eth0)",
               "expected": "ACTIVE", "actual": "DOWN"}
    texts = [text,
             _drift_timer.prometheus("gpu-01", [], {}, {"roce_qos": ("1", "1.0.0")}, ["roce_qos"], 0, 1.0),
             _report.prometheus_health([finding], ["gpu-01"], [], 0, {"source": "test"}, sorted(_health.CHECKS)),
             _report.prometheus([], [("gpu-01", "roce_qos")], [], 0, {"source": "test"})]
    for one in texts:
        names.update(re.findall(r"^# TYPE (\S+) ", one, re.M))
    return names


def test_dashboard_model_grafana_imports():
    dashboard = load()
    assert dashboard["uid"] and dashboard["title"] and dashboard["schemaVersion"] >= 36
    variables = dict((v["name"], v) for v in dashboard["templating"]["list"])
    assert variables["datasource"]["type"] == "datasource" and variables["datasource"]["query"] == "prometheus"
    assert variables["host"]["type"] == "query" and variables["host"]["includeAll"] and variables["host"]["multi"]
    panels = list(all_panels(dashboard["panels"]))
    assert len(set(p["id"] for p in panels)) == len(panels)
    for panel in panels:
        assert set(panel["gridPos"]) == {"x", "y", "w", "h"} and panel["gridPos"]["x"] + panel["gridPos"]["w"] <= 24
        for target in panel.get("targets", []):
            assert target["datasource"] == {"type": "prometheus", "uid": "${datasource}"}, panel["title"]
            assert target["refId"]
    titles = [p["title"] for p in panels]
    assert len(set(titles)) == len(titles)


def test_dashboard_covers_the_fleet_at_a_glance():
    """Hosts by drift and health state, per-port pause and CNP rates, findings over time."""
    text = json.dumps([expr for _where, expr in queries(load())])
    for name in ("rdma_fabric_health_findings{severity=", "rdma_fabric_node_drift_settings{",
                 "rdma_fabric_health_timer_last_success_timestamp_seconds{",
                 "rate(rdma_fabric_port_pause_frames_total{", "rate(rdma_fabric_port_cnp_sent_total{",
                 "rate(rdma_fabric_port_cnp_handled_total{", "sum by (check, severity) (rdma_fabric_health_findings{"):
        assert name in text, name


@pytest.mark.parametrize("where,expr", queries(load()))
def test_every_query_names_only_exported_series(exported, where, expr):
    names = metric_names(expand(expr))
    assert names, where
    assert names <= exported, "%s: %s not exported by the collection" % (where, sorted(names - exported))


def test_metric_names_of_an_expression():
    assert metric_names('sum by (host, check) (rate(a_total{x="y",z=~"$host"}[5m])) > on (host) group_left b'
                        ' or vector(0) and time() - c') == {"a_total", "b", "c"}


@pytest.mark.skipif(not shutil.which("promtool"), reason="promtool (Debian prometheus) not installed")
def test_every_query_is_promql(tmp_path):
    """promtool parses each expression as a recording rule's."""
    lines = ["groups:", "  - name: dashboard", "    rules:"]
    for index, (_where, expr) in enumerate(queries(load())):
        lines += ["      - record: dashboard:q%d" % index, "        expr: %s" % json.dumps(expand(expr))]
    rules = tmp_path / "dashboard.rules.yml"
    rules.write_text("\n".join(lines) + "\n")
    proc = subprocess.run(["promtool", "check", "rules", str(rules)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, check=False)
    assert proc.returncode == 0, proc.stdout
