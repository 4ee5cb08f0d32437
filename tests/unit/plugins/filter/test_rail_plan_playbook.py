# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""playbooks/rails_plan.yml end to end on localhost against tests/unit/fixtures/rails/hosts.yml:
the CSV, the allocation and the SVG it writes, and a second run that changes nothing."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import csv
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest
import yaml

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
PLAYBOOK = os.path.join(REPO, "playbooks", "rails_plan.yml")
INVENTORY = os.path.join(REPO, "tests", "unit", "fixtures", "rails", "hosts.yml")
ANSIBLE_PLAYBOOK = os.path.join(os.path.dirname(sys.executable), "ansible-playbook")


def run(tmp_path, *extra):
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".cache", "collections"),
               ANSIBLE_HOME=str(tmp_path / "ansible-home"), ANSIBLE_FORCE_COLOR="false",
               ANSIBLE_NOCOLOR="1", ANSIBLE_RETRY_FILES_ENABLED="false")
    cmd = [ANSIBLE_PLAYBOOK, "-i", INVENTORY, PLAYBOOK, "-e", "rails_plan_allocation_file=%s" % (tmp_path / "alloc.yml"),
           "-e", "rails_plan_dir=%s" % (tmp_path / "out")] + list(extra)
    proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                          timeout=120, check=False)
    assert proc.returncode == 0, proc.stdout
    recap = re.search(r"^localhost\s+:\s+ok=\d+\s+changed=(\d+)", proc.stdout, re.M)
    assert recap, proc.stdout
    return int(recap.group(1)), proc.stdout


@pytest.mark.skipif(not os.path.exists(ANSIBLE_PLAYBOOK) or shutil.which("python3") is None,
                    reason="ansible-playbook not installed next to this Python")
def test_rails_plan_playbook_writes_and_is_stable(tmp_path):
    changed, out = run(tmp_path)
    assert changed == 3  # allocation, plan directory, CSV + SVG (one loop task)
    assert "gpu-02  1     ens2np0  mlx5_1       10.10.1.3  /31     10.10.1.2     rail1-leaf0  2" in out
    with open(str(tmp_path / "out" / "rails.csv")) as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 12
    assert rows[-1] == {"node": "gpu-03", "rail": "3", "netdev": "ens4np0", "device": "mlx5_3", "address": "10.10.3.5",
                        "prefix": "31", "peer": "10.10.3.4", "leaf": "rail3-leaf0", "leaf_port": "3"}
    with open(str(tmp_path / "alloc.yml")) as handle:
        text = handle.read()
    allocation = yaml.safe_load(text)
    assert allocation["scheme"] == "p2p31" and sorted(allocation["nodes"]) == ["gpu-01", "gpu-02", "gpu-03"]
    assert allocation["nodes"]["gpu-03"] == {"slot": 2, "rails": ["10.10.%d.5/31" % rail for rail in range(4)]}
    with open(str(tmp_path / "out" / "rails.svg")) as handle:
        root = ET.fromstring(handle.read().split("\n", 1)[1])
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert len(list(root.iter("{http://www.w3.org/2000/svg}g"))) == 3

    changed, out = run(tmp_path)
    assert changed == 0, out
    with open(str(tmp_path / "alloc.yml")) as handle:
        assert handle.read() == text
