"""One drift, one record (issue 30), for gpudirect: a drift injected on a node (a kernel argument
removed from the GRUB file; ACS redirect and an unloaded peer-memory module as fabricsim's
profile has them) gives the same records from the gpudirect role's verify (gdr_readiness, the
area's plan, kernel_cmdline and node_files in check mode, then rdma.fabric.area_records) and from
the fleet drift check (state_check on the node with the area's spec). Both run the real modules
against fabricsim's tools and sysfs."""

import pytest

from ansible_collections.rdma.fabric.plugins.filter.area import area_plan, area_records
from ansible_collections.rdma.fabric.plugins.module_utils.areas import gpudirect
from ansible_collections.rdma.fabric.plugins.modules import gdr_readiness, kernel_cmdline, node_files, state_check
from ansible_collections.rdma.fabric.tests.unit import helpers

MODULES = {"kernel_cmdline": kernel_cmdline, "node_files": node_files}
GRUB = 'GRUB_DEFAULT=0\nGRUB_CMDLINE_LINUX_DEFAULT="quiet"\nGRUB_CMDLINE_LINUX="%s"\n'


def _variables(tmp_path, **over):
    variables = helpers.role_defaults("gpudirect")
    variables.update(gpudirect_kernel_backend="grub", gpudirect_grub_file=str(tmp_path / "grub"),
                     gpudirect_proc_cmdline=str(tmp_path / "cmdline"),
                     gpudirect_acs_script_path=str(tmp_path / "sbin" / "rdma-fabric-acs"),
                     gpudirect_unit_dir=str(tmp_path / "systemd"), gpudirect_modules_load_dir=str(tmp_path / "modules"))
    variables.update(over)
    return variables


_run = helpers.run_on_sim


def _role(monkeypatch, sim, spec):
    """The role's tasks in check mode: the read, the plan, each module call of it; the verify's records."""
    facts = _run(monkeypatch, sim, gdr_readiness.main, {"gdr_level": spec["settings"]["gdr_level"]},
                 True)["ansible_facts"]["gdr"]
    plan = area_plan(facts, "gpudirect", spec)
    results = {"plan": plan}
    for request in plan["requests"]:
        config = request["config"]
        if request["resource"] == "kernel_cmdline":
            config = dict((k, v) for k, v in config.items() if v is not None)
        results[request["resource"]] = _run(monkeypatch, sim, MODULES[request["resource"]].main, config, True)
    return plan, area_records(results, "gpudirect", "gpu-01")


def _drift_check(monkeypatch, sim, spec):
    result = _run(monkeypatch, sim, state_check.main, {"areas": {"gpudirect": spec}, "host": "gpu-01"}, True)
    return result["drift_records"]


def _key(records):
    return sorted((r["object"], r["setting"], repr(r["expected"]), repr(r["actual"])) for r in records)


@pytest.mark.parametrize("profile", ["dgx-h100-ib", "dgx-h100-ib-misplaced"])
def test_an_injected_drift_gives_the_same_records_from_the_role_and_the_drift_check(
        sim, monkeypatch, tmp_path, profile):
    sim.init(profile)
    monkeypatch.setenv("SYSFS_PATH", sim.sys)
    (tmp_path / "grub").write_text(GRUB % "iommu=pt")
    (tmp_path / "cmdline").write_text("BOOT_IMAGE=/boot/vmlinuz root=/dev/sda1 ro iommu=pt quiet\n")
    spec = gpudirect.spec(_variables(tmp_path), lambda term, template_vars=None: "# %s\n@RDMA_FABRIC_ACS_BRIDGES@\n" % term)
    plan, role_records = _role(monkeypatch, sim, spec)
    assert [r["resource"] for r in plan["requests"]] == ["kernel_cmdline", "node_files"]
    check_records = _drift_check(monkeypatch, sim, spec)
    assert _key(role_records) == _key(check_records)
    assert not any(r["object"] == "boot configuration" for r in check_records)
    # the read's own findings and the files the role would write are there, named alike
    found = set((r["object"], r["setting"]) for r in check_records)
    assert ("nvidia_peermem", "loaded") in found and plan["modprobe"] == "nvidia_peermem"
    assert (("0000:5d:00.0", "acs_redirect") in found) is (profile == "dgx-h100-ib-misplaced")
    assert set(f["path"] for f in plan["files"]) <= set(obj for obj, _setting in found)

    # the drift: iommu=pt removed from the GRUB file
    (tmp_path / "grub").write_text(GRUB % "")
    _plan, role_records = _role(monkeypatch, sim, spec)
    check_records = _drift_check(monkeypatch, sim, spec)
    assert _key(role_records) == _key(check_records)
    assert [(r["object"], r["setting"], r["expected"], r["actual"]) for r in check_records
            if r["object"] == "boot configuration"] == [("boot configuration", "iommu", "iommu=pt", None)]
