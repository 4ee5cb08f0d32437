# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The gpudirect area object (plugins/module_utils/areas/gpudirect.py), called directly and
through the rdma.fabric.area_* filters: the settings from the argument spec, the variable
checks of its preflight, the plan decided from the gdr_readiness facts (the lspci trees and
rdma facts of test_gdr_readiness: GPU0's switch port 17:00.0 with ReqRedir+, GPU1's path
clean), the ACS files filled from the slots, the module calls and the drift records."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import jinja2
import pytest
import yaml
from ansible.errors import AnsibleFilterError

from ansible_collections.rdma.fabric.plugins.filter.area import FilterModule
from ansible_collections.rdma.fabric.plugins.module_utils.facts import _gdr_readiness as gdr
from ansible_collections.rdma.fabric.plugins.module_utils.resources import _pcie_acs
from ansible_collections.rdma.fabric.plugins.module_utils.common._common import PlanError
from ansible_collections.rdma.fabric.plugins.module_utils.areas import gpudirect as G
from ansible_collections.rdma.fabric.plugins.plugin_utils import _role_specs as role_specs
from ansible_collections.rdma.fabric.tests.unit.plugins.module_utils.facts.test_gdr_readiness import raw

F = FilterModule().filters()
ROLE = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "..", "roles", "gpudirect")
with open(os.path.join(ROLE, "defaults", "main.yml")) as _handle:
    DEFAULTS = yaml.safe_load(_handle)


def _render(term, template_vars=None):
    """The text of a role template (``ROLE/FILE``), as rdma.fabric.role_template renders it."""
    role, name = term.split("/", 1)
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(os.path.join(ROLE, "..", role, "templates")),
                             keep_trailing_newline=True)
    values = dict(DEFAULTS, ansible_managed="managed")
    values.update(template_vars or {})
    return env.get_template(name).render(**values)


def variables(**changes):
    values = dict(DEFAULTS)
    values.update(changes)
    return values


def settings(**changes):
    return G.settings(variables(**changes))


def spec(**changes):
    values = variables(**changes)
    return G.spec(values, lambda term, template_vars=None: _render(term, dict(values, **(template_vars or {}))))


def config_errors(**changes):
    return G.config_errors(settings(**changes))


def facts(**extra):
    extra.setdefault("systemd", True)
    return gdr.derive(raw(**extra))


# ------------------------------------------------------------------ settings and errors

def test_the_role_var_is_the_area_spec_and_every_argument_spec_variable_is_a_setting():
    with open(os.path.join(ROLE, "vars", "main.yml")) as handle:
        assert yaml.safe_load(handle) == {"__gpudirect_spec": "{{ lookup('rdma.fabric.role_spec', 'gpudirect') }}"}
    options = role_specs.role_options("gpudirect")
    assert sorted(options) == sorted(DEFAULTS)
    assert sorted(settings()) == sorted(name[len("gpudirect_"):] for name in options)
    flags = sorted(name[len("gpudirect_"):] for name, option in options.items() if option.get("type") == "bool")
    assert sorted(G.FLAGS) == flags
    assert role_specs.AREA_OBJECTS["gpudirect"] is G and "gpudirect" in role_specs.SPECS


def test_flags_convert_as_bool_does_and_a_non_boolean_is_named():
    assert settings(gpudirect_acs_runtime="no")["acs_runtime"] is False
    with pytest.raises(PlanError, match=r"gpudirect_peer_memory='maybe': expected a boolean"):
        settings(gpudirect_peer_memory="maybe")


def test_defaults_have_no_error():
    assert config_errors() == []
    assert F["area_errors"](spec(), "gpudirect") == []


def test_acs_kernel_argument_twice_names_the_item_and_value():
    errors = config_errors(gpudirect_acs_kernel_param=True, gpudirect_kernel_arguments=[
        {"name": "iommu", "value": "pt"}, {"name": "pci", "value": "disable_acs_redir=0000:17:00.0"}])
    assert errors == ["gpudirect_kernel_arguments[1] sets pci=disable_acs_redir=0000:17:00.0 while "
                      "gpudirect_acs_kernel_param is true (the role builds that argument from the audit): "
                      "keep one of them"]
    # without the role building it, the same item is fine
    assert config_errors(gpudirect_kernel_arguments=[{"name": "pci", "value": "disable_acs_redir=0000:17:00.0"}]) == []


