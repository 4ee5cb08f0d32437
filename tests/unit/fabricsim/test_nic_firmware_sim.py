# -*- coding: utf-8 -*-
"""rdma.fabric.mlxconfig and the nic_firmware area against fabricsim's mlxconfig and flint (issue 28):
the compare is against Next Boot (a converged node gets no write, a pending value is not set
again), a reboot (fabricsim reset with a new boot id) makes the values current, a value the
firmware does not take is ``not_taken`` in the next boot and never counts as a reboot owed, bad
input is refused before any write naming the field and the value, and the role's verify and the
drift check give the same records (a value changed behind Ansible's back, a pending value, a
firmware version other than the pin)."""
import os

import pytest
import yaml

from ansible_collections.rdma.fabric.plugins.filter.area import area_plan, area_records
from ansible_collections.rdma.fabric.plugins.module_utils.resources import _nvconfig
from ansible_collections.rdma.fabric.plugins.module_utils.areas import nic_firmware
from ansible_collections.rdma.fabric.plugins.modules import mlxconfig, rdma_facts, state_check
from ansible_collections.rdma.fabric.tests.unit import helpers

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))


@pytest.fixture
def node(sim, monkeypatch, tmp_path):
    """A RoCE node with a boot id of its own (``node.boot()`` = a reboot: new id, fabricsim reset)."""
    sim.init("hgx-h100-roce")
    monkeypatch.setenv("SYSFS_PATH", sim.sys)
    boot_id = tmp_path / "boot_id"
    boot_id.write_text("boot-1\n")
    monkeypatch.setattr(_nvconfig, "BOOT_ID", str(boot_id))
    sim.record = str(tmp_path / "rdma-fabric" / "mlxconfig-boot.json")
    sim.boots = [1]

    def boot():
        sim.boots.append(len(sim.boots) + 1)
        boot_id.write_text("boot-%d\n" % sim.boots[-1])
        assert sim.cli("reset") == 0
    sim.boot = boot
    return sim


def _run(monkeypatch, sim, main, args, check_mode=False, expect="exit"):
    def run_command(argv, **kwargs):
        out, err, rc = sim.run(os.path.basename(argv[0]), *[str(a) for a in argv[1:]])
        return rc, out, err
    kind, result = helpers.run_module(monkeypatch, main, args, check_mode=check_mode,
                                      run_command=run_command, bin_dir="/usr/bin/")
    assert kind == expect, result
    return result


def _nv(monkeypatch, sim, params, device="mlx5_0", check_mode=False, expect="exit", **more):
    args = dict({"config": [{"device": device, "params": params}], "boot_record": sim.record}, **more)
    return _run(monkeypatch, sim, mlxconfig.main, args, check_mode=check_mode, expect=expect)


def _writes(sim):
    return [r for r in sim.log(writes=True) if r.get("tool") == "mlxconfig"]


WANT = {"PCI_WR_ORDERING": "force_relax", "ADVANCED_PCI_SETTINGS": True, "CNP_DSCP_P1": 26}


def test_set_pending_reboot_current_then_no_write(node, monkeypatch):
    first = _nv(monkeypatch, node, WANT)
    assert first["changed"] and len(first["commands"]) == 1
    assert first["commands"][0].endswith("-d 0000:18:00.0 -y set ADVANCED_PCI_SETTINGS=True CNP_DSCP_P1=26 PCI_WR_ORDERING=force_relax")
    assert first["reboot_required"] and first["not_taken"] == {}
    assert first["pending"]["mlx5_0"]["PCI_WR_ORDERING"] == {"current": "per_mkey(0)", "next_boot": "force_relax(1)"}
    assert os.path.exists(node.record)
    writes = len(_writes(node))
    # the same run again, before the reboot: Next Boot holds the values, nothing is set again
    again = _nv(monkeypatch, node, WANT)
    assert not again["changed"] and again["commands"] == [] and again["reboot_required"]
    assert len(_writes(node)) == writes
    node.boot()
    after = _nv(monkeypatch, node, WANT)
    assert not after["changed"] and after["commands"] == [] and after["pending"] == {} and not after["reboot_required"]
    assert after["after"][0]["params"]["PCI_WR_ORDERING"]["current"] == "force_relax(1)"
    assert len(_writes(node)) == writes


