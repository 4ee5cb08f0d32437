# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters of the gpudirect role (plugins/filter/gpudirect.py): the variable checks of its
preflight and the plan decided from the gdr_readiness facts (the lspci trees and rdma facts
of test_gdr_readiness: GPU0's switch port 17:00.0 with ReqRedir+, GPU1's path clean)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest
import yaml
from ansible.errors import AnsibleFilterError

from ansible_collections.rdma.fabric.plugins.filter import gpudirect as F
from ansible_collections.rdma.fabric.plugins.module_utils import _gdr_readiness as gdr
from ansible_collections.rdma.fabric.plugins.module_utils import _pcie_acs
from ansible_collections.rdma.fabric.plugins.plugin_utils import _role_specs as role_specs
from ansible_collections.rdma.fabric.tests.unit.plugins.module_utils.test_gdr_readiness import raw

ROLE = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "roles", "gpudirect")
with open(os.path.join(ROLE, "defaults", "main.yml")) as _handle:
    DEFAULTS = yaml.safe_load(_handle)


def config(**changes):
    values = dict(DEFAULTS)
    values.update(changes)
    return values


def facts(**extra):
    extra.setdefault("systemd", True)
    return gdr.derive(raw(**extra))


# ------------------------------------------------------------------ gpudirect_config_errors

def test_defaults_have_no_error():
    assert F.config_errors(config()) == []


def test_the_role_vars_name_every_variable_the_filters_read():
    with open(os.path.join(ROLE, "vars", "main.yml")) as handle:
        assert yaml.safe_load(handle)["__gpudirect_config"] == "{{ lookup('rdma.fabric.role_spec', 'gpudirect_config') }}"
    variables = role_specs.gpudirect_config(lambda name, *default: name)
    names = sorted(variables)
    assert all(variables[name] == name for name in names)    # each key is its own variable
    read = sorted(name for name in DEFAULTS if name in names)
    assert names == read      # only public variables
    assert "gpudirect_acs_unit_after" in names and "gpudirect_kernel_arguments" in names


def test_acs_kernel_argument_twice_names_the_item_and_value():
    errors = F.config_errors(config(gpudirect_acs_kernel_param=True, gpudirect_kernel_arguments=[
        {"name": "iommu", "value": "pt"}, {"name": "pci", "value": "disable_acs_redir=0000:17:00.0"}]))
    assert errors == ["gpudirect_kernel_arguments[1] sets pci=disable_acs_redir=0000:17:00.0 while "
                      "gpudirect_acs_kernel_param is true (the role builds that argument from the audit): "
                      "keep one of them"]
    # without the role building it, the same item is fine
    assert F.config_errors(config(gpudirect_kernel_arguments=[
        {"name": "pci", "value": "disable_acs_redir=0000:17:00.0"}])) == []


