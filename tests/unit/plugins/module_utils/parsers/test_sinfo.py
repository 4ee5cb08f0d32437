# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""parsers/_sinfo: sinfo --json of Slurm 21.08/22.05 (node table) and 23.02+ (sinfo records), on the
real outputs of tests/unit/fixtures/sinfo/ (each cites its source), plus refusals and properties."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import glob
import json
import os

import pytest
import yaml

from ansible_collections.rdma.fabric.plugins.module_utils.parsers import _sinfo

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "..", "fixtures", "sinfo")


def fixture(name):
    with open(os.path.join(FIXTURES, name)) as handle:
        return yaml.safe_load(handle)


@pytest.mark.parametrize("path", sorted(glob.glob(os.path.join(FIXTURES, "*.yml"))))
def test_every_fixture_cites_its_source_and_parses(path):
    doc = yaml.safe_load(open(path))
    assert "https://" in doc["source"] or doc.get("captured") == "lab", path
    parsed = _sinfo.parse(doc["stdout"])
    raw = json.loads(doc["stdout"])
    # every node named in the output is in the result, once
    named = set()
    for entry in raw.get("nodes") or []:
        named.add(entry["name"])
    for entry in raw.get("sinfo") or []:
        for name in entry["nodes"]["nodes"]:
            named.update(_sinfo._expand(name))
    assert set(parsed["nodes"]) == named
    for node in parsed["nodes"].values():
        assert node["state"] in [s.lower() for s in _sinfo.BASE_STATES]
        assert all(f == f.upper() and f.lower() not in ("idle", "allocated", "mixed", "down") for f in node["flags"])


def test_2108_node_table():
    parsed = _sinfo.parse(fixture("slurm-21.08.5-nodes.yml")["stdout"])
    assert parsed["shape"] == "nodes" and parsed["version"] == "21.08.5"
    nodes = parsed["nodes"]
    assert nodes["cs2.example.company.com"]["state"] == "mixed"
    assert nodes["cs5.example.company.com"]["state"] == "down"
    assert nodes["cs3.example.company.com"]["flags"] == [] and nodes["cs3.example.company.com"]["reason"] == ""
    assert nodes["cs3.example.company.com"]["reason_time"] is None      # reason_changed_at 0: none
    assert nodes["cs2.example.company.com"]["partitions"] == ["hw"]
    assert _sinfo.jobs_running(nodes["cs4.example.company.com"])         # allocated
    assert _sinfo.display_state(nodes["cs3.example.company.com"]) == "idle"


def test_2205_lab_captures_every_state():
    """Debian 12's Slurm 22.05.8, captured on the lab: idle, an administrator's drain, our drain with a
    job running (draining), and slurmd stopped on a drained node (DOWN+DRAIN, our reason kept)."""
    def one(name):
        parsed = _sinfo.parse(fixture("slurm-22.05.8-lab-%s.yml" % name)["stdout"])
        assert parsed["version"] == "22.05.8" and parsed["shape"] == "nodes"
        return parsed["nodes"]["st-n1"]
    idle, admin, draining, down = one("idle"), one("drained"), one("draining"), one("downdrain")
    assert (idle["state"], idle["flags"], idle["reason"], idle["reason_time"]) == ("idle", [], "", None)
    assert _sinfo.display_state(admin) == "drained" and admin["reason"] == "hw ticket 4411"
    assert admin["reason_user"] == "root" and admin["reason_time"] > 1700000000
    assert draining["state"] == "allocated" and _sinfo.display_state(draining) == "draining"
    assert _sinfo.jobs_running(draining) and not _sinfo.jobs_running(admin)
    assert down["flags"] == ["DRAIN", "NOT_RESPONDING"] and _sinfo.display_state(down) == "down+drain*"
    assert down["reason"].startswith("rdma.fabric: maintenance")


def test_2302_draining_with_an_administrators_reason():
    parsed = _sinfo.parse(fixture("slurm-23.02.4-sinfo-draining.yml")["stdout"])
    assert parsed["shape"] == "sinfo" and parsed["version"] == "23.02.4"
    node = parsed["nodes"]["cs62"]
    assert node["state"] == "allocated" and node["flags"] == ["DRAIN"]
    assert node["reason"] == "IT-4461" and node["reason_user"] == "root" and node["reason_time"] == 1705613872
    assert _sinfo.display_state(node) == "draining"


def test_2302_node_in_two_partitions_is_one_node():
    parsed = _sinfo.parse(fixture("slurm-23.02.5-sinfo.yml")["stdout"])
    assert list(parsed["nodes"]) == ["localhost"]
    assert parsed["nodes"]["localhost"]["state"] == "allocated"
    raw = json.loads(fixture("slurm-23.02.5-sinfo.yml")["stdout"])
    twice = dict(raw, sinfo=raw["sinfo"] + [dict(raw["sinfo"][0], partition={"name": "other"})])
    assert _sinfo.parse(json.dumps(twice))["nodes"]["localhost"]["partitions"] == ["debug", "other"]