def test_a_value_the_firmware_does_not_take_is_not_taken_and_owes_no_reboot(node, monkeypatch):
    assert node.cli("fault", "nv-stuck", "mlx5_0", "ADVANCED_PCI_SETTINGS") == 0
    first = _nv(monkeypatch, node, WANT)
    assert first["reboot_required"] and first["not_taken"] == {}
    node.boot()
    after = _nv(monkeypatch, node, WANT)
    assert after["commands"] == [] and after["pending"] == {
        "mlx5_0": {"ADVANCED_PCI_SETTINGS": {"current": "False(0)", "next_boot": "True(1)"}}}
    lost = {"wanted": "True", "current": "False(0)", "next_boot": "True(1)"}
    assert after["not_taken"] == {"mlx5_0": {"ADVANCED_PCI_SETTINGS": lost}}
    assert after["reboot_required"] is False
    # and a later boot changes nothing about it: still not taken, still no reboot owed
    node.boot()
    later = _nv(monkeypatch, node, WANT)
    assert list(later["not_taken"]["mlx5_0"]) == ["ADVANCED_PCI_SETTINGS"] and later["reboot_required"] is False
    records = area_records({"mlxconfig": later}, "nic_firmware", "gpu-01")
    assert [(r["object"], r["setting"], r["actual"]) for r in records] == [
        ("mlx5_0 (current)", "nv.ADVANCED_PCI_SETTINGS", "False(0): the firmware did not take it after a reset")]


def test_check_mode_writes_nothing_not_even_the_boot_record(node, monkeypatch):
    result = _nv(monkeypatch, node, WANT, check_mode=True)
    assert result["changed"] and result["reboot_required"]
    assert result["after"][0]["params"]["ADVANCED_PCI_SETTINGS"]["next_boot"] == "True(1)"
    assert _writes(node) == [] and not os.path.exists(node.record)


@pytest.mark.parametrize("params, device, message", [
    ({"NO_SUCH_PARAM": 1}, "mlx5_0", "config[0].params.NO_SUCH_PARAM: the device mlx5_0 has no such parameter"),
    ({"LINK_TYPE_P1": "FOO"}, "mlx5_0", "config[0].params.LINK_TYPE_P1='FOO': LINK_TYPE_P1 takes one of IB(1), ETH(2), VPI(3)"),
    ({"ATS_ENABLED": "maybe"}, "mlx5_0", "config[0].params.ATS_ENABLED='maybe': ATS_ENABLED takes one of False(0), True(1)"),
    ({"CNP_DSCP_P1": "high"}, "mlx5_0", "config[0].params.CNP_DSCP_P1='high': CNP_DSCP_P1 is a number (the device prints 48)"),
    ({"CNP_DSCP_P1": "4 5"}, "mlx5_0", "config[0].params.CNP_DSCP_P1='4 5': expected a number or a label"),
    ({"link_type_p1": "ETH"}, "mlx5_0", "config[0].params: 'link_type_p1' is not an mlxconfig parameter name"),
    ({"CNP_DSCP_P1": 4}, "mlx5_9", "device=mlx5_9: no such RDMA device"),
])
def test_bad_input_is_refused_before_any_write(node, monkeypatch, params, device, message):
    # a good device first: the bad entry second must stop the run before the first is written
    args = {"config": [{"device": "mlx5_1", "params": {"CNP_DSCP_P1": 4}}, {"device": device, "params": params}],
            "boot_record": node.record}
    result = _run(monkeypatch, node, mlxconfig.main, args, expect="fail")
    assert message.replace("config[0]", "config[1]") in result["msg"], result["msg"]
    assert _writes(node) == []