@pytest.mark.parametrize("name, value, expected", [
    ("gpudirect_acs_unit_after", [], "gpudirect_acs_unit_after must name at least one unit, got []"),
    ("gpudirect_acs_unit_after", ["fabricsim"], "gpudirect_acs_unit_after: 'fabricsim' not systemd unit names"),
    ("gpudirect_acs_unit_after", ["a.service\nExecStart=/bin/sh"], "not systemd unit names"),
    ("gpudirect_acs_script_path", "usr/local/sbin/x", "gpudirect_acs_script_path must be an absolute path"),
    ("gpudirect_unit_dir", "/etc/systemd /system", "gpudirect_unit_dir must be an absolute path without spaces"),
    ("gpudirect_grub_file", "etc/default/grub", "gpudirect_grub_file must be an absolute path, got 'etc/default/grub'"),
    ("gpudirect_peer_memory_module", "nvidia-peermem", "gpudirect_peer_memory_module must be one of nvidia_peermem, "
                                                       "nv_peer_mem, got 'nvidia-peermem'"),
    ("gpudirect_gdr_level", "NODE", "gpudirect_gdr_level must be one of PIX, PXB, PHB, SYS, got 'NODE'"),
    ("gpudirect_reboot", "always", "gpudirect_reboot must be one of never, if_required, got 'always'"),
    ("gpudirect_reboot_timeout", "0", "gpudirect_reboot_timeout must be an integer >= 1, got '0'"),
    ("gpudirect_health_retries", "3x", "gpudirect_health_retries must be an integer >= 1, got '3x'"),
    ("gpudirect_health_delay", True, "gpudirect_health_delay must be an integer >= 0, got True"),
    ("gpudirect_grub_update_command", "update-grub", "gpudirect_grub_update_command must be a list"),
    ("gpudirect_kernel_arguments", [{"name": "iommu=pt"}], "gpudirect_kernel_arguments[0].name must be a kernel "
                                                           "parameter name (letters, digits, _ . -), got 'iommu=pt'"),
    ("gpudirect_kernel_arguments", [{"name": "iommu", "state": "gone"}], "gpudirect_kernel_arguments[0].state must "
                                                                         "be present or absent, got 'gone'"),
    ("gpudirect_kernel_arguments", "iommu=pt", "gpudirect_kernel_arguments must be a list"),
])
def test_each_bad_value_is_named(name, value, expected):
    errors = config_errors(**{name: value})
    assert len(errors) == 1 and expected in errors[0], errors
    assert F["area_errors"](spec(**{name: value}), "gpudirect") == errors


def test_templated_integers_are_accepted():
    assert config_errors(gpudirect_reboot_timeout="600", gpudirect_health_delay="0") == []


def test_settings_must_be_a_dict():
    with pytest.raises(PlanError, match="expected the role's settings dict"):
        G.config_errors(["gpudirect_reboot"])
    with pytest.raises(AnsibleFilterError, match="expected the area's spec"):
        F["area_errors"]({"gpudirect_reboot": "never"}, "gpudirect")


# ------------------------------------------------------------------ the spec: ACS files with slots

def test_the_spec_renders_the_acs_files_with_slots_and_the_plan_fills_them_to_the_roles_text():
    the_spec = spec(gpudirect_acs_script_path="/opt/rdma/acs.sh")
    assert [(f["path"], f["mode"]) for f in the_spec["files"]] == [
        ("/opt/rdma/acs.sh", "0755"), ("/etc/systemd/system/rdma-fabric-acs.service", "0644")]
    script = the_spec["files"][0]["content"]
    assert "MASK=@RDMA_FABRIC_ACS_MASK@" in script and 'BRIDGES="@RDMA_FABRIC_ACS_BRIDGES@"' in script
    planned = G.plan(facts(), the_spec)
    real = {"acs_mask": planned["acs_mask"], "acs_bridges": planned["acs_bridges"]}
    files = dict((f["path"], f["content"]) for f in planned["files"])
    assert files["/opt/rdma/acs.sh"] == _render("gpudirect/rdma-fabric-acs.sh.j2", {
        "__gpudirect_plan": real, "gpudirect_acs_script_path": "/opt/rdma/acs.sh"})
    assert "BRIDGES=\"0000:17:00.0 0000:17:01.0 0000:99:00.0 0000:99:01.0\"" in files["/opt/rdma/acs.sh"]
    assert "ExecStart=/opt/rdma/acs.sh" in files["/etc/systemd/system/rdma-fabric-acs.service"]
    assert "@RDMA_FABRIC" not in repr(planned["files"])


