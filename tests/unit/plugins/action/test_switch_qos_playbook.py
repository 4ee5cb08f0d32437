# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""playbooks/switch_qos.yml in render mode, for the example leaves (inventories/switches: one per
switch OS) and the lab's RoCE hosts (inventories/lab), with no lab and no switch: all four
renderings are written, and saved host views (a host whose leaf port advertises PFC on 4) and a
running SONiC CONFIG_DB that keeps the default AZURE map become records naming both ends."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import re
import subprocess
import sys

import pytest
import yaml

from ansible_collections.rdma.fabric.plugins.module_utils.facts import _health_read
from ansible_collections.rdma.fabric.plugins.module_utils.switch import _render
# the health check's captured lldptool text
from ansible_collections.rdma.fabric.tests.unit.plugins.module_utils.reports import test_health_lossless as L

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))

PLAYBOOK = os.path.join(REPO, "playbooks", "switch_qos.yml")
ANSIBLE_PLAYBOOK = os.path.join(os.path.dirname(sys.executable), "ansible-playbook")
# the collections the lab's hosts and the leaves connect with, and the Dell modules the renderer
# runs: PyPI's ansible package has them; the lowest-core run has ansible-core alone
COLLECTIONS = ("containers.podman", "ansible.netcommon", "dellemc.enterprise_sonic")
MISSING = [c for c in COLLECTIONS if not any(os.path.isdir(os.path.join(p, "ansible_collections", *c.split(".")))
                                             for p in sys.path)]
RUNNABLE = pytest.mark.skipif(not os.path.exists(ANSIBLE_PLAYBOOK) or bool(MISSING),
                              reason="ansible-playbook or the collections %s not installed next to this Python"
                              % ", ".join(MISSING or COLLECTIONS))


def saved_views(tmp_path):
    """An inventory file of saved host facts: lab-hgx-01's view of leaf-sonic-01 Ethernet0 (PFC on
    4 advertised) and of leaf-eos-01 Ethernet1/1 (agreeing), and leaf-sonic-01's running CONFIG_DB."""
    agree = _health_read.derive_lossless(L.raw_lldp(), [])["eth0"]
    four = _health_read.derive_lossless(L.raw_lldp(peer=L.IEEE_SWITCH.replace("PFC enabled: 3 ", "PFC enabled: 4 ")),
                                        [])["eth0"]
    stock = {"DSCP_TO_TC_MAP": {"AZURE": dict((str(k), str(v)) for k, v in _render.SONIC_AZURE_DSCP_TO_TC.items())},
             "PORT_QOS_MAP": dict((p, {"dscp_to_tc_map": "AZURE", "pfc_enable": "3,4"})
                                  for p in ("Ethernet0", "Ethernet8", "Ethernet16", "Ethernet24"))}
    data = {"all": {"hosts": {
        "lab-hgx-01": {"switch_qos_lossless": {"enp79s0np0": four, "enp64s0np0": agree},
                       "switch_qos_rates": {"enp79s0np0": {"cnp_sent": 5000.0, "rx_pause": 0, "ecn_marked": 9000.0}}},
        "leaf-sonic-01": {"switch_qos_running_config": stock}}}}
    path = tmp_path / "saved.yml"
    path.write_text(yaml.safe_dump(json.loads(json.dumps(data))))
    return str(path)


def run(tmp_path, *extra):
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".cache", "collections"),
               ANSIBLE_HOME=str(tmp_path / "ansible-home"), ANSIBLE_FORCE_COLOR="false",
               ANSIBLE_NOCOLOR="1", ANSIBLE_RETRY_FILES_ENABLED="false", PYTHONWARNINGS="ignore")
    cmd = [ANSIBLE_PLAYBOOK, "-i", os.path.join(REPO, "inventories", "lab"), "-i",
           os.path.join(REPO, "inventories", "switches")] + list(extra) + [
        PLAYBOOK, "-e", "switch_qos_report_dir=%s" % (tmp_path / "out")]
    return subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                          timeout=120, check=False)


