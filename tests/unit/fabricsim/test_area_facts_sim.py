# -*- coding: utf-8 -*-
"""Each node-planned area declares the facts it reads (``FACTS``: key, reader, arguments; its
plan takes ``facts[PLAN_FACTS]``, or all of them), and the drift check gathers and plans from that
declaration alone (``_drift_areas.readers``, ``plan_inputs``; issue 30). On fabricsim nodes, with
the real modules: the readers the declaration names give exactly the declared keys; a plan given
only the declared facts is the plan given every fact every reader gives (rdma_facts ``all``), and
the drift check's records are the same; a declared fact withheld changes the plan or the records,
or stops the plan (so none is declared for nothing)."""
import grp
import itertools
import os
import pwd

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.drift import _drift_areas as A
from ansible_collections.rdma.fabric.plugins.module_utils.resources import _nvconfig
from ansible_collections.rdma.fabric.plugins.module_utils.parsers import _sm_info
from ansible_collections.rdma.fabric.plugins.module_utils.areas import gpudirect, health, nccl_env, nic_firmware
from ansible_collections.rdma.fabric.plugins.module_utils.areas import roce_qos
from ansible_collections.rdma.fabric.plugins.modules import state_check
from ansible_collections.rdma.fabric.tests.unit import helpers

# What _state_check.gather_facts gives: reader -> the key of its facts
GATHERED_AS = {"rdma_facts": "rdma", "gdr_readiness": "gdr", "opensm": "opensm", "sm_info": "sm"}
# Every reader, each giving everything it can: what "all the facts" means below
EVERY_READER = {"rdma_facts": {"gather_subset": ["all"]}, "gdr_readiness": {}, "opensm": {"ibstat": True},
                "sm_info": {}}


def test_every_node_area_declares_its_facts():
    for area in A.NODE_AREAS:
        obj = A.AREA_OBJECTS[area]
        assert isinstance(obj.FACTS, tuple) and obj.FACTS, area
        keys = [key for key, _reader, _arguments in obj.FACTS]
        assert len(set(keys)) == len(keys), area
        for key, reader, arguments in obj.FACTS:
            assert GATHERED_AS.get(reader) == key, (area, key, reader)
            assert callable(arguments) or isinstance(arguments, dict), (area, reader)
        assert obj.PLAN_FACTS is None or obj.PLAN_FACTS in keys, area
    # the timer's area plans from its spec alone
    assert health.FACTS == () and health.plan({"rdma": "not read"}, {"settings": {"timer": True}, "files": []})


def test_readers_are_the_declarations_merged_for_every_set_of_areas():
    specs = {"opensm": {"settings": {"guid": "", "query_environment": {"SIM_HOST": "Hca2"}}},
             "gpudirect": {"settings": {"gdr_level": "PIX"}}, "roce_qos": {}, "nccl_env": {}, "nic_firmware": {}}
    for count in range(1, len(A.NODE_AREAS) + 1):
        for areas in itertools.combinations(A.NODE_AREAS, count):
            wanted = A.readers(dict((area, specs[area]) for area in areas))
            declared = set(reader for area in areas for _k, reader, _a in A.AREA_OBJECTS[area].FACTS)
            assert set(wanted) == declared, areas
            for area in areas:      # each area gets at least what it asks alone
                for reader, arguments in A.readers({area: specs[area]}).items():
                    for name, value in arguments.items():
                        got = wanted[reader][name]
                        assert set(value) <= set(got) if isinstance(value, list) else got == value, (areas, reader)
    assert A.readers({"nccl_env": {}, "roce_qos": {}})["rdma_facts"] == {"gather_subset": ["devices", "gids", "gpus"]}
    assert A.readers({"opensm": specs["opensm"]}) == {"opensm": {"ibstat": True},
                                                      "sm_info": {"environment": {"SIM_HOST": "Hca2"}}}


def test_two_areas_asking_one_argument_differently_is_an_error(monkeypatch):
    monkeypatch.setattr(roce_qos, "FACTS", (("gdr", "gdr_readiness", {"gdr_level": "SYS"}),))
    with pytest.raises(ValueError, match="gdr_readiness gdr_level asked as 'SYS' and as 'PIX'"):
        A.readers({"roce_qos": {}, "gpudirect": {"settings": {"gdr_level": "PIX"}}})


# ------------------------------------------------------------------ on fabricsim nodes
GRUB = 'GRUB_DEFAULT=0\nGRUB_CMDLINE_LINUX_DEFAULT="quiet"\nGRUB_CMDLINE_LINUX="iommu=pt"\n'


def _roce_qos(tmp_path, monkeypatch):
    return roce_qos.spec(helpers.role_defaults("roce_qos", roce_qos_lldp=False), lambda term: "# %s\n" % term)


def _nccl_env(tmp_path, monkeypatch):
    variables = helpers.role_defaults("nccl_env")
    variables.update(nccl_env_roce_dscp=26, inventory_hostname="gpu-01", nccl_env_conf_path=str(tmp_path / "nccl.conf"),
                     nccl_env_environment_file=str(tmp_path / "nccl.env"), nccl_env_dmabuf_enable="auto",
                     nccl_env_file_owner=pwd.getpwuid(os.getuid()).pw_name,
                     nccl_env_file_group=grp.getgrgid(os.getgid()).gr_name)
    return nccl_env.spec(variables, None)


