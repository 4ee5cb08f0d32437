# -*- coding: utf-8 -*-
"""Every Prometheus textfile writer against the reference parser (prometheus_client) and, where
installed, promtool check metrics; each check's verdict per port or host; the node timer's raw
counters and last-success time; table cells on one line."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import shutil
import subprocess

import pytest
from prometheus_client.parser import text_string_to_metric_families

from ansible_collections.rdma.fabric.plugins.module_utils.reports import _health, _health_timer
from ansible_collections.rdma.fabric.plugins.module_utils.facts import _health_read
from ansible_collections.rdma.fabric.plugins.module_utils.reports import _report as R

ETHTOOL = """NIC statistics:
     rx_pause_ctrl_phy: 7
     tx_pause_ctrl_phy: 9
     rx_discards_phy: 12
     tx_discards_phy: 1
     rx_prio3_pause: 1500
     rx_prio3_pause_duration: 2500000
     tx_prio3_pause: 40
     tx_prio3_pause_duration: 1250
     rx_prio3_pause_transition: 3
     tx_pause_storm_warning_events : 2
     tx_pause_storm_error_events: 0
"""
SYSFS = {"np_cnp_sent": 31, "rp_cnp_handled": 17, "np_ecn_marked_roce_packets": 44, "symbol_error": 0,
         "link_downed": 1}


def _finding(host, check, subject, severity="error"):
    return {"host": host, "check": check, "subject": subject, "severity": severity, "expected": "x",
            "actual": "y\nz", "diagnosis": "d", "remedy": "r"}


FINDINGS = R.sort_findings([
    _finding("gpu-1", "pfc_storm", "mlx5_0 port 1 (ens1f0np0)"),
    _finding("gpu-1", "counters", "mlx5_0 port 1 (ens1f0np0) rx_crc_errors_phy", "warning"),
    _finding("gpu-1", "gdr", "peer memory"),
    _finding("gpu-1", "lossless_agreement", "ens1f1np1 PFC"),
    _finding('gpu "2"\\', "link", "mlx5_1 port 1"),
])
PORTS = {"gpu-1": {"mlx5_0/1": {}, "mlx5_1/1": {}}, 'gpu "2"\\': {"mlx5_1/1": {}}}
NETDEVS = {"gpu-1": {"ens1f0np0": "mlx5_0/1", "ens1f1np1": "mlx5_1/1"}}


def _timer_text(monkeypatch, findings_of=None):
    """_health_timer.run on a node whose reads are given: one RoCE port mlx5_0/1 (ens1f0np0)
    and one InfiniBand port mlx5_2/1."""
    raw = {"samples": [{"time": 1.0, "sysfs": {"mlx5_0/1": dict(SYSFS, np_cnp_sent=1), "mlx5_2/1": {"symbol_error": 0}},
                        "ethtool": {"mlx5_0/1": ETHTOOL.replace("1500", "1")}},
                       {"time": 2.0, "sysfs": {"mlx5_0/1": SYSFS, "mlx5_2/1": {"symbol_error": 0}},
                        "ethtool": {"mlx5_0/1": ETHTOOL}}]}
    facts = {"devices": {"mlx5_0": {"ports": [{"port": 1, "netdev": "ens1f0np0", "link_layer": "Ethernet"}]},
                         "mlx5_2": {"ports": [{"port": 1, "link_layer": "InfiniBand"}]}}}
    observations = {"facts": facts, "ports": {"mlx5_0/1": {}, "mlx5_2/1": {}}}
    monkeypatch.setattr(_health_read, "observe", lambda module, params: (raw, observations))
    monkeypatch.setattr(_health, "judge", lambda obs, checks: [dict(f) for f in (findings_of or [])])
    return _health_timer.run({"host": "gpu-1", "checks": {"severity": {"ecn": "error"}}}, module=object(),
                             now=1700000000.5)


def _writers(monkeypatch):
    """(name, text) of every writer of a Prometheus textfile in plugins/."""
    drift = [{"host": "gpu-1", "area": "roce_qos", "object": "eth2", "setting": "pfc", "expected": [3], "actual": []}]
    return [
        ("prometheus (drift)", R.prometheus(drift, [("gpu-1", "roce_qos"), ("gpu-2", "roce_qos")], ["gone"], 1700000000.25,
                                            {"inventory": 'a "b"\\c\nd', "limit": ""})),
        ("prometheus_health", R.prometheus_health(FINDINGS, ["gpu-1", 'gpu "2"\\'], ["gone"], 1700000000.0,
                                                  {"inventory": "inv"}, sorted(_health.CHECKS), PORTS, netdevs=NETDEVS)),
        ("prometheus_health (fabric_test)",
         R.prometheus_health([_finding("gpu-1", "perftest.write_bw", "gpu-1 mlx5_0 against gpu-2")], ["gpu-1", "gpu-2"],
                             [], 1700000000.0, {"inventory": "inv", "limit": ""},
                             ["fabric_test.node", "perftest.write_bw", "perftest.write_lat"], prefix="rdma_fabric_fabric_test")),
        ("timer", _timer_text(monkeypatch, [_finding("gpu-1", "pfc_storm", "mlx5_0 port 1 (ens1f0np0)")])[1]),
    ]


def _sample_lines(text):
    return [line for line in text.splitlines() if line and not line.startswith("#")]


def test_every_writer_parses_with_the_reference_parser(monkeypatch):
    for name, text in _writers(monkeypatch):
        families = list(text_string_to_metric_families(text))
        samples = [s for f in families for s in f.samples]
        assert len(samples) == len(_sample_lines(text)), name
        assert len(set(f.name for f in families)) == len(families), "%s: a family twice" % name
        assert all(f.type in ("gauge", "counter") for f in families), name
        for family in families:
            assert family.documentation, "%s: %s without HELP" % (name, family.name)
        # every series once (no two lines with the same name and labels)
        keys = [(s.name, tuple(sorted(s.labels.items()))) for s in samples]
        assert len(keys) == len(set(keys)), name


def test_label_values_survive_the_parser(monkeypatch):
    text = dict(_writers(monkeypatch))["prometheus_health"]
    families = dict((f.name, f) for f in text_string_to_metric_families(text))
    hosts = set(s.labels["host"] for s in families["rdma_fabric_health_check_failing"].samples)
    assert hosts == {"gpu-1", 'gpu "2"\\'}
    drift = dict(_writers(monkeypatch))["prometheus (drift)"]
    info = [s for f in text_string_to_metric_families(drift) for s in f.samples if s.name == "rdma_fabric_drift_info"]
    assert info[0].labels["inventory"] == 'a "b"\\c\nd'


@pytest.mark.skipif(not shutil.which("promtool"), reason="promtool not installed (Debian: prometheus)")
def test_every_writer_passes_promtool_check_metrics(monkeypatch):
    for name, text in _writers(monkeypatch):
        proc = subprocess.run(["promtool", "check", "metrics"], input=text, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, universal_newlines=True, check=False)
        assert proc.returncode == 0 and not proc.stdout.strip(), "%s: %s" % (name, proc.stdout)


def test_promtool_check_metrics_can_fail():
    """The test above would see a problem: promtool's lint on a counter without _total."""
    if not shutil.which("promtool"):
        pytest.skip("promtool not installed")
    bad = "# HELP x_frames Frames.\n# TYPE x_frames counter\nx_frames 1\n"
    proc = subprocess.run(["promtool", "check", "metrics"], input=bad, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, universal_newlines=True, check=False)
    assert proc.returncode != 0 and "_total" in proc.stdout