def test_a_value_the_firmware_refuses_fails_with_its_words_and_writes_nothing(node, monkeypatch):
    assert node.cli("fault", "nv-refuse", "mlx5_0", "ADVANCED_PCI_SETTINGS") == 0
    result = _nv(monkeypatch, node, WANT, expect="fail")
    assert "mlxconfig failed midway on mlx5_0" in result["msg"] and result["applied"] == []
    assert result["after"][0]["params"]["ADVANCED_PCI_SETTINGS"]["next_boot"] == "False(0)"
    assert result["changed"] is False


def test_gathered_and_parsed(node, monkeypatch):
    config = [{"device": "0000:18:00.0", "params": ["LINK_TYPE_P1"]}]
    gathered = _run(monkeypatch, node, mlxconfig.main, {"state": "gathered", "firmware": True, "config": config})
    assert gathered["gathered"][0]["params"]["LINK_TYPE_P1"]["current"] == "ETH(2)"
    assert gathered["firmware"]["0000:18:00.0"]["psid"]
    text = node.out("mlxconfig", "-d", "0000:18:00.0", "-e", "query", "LINK_TYPE_P1")
    parsed = _run(monkeypatch, node, mlxconfig.main, {"state": "parsed", "running_config": text})
    assert parsed["parsed"][0]["params"]["LINK_TYPE_P1"]["next_boot"] == "ETH(2)"


def _spec(**over):
    with open(os.path.join(REPO, "roles", "nic_firmware", "defaults", "main.yml")) as handle:
        variables = yaml.safe_load(handle)
    variables.update(("nic_firmware_" + k, v) for k, v in over.items())
    return nic_firmware.spec(variables)


def _role(monkeypatch, sim, spec, check_mode=True):
    facts = _run(monkeypatch, sim, rdma_facts.main, {"gather_subset": ["devices"]})["ansible_facts"]["rdma"]
    plan = area_plan(facts, "nic_firmware", spec)
    result = _run(monkeypatch, sim, mlxconfig.main, {"config": plan["config"], "firmware": True, "boot_record": sim.record},
                  check_mode=check_mode)
    return area_records({"plan": plan, "mlxconfig": result}, "nic_firmware", "gpu-01")


def _drift_check(monkeypatch, sim, spec):
    return _run(monkeypatch, sim, state_check.main, {"areas": {"nic_firmware": spec}, "host": "gpu-01"},
                check_mode=True)["drift_records"]


def _key(records):
    return sorted((r["object"], r["setting"], repr(r["expected"]), repr(r["actual"])) for r in records)


def test_the_role_and_the_drift_check_give_the_same_records(node, monkeypatch):
    spec = _spec(versions={"MT_0000000838": "28.39.1002"})
    fresh = _role(monkeypatch, node, spec)
    assert fresh and _key(fresh) == _key(_drift_check(monkeypatch, node, spec))
    assert ("mlx5_0", "nv.PCI_WR_ORDERING", "force_relax(1)", "per_mkey(0)") in \
        [(r["object"], r["setting"], r["expected"], r["actual"]) for r in fresh]
    # converge: every value set, pending until the reboot, then nothing
    assert _role(monkeypatch, node, spec, check_mode=False)
    pending = _drift_check(monkeypatch, node, spec)
    assert pending and all(r["actual"].endswith(": pending reset") for r in pending)
    assert _key(pending) == _key(_role(monkeypatch, node, spec))
    node.boot()
    assert _drift_check(monkeypatch, node, spec) == [] and _role(monkeypatch, node, spec) == []
    # behind Ansible's back: a value changed with mlxconfig by hand, another card's firmware
    assert node.cli("nv-set", "mlx5_1", "PCI_WR_ORDERING=per_mkey") == 0
    assert node.cli("fault", "fw-version", "mlx5_2", "28.36.1010") == 0
    drift = _drift_check(monkeypatch, node, spec)
    assert _key(drift) == _key(_role(monkeypatch, node, spec))
    found = [(r["object"], r["setting"], r["expected"], r["actual"]) for r in drift]
    assert ("mlx5_1", "nv.PCI_WR_ORDERING", "force_relax(1)", "per_mkey(0)") in found
    assert ("mlx5_2", "firmware.version", "28.39.1002 (pinned for MT_0000000838)", "28.36.1010") in found
    assert len(found) == 2