def _gpudirect(tmp_path, monkeypatch):
    (tmp_path / "grub").write_text(GRUB)
    (tmp_path / "cmdline").write_text("BOOT_IMAGE=/boot/vmlinuz root=/dev/sda1 ro quiet\n")
    variables = helpers.role_defaults("gpudirect")
    variables.update(gpudirect_kernel_backend="grub", gpudirect_grub_file=str(tmp_path / "grub"),
                     gpudirect_proc_cmdline=str(tmp_path / "cmdline"),
                     gpudirect_acs_script_path=str(tmp_path / "sbin" / "rdma-fabric-acs"),
                     gpudirect_unit_dir=str(tmp_path / "systemd"), gpudirect_modules_load_dir=str(tmp_path / "modules"))
    return gpudirect.spec(variables, lambda term, template_vars=None: "# %s\n@RDMA_FABRIC_ACS_BRIDGES@\n" % term)


def _nic_firmware(tmp_path, monkeypatch):
    return nic_firmware.spec(helpers.role_defaults("nic_firmware"))


def _opensm(tmp_path, monkeypatch):
    # fabricsim has no sminfo: the fabric's SMs as sm_info reads them, another SM the master
    answer = {"master": {"guid": "0x0000000000100003"}, "master_count": 1, "standby_count": 0, "issm_ports": [],
              "sm_ports": [{"guid": "0x0000000000100003", "state": "master", "priority": 15}], "errors": []}

    def gather(module, ca=None, port=None, timeout=None):
        return answer, ""
    monkeypatch.setattr(_sm_info, "gather", gather)
    from ansible_collections.rdma.fabric.tests.unit.plugins.module_utils.areas.test_area_opensm import spec
    return spec()


NODES = [("roce_qos", "hgx-h100-roce", _roce_qos), ("nccl_env", "hgx-h100-roce", _nccl_env),
         ("gpudirect", "dgx-h100-ib-misplaced", _gpudirect), ("nic_firmware", "hgx-h100-roce", _nic_firmware),
         ("opensm", "dgx-h100-ib", _opensm)]


def _check(monkeypatch, sim, area, spec, facts=None):
    """state_check on the node with the area's spec: its readers (``facts`` instead when given)."""
    args = {"areas": {area: spec}, "host": "gpu-01"}
    if facts is not None:
        args["facts"] = facts
    return helpers.run_on_sim(monkeypatch, sim, state_check.main, args, True)


def _plan(area, facts, spec):
    obj = A.AREA_OBJECTS[area]
    return obj.plan(facts if obj.PLAN_FACTS is None else facts[obj.PLAN_FACTS], spec)


def _outcome(area, spec, facts):
    """What the drift check makes of these facts: the requests (without a judge function) and the
    records judged from the facts alone; or the error that stops the plan."""
    try:
        requests, records = A.requests_of([A.plan_inputs(area, spec, facts, "gpu-01")], "gpu-01")
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        return type(exc).__name__
    return [dict((k, v) for k, v in r.items() if k != "judge") for r in requests], records


def _key(records):
    return sorted((r["area"], r["object"], r["setting"], repr(r["expected"]), repr(r["actual"])) for r in records)


@pytest.mark.parametrize("area, profile, make_spec", NODES, ids=[area for area, _p, _s in NODES])
def test_the_declared_facts_are_what_the_plan_reads(sim, monkeypatch, tmp_path, area, profile, make_spec):
    sim.init(profile)
    monkeypatch.setenv("SYSFS_PATH", sim.sys)
    monkeypatch.setattr(_nvconfig, "BOOT_ID", str(tmp_path / "boot_id"))
    (tmp_path / "boot_id").write_text("boot-1\n")
    spec = make_spec(tmp_path, monkeypatch)
    obj = A.AREA_OBJECTS[area]
    declared = _check(monkeypatch, sim, area, spec)
    assert sorted(declared["facts"]) == sorted(key for key, _r, _a in obj.FACTS), declared["facts_errors"]
    assert declared["facts_errors"] == {}
    # every reader with all it can give; the area's own arguments where it declares that reader
    every = dict(EVERY_READER, **dict((r, a) for r, a in A.readers({area: spec}).items() if r != "rdma_facts"))
    full = _check(monkeypatch, sim, area, spec, every)
    # every reader ran (sminfo finds no SM port on a RoCE node: an error, not a fact)
    assert sorted(list(full["facts"]) + [GATHERED_AS[r] for r in full["facts_errors"]]) == sorted(GATHERED_AS.values())
    assert full["facts"]["rdma"] != declared["facts"].get("rdma")     # "all" reads more than any area declares
    host_spec = dict(spec, host="gpu-01") if "host" in spec else spec
    # the plan given only the declared facts is the plan given every fact
    assert _plan(area, declared["facts"], host_spec) == _plan(area, full["facts"], host_spec)
    assert _outcome(area, spec, declared["facts"]) == _outcome(area, spec, full["facts"])
    assert _key(declared["drift_records"]) == _key(full["drift_records"])
    assert not any(r["setting"] in ("config", "check", "read") for r in declared["drift_records"]), \
        declared["drift_records"]
    # each declared fact is read: withheld, the plan or its records differ, or it cannot plan
    for key, _reader, _arguments in obj.FACTS:
        withheld = dict((k, v) for k, v in declared["facts"].items() if k != key)
        assert _outcome(area, spec, withheld) != _outcome(area, spec, declared["facts"]), key