def _verdicts(text, prefix="rdma_fabric_health"):
    family = [f for f in text_string_to_metric_families(text) if f.name == prefix + "_check_failing"][0]
    return dict(((s.labels["host"], s.labels["check"], s.labels["subject"], s.labels["device"], s.labels["port"],
                  s.labels["severity"]), s.value) for s in family.samples)


def test_check_verdicts_are_zero_when_healthy_per_port_and_per_host(monkeypatch):
    verdicts = _verdicts(dict(_writers(monkeypatch))["prometheus_health"])
    # a port check on every port observed, the others on the host
    assert verdicts[("gpu-1", "pfc_storm", "mlx5_0 port 1", "mlx5_0", "1", "error")] == 1
    assert verdicts[("gpu-1", "pfc_storm", "mlx5_1 port 1", "mlx5_1", "1", "error")] == 0
    assert verdicts[("gpu-1", "link", "mlx5_0 port 1", "mlx5_0", "1", "error")] == 0
    assert verdicts[("gpu-1", "ecn", "mlx5_0 port 1", "mlx5_0", "1", "warning")] == 0
    assert verdicts[("gpu-1", "counters", "mlx5_0 port 1", "mlx5_0", "1", "warning")] == 1
    assert verdicts[("gpu-1", "gdr", "gpu-1", "", "", "error")] == 1
    assert verdicts[("gpu-1", "pcie", "gpu-1", "", "", "error")] == 0
    # the lossless checks name the netdev: placed on its port
    assert verdicts[("gpu-1", "lossless_agreement", "mlx5_1 port 1", "mlx5_1", "1", "error")] == 1
    assert verdicts[('gpu "2"\\', "link", "mlx5_1 port 1", "mlx5_1", "1", "error")] == 1
    assert not any(k[0] == 'gpu "2"\\' and k[3] == "mlx5_0" for k in verdicts)
    ports = list(R.PORT_CHECKS)
    host_checks = sorted(set(_health.CHECKS) - set(ports))
    assert len(verdicts) == 3 * len(ports) + 2 * len(host_checks) + 0   # every finding falls on a default row
    assert set(R.PORT_CHECKS) <= set(_health.CHECKS)