# ------------------------------------------------------------------ the plan

def test_plan_clears_only_the_path_with_redirect_and_installs_the_unit():
    planned = F["area_plan"](facts(), "gpudirect", spec())
    assert planned["acs_paths"] == [{"gpu": "GPU0", "nic": "mlx5_0", "gpu_pci_address": "0000:18:00.0",
                                     "nic_pci_address": "0000:1a:00.0", "bridges": ["0000:17:00.0", "0000:17:01.0"]}]
    assert planned["pcie_acs"] == {"state": "redirect_disabled", "devices": ["0000:18:00.0", "0000:1a:00.0"]}
    assert planned["acs_install"] is True
    assert planned["acs_bridges"] == ["0000:17:00.0", "0000:17:01.0", "0000:99:00.0", "0000:99:01.0"]
    assert planned["units"] == [{"name": "rdma-fabric-acs.service", "enabled": True, "active": True}]
    assert planned["kernel_arguments"] == [{"name": "iommu", "value": "pt"}]
    assert planned["kernel_cmdline"] == {"arguments": [{"name": "iommu", "value": "pt"}], "backend": "auto",
                                         "grub_file": "/etc/default/grub", "proc_cmdline": "/proc/cmdline",
                                         "update_command": None}
    assert planned["modprobe"] is None          # nvidia_peermem is loaded (PROC_MODULES)
    assert [f["path"] for f in planned["files"]] == ["/usr/local/sbin/rdma-fabric-acs",
                                                     "/etc/systemd/system/rdma-fabric-acs.service",
                                                     "/etc/modules-load.d/nvidia-peermem.conf"]
    assert planned["files"][2] == {"path": "/etc/modules-load.d/nvidia-peermem.conf", "mode": "0644", "content":
                                   "# Managed by Ansible (rdma.fabric.gpudirect): edits are overwritten\n"
                                   "# GPUDirect RDMA peer memory (rdma.fabric.gpudirect)\nnvidia_peermem\n"}
    assert planned["errors"] == [] and planned["notes"] == []
    assert [(r["resource"], r["name"]) for r in planned["requests"]] == [
        ("kernel_cmdline", "kernel arguments"), ("node_files", "ACS boot unit")]
    assert planned["requests"][0]["config"] == planned["kernel_cmdline"]
    assert planned["requests"][1]["config"] == {"files": planned["files"], "units": planned["units"]}
    # the read shows the redirect bits still set on GPU0's path
    assert planned["judged"] == [{"object": b, "setting": "acs_redirect", "expected": "off", "actual": "on"}
                                 for b in facts()["acs"]["targets_redirect_enabled"]]


def test_grub_update_command_goes_to_kernel_cmdline():
    planned = G.plan(facts(), spec(gpudirect_grub_update_command=["/usr/sbin/update-grub"]))
    assert planned["kernel_cmdline"]["update_command"] == ["/usr/sbin/update-grub"]


def test_acs_mask_comes_from_pcie_acs():
    assert G.plan(facts(), spec())["acs_mask"] == "%04x" % _pcie_acs.REDIRECT_MASK == "002c"


def test_converged_node_leaves_nothing_to_apply():
    converged = raw(lspci=raw()["lspci_text"].replace("ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl-",
                                                      "ReqRedir- CmpltRedir- UpstreamFwd+ EgressCtrl-"))
    planned = G.plan(gdr.derive(dict(converged, systemd=True)), spec())
    assert planned["acs_paths"] == [] and planned["pcie_acs"] is None and planned["modprobe"] is None
    assert planned["acs_install"] is True       # the boot unit stays (node_files: reads only)
    assert planned["judged"] == []


