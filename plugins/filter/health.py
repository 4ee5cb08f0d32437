# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""rdma.fabric.health_findings: what keeps a GPU node out of the fabric or makes it sick,
judged from one rdma_facts gather (the health_gate) or from rdma_health's observations
(the health role). The judging is module_utils/_health.py, the one implementation;
documentation in health_findings.yml. health_node_files and health_bundle_files shape the
files the health role deploys (its periodic check) and a support bundle holds."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import math
import ast
import os
import re

from ansible.errors import AnsibleFilterError

from ansible_collections.rdma.fabric.plugins.module_utils import _health, _health_read
from ansible_collections.rdma.fabric.plugins.plugin_utils._filters import wrap

DEFAULT_CHECKS = _health.DEFAULT_CHECKS
NODE_PACKAGE = os.path.join("ansible_collections", "rdma", "fabric", "plugins", "module_utils")


def health_findings(facts, checks=None):
    """List of findings (empty = healthy)."""
    return _health.judge(facts, checks)


# systemd time span units (systemd.time(7)); a span is one or more NUMBER[UNIT]
_SPAN_UNIT = r"(?:us|usec|ms|msec|s|sec|second|seconds|m|min|minute|minutes|h|hr|hour|hours|d|day|days|w|week|weeks" \
             r"|M|month|months|y|year|years)?"
_SPAN = re.compile(r"\s*(?:[0-9]+(?:\.[0-9]+)?\s*%s\s*)+" % _SPAN_UNIT)


def _checks_errors(config, names):
    """The judge's own checks (``_health.merge_checks``) of each variable in ``names``
    (variable: check key, or None for a dict of checks), the message naming the variable."""
    errors = []
    for variable, key in names:
        value = config.get(variable)
        try:
            if key is None:
                _health.merge_checks(value, variable)
            else:
                _health.merge_checks({key: value})
        except _health.HealthError as exc:
            text = str(exc)
            errors.append(variable + text[len(key):] if key and text.startswith(key) else text)
    return errors


def _path_errors(config, names, absolute=True, optional=False):
    errors = []
    for variable in names:
        value = config.get(variable)
        if optional and value in (None, ""):
            continue
        if not isinstance(value, str) or not value or any(c in value for c in "\r\n\x00") \
                or (absolute and not value.startswith("/")):
            errors.append("%s=%r: expected %s" % (variable, value, "an absolute path" if absolute else "a path"))
    return errors


def health_config_errors(config):
    """Every problem of the health role's variables (variable name -> value), one message
    each naming the variable and the value: rdma_health's own checks (seconds, the checks the
    judge takes), the paths and the timer's period."""
    if not isinstance(config, dict):
        raise AnsibleFilterError("health_config_errors: expected a dict of role variables, got %s"
                                 % type(config).__name__)
    errors = []
    for variable in ("health_interval", "health_flap_window", "health_boot_grace"):
        value = config.get(variable)
        try:    # an extra var (-e) is text
            number = None if isinstance(value, bool) else float(value)
        except (TypeError, ValueError):
            number = None
        if number is None or math.isnan(number) or math.isinf(number) or number < 0:
            errors.append("%s=%r: a number of seconds >= 0" % (variable, value))
    errors += _path_errors(config, ("health_state_file", "health_timer_textfile"))
    errors += _path_errors(config, ("health_nccl_log",), optional=True)
    errors += _path_errors(config, ("health_report_dir",), absolute=False)
    errors += _path_errors(config, ("health_bundle_dir",), absolute=False, optional=True)
    every = config.get("health_timer_every")
    if not isinstance(every, (str, int)) or isinstance(every, bool) or not _SPAN.fullmatch(str(every)):
        errors.append("health_timer_every=%r: expected a systemd time span such as 1h, 30min or 1h 30min" % (every,))
    errors += _checks_errors(config, (
        ("health_thresholds", None), ("health_gpu_models", "gpu_models"), ("health_nic_models", "nic_models"),
        ("health_ignore_devices", "ignore_devices"), ("health_sm_priority", "sm_priority"),
        ("health_dmabuf_enable", "dmabuf_enable"), ("health_checks", None)))
    return errors