@RUNNABLE
def test_render_mode_writes_all_four_and_names_both_ends(tmp_path):
    proc = run(tmp_path, "-i", saved_views(tmp_path))
    assert proc.returncode == 0, proc.stdout
    for leaf in ("leaf-dell-01", "leaf-eos-01", "leaf-sonic-01", "leaf-cumulus-01"):
        assert re.search(r"^%s\s+:\s+ok=\d+\s+changed=0\s+unreachable=0\s+failed=0" % leaf, proc.stdout, re.M), proc.stdout
    # no lab host was contacted: their one read is skipped without switch_qos_check_hosts
    assert re.search(r"^lab-hgx-01\s+:\s+ok=0\s+changed=0\s+unreachable=0\s+failed=0\s+skipped=3", proc.stdout, re.M)
    out = tmp_path / "out"
    written = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())
    assert written == ["cumulus/leaf-cumulus-01.nvue", "dell_sonic/leaf-dell-01.yml", "eos/leaf-eos-01.cfg",
                       "eos/leaf-eos-01.yml", "records/leaf-cumulus-01.json", "records/leaf-dell-01.json",
                       "records/leaf-eos-01.json", "records/leaf-sonic-01.json", "sonic/leaf-sonic-01.json"]
    cli = (out / "eos" / "leaf-eos-01.cfg").read_text()
    assert "priority-flow-control priority 3 no-drop" in cli and "qos map dscp 26 to traffic-class 3" in cli
    assert "random-detect ecn minimum-threshold 200 kbytes maximum-threshold 2000 kbytes" in cli   # lab-small-01, 100G
    assert "random-detect ecn minimum-threshold 800 kbytes maximum-threshold 8000 kbytes" in cli   # the HGX, 400G
    db = json.loads((out / "sonic" / "leaf-sonic-01.json").read_text())
    assert _render.check_sonic(db) == [] and db["PORT_QOS_MAP"]["Ethernet0"]["dscp_to_tc_map"] == "RDMA_FABRIC"
    dell = yaml.safe_load((out / "dell_sonic" / "leaf-dell-01.yml").read_text())
    assert [s["module"].rsplit(".", 1)[1] for s in dell][-1] == "sonic_dcbx"
    nvue = (out / "cumulus" / "leaf-cumulus-01.nvue").read_text().splitlines()
    assert "nv set qos pfc default-global switch-priority 3" in nvue
    # the records: the drift check's shape, both ends named
    sonic = json.loads((out / "records" / "leaf-sonic-01.json").read_text())
    by_key = dict(((r["object"], r["setting"]), r) for r in sonic["records"])
    pfc = by_key[("Ethernet0", "lldp.pfc")]
    assert set(pfc) == {"host", "area", "object", "setting", "expected", "actual"}
    assert pfc["host"] == "leaf-sonic-01" and pfc["expected"] == "3"
    assert "advertises PFC on 4" in pfc["actual"] and "host lab-hgx-01 enp79s0np0" in pfc["actual"]
    advice = by_key[("Ethernet0", "ecn.min_kb")]      # 800 KB at 400 Gb/s, under the BDP, with CNPs surging
    assert "800 KB: too low for the link speed" in advice["actual"] and "5000 CNPs/s" in advice["actual"]
    azure = by_key[("Ethernet24", "dscp_to_tc_map.26")]
    assert "DSCP_TO_TC_MAP|AZURE sends DSCP 26 to TC 1 (lossy: no PFC)" in azure["actual"]
    assert "host lab-small-01 ens1f1np1" in azure["actual"]
    eos = json.loads((out / "records" / "leaf-eos-01.json").read_text())
    assert eos["records"] == [] and eos["meta"]["unchecked_ports"] == ["Ethernet2/1", "Ethernet3/1", "Ethernet9/1"]


@RUNNABLE
def test_bad_input_fails_the_leaf_with_the_variable_and_value(tmp_path):
    proc = run(tmp_path, "--limit", "leaf-sonic-01,roce_nodes", "-e",
               json.dumps({"switch_qos_ecn_thresholds": {"400": {"min_kb": 2000, "max_kb": 200},
                                                         "100": {"min_kb": 200, "max_kb": 2000}}}))
    assert proc.returncode != 0
    assert ("switch_qos_ecn_thresholds.400.max_kb=200 is below switch_qos_ecn_thresholds.400.min_kb=2000"
            in proc.stdout), proc.stdout
    assert not (tmp_path / "out").exists()


def test_two_leaves_creating_the_same_report_directory_at_once_both_write(tmp_path, monkeypatch):
    """The leaves of a run write into one report_dir at once, one worker each: the directory that
    did not exist when one looked may exist when it creates it ([Errno 17] File exists, seen in a
    unit run of the playbook above)."""
    from ansible_collections.rdma.fabric.plugins.action import switch_qos_plan
    real_makedirs = os.makedirs

    def racing_makedirs(name, *args, **kwargs):
        os.mkdir(name)   # the other worker, between the look and the makedirs
        return real_makedirs(name, *args, **kwargs)
    monkeypatch.setattr(switch_qos_plan.os, "makedirs", racing_makedirs)
    switch_qos_plan.write(str(tmp_path), [{"name": "records/leaf-1.json", "content": "{}"}], 0o640)
    assert (tmp_path / "records" / "leaf-1.json").read_text() == "{}"
