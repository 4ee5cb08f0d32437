# -*- coding: utf-8 -*-
"""ib_fabric's cabling check by GUID (issue 40, medium 5): any root on the fabric can give its HCA
the description of another; a second HCA named like the planned one must never hide the real one's
miscabling. The plan can name the HCA port (guid) and the leaf (leaf_guid) by GUID; a plan by
description gets a finding when the description is on two GUIDs."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.parsers import _iblinkinfo
from ansible_collections.rdma.fabric.plugins.module_utils.reports import _ib_fabric

LINK = "( 4X        53.125 Gbps Active/  LinkUp)"
LEAF0, LEAF1 = 0x0000000000200001, 0x0000000000200002
REAL, IMPOSTOR = 0x0000000000100001, 0x0000000000100099


def _line(guid, desc, lid, port, rguid, rlid, rport, rdesc):
    return "0x%016x \"%30s\" %6d %4d[%2s] ==%s==>  0x%016x %6d %4d[%2s] \"%s\" (%s %s)\n" % (
        guid, desc, lid, port, "", LINK, rguid, rlid, rport, "", rdesc, "", "")


def _fabric(leaf1_desc="leaf-r1"):
    """The real node1 mlx5_0 is miscabled on leaf-r1 port 1; an impostor with its description sits
    on leaf-r0 port 5, where the plan wants node1 mlx5_0 (listed first, as a sorted fabric may)."""
    return "".join([
        _line(IMPOSTOR, "node1 mlx5_0", 9, 1, LEAF0, 2, 5, "leaf-r0"),
        _line(REAL, "node1 mlx5_0", 5, 1, LEAF1, 3, 1, leaf1_desc),
        _line(LEAF0, "leaf-r0", 2, 5, IMPOSTOR, 9, 1, "node1 mlx5_0"),
        _line(LEAF0, "leaf-r0", 2, 6, 0x0000000000100002, 6, 1, "node2 mlx5_0"),
        _line(LEAF1, leaf1_desc, 3, 1, REAL, 5, 1, "node1 mlx5_0"),
        _line(LEAF1, leaf1_desc, 3, 2, 0x0000000000100003, 7, 1, "node3 mlx5_0"),
        _line(0x0000000000100002, "node2 mlx5_0", 6, 1, LEAF0, 2, 6, "leaf-r0"),
        _line(0x0000000000100003, "node3 mlx5_0", 7, 1, LEAF1, 3, 2, leaf1_desc),
    ])


def _check(plan, text=None):
    ports = _iblinkinfo.parse(text or _fabric())["ports"]
    return _ib_fabric.cabling(ports, _ib_fabric.check_cabling(plan), "sm-01")


def test_a_description_on_two_guids_is_a_finding_never_resolved_silently():
    status, records = _check([{"hca": "node1 mlx5_0", "leaf": "leaf-r0", "rail": 0}])
    assert len(records) == 1 and not status[0]["ok"]
    record = records[0]
    assert record["check"] == "ib.cabling" and record["severity"] == "error"
    assert record["actual"] == "ambiguous: node1 mlx5_0 port 1 is on 2 GUIDs (0x0000000000100001, 0x0000000000100099)"
    assert "cabling[].guid" in record["diagnosis"]


def test_by_guid_the_real_hcas_miscabling_is_found():
    status, records = _check([{"hca": "node1 mlx5_0", "guid": "0x0000000000100001", "leaf": "leaf-r0", "rail": 0}])
    assert [(r["actual"], r["severity"]) for r in records] == [("leaf-r1 port 1", "error")]
    assert status[0]["switch"] == "leaf-r1" and not status[0]["ok"]
    # the impostor's GUID is where the plan says node1 should be, and only it: ok by GUID
    status, records = _check([{"hca": "imp", "guid": "0x0000000000100099", "leaf": "leaf-r0", "leaf_port": 5}])
    assert records == [] and status[0]["ok"]
    # an HCA named by its GUID in hca (as before) is matched by GUID too
    status, records = _check([{"hca": "0x0000000000100001", "leaf": "leaf-r1"}])
    assert records == [] and status[0]["ok"]


def test_the_leaf_by_guid_and_a_leaf_description_on_two_switches():
    # a second switch calling itself leaf-r0: by description a finding, by GUID the real answer
    text = _fabric(leaf1_desc="leaf-r0")
    status, records = _check([{"hca": "node3 mlx5_0", "leaf": "leaf-r0"}], text)
    assert len(records) == 1 and records[0]["actual"].startswith("ambiguous: leaf leaf-r0 is on 2 GUIDs")
    status, records = _check([{"hca": "node3 mlx5_0", "leaf": "leaf-r0", "leaf_guid": "0x0000000000200001"}], text)
    assert [r["actual"] for r in records] == ["leaf-r0 port 2"] and "should be on leaf-r0" in records[0]["diagnosis"]
    status, records = _check([{"hca": "node3 mlx5_0", "leaf": "leaf-r1", "leaf_guid": "0x0000000000200002"}], text)
    assert records == [] and status[0]["ok"]


@pytest.mark.parametrize("entry, message", [
    ({"hca": "n", "leaf": "l", "guid": "node1"}, "cabling[0].guid='node1': the HCA port's GUID"),
    ({"hca": "n", "leaf": "l", "leaf_guid": 5}, "cabling[0].leaf_guid=5: the leaf switch's GUID"),
])
def test_bad_guids_are_refused_naming_the_field(entry, message):
    with pytest.raises(ValueError) as info:
        _ib_fabric.check_cabling([entry])
    assert str(info.value).startswith(message)


def test_the_same_guid_planned_twice_is_refused():
    with pytest.raises(ValueError, match=r"cabling\[1\]: 0x0000000000100001 port 1 is already planned in cabling\[0\]"):
        _ib_fabric.check_cabling([{"hca": "a", "guid": "0x0000000000100001", "leaf": "l"},
                                  {"hca": "b", "guid": "0x0000000000100001", "leaf": "l"}])