@pytest.mark.parametrize("name, value, expected", [
    ("gpudirect_acs_unit_after", [], "gpudirect_acs_unit_after must name at least one unit, got []"),
    ("gpudirect_acs_unit_after", ["fabricsim"], "gpudirect_acs_unit_after: 'fabricsim' not systemd unit names"),
    ("gpudirect_acs_unit_after", ["a.service\nExecStart=/bin/sh"], "not systemd unit names"),
    ("gpudirect_acs_script_path", "usr/local/sbin/x", "gpudirect_acs_script_path must be an absolute path"),
    ("gpudirect_unit_dir", "/etc/systemd /system", "gpudirect_unit_dir must be an absolute path without spaces"),
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
    errors = F.config_errors(config(**{name: value}))
    assert len(errors) == 1 and expected in errors[0], errors


def test_templated_integers_are_accepted():
    assert F.config_errors(config(gpudirect_reboot_timeout="600", gpudirect_health_delay="0")) == []


def test_config_must_be_a_dict():
    with pytest.raises(AnsibleFilterError, match="expected a dict"):
        F.config_errors(["gpudirect_reboot"])


# ------------------------------------------------------------------ gpudirect_plan

def test_plan_clears_only_the_path_with_redirect_and_installs_the_unit():
    plan = F.plan(facts(), config())
    assert plan["acs_paths"] == [{"gpu": "GPU0", "nic": "mlx5_0", "gpu_pci_address": "0000:18:00.0",
                                  "nic_pci_address": "0000:1a:00.0", "bridges": ["0000:17:00.0", "0000:17:01.0"]}]
    assert plan["acs_install"] is True
    assert plan["acs_bridges"] == ["0000:17:00.0", "0000:17:01.0", "0000:99:00.0", "0000:99:01.0"]
    assert plan["units"] == [{"name": "rdma-fabric-acs.service", "enabled": True, "active": True}]
    assert plan["kernel_arguments"] == [{"name": "iommu", "value": "pt"}]
    assert plan["modprobe"] is None          # nvidia_peermem is loaded (PROC_MODULES)
    assert plan["files"] == [{"path": "/etc/modules-load.d/nvidia-peermem.conf", "mode": "0644", "content":
                              "# Managed by Ansible (rdma.fabric.gpudirect): edits are overwritten\n"
                              "# GPUDirect RDMA peer memory (rdma.fabric.gpudirect)\nnvidia_peermem\n"}]
    assert plan["errors"] == [] and plan["notes"] == []


def test_acs_mask_comes_from_pcie_acs():
    assert F.plan(facts(), config())["acs_mask"] == "%04x" % _pcie_acs.REDIRECT_MASK == "002c"


def test_converged_node_leaves_nothing_to_apply():
    converged = raw(lspci=raw()["lspci_text"].replace("ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl-",
                                                      "ReqRedir- CmpltRedir- UpstreamFwd+ EgressCtrl-"))
    plan = F.plan(gdr.derive(dict(converged, systemd=True)), config())
    assert plan["acs_paths"] == [] and plan["modprobe"] is None
    assert plan["acs_install"] is True       # the boot unit stays (node_files: reads only)


def test_kernel_param_lists_the_targets():
    plan = F.plan(facts(), config(gpudirect_acs_kernel_param=True))
    assert plan["kernel_arguments"][-1] == {
        "name": "pci", "value": "disable_acs_redir=0000:17:00.0;0000:17:01.0;0000:99:00.0;0000:99:01.0"}


def test_kernel_param_without_targets_says_why():
    plan = F.plan(facts(lspci=None), config(gpudirect_acs_kernel_param=True))
    assert plan["kernel_arguments"] == [{"name": "iommu", "value": "pt"}]
    assert plan["notes"] == ["gpudirect_acs_kernel_param is true but the audit found no ACS-capable bridge between "
                             "a GPU and its nearest NIC (ACS not audited: no lspci output): no "
                             "pci=disable_acs_redir= argument."]
    assert plan["acs_install"] is False and plan["units"] == []


def test_acs_runtime_off_writes_nothing():
    plan = F.plan(facts(), config(gpudirect_acs_runtime=False))
    assert plan["acs_paths"] == [] and plan["acs_install"] is False and plan["units"] == []


def test_without_systemd_the_unit_is_not_enabled_and_said():
    plan = F.plan(facts(systemd=False), config())
    assert plan["acs_install"] is True and plan["units"] == []
    assert plan["notes"] == ["no systemd on this host: /etc/systemd/system/rdma-fabric-acs.service is installed but "
                             "not enabled; run /usr/local/sbin/rdma-fabric-acs at boot another way."]


def test_module_not_loaded_is_loaded_and_persisted():
    plan = F.plan(facts(modules="nvidia 5 0 - Live 0x0\n", modinfo={"nvidia": True, "nvidia_peermem": True}),
                  config())
    assert plan["modprobe"] == "nvidia_peermem"
    assert [f["path"] for f in plan["files"]] == ["/etc/modules-load.d/nvidia-peermem.conf"]


def test_driver_without_peermem_is_an_error():
    plan = F.plan(facts(modules="nvidia 5 0 - Live 0x0\n", modinfo={"nvidia": True}), config())
    assert plan["errors"] and "no nvidia_peermem module" in plan["errors"][0]
    assert plan["modprobe"] is None and plan["files"] == []
    # the older MLNX_OFED module is not checked against the driver
    plan = F.plan(facts(modules="nvidia 5 0 - Live 0x0\n", modinfo={"nvidia": True}),
                  config(gpudirect_peer_memory_module="nv_peer_mem"))
    assert plan["errors"] == [] and plan["modprobe"] == "nv_peer_mem"
    assert plan["files"][0]["path"] == "/etc/modules-load.d/nv-peer-mem.conf"


def test_no_driver_skips_peer_memory_with_a_note():
    plan = F.plan(facts(modules=""), config())
    assert plan["modprobe"] is None and plan["files"] == []
    assert plan["notes"] == ["No NVIDIA driver (no nvidia module loaded, modinfo nvidia finds none): peer memory "
                             "(nvidia_peermem) skipped."]


def test_plan_needs_the_gdr_facts():
    with pytest.raises(AnsibleFilterError, match="expected ansible_facts.gdr"):
        F.plan({"ready": True}, config())