def _fleet_check(monkeypatch, sim, spec):
    """The drift check's one state_check call with roce_qos and nccl_env beside nic_firmware (the
    readers merged: rdma_facts asked by three areas), nic_firmware's records only."""
    from ansible_collections.rdma.fabric.plugins.module_utils.areas import roce_qos
    from ansible_collections.rdma.fabric.tests.unit import helpers as h
    specs = {"nic_firmware": spec,
             "roce_qos": roce_qos.spec(h.role_defaults("roce_qos", roce_qos_lldp=False), lambda term: "# %s\n" % term)}
    result = _run(monkeypatch, sim, state_check.main, {"areas": specs, "host": "gpu-01"}, check_mode=True)
    return [r for r in result["drift_records"] if r["area"] == "nic_firmware"]


@pytest.mark.parametrize("stuck", [False, True], ids=["taken", "nv-stuck"])
def test_set_reboot_check_through_state_check(node, monkeypatch, stuck):
    """Molecule gpudirect firmware.yml on one node: the role sets the values (pending), the drift
    check names each pending value; one reboot; the drift check (alone and beside other areas)
    and the role's records then agree: nothing, or only the value the firmware did not take, in
    this boot and the next. As on a node, the role and the drift check share the boot record
    (nic_firmware_boot_record, here the node's)."""
    spec = _spec(versions={"MT_0000000838": "28.39.1002"}, boot_record=node.record)
    if stuck:
        assert node.cli("fault", "nv-stuck", "mlx5_0", "PCI_WR_ORDERING") == 0
    assert _role(monkeypatch, node, spec, check_mode=False)
    pending = _drift_check(monkeypatch, node, spec)
    assert pending and all(r["actual"].endswith(": pending reset") for r in pending)
    assert ("mlx5_0 (current)", "nv.PCI_WR_ORDERING") in [(r["object"], r["setting"]) for r in pending]
    assert _key(pending) == _key(_fleet_check(monkeypatch, node, spec)) == _key(_role(monkeypatch, node, spec))
    writes = len(_writes(node))
    want = [("mlx5_0 (current)", "nv.PCI_WR_ORDERING", "force_relax(1)",
             "per_mkey(0): the firmware did not take it after a reset")] if stuck else []
    for _boot in range(2):
        node.boot()
        drift = _drift_check(monkeypatch, node, spec)
        assert [(r["object"], r["setting"], r["expected"], r["actual"]) for r in drift] == want
        assert _key(drift) == _key(_fleet_check(monkeypatch, node, spec)) == _key(_role(monkeypatch, node, spec))
        # the role's run after the reboot writes nothing and owes no reboot
        after = _nv(monkeypatch, node, {"PCI_WR_ORDERING": "force_relax"})
        assert after["commands"] == [] and after["reboot_required"] is False
        assert list(after["not_taken"]) == (["mlx5_0"] if stuck else [])
    assert len(_writes(node)) == writes


def test_the_drift_check_reads_the_boot_record_the_role_writes(node, monkeypatch):
    """nic_firmware_boot_record elsewhere than the default: after the reboot the drift check
    should name the value not taken as the role does, not as pending a reset."""
    spec = _spec(boot_record=node.record)
    assert node.cli("fault", "nv-stuck", "mlx5_0", "PCI_WR_ORDERING") == 0
    assert _role(monkeypatch, node, spec, check_mode=False)
    node.boot()
    role = _role(monkeypatch, node, spec)
    assert [r["actual"] for r in role] == ["per_mkey(0): the firmware did not take it after a reset"]
    assert _key(_drift_check(monkeypatch, node, spec)) == _key(role)


