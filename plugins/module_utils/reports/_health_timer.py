# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The periodic fabric health check on a node without Ansible (the health role's optional
systemd timer): the collection's own module_utils, deployed to the node, run by a three-line
script. Reads with ``_health_read.read_host``, judges with ``_health.judge``, keeps the flap
state and writes the Prometheus textfile with ``_report.prometheus_health``: the same code
and metrics as ``rdma_health`` and ``health_report``, plus what only the node has: the raw port
counters of the last sample (``_report.prometheus_port_counters``: Prometheus computes the
rates) and the time of the last successful run.

Config (JSON): {"host", "interval", "state_file", "flap_window", "boot_grace", "sm", "gdr",
"lossless", "nccl_log", "checks", "textfile"}. Standard library only.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import socket
import sys
import time

from ansible_collections.rdma.fabric.plugins.module_utils.parsers import _ethtool_stats
from ansible_collections.rdma.fabric.plugins.module_utils.common import _fileio
# the readers' module on a node without Ansible (re-exported: the drift timer and the tests use it)
from ansible_collections.rdma.fabric.plugins.module_utils.common._node_module import SBIN, NodeModule  # noqa: F401 pylint: disable=unused-import
from ansible_collections.rdma.fabric.plugins.module_utils.reports import _health, _report
from ansible_collections.rdma.fabric.plugins.module_utils.facts import _health_read


def last_counters(raw):
    """{"DEV/N": {"sysfs": {name: int}, "ethtool": {name: int} or None}} of the last counter
    sample; an ``ethtool -S`` that failed or does not parse is None (``_health_read.derive``
    already reports it as a ``facts`` finding)."""
    samples = raw.get("samples") or []
    last = samples[-1] if samples else {}
    ports = {}
    for key, sysfs in sorted((last.get("sysfs") or {}).items()):
        ports[key] = {"sysfs": sysfs or {}, "ethtool": None}
    for key, text in sorted((last.get("ethtool") or {}).items()):
        counters = None
        if isinstance(text, str):
            try:
                counters = _ethtool_stats.parse(text, "ethtool -S output of %s" % key)
            except ValueError:
                counters = None
        ports.setdefault(key, {"sysfs": {}})["ethtool"] = counters
    return ports


def port_netdevs(facts):
    """{netdev: "DEV/N"} of the node's ports (the lossless checks name the netdev)."""
    out = {}
    for name, device in sorted(((facts or {}).get("devices") or {}).items()):
        for port in device.get("ports") or []:
            if port.get("netdev"):
                out[port["netdev"]] = "%s/%s" % (name, port.get("port"))
    return out


def _textfile_error(field, value):
    """node_exporter's textfile collector reads only ``*.prom`` files of its directory."""
    name = os.path.basename(value) if isinstance(value, str) else ""
    if not isinstance(value, str) or not os.path.isabs(value) or not name.endswith(".prom") \
            or name.startswith(".") or name == ".prom" or any(c in value for c in "\r\n\x00"):
        return "%s=%r: expected an absolute path of a *.prom file (node_exporter reads no other name)" % (field, value)
    return None


def config_errors(config, textfiles=True):
    """What the timer refuses in its config (the health role's checks, again on the node: a
    config edited by hand): a sampling interval that is no number > 0 (every rate unjudged),
    with ``textfiles`` a textfile node_exporter never reads (``main`` writes them)."""
    if not isinstance(config, dict):
        return ["config: expected a JSON object, got %s" % type(config).__name__]
    errors = []
    interval = config.get("interval", 5)
    if isinstance(interval, bool) or not isinstance(interval, (int, float)) or not interval > 0 \
            or interval == float("inf"):
        errors.append("interval=%r: the seconds between the two counter samples, a number > 0" % (interval,))
    if not textfiles:
        return errors
    error = _textfile_error("textfile", config.get("textfile"))
    if error:
        errors.append(error)
    drift = config.get("drift")
    if isinstance(drift, dict):
        error = _textfile_error("drift.textfile", drift.get("textfile"))
        if error:
            errors.append(error)
    return errors


def run(config, module=None, now=None):
    """One check: returns (findings, textfile text). The text holds the findings and each
    check's verdict (``_report.prometheus_health``), the raw port counters of the last sample
    and, last, the time of this successful run (a run that raises writes nothing: the stale
    timestamp is what alerts)."""
    errors = config_errors(config, textfiles=False)
    if errors:
        raise ValueError("; ".join(errors))
    module = module or NodeModule()
    host = config.get("host") or socket.gethostname()
    checks = config.get("checks") or {}
    merged = _health.merge_checks(checks)
    params = {"interval": config.get("interval", 5), "state_file": config.get("state_file"), "nv": merged["nv_pending"],
              "sm": config.get("sm", True), "gdr": config.get("gdr", True),
              "lossless": config.get("lossless", True), "nccl_log": config.get("nccl_log")}
    params.update(flap_window=config.get("flap_window", 21600), boot_grace=config.get("boot_grace", 600))
    raw, observations = _health_read.observe(module, params)
    findings = _health.judge(observations, checks)
    for finding in findings:
        finding["host"] = host
    now = time.time() if now is None else now
    severities = dict((name, (merged["severity"] or {}).get(name, spec[0])) for name, spec in _health.CHECKS.items())
    text = _report.prometheus_health(_report.sort_findings(findings), [host], [], now, {"source": "timer"},
                                     sorted(_health.CHECKS), {host: observations["ports"]}, severities=severities,
                                     netdevs={host: port_netdevs(observations.get("facts"))})
    text += _report.prometheus_port_counters(host, last_counters(raw))
    name = "rdma_fabric_health_timer_last_success_timestamp_seconds"
    text += "\n".join(["# HELP %s When the node's health timer last ran to the end (Unix time)." % name,
                       "# TYPE %s gauge" % name, '%s{host="%s"} %.3f' % (name, _report._label(host), now)]) + "\n"
    if config.get("period_seconds"):
        name = "rdma_fabric_health_timer_period_seconds"
        text += "\n".join(["# HELP %s The node's health timer period (health_timer_every) in seconds." % name,
                           "# TYPE %s gauge" % name,
                           '%s{host="%s"} %s' % (name, _report._label(host), repr(float(config["period_seconds"])))]) + "\n"
    return findings, text


def main(argv):
    if len(argv) != 2 or argv[0] != "--config":
        sys.stderr.write("usage: rdma-fabric-health --config FILE\n")
        return 2
    config = None
    try:
        config = json.loads(_fileio.read_text(argv[1], 4 * _fileio.MiB, what="config"))
        errors = config_errors(config)
        if any(e.startswith("drift.") for e in errors):
            config = dict(config, drift=None)   # the drift step's textfile is refused: it does not run
        if errors:
            raise ValueError("%s: %s" % (argv[1], "; ".join(errors)))
        findings, text = run(config)
        _fileio.write_textfile(config.get("textfile"), text)
    except (IOError, OSError, ValueError) as exc:
        sys.stderr.write("rdma-fabric-health: %s\n" % exc)
        return 1
    finally:
        # the node's drift check (_drift_timer: its own textfile), after the health check;
        # a failure of either does not stop the other
        if isinstance(config, dict) and isinstance(config.get("drift"), dict):
            from ansible_collections.rdma.fabric.plugins.module_utils.drift import _drift_timer
            _drift_timer.main_block(config["drift"], host=config.get("host"))
    for finding in findings:
        sys.stderr.write("%s %s %s: expected %s, actual %s\n" % tuple(
            finding[k] for k in ("severity", "check", "subject", "expected", "actual")))
    return 0