def test_check_verdicts_without_ports_are_per_host():
    rows = R.check_verdicts([_finding("h", "link", "mlx5_0 port 1")], ["h"], ["link", "gdr"])
    assert rows == {("h", "link", "h", "", "", "error"): 0, ("h", "link", "mlx5_0 port 1", "mlx5_0", "1", "error"): 1,
                    ("h", "gdr", "h", "", "", "error"): 0}
    # the severity of a healthy row: the given one, else _health.CHECKS', else error
    rows = R.check_verdicts([], ["h"], ["ecn", "x.y"], {"h": {"mlx5_0/1": {}}}, severities={"ecn": "error"})
    assert rows == {("h", "ecn", "mlx5_0 port 1", "mlx5_0", "1", "error"): 0, ("h", "x.y", "h", "", "", "error"): 0}


def test_no_port_rate_any_more(monkeypatch):
    for name, text in _writers(monkeypatch):
        assert "_port_rate" not in text, name


def test_timer_exports_raw_counters_and_its_last_success(monkeypatch):
    findings, text = _timer_text(monkeypatch, [_finding("gpu-1", "pfc_storm", "mlx5_0 port 1 (ens1f0np0)")])
    families = dict((f.name, f) for f in text_string_to_metric_families(text))
    # prometheus_client names counter families without _total
    pause = families["rdma_fabric_port_pause_frames"]
    assert pause.type == "counter"
    values = dict(((s.labels["device"], s.labels["port"], s.labels["priority"], s.labels["direction"]), s.value)
                  for s in pause.samples)
    assert values == {("mlx5_0", "1", "3", "rx"): 1500, ("mlx5_0", "1", "3", "tx"): 40}   # from the LAST sample
    assert all(s.name == "rdma_fabric_port_pause_frames_total" and s.labels["host"] == "gpu-1" for s in pause.samples)
    duration = dict((s.labels["direction"], s.value) for s in families["rdma_fabric_port_pause_duration_seconds"].samples)
    assert duration == {"rx": 2.5, "tx": 0.00125}         # microseconds as seconds
    assert [(s.labels["device"], s.value) for s in families["rdma_fabric_port_cnp_sent"].samples] == [("mlx5_0", 31)]
    assert [s.value for s in families["rdma_fabric_port_cnp_handled"].samples] == [17]
    assert [s.value for s in families["rdma_fabric_port_ecn_marked_packets"].samples] == [44]
    assert dict((s.labels["direction"], s.value) for s in families["rdma_fabric_port_discards"].samples) == \
        {"rx": 12, "tx": 1}
    storms = dict((s.labels["level"], s.value) for s in families["rdma_fabric_port_pause_storm_events"].samples)
    assert storms == {"warning": 2, "error": 0}            # the name with a trailing space too
    last = families["rdma_fabric_health_timer_last_success_timestamp_seconds"].samples
    assert [(s.labels, s.value) for s in last] == [({"host": "gpu-1"}, 1700000000.5)]
    verdicts = _verdicts(text)
    assert verdicts[("gpu-1", "pfc_storm", "mlx5_0 port 1", "mlx5_0", "1", "error")] == 1
    assert verdicts[("gpu-1", "pfc_storm", "mlx5_2 port 1", "mlx5_2", "1", "error")] == 0
    # the node's configured severity for a healthy row
    assert verdicts[("gpu-1", "ecn", "mlx5_0 port 1", "mlx5_0", "1", "error")] == 0
    assert text.endswith("\n") and findings[0]["host"] == "gpu-1"


