# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The opensm area object (plugins/module_utils/areas/opensm.py) through the rdma.fabric.area_*
filters: settings validation naming the variable (a key never printed), the spec rendered from
the role's templates with slots, the plan from the role's one read (family, port, files, what
differs), and the records of the role's verify and of the drift check (one naming)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import os

import jinja2
import pytest
import yaml

from ansible.errors import AnsibleFilterError

from ansible_collections.rdma.fabric.plugins.filter.area import FilterModule
from ansible_collections.rdma.fabric.plugins.filter.opensm import opensm_ha_errors
from ansible_collections.rdma.fabric.plugins.module_utils.drift import _drift_areas as A
from ansible_collections.rdma.fabric.plugins.module_utils.areas import opensm

F = FilterModule().filters()
REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", ".."))
ROLE = os.path.join(REPO, "roles", "opensm")
KEY = "0x00000000c0ffee01"
GUID = "0x0000000000100001"
IBSTAT = """CA 'mlx5_0'
\tCA type: MT4123
\tNumber of ports: 1
\tFirmware version: 20.31.1014
\tHardware version: 0
\tNode GUID: 0x0000000000100000
\tSystem image GUID: 0x0000000000100000
\tPort 1:
\t\tState: Initializing
\t\tPhysical state: LinkUp
\t\tRate: 100
\t\tBase lid: 7
\t\tLMC: 0
\t\tSM lid: 0
\t\tCapability mask: 0x2651e84a
\t\tPort GUID: 0x0000000000100001
\t\tLink layer: InfiniBand
"""


def variables(**over):
    with open(os.path.join(ROLE, "defaults", "main.yml")) as handle:
        values = yaml.safe_load(handle)
    values.update(opensm_sm_key=KEY, opensm_role="master")
    values.update(("opensm_" + k, v) for k, v in over.items())
    values["groups"] = {"all": ["sm1", "sm2"]}
    return values


def renderer(values):
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(os.path.join(ROLE, "templates")), trim_blocks=True,
                             keep_trailing_newline=True, undefined=jinja2.StrictUndefined)

    def render(term, template_vars=None):
        data = dict(values, ansible_managed="Ansible managed")
        data.update(template_vars or {})
        return env.get_template(term.split("/", 1)[1]).render(data)
    return render


def spec(**over):
    values = variables(**over)
    return opensm.spec(values, renderer(values))


def present(content, mode="0600"):
    return {"state": "present", "checksum": hashlib.sha256(content.encode("utf-8")).hexdigest(), "mode": mode,
            "owner": "root", "group": "root"}


def gathered(marker="/etc/debian_version", files=None, active=True):
    read = opensm.read_files()
    out = {"files": dict((f["path"], {"state": "absent"}) for f in read["files"]),
           "units": {"opensm.service": {"enabled": active, "active": active, "unit_state": "enabled"}}}
    out["files"][marker] = {"state": "present"}
    out["files"]["/usr/sbin/ibstat"] = {"state": "present"}
    out["files"].update(files or {})
    return out


def test_the_defaults_with_a_key_and_a_master_are_good_and_render_with_slots():
    built = spec()
    assert F["area_errors"](built, "opensm") == []
    assert built["priority"] == 14
    conf = built["files"]["config"]
    assert "guid @RDMA_FABRIC_OPENSM_GUID@\nsm_priority 14\nsm_key %s\n" % KEY in conf
    assert "partition_config_file @RDMA_FABRIC_OPENSM_PARTITIONS_FILE@\n" in conf
    assert "honor_guid2lid_file TRUE\n" in conf and "\nm_key" not in conf
    assert "Default=0x7fff,ipoib : ALL=full ;" in built["files"]["partitions"]
    assert "ExecStart=/usr/sbin/opensm --guid %I" in built["files"]["dropins"]["Debian"]
    assert "ExecStart=" not in built["files"]["dropins"]["RedHat"]
    for text in built["files"]["dropins"].values():
        assert "StandardOutput=null\nLogLevelMax=notice\n" in text
    assert built["files"]["ports"].endswith('PORTS="@RDMA_FABRIC_OPENSM_GUID@"\n')