def test_kernel_param_lists_the_targets():
    planned = G.plan(facts(), spec(gpudirect_acs_kernel_param=True))
    assert planned["kernel_arguments"][-1] == {
        "name": "pci", "value": "disable_acs_redir=0000:17:00.0;0000:17:01.0;0000:99:00.0;0000:99:01.0"}
    assert planned["kernel_cmdline"]["arguments"] == planned["kernel_arguments"]


def test_kernel_param_without_targets_says_why():
    planned = G.plan(facts(lspci=None), spec(gpudirect_acs_kernel_param=True))
    assert planned["kernel_arguments"] == [{"name": "iommu", "value": "pt"}]
    assert planned["notes"] == ["gpudirect_acs_kernel_param is true but the audit found no ACS-capable bridge between "
                                "a GPU and its nearest NIC (ACS not audited: no lspci output): no "
                                "pci=disable_acs_redir= argument."]
    assert planned["acs_install"] is False and planned["units"] == []


def test_acs_runtime_off_writes_nothing():
    planned = G.plan(facts(), spec(gpudirect_acs_runtime=False))
    assert planned["acs_paths"] == [] and planned["acs_install"] is False and planned["units"] == []
    assert planned["pcie_acs"] is None and planned["judged"] == []


def test_no_kernel_argument_makes_no_kernel_cmdline_call():
    planned = G.plan(facts(), spec(gpudirect_kernel_arguments=[]))
    assert [r["resource"] for r in planned["requests"]] == ["node_files"]


def test_without_systemd_the_unit_is_not_enabled_and_said():
    planned = G.plan(facts(systemd=False), spec())
    assert planned["acs_install"] is True and planned["units"] == []
    assert planned["notes"] == ["no systemd on this host: /etc/systemd/system/rdma-fabric-acs.service is installed "
                                "but not enabled; run /usr/local/sbin/rdma-fabric-acs at boot another way."]


def test_module_not_loaded_is_loaded_and_persisted():
    planned = G.plan(facts(modules="nvidia 5 0 - Live 0x0\n", modinfo={"nvidia": True, "nvidia_peermem": True}),
                     spec())
    assert planned["modprobe"] == "nvidia_peermem"
    assert [f["path"] for f in planned["files"]][-1] == "/etc/modules-load.d/nvidia-peermem.conf"
    assert {"object": "nvidia_peermem", "setting": "loaded", "expected": True, "actual": False} in planned["judged"]


def test_driver_without_peermem_is_an_error():
    planned = G.plan(facts(modules="nvidia 5 0 - Live 0x0\n", modinfo={"nvidia": True}), spec())
    assert planned["errors"] and "no nvidia_peermem module" in planned["errors"][0]
    assert planned["modprobe"] is None and "/etc/modules-load.d/nvidia-peermem.conf" not in \
        [f["path"] for f in planned["files"]]
    records = G.records("h", [("plan", planned)])
    assert [(r["setting"], r["expected"]) for r in records][0] == ("config", "valid")
    # the older MLNX_OFED module is not checked against the driver
    planned = G.plan(facts(modules="nvidia 5 0 - Live 0x0\n", modinfo={"nvidia": True}),
                     spec(gpudirect_peer_memory_module="nv_peer_mem"))
    assert planned["errors"] == [] and planned["modprobe"] == "nv_peer_mem"
    assert planned["files"][-1]["path"] == "/etc/modules-load.d/nv-peer-mem.conf"


def test_no_driver_skips_peer_memory_with_a_note():
    planned = G.plan(facts(modules=""), spec())
    assert planned["modprobe"] is None and all("modules-load.d" not in f["path"] for f in planned["files"])
    assert planned["notes"] == ["No NVIDIA driver (no nvidia module loaded, modinfo nvidia finds none): peer memory "
                                "(nvidia_peermem) skipped."]