def health_gate_config_errors(config):
    """Every problem of the health_gate role's variables, each naming the variable and the
    value: the judge's own checks of the thresholds it takes."""
    if not isinstance(config, dict):
        raise AnsibleFilterError("health_gate_config_errors: expected a dict of role variables, got %s"
                                 % type(config).__name__)
    return _checks_errors(config, tuple(("health_gate_" + key, key) for key in (
        "expected_devices", "expected_gpus", "min_rate_gbps", "ignore_devices", "counter_limits")))


_PACKAGE = "ansible_collections.rdma.fabric.plugins.module_utils"


def _imported(root, rel):
    """The module_utils files (paths relative to ``root``) that the file ``rel`` imports."""
    with open(os.path.join(root, rel)) as handle:
        tree = ast.parse(handle.read(), rel)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and (node.module + ".").startswith(_PACKAGE + "."):
            base = node.module[len(_PACKAGE):].lstrip(".").replace(".", "/")
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.Import):
            base, names = "", [a.name[len(_PACKAGE) + 1:].replace(".", "/") for a in node.names
                               if a.name.startswith(_PACKAGE + ".")]
        else:
            continue
        for name in names:
            for candidate in (base + ".py", "%s/%s.py" % (base, name) if base else name + ".py"):
                if candidate != ".py" and os.path.isfile(os.path.join(root, candidate)):
                    found.append(candidate)
    return found


def module_utils_closure(entry):
    """``entry`` (a module_utils file) and every module_utils file it imports, transitively,
    with the ``__init__.py`` of each subpackage: what the node needs to run it, and no more."""
    root = os.path.dirname(os.path.abspath(entry))
    seen, todo = set(), [os.path.basename(entry)]
    while todo:
        rel = todo.pop()
        if rel in seen:
            continue
        seen.add(rel)
        todo.extend(_imported(root, rel))
    for rel in list(seen):
        parts = rel.split("/")[:-1]
        for depth in range(1, len(parts) + 1):
            seen.add("/".join(parts[:depth]) + "/__init__.py")
    return [os.path.join(root, rel) for rel in sorted(seen)], root


def health_node_files(paths, dest_dir):
    """node_files entries deploying module_utils files (controller paths) under ``dest_dir`` as
    the ansible_collections.rdma.fabric package layout: each file of ``paths`` and every
    module_utils file it imports, transitively (the node timer gets only what it runs)."""
    if not isinstance(paths, list) or not paths:
        raise AnsibleFilterError("health_node_files: expected the list of module_utils files, got %r" % (paths,))
    out, done = [], set()
    for path in paths:
        if not str(path).endswith(".py"):
            raise AnsibleFilterError("health_node_files: %r is not a Python file" % (path,))
        try:
            files, root = module_utils_closure(str(path))
            for name in files:
                rel = os.path.relpath(name, root)
                if rel in done:
                    continue
                done.add(rel)
                with open(name) as handle:
                    content = handle.read()
                out.append({"path": os.path.join(dest_dir, NODE_PACKAGE, rel), "content": content, "mode": "0644"})
        except (IOError, OSError, SyntaxError) as exc:
            raise AnsibleFilterError("health_node_files: %s: %s" % (path, exc))
    return out


def health_bundle_files(raw):
    """``[{name, content}]`` of a support bundle: the raw record as health-raw.json (what
    rdma_health judges offline) and every tool output in it as its own text file."""
    return _health_read.bundle_files(raw)


class FilterModule(object):
    def filters(self):
        return {"health_findings": wrap(health_findings, _health.HealthError),
                "health_config_errors": health_config_errors,
                "health_gate_config_errors": health_gate_config_errors,
                "health_node_files": health_node_files,
                "health_bundle_files": wrap(health_bundle_files, ValueError)}
