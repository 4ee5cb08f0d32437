# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""rdma.fabric.health_findings: what keeps a GPU node out of the fabric or makes it sick,
judged from one rdma_facts gather (the health_gate) or from rdma_health's observations
(the health role). The judging is module_utils/_health.py, the one implementation;
documentation in health_findings.yml."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.rdma.fabric.plugins.module_utils import _health
from ansible_collections.rdma.fabric.plugins.plugin_utils._filters import wrap

DEFAULT_CHECKS = _health.DEFAULT_CHECKS


def health_findings(facts, checks=None):
    """List of findings (empty = healthy)."""
    return _health.judge(facts, checks)


class FilterModule(object):
    def filters(self):
        return {"health_findings": wrap(health_findings, _health.HealthError)}