def test_plan_needs_the_gdr_facts_and_good_settings():
    with pytest.raises(AnsibleFilterError, match="expected ansible_facts.gdr"):
        F["area_plan"]({"ready": True}, "gpudirect", spec())
    with pytest.raises(AnsibleFilterError, match="gpudirect_reboot must be one of never, if_required"):
        F["area_plan"](facts(), "gpudirect", spec(gpudirect_reboot="always"))


# ------------------------------------------------------------------ records

def _record(obj, setting, expected, actual):
    return {"host": "h", "area": "gpudirect", "object": obj, "setting": setting, "expected": expected,
            "actual": actual}


def test_kernel_arguments_differ_or_are_pending():
    def judge(result):
        return F["area_records"]({"kernel_cmdline": result}, "gpudirect", "h")
    assert judge({"before": {"arguments": ["quiet", "iommu=off"]}, "after": {"arguments": ["quiet", "iommu=pt"]}}) == [
        _record("boot configuration", "iommu", "iommu=pt", "iommu=off")]
    assert judge({"before": {"arguments": ["quiet", "iommu=pt"]}, "after": {"arguments": ["quiet"]}}) == [
        _record("boot configuration", "iommu", None, "iommu=pt")]
    assert judge({"before": {"arguments": ["iommu=pt"]}, "after": {"arguments": ["iommu=pt"]},
                  "running": [{"name": "iommu", "value": "pt"}]}) == [
        _record("/proc/cmdline", "iommu", "iommu=pt", "pending reboot")]
    # written by a run killed before update-grub finished: a reboot alone would not boot it
    assert judge({"before": {"arguments": ["iommu=pt"], "boot_loader_update_pending": True},
                  "after": {"arguments": ["iommu=pt"]}, "running": [{"name": "iommu", "value": "pt"}]}) == [
        _record("boot configuration", "boot loader update", "done", "pending")]
    assert judge({"before": {"arguments": ["iommu=pt"]}, "after": {"arguments": ["iommu=pt"]}, "running": []}) == []


def test_records_of_the_plan_and_the_files_skip_skipped_and_other_results():
    planned = G.plan(facts(), spec())
    files = {"before": {"files": {"/etc/modules-load.d/nvidia-peermem.conf": {"state": "absent"}}},
             "after": {"files": {"/etc/modules-load.d/nvidia-peermem.conf": {"state": "present"}}}}
    records = F["area_records"]({"plan": planned, "node_files": files, "pcie_acs": {"changed": True},
                                 "kernel_cmdline": {"skipped": True}}, "gpudirect", "h")
    assert records[:len(planned["judged"])] == [_record(b, "acs_redirect", "off", "on")
                                                for b in facts()["acs"]["targets_redirect_enabled"]]
    assert records[len(planned["judged"]):] == [
        _record("", "files./etc/modules-load.d/nvidia-peermem.conf.state", "present", "absent")]


# ------------------------------------------------------------------ the drift check plans the same on the node

def test_the_drift_check_plans_on_the_node_what_the_role_plans():
    from ansible_collections.rdma.fabric.plugins.module_utils.drift import _drift_areas as A
    the_spec = spec()
    inputs = A.plan_inputs("gpudirect", the_spec, {"gdr": facts()}, "h")
    assert inputs["errors"] == [] and inputs["plan"] == F["area_plan"](facts(), "gpudirect", the_spec)
    assert A.readers({"gpudirect": the_spec}) == {"gdr_readiness": {"gdr_level": "PXB"}}
    requests, records = A.requests_of([inputs], "h")
    assert records == G.records("h", [("plan", inputs["plan"])]) and records
    assert [dict((k, v) for k, v in r.items() if k != "area") for r in requests] == inputs["plan"]["requests"]
    assert all(r["area"] == "gpudirect" for r in requests)


def test_bad_settings_on_the_node_are_config_records_naming_the_variable():
    from ansible_collections.rdma.fabric.plugins.module_utils.drift import _drift_areas as A
    inputs = A.plan_inputs("gpudirect", spec(gpudirect_unit_dir="etc/systemd"), {"gdr": facts()}, "h")
    requests, records = A.requests_of([inputs], "h")
    assert requests == [] and [(r["setting"], r["expected"]) for r in records] == [("config", "valid")]
    assert "gpudirect_unit_dir must be an absolute path" in records[0]["actual"]
