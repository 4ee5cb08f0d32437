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

import os

from ansible.errors import AnsibleFilterError

from ansible_collections.rdma.fabric.plugins.module_utils import _health, _health_read
from ansible_collections.rdma.fabric.plugins.plugin_utils._filters import wrap

DEFAULT_CHECKS = _health.DEFAULT_CHECKS
NODE_PACKAGE = os.path.join("ansible_collections", "rdma", "fabric", "plugins", "module_utils")


def health_findings(facts, checks=None):
    """List of findings (empty = healthy)."""
    return _health.judge(facts, checks)


def health_node_files(paths, dest_dir):
    """node_files entries deploying the collection's module_utils files (controller paths)
    under ``dest_dir`` as the ansible_collections.rdma.fabric package layout."""
    if not isinstance(paths, list) or not paths:
        raise AnsibleFilterError("health_node_files: expected the list of module_utils files, got %r" % (paths,))
    out = []
    for path in paths:
        name = os.path.basename(str(path))
        if not name.endswith(".py"):
            raise AnsibleFilterError("health_node_files: %r is not a Python file" % (path,))
        try:
            with open(path) as handle:
                content = handle.read()
        except (IOError, OSError) as exc:
            raise AnsibleFilterError("health_node_files: %s: %s" % (path, exc))
        out.append({"path": os.path.join(dest_dir, NODE_PACKAGE, name), "content": content, "mode": "0644"})
    return out


def health_bundle_files(raw):
    """``[{name, content}]`` of a support bundle: the raw record as health-raw.json (what
    rdma_health judges offline) and every tool output in it as its own text file."""
    return _health_read.bundle_files(raw)


class FilterModule(object):
    def filters(self):
        return {"health_findings": wrap(health_findings, _health.HealthError),
                "health_node_files": health_node_files,
                "health_bundle_files": wrap(health_bundle_files, ValueError)}