def test_2311_shape_reason_time_object_and_hostlist():
    nodes = _sinfo.parse(fixture("slurm-24.11-shape-constructed.yml")["stdout"])["nodes"]
    assert nodes["gpu-01"]["reason_time"] == 1765000000 and _sinfo.display_state(nodes["gpu-01"]) == "drained"
    assert _sinfo.display_state(nodes["gpu-02"]) == "down+drain*"
    assert _sinfo.display_state(nodes["gpu-03"]) == "draining"
    assert nodes["gpu-04"]["reason_time"] is None and nodes["gpu-05"]["state"] == "idle"


def test_2205_state_flags_drain_and_not_responding():
    # ubccr/slurm-exporter#11 (https://github.com/ubccr/slurm-exporter/issues/11): a drained node is
    # "state": "idle" with "state_flags": ["DRAIN"] in this shape
    text = json.dumps({"meta": {"Slurm": {"release": "22.05.8"}}, "errors": [], "nodes": [
        {"name": "n1", "state": "idle", "state_flags": ["DRAIN"], "reason": "x", "reason_changed_at": 5,
         "reason_set_by_user": "root"},
        {"name": "n2", "state": "down", "state_flags": ["DRAIN", "NOT_RESPONDING"], "reason": "Not responding",
         "reason_changed_at": 6, "reason_set_by_user": "slurm"},
        {"name": "n3", "state": "mixed", "state_flags": ["DRAIN"], "reason": "y", "reason_changed_at": 7,
         "reason_set_by_user": None},
        {"name": "n4", "state": "idle", "state_flags": ["COMPLETING", "DRAIN"], "reason": "z",
         "reason_changed_at": 8, "reason_set_by_user": None}]})
    nodes = _sinfo.parse(text)["nodes"]
    assert [_sinfo.display_state(nodes[n]) for n in ("n1", "n2", "n3", "n4")] == [
        "drained", "down+drain*", "draining", "draining"]


@pytest.mark.parametrize("text", [
    "", "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\ndebug* up infinite 1 idle n1\n",
    "sinfo: error: Unable to contact slurm controller (connect failure)\n", "[]", '{"meta": {}}',
    '{"nodes": [{"state": "idle"}]}', '{"sinfo": [{"node": {}, "nodes": {"nodes": ["a"]}}]}'])
def test_refuses_what_is_not_sinfo_json(text):
    with pytest.raises(ValueError):
        _sinfo.parse(text)


def test_errors_list_is_an_error_with_its_words():
    text = json.dumps({"errors": [{"error": "Unable to contact slurm controller", "error_number": 1}],
                       "sinfo": []})
    with pytest.raises(ValueError, match="Unable to contact slurm controller"):
        _sinfo.parse(text)


def test_hostlist_expansion():
    assert _sinfo._expand("gpu[01-03,7]") == ["gpu01", "gpu02", "gpu03", "gpu7"]
    assert _sinfo._expand("plain") == ["plain"]


try:
    from hypothesis import given, strategies as st
except ImportError:   # pragma: no cover
    given = None

if given is not None:
    STATES = st.sampled_from(["IDLE", "ALLOCATED", "MIXED", "DOWN", "FUTURE", "UNKNOWN", "ERROR"])
    FLAGS = st.lists(st.sampled_from(["DRAIN", "NOT_RESPONDING", "COMPLETING", "MAINTENANCE", "RESERVED",
                                      "REBOOT_REQUESTED", "POWERED_DOWN", "CLOUD", "FAIL"]), unique=True)

    @given(base=STATES, flags=FLAGS, reason=st.text(max_size=40), old=st.booleans())
    def test_property_both_shapes_read_the_same(base, flags, reason, old):
        """The same node printed by 22.05 and by 23.02+ reads the same."""
        if old:
            text = json.dumps({"errors": [], "nodes": [{"name": "n", "state": base.lower(), "state_flags": flags,
                                                        "reason": reason, "reason_changed_at": 9}]})
        else:
            text = json.dumps({"errors": [], "sinfo": [{"node": {"state": [base] + flags}, "nodes": {"nodes": ["n"]},
                                                        "reason": {"description": reason, "time": 9, "user": "u"}}]})
        node = _sinfo.parse(text)["nodes"]["n"]
        assert node["state"] == base.lower() and node["flags"] == sorted(flags)
        assert node["reason"] == reason and node["reason_time"] == 9
        shown = _sinfo.display_state(node)
        assert ("drain" in shown) == ("DRAIN" in flags)
        assert shown.endswith("*") == ("NOT_RESPONDING" in flags)
