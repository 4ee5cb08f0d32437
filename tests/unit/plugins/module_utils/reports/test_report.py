# -*- coding: utf-8 -*-
"""Report records and writers: pure functions of the records."""
from __future__ import absolute_import, division, print_function

import json
import xml.etree.ElementTree as ET

from ansible_collections.rdma.fabric.plugins.module_utils.reports import _report as R

RECORDS = [
    {"host": "gpu 02", "area": "roce_qos", "object": "eth2", "setting": "pfc", "expected": [3], "actual": []},
    {"host": "gpu-01", "area": "nccl_env", "object": "/etc/nccl.conf", "setting": "NCCL_IB_HCA",
     "expected": "=mlx5_0,mlx5_1", "actual": None},
    {"host": "gpu-01", "area": "roce_qos", "object": "eth3", "setting": "np",
     "expected": {"enabled_priorities": [3]}, "actual": {"enabled_priorities": []}},
    {"host": "sm-9", "area": "host", "object": "", "setting": "check", "expected": "checked", "actual": "unreachable"},
]
CHECKED = [("gpu-01", "roce_qos"), ("gpu-01", "nccl_env"), ("gpu 02", "roce_qos"), ("gpu-03", "roce_qos")]


def test_leaf_differences_give_the_smallest_setting():
    expected = {"np": {"enabled_priorities": [3], "params": {"cnp_dscp": 48, "x": 1}}, "roce_tos": 106}
    actual = {"np": {"enabled_priorities": [3], "params": {"cnp_dscp": 0, "x": 1}}, "roce_tos": 106}
    assert R.leaf_differences(expected, actual) == [("np.params.cnp_dscp", 48, 0)]
    assert R.leaf_differences({"a": None}, {}) == []
    assert R.leaf_differences({"a": [1]}, None) == [("value", {"a": [1]}, None)]


def test_module_objects_split_node_files_and_key_dscp_maps():
    files = {"before": {"files": {"/a": {"state": "absent"}}, "units": {"u.service": {"enabled": False}}},
             "after": {"files": {"/a": {"state": "present", "checksum": "x"}}, "units": {"u.service": {"enabled": True}}}}
    assert R.module_objects(files) == [("/a", {"state": "present"}, {"state": "absent"}),
                                       ("u.service", {"enabled": True}, {"enabled": False})]
    mlnx = {"before": [{"interface": "eth2", "dscp2prio": [{"dscp": 1, "priority": 0}]}],
            "after": [{"interface": "eth2", "dscp2prio": [{"dscp": 1, "priority": 3}]}]}
    assert R.module_objects(mlnx) == [("eth2", {"dscp2prio": {"1": 3}}, {"dscp2prio": {"1": 0}})]
    assert R.module_objects({"skipped": True}) == []


def test_table_is_sorted_with_values_as_compact_json_and_names_with_spaces():
    lines = R.table(RECORDS).splitlines()
    assert lines[0].split() == ["HOST", "AREA", "OBJECT", "SETTING", "EXPECTED", "ACTUAL"]
    assert [ln.split()[0] for ln in lines[2:]] == ["gpu", "gpu-01", "gpu-01", "sm-9"]
    assert lines[2].startswith("gpu 02") and "[3]" in lines[2] and "[]" in lines[2]
    assert '{"enabled_priorities":[3]}' in lines[4]
    assert "null" in lines[3]


def test_summary():
    assert R.summary(RECORDS, 4, 1) == "2 of 4 hosts drifted, 3 settings; 1 unreachable"
    assert R.summary([], 120, 0) == "0 of 120 hosts drifted, 0 settings; 0 unreachable"


def test_json_keeps_records_and_meta():
    data = json.loads(R.to_json(RECORDS, {"inventory": "inv", "limit": ""}))
    assert data["meta"]["inventory"] == "inv" and len(data["records"]) == 4
    assert data["records"][0]["host"] == "gpu 02"


def test_junit_one_case_per_host_and_area_one_failure_per_setting():
    root = ET.fromstring(R.junit_xml(RECORDS, CHECKED))
    cases = dict(((c.get("classname"), c.get("name")), c) for c in root.iter("testcase"))
    assert set(cases) == set(CHECKED) | {("sm-9", "host")}
    assert root.get("tests") == "5" and root.get("failures") == "4"
    assert [f.get("message") for f in cases[("gpu 02", "roce_qos")].findall("failure")] == \
        ["eth2 pfc: expected [3], actual []"]
    assert cases[("gpu-03", "roce_qos")].findall("failure") == []
    assert json.loads(cases[("gpu-01", "nccl_env")].find("failure").text)["setting"] == "NCCL_IB_HCA"


def test_prometheus_textfile():
    text = R.prometheus(RECORDS, CHECKED, ["sm-9"], 1700000000.25, {"inventory": 'a "b"\\c', "collection_version": "0.2.0"})
    lines = text.splitlines()
    assert 'rdma_fabric_drift_settings{host="gpu 02",area="roce_qos"} 1' in lines
    assert 'rdma_fabric_drift_settings{host="gpu-01",area="roce_qos"} 1' in lines
    assert 'rdma_fabric_drift_settings{host="gpu-03",area="roce_qos"} 0' in lines
    assert not any('area="host"' in ln for ln in lines)
    assert "rdma_fabric_drift_hosts_checked 3" in lines and "rdma_fabric_drift_hosts_unreachable 1" in lines
    assert "rdma_fabric_drift_last_run_timestamp_seconds 1700000000.250" in lines
    assert 'rdma_fabric_drift_info{collection_version="0.2.0",inventory="a \\"b\\"\\\\c"} 1' in lines
    for line in lines:
        assert line.startswith("#") or line.startswith("rdma_fabric_drift_")


def test_write_atomic(tmp_path):
    target = tmp_path / "x.prom"
    R.write_atomic(str(target), "a 1\n")
    R.write_atomic(str(target), "a 2\n")
    assert target.read_text() == "a 2\n" and [p.name for p in tmp_path.iterdir()] == ["x.prom"]


def test_a_missing_file_is_one_record():
    result = {"before": {"files": {"/etc/x": {"state": "absent"}}, "units": {}},
              "after": {"files": {"/etc/x": {"state": "present", "checksum": "c", "mode": "0644",
                                             "owner": "root", "group": "root"}}, "units": {}}}
    assert R.drift_records("h", "a", R.module_objects(result)) == [
        {"host": "h", "area": "a", "object": "/etc/x", "setting": "state", "expected": "present", "actual": "absent"}]