@pytest.mark.parametrize("over, words", [
    ({"standby_rank": 0, "role": "standby"}, ["opensm_standby_rank=0"]),
    ({"master_priority": 16}, ["opensm_master_priority=16"]),
    ({"priority": 16}, ["opensm_priority=16"]),
    ({"guid": "0xzz"}, ["opensm_guid=0xzz"]),
    ({"sminfo_polling_timeout": 10}, ["opensm_sminfo_polling_timeout=10"]),
    ({"log_flags": "0x03\nsm_key 0x1"}, ["opensm_log_flags='0x03\\nsm_key 0x1'"]),
    ({"extra_options": {"SM_Key": "0x2"}}, ["opensm_extra_options['SM_Key']", "opensm_sm_key"]),
    ({"partitions": [{"name": "p", "pkey": 0x8001}]}, ["opensm_partitions[0].pkey 0x8001"]),
    ({"ha_hosts": ["sm1", "sm9"]}, ["opensm_ha_hosts[1]='sm9': not a host of the inventory"]),
    ({"role": "standby", "standby_rank": 15}, ["effective SM priority -1"]),
])
def test_each_bad_value_names_its_variable_and_renders_no_file(over, words):
    built = spec(**over)
    problems = "; ".join(F["area_errors"](built, "opensm"))
    assert all(w in problems for w in words), problems
    assert built["files"] is None
    planned = F["area_plan"]({"gathered": gathered()}, "opensm", built)
    assert planned["errors"] and planned["requests"] == [] and not planned["change"]


@pytest.mark.parametrize("key", ["", "0x1", "0x0", "0xc0ffee-not-hex"])
def test_the_sm_key_is_named_never_printed(key):
    problems = F["area_errors"](spec(sm_key=key, m_key="0xZZc0ffee"), "opensm")
    text = "; ".join(problems)
    assert "opensm_sm_key must be set" in text and "opensm_m_key must be empty" in text
    assert "c0ffee" not in text and "not-hex" not in text


def test_plan_discovers_the_port_after_the_install_and_fills_the_slots():
    built = spec()
    first = F["area_plan"]({"gathered": gathered()}, "opensm", built)
    assert first["ports_needed"] and first["family"] == "Debian" and first["files"] == [] and not first["install"]
    planned = F["area_plan"]({"gathered": gathered(), "ibstat": IBSTAT}, "opensm", built)
    assert planned["errors"] == [] and planned["guid"] == GUID and planned["port"]["base_lid"] == 7
    files = dict((f["path"], f) for f in planned["files"])
    conf = files["/etc/opensm/opensm.conf"]
    assert conf["mode"] == "0600" and "guid %s\n" % GUID in conf["content"]
    assert "partition_config_file /etc/opensm/partitions.conf\n" in conf["content"]
    assert files["/etc/default/opensm"]["content"].endswith('PORTS="%s"\n' % GUID)
    assert planned["change"] and "/etc/opensm/opensm.conf: missing" in planned["reasons"]
    assert planned["units"] == [{"name": "opensm.service", "enabled": True, "active": True}]
    assert planned["requests"] == [{"resource": "node_files", "name": "OpenSM files", "options": {"content": True},
                                    "config": {"files": planned["files"], "units": planned["units"]}}]
    assert planned["sm_expected"] == {"guid": GUID, "role": "master", "priority": 14}


def test_a_converged_node_with_a_bound_guid_changes_nothing_and_needs_no_ibstat():
    built = spec(guid="0x100001")
    planned = F["area_plan"]({"gathered": gathered()}, "opensm", built)
    assert not planned["ports_needed"] and planned["guid"] == GUID
    read = gathered(files=dict((f["path"], present(f["content"], f["mode"])) for f in planned["files"]))
    again = F["area_plan"]({"gathered": read}, "opensm", built)
    assert again["change"] is False and again["reasons"] == [] and again["install"] is False


