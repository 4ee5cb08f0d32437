# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""rdma.fabric.health_findings: what keeps a GPU node out of the fabric or makes it sick,
judged from one rdma_facts gather (the health_gate) or from rdma_health's observations
(the health role). The judging is module_utils/reports/_health.py, the one implementation;
documentation in health_findings.yml. health_bundle_files shapes the files a support bundle
holds; health_gate_config_errors checks the health_gate role's variables. The health role's
own decisions are its area object (module_utils/areas/health.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.rdma.fabric.plugins.module_utils.reports import _health
from ansible_collections.rdma.fabric.plugins.module_utils.facts import _health_read
from ansible_collections.rdma.fabric.plugins.module_utils.areas.health import _checks_errors
from ansible_collections.rdma.fabric.plugins.plugin_utils._filters import wrap

DEFAULT_CHECKS = _health.DEFAULT_CHECKS


def health_findings(facts, checks=None):
    """List of findings (empty = healthy)."""
    return _health.judge(facts, checks)


def health_gate_config_errors(config):
    """Every problem of the health_gate role's variables, each naming the variable and the
    value: the judge's own checks of the thresholds it takes."""
    if not isinstance(config, dict):
        raise AnsibleFilterError("health_gate_config_errors: expected a dict of role variables, got %s"
                                 % type(config).__name__)
    return _checks_errors(config, tuple(("health_gate_" + key, key) for key in (
        "expected_devices", "expected_gpus", "min_rate_gbps", "ignore_devices", "counter_limits")))


def health_bundle_files(raw):
    """``[{name, content}]`` of a support bundle: the raw record as health-raw.json (what
    rdma_health judges offline) and every tool output in it as its own text file."""
    return _health_read.bundle_files(raw)


class FilterModule(object):
    def filters(self):
        return {"health_findings": wrap(health_findings, _health.HealthError),
                "health_gate_config_errors": health_gate_config_errors,
                "health_bundle_files": wrap(health_bundle_files, ValueError)}