@pytest.mark.parametrize("value, refused", [("relative/boot.json", True), (3, True), ("/x\x00y", True),
                                            ("", False), (None, False), ("/var/lib/x.json", False)])
def test_a_boot_record_option_that_is_not_an_absolute_path_is_refused_naming_it(value, refused):
    from ansible_collections.rdma.fabric.plugins.module_utils.drift import _state_check
    request = {"resource": "mlxconfig", "config": [], "options": {"firmware": True, "boot_record": value}}
    error, options = _state_check.request_error(0, request)
    if refused:
        assert error.startswith("resources[0].options.boot_record=") and "absolute path" in error
    else:
        assert error is None and options == {"firmware": True, "boot_record": value or ""}


# ---------------------------------------------------------------- issue 40: bad inputs at the module

@pytest.mark.parametrize("params, message", [
    ({"CNP_DSCP_P1": 64}, "config[1].params.CNP_DSCP_P1='64': CNP_DSCP_P1 is a 6-bit field, 0-63"),
    ({"CNP_802P_PRIO_P1": 9}, "config[1].params.CNP_802P_PRIO_P1='9': CNP_802P_PRIO_P1 is a 3-bit field, 0-7"),
    ({"ROCE_CC_PRIO_MASK_P1": "0x100"}, "config[1].params.ROCE_CC_PRIO_MASK_P1='0x100': ROCE_CC_PRIO_MASK_P1 is a 8-bit"),
    ({"LINK_TYPE_P1": 5}, "config[1].params.LINK_TYPE_P1='5': LINK_TYPE_P1 takes one of IB(1), ETH(2), VPI(3)"),
    ({"CNP_DSCP_P7": 4}, "config[1].params.CNP_DSCP_P7='4': CNP_DSCP_P7 names port 7"),
])
def test_a_value_wider_than_its_firmware_field_is_refused_before_any_read(node, monkeypatch, params, message):
    args = {"config": [{"device": "mlx5_1", "params": {"CNP_DSCP_P1": 4}}, {"device": "mlx5_0", "params": params}],
            "boot_record": node.record}
    result = _run(monkeypatch, node, mlxconfig.main, args, expect="fail")
    assert message in result["msg"], result["msg"]
    assert _writes(node) == [] and [r for r in node.log() if r.get("tool") == "mlxconfig"] == []


@pytest.mark.parametrize("first, second", [("mlx5_0", "0000:18:00.0"), ("0000:18:00.0", "mlx5_0")])
def test_the_same_device_under_two_names_is_refused_naming_both(node, monkeypatch, first, second):
    args = {"config": [{"device": first, "params": {"CNP_DSCP_P1": 4}}, {"device": second, "params": {"CNP_DSCP_P1": 26}}],
            "boot_record": node.record}
    result = _run(monkeypatch, node, mlxconfig.main, args, expect="fail")
    assert "config[1].device=%s: the same device as config[0].device=%s (0000:18:00.0)" % (second, first) in result["msg"]
    assert _writes(node) == []


@pytest.mark.parametrize("record", ["/var/lib/../../etc/cron.d/x", "/tmp/a/../b.json"])
def test_a_boot_record_with_dot_dot_is_refused_by_the_module(node, monkeypatch, record):
    args = {"config": [{"device": "mlx5_0", "params": {"CNP_DSCP_P1": 4}}], "boot_record": record}
    result = _run(monkeypatch, node, mlxconfig.main, args, expect="fail")
    assert result["msg"] == "boot_record=%r: expected an absolute path without '..' (or empty for none)" % record
    assert _writes(node) == []