def test_redhat_paths_and_missing_packages():
    read = gathered("/etc/redhat-release")
    read["files"]["/usr/sbin/ibstat"] = {"state": "absent"}
    planned = F["area_plan"]({"gathered": read}, "opensm", spec(guid=GUID))
    assert [f["path"] for f in planned["files"]] == [
        "/etc/rdma/opensm.conf", "/etc/rdma/partitions.conf", "/etc/systemd/system/opensm.service.d/10-rdma-fabric.conf"]
    assert planned["install"] and planned["packages"] == ["opensm", "infiniband-diags"]


@pytest.mark.parametrize("facts, words", [
    ({"gathered": {"files": {}, "units": {}}}, "cannot tell the OS family"),
    ({"gathered": gathered(), "ports": []}, "no InfiniBand port with the physical link up"),
])
def test_a_node_that_cannot_be_planned_is_an_error(facts, words):
    planned = F["area_plan"](facts, "opensm", spec())
    assert words in planned["errors"][0] and planned["requests"] == []


def test_the_verify_and_the_drift_check_name_the_sm_drift_alike():
    expected = {"guid": GUID, "role": "master", "priority": 14}
    sm = {"master_count": 1, "sm_ports": [{"guid": GUID, "state": "standby", "priority": 13}]}
    verify = F["area_records"]({"sm_info": {"gathered": sm, "expected": expected}}, "opensm", "sm1")
    assert [(r["object"], r["setting"], r["expected"], r["actual"]) for r in verify] == [
        (GUID, "state", "master", "standby"), (GUID, "priority", 14, 13)]
    built = spec()
    facts = {"opensm": {"markers": {"files": {"/etc/debian_version": {"state": "present"}}},
                        "ports": opensm._ibstat.port_list(IBSTAT)}, "sm": sm}
    inputs = A.plan_inputs("opensm", built, facts, "sm1")
    requests, judged = A.requests_of([inputs], "sm1")
    assert judged == verify
    assert [r["resource"] for r in requests] == ["node_files"]


def test_opensm_conf_key_by_key_and_no_key_printed():
    conf = "guid %s\nsm_priority 14\nsm_key %s\n" % (GUID, KEY)
    edited = "guid %s\nsm_priority 15\nsm_key\t0x00000000deadbeef\n" % GUID
    result = {"before": {"files": {"/etc/opensm/opensm.conf": dict(present(edited), content=edited)},
                         "units": {"opensm.service": {"enabled": True, "active": False}}},
              "after": {"files": {"/etc/opensm/opensm.conf": dict(present(conf), content=conf)},
                        "units": {"opensm.service": {"enabled": True, "active": True}}}}
    found = F["area_records"]({"node_files": result}, "opensm", "sm1")
    assert [(r["setting"], r["expected"], r["actual"]) for r in found] == [
        ("sm_key", "(hidden, differs)", "(hidden, differs)"), ("sm_priority", "14", "15"), ("active", True, False)]
    assert "c0ffee" not in str(found) and "deadbeef" not in str(found)


def test_ha_errors_is_the_one_opensm_filter():
    members = [{"host": "a", "fabric": "f", "role": "master", "standby_rank": 1, "priority": None,
                "master_priority": 14, "guid": ""},
               {"host": "b", "fabric": "f", "role": "standby", "standby_rank": 1, "priority": 14,
                "master_priority": 14, "guid": ""}]
    problems = opensm_ha_errors(members)
    assert problems == ["fabric f: SMs a, b share priority 14; OpenSM then elects by GUID, which is hard to predict. "
                        "Give each a distinct opensm_standby_rank or opensm_priority, or set "
                        "opensm_allow_equal_priority: true"]
    assert opensm_ha_errors(members, True) == []
    with pytest.raises(AnsibleFilterError):
        opensm_ha_errors("a")