def test_timer_skips_an_ethtool_that_failed(monkeypatch):
    raw = {"samples": [{"sysfs": {"mlx5_0/1": {"np_cnp_sent": 3}}, "ethtool": {"mlx5_0/1": {"rc": 94, "error": "x"}}}]}
    assert _health_timer.last_counters(raw) == {"mlx5_0/1": {"sysfs": {"np_cnp_sent": 3}, "ethtool": None}}
    text = R.prometheus_port_counters("h", _health_timer.last_counters(raw))
    assert [f.name for f in text_string_to_metric_families(text)] == ["rdma_fabric_port_cnp_sent"]
    assert R.prometheus_port_counters("h", {}) == ""


def test_a_failed_run_writes_no_success_time(monkeypatch, tmp_path):
    def boom(module, params):
        raise OSError("ibv_devinfo exploded")
    monkeypatch.setattr(_health_read, "observe", boom)
    textfile = tmp_path / "rdma_fabric_health.prom"
    config = tmp_path / "config.json"
    config.write_text('{"host": "gpu-1", "textfile": "%s"}' % textfile)
    assert _health_timer.main(["--config", str(config)]) == 1
    assert not textfile.exists()


def test_cells_and_the_skipped_table_are_one_line():
    assert R.cell("lldptool: no agent\nrc 1\r\n\n  retry later ") == "lldptool: no agent; rc 1; retry later"
    assert R.cell("  as is  ") == "  as is  "
    assert R.cell({"a": "b\nc"}) == '{"a":"b\\nc"}'
    skipped = [{"host": "gpu-1", "check": "lossless_agreement", "subject": "", "reason": "lldpad is not running\nstart it"},
               {"host": "gpu-1", "check": "gid_ipv4", "subject": "eth0\neth1", "reason": "unknown"}]
    lines = R.skipped_table(skipped).splitlines()
    assert len(lines) == 1 + 2 + len(skipped)
    assert "lldpad is not running; start it" in lines[-1] and "eth0; eth1" in lines[-2]
    table = R.table([dict(_finding("h", "gdr", "peer\nmemory"))], R.FINDING_TABLE, keys=R.FINDING_KEYS).splitlines()
    assert len(table) == 3 and "peer; memory" in table[2] and "y; z" in table[2]
