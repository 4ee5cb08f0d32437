# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters of the nccl_env role (plugins/filter/nccl_env.py): the variable checks of its
preflight, the per-node decision from rdma_facts (tmp sysfs tree + topology of
test_rdma_facts: two RoCE rails mlx5_0/mlx5_1, a storage NIC), the fleet check over hostvars
and the check of a file's text."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import hashlib
import os

import pytest
import yaml
from ansible.errors import AnsibleFilterError

from ansible_collections.rdma.fabric.plugins.filter import nccl_env as F
from ansible_collections.rdma.fabric.plugins.module_utils import _rdma_facts as rf
from ansible_collections.rdma.fabric.plugins.plugin_utils import _role_specs as role_specs
from ansible_collections.rdma.fabric.tests.unit.plugins.module_utils.test_rdma_facts import TOPO_TEXT, host_sysfs

ROLE = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "roles", "nccl_env")
with open(os.path.join(ROLE, "defaults", "main.yml")) as _handle:
    DEFAULTS = yaml.safe_load(_handle)


def config(**changes):
    values = dict(DEFAULTS, nccl_env_roce_dscp=26)   # the default's template, as Ansible resolves it
    values.update(changes)
    return values


@pytest.fixture
def facts(tmp_path, monkeypatch):
    host_sysfs(tmp_path, monkeypatch)
    subsets = set(rf.SUBSETS)
    raw = {"devices": rf.read_rdma_sysfs(subsets), "topo_text": TOPO_TEXT, "gpu_list": None,
           "gpu_pci": {}, "errors": []}
    return rf.derive(raw, subsets)


# ------------------------------------------------------------------ nccl_env_config_errors

def test_defaults_have_no_error():
    assert F.config_errors(config()) == []


def test_dscp_default_is_the_roce_qos_dscp_else_26():
    assert DEFAULTS["nccl_env_roce_dscp"] == "{{ roce_qos_roce_dscp | default(26) }}"
    assert F.config_errors(config(nccl_env_roce_dscp="26")) == []


@pytest.mark.parametrize("name, value, expected", [
    ("nccl_env_roce_dscp", 64, "nccl_env_roce_dscp must be an integer 0-63 or null (null leaves the NCCL variable "
                               "out), got 64"),
    ("nccl_env_roce_dscp", "2x", "nccl_env_roce_dscp must be an integer 0-63 or null"),
    ("nccl_env_ib_sl", 16, "nccl_env_ib_sl must be an integer 0-15 or null"),
    ("nccl_env_ib_qps_per_connection", 0, "nccl_env_ib_qps_per_connection must be an integer 1-128"),
    ("nccl_env_ib_timeout", 32, "nccl_env_ib_timeout must be an integer 1-31"),
    ("nccl_env_cross_nic", 3, "nccl_env_cross_nic must be an integer 0-2"),
    ("nccl_env_gid_selection", "auto", "nccl_env_gid_selection must be one of index, address_family, none, "
                                       "got 'auto'"),
    ("nccl_env_fleet_check", "ignore", "nccl_env_fleet_check must be one of fail, warn, skip, got 'ignore'"),
    ("nccl_env_roce_ecn", "ce", "nccl_env_roce_ecn must be one of ect0, ect1, not-ect, got 'ce'"),
    ("nccl_env_conf_path", "etc/nccl.conf", "nccl_env_conf_path must be an absolute path, got 'etc/nccl.conf'"),
    ("nccl_env_environment_file", "default/nccl", "nccl_env_environment_file must be an absolute path"),
    ("nccl_env_ib_hca_exclude", "mlx5_2", "nccl_env_ib_hca_exclude must be a list of names, got 'mlx5_2'"),
    ("nccl_env_extra", {"NCCL_IB_HCA": "=mlx5_0", "NCCL_IB_TC": 106},
     "nccl_env_extra sets NCCL_IB_HCA, NCCL_IB_TC, which the role sets itself; use NCCL_IB_HCA: "
     "nccl_env_ib_hca_ports / nccl_env_ib_hca_exclude (derived from the rails); NCCL_IB_TC: "
     "nccl_env_roce_dscp / nccl_env_roce_ecn"),
    ("nccl_env_extra", {"NCCL_IB_HCAS": "=mlx5_0"}, "NCCL_IB_HCAS is not a known NCCL variable; did you mean "
                                                    "NCCL_IB_HCA?"),
    ("nccl_env_extra", {"NCCL_DEBUG": "'INFO'"}, "nccl_env_extra.NCCL_DEBUG=\"'INFO'\": NCCL_DEBUG: value 'INFO' "
                                                 "is quoted"),
    ("nccl_env_net_gdr_level", "NODE", "nccl_env_net_gdr_level='NODE': NCCL_NET_GDR_LEVEL NODE"),
    ("nccl_env_gid_addresses", {"mlx5_0": "10.0.0.300"}, "nccl_env_gid_addresses.mlx5_0: '10.0.0.300' is not an "
                                                         "IPv4 address"),
])
def test_each_bad_value_is_named(name, value, expected):
    errors = F.config_errors(config(**{name: value}))
    assert len(errors) == 1 and expected in errors[0], errors


def test_gid_addresses_need_index_selection():
    errors = F.config_errors(config(nccl_env_gid_addresses={"mlx5_0": "10.0.0.1"},
                                    nccl_env_gid_selection="address_family"))
    assert errors == ["nccl_env_gid_addresses ({'mlx5_0': '10.0.0.1'}) choose the GID of NCCL_IB_GID_INDEX and "
                      "need nccl_env_gid_selection: index (it is address_family)"]


def test_null_options_are_fine_and_unknown_names_can_be_allowed():
    assert F.config_errors(config(nccl_env_roce_dscp=None, nccl_env_ib_sl="", nccl_env_extra={"MY_PLUGIN": "1"},
                                  nccl_env_allow_unknown=["MY_PLUGIN"])) == []


def test_the_role_vars_pass_every_public_variable():
    with open(os.path.join(ROLE, "vars", "main.yml")) as handle:
        assert yaml.safe_load(handle)["__nccl_env_config"] == "{{ lookup('rdma.fabric.role_spec', 'nccl_env_config') }}"
    read = role_specs.nccl_env_config(lambda name, *default: name)
    assert sorted(read) == sorted(DEFAULTS)
    assert all(read[name] == name for name in read)    # each key is its own variable


# ------------------------------------------------------------------ nccl_env_node

def test_node_settings_and_text(facts):
    node = F.node(facts, config(), "gpu1")
    assert node["errors"] == [] and node["active"] is True and node["fabric"] == "roce"
    assert node["settings"] == {"NCCL_IB_HCA": "=mlx5_0,mlx5_1", "NCCL_IB_GID_INDEX": 3, "NCCL_IB_TC": 106}
    rails = node["rails"]
    assert node["text"] == (
        "# Managed by Ansible (rdma.fabric.nccl_env): local changes are overwritten.\n"
        "# Rails (GPU -> device:port netdev, PCIe relation):\n"
        + "".join("#   %s -> %s:%s %s %s\n" % (r["gpu"], r["device"], r["port"], r["netdev"], r["relation"])
                  for r in rails)
        + "NCCL_IB_GID_INDEX=3\nNCCL_IB_HCA==mlx5_0,mlx5_1\nNCCL_IB_TC=106\n")
    assert [r["device"] for r in rails] == ["mlx5_0", "mlx5_1"]


def test_node_options_extra_and_no_header_rails(facts):
    node = F.node(facts, config(nccl_env_header_rails=False, nccl_env_roce_dscp=None, nccl_env_ib_timeout=20,
                                nccl_env_extra={"NCCL_DEBUG": "WARN", "NCCL_ALGO": None},
                                nccl_env_gid_selection="address_family"))
    assert node["settings"] == {"NCCL_IB_HCA": "=mlx5_0,mlx5_1", "NCCL_IB_ADDR_FAMILY": "AF_INET",
                                "NCCL_IB_ROCE_VERSION_NUM": 2, "NCCL_IB_TIMEOUT": 20, "NCCL_DEBUG": "WARN"}
    assert node["text"].splitlines()[0:2] == ["# Managed by Ansible (rdma.fabric.nccl_env): local changes are "
                                              "overwritten.", "NCCL_DEBUG=WARN"]


def test_node_exclude_leaves_a_rail_out(facts):
    node = F.node(facts, config(nccl_env_ib_hca_exclude=["mlx5_1"]))
    assert node["settings"]["NCCL_IB_HCA"] == "=mlx5_0"


def test_rail_without_roce_v2_ipv4_gid_names_rail_and_gids(facts):
    broken = copy.deepcopy(facts)
    broken["rails"][1]["ipv4_gids"] = [g for g in broken["rails"][1]["ipv4_gids"] if g["type"] != "RoCE v2"]
    node = F.node(broken, config(), "gpu1")
    assert len(node["errors"]) == 1
    assert node["errors"][0].startswith("gpu1: rail %s -> mlx5_1 port 1 (netdev ens2np0) has no RoCE v2 GID with an "
                                        "IPv4 address on that netdev" % broken["rails"][1]["gpu"])
    assert node["text"] is None


def test_rails_with_different_gid_indexes_is_an_error(facts):
    node = F.node(facts, config(nccl_env_gid_addresses={"mlx5_1": "10.100.0.1"}), "gpu1")
    assert len(node["errors"]) == 1 and "mlx5_0=3, mlx5_1=11" in node["errors"][0]


def test_environment_file_refuses_values_a_shell_would_change(facts):
    node = F.node(facts, config(nccl_env_environment_file="/etc/default/nccl",
                                nccl_env_extra={"NCCL_DEBUG_SUBSYS": "INIT NET"}))
    assert node["errors"] == ["nccl_env_environment_file is set, but the values of NCCL_DEBUG_SUBSYS hold characters "
                              "that systemd EnvironmentFile= or a shell would not read verbatim (allowed: letters, "
                              "digits and _ . , : = ^ / + @ % -)"]


def test_node_without_rails_fails_or_is_skipped(facts):
    empty = dict(facts, rails=[], gpus=[], topology=None)
    node = F.node(empty, config(), "cpu1")
    assert node["active"] is False and len(node["errors"]) == 1
    assert node["errors"][0].startswith("cpu1 has no NCCL rail (a GPU with a nearest RDMA NIC): RDMA devices: "
                                        "mlx5_0, mlx5_1, mlx5_2, mlx5_10; GPUs: 0 (no nvidia-smi or no GPU topology)")
    node = F.node(empty, config(nccl_env_no_rails="skip"), "cpu1")
    assert node["errors"] == [] and "nccl_env_no_rails is skip" in node["notes"][0]


def test_down_rail_is_a_warning(facts):
    down = copy.deepcopy(facts)
    down["rails"][0]["state"] = "DOWN"
    node = F.node(down, config())
    assert node["errors"] == [] and node["warnings"][0].startswith("WARNING: mlx5_0 (")


def test_node_needs_rdma_facts():
    with pytest.raises(AnsibleFilterError, match="expected ansible_facts.rdma"):
        F.node({}, config())


# ------------------------------------------------------------------ nccl_env_verify_errors

def test_verify_the_rendered_text_is_clean(facts):
    node = F.node(facts, config())
    assert F.verify_errors(node["text"], node, facts["extra_nics"]) == []


def test_verify_finds_edited_values_hca_and_gid(facts):
    node = F.node(facts, config())
    text = node["text"].replace("NCCL_IB_HCA==mlx5_0,mlx5_1", "NCCL_IB_HCA==mlx5_0,mlx5_2") \
        .replace("NCCL_IB_GID_INDEX=3", "NCCL_IB_GID_INDEX=0") + "NCCL_DEBUG=INFO\n"
    problems = F.verify_errors(text, node, ["mlx5_2"])
    assert "NCCL_DEBUG=INFO is in the file but not intended" in problems
    assert "NCCL_IB_GID_INDEX is '0' in the file, intended '3'" in problems
    assert any(p.startswith("NCCL_IB_HCA==mlx5_0,mlx5_2 lists mlx5_0, mlx5_2; the rails in GPU order are mlx5_0, "
                            "mlx5_1 and the NICs that are not rails are mlx5_2") for p in problems), problems
    assert any(p.startswith("NCCL_IB_GID_INDEX=0 is not a RoCE v2 GID with an IPv4 address on mlx5_0") for p in problems)


def after_files(text, **changes):
    entry = {"state": "present", "checksum": hashlib.sha256(text.encode("utf-8")).hexdigest(), "mode": "0644",
             "owner": "root", "group": "root"}
    entry.update(changes)
    return {"/etc/nccl.conf": entry}


def test_verify_from_what_node_files_read_back(facts):
    node = F.node(facts, config())
    assert F.verify_errors(after_files(node["text"]), node, facts["extra_nics"]) == []
    problems = F.verify_errors(after_files(node["text"] + "NCCL_DEBUG=INFO\n", mode="0600", owner="nobody"), node)
    assert problems[0].startswith("/etc/nccl.conf: content differs from the intended text (sha256 ")
    assert problems[1:] == ["/etc/nccl.conf: mode 0600, intended 0644",
                            "/etc/nccl.conf: owned by nobody:root, intended root:root"]
    assert F.verify_errors({"/etc/nccl.conf": {"state": "absent"}}, node) == ["/etc/nccl.conf: missing"]
    assert F.verify_errors(after_files(node["text"], owner="nccl"), node, owner="nccl") == []


def test_verify_checks_the_intended_text_too(facts):
    node = F.node(facts, config())
    wrong = dict(node, settings=dict(node["settings"], NCCL_IB_TC=104))
    assert F.verify_errors(after_files(node["text"]), wrong) == [
        "the intended text: NCCL_IB_TC is '106' in the file, intended '104'"]


def test_verify_needs_node_files_state():
    with pytest.raises(AnsibleFilterError, match="expected after.files"):
        F.verify_errors(None, {"settings": {}, "rails": []})
    with pytest.raises(AnsibleFilterError, match="expected the nccl_env_node result"):
        F.verify_errors({"/etc/nccl.conf": {}}, {"settings": {}, "rails": [], "text": None})


# ------------------------------------------------------------------ nccl_env_fleet

class Vars(dict):
    """Stands for one host of Ansible's hostvars; counts the reads of the node key."""
    reads = 0

    def __getitem__(self, key):
        if key == "__nccl_env_node":
            Vars.reads += 1
        return dict.__getitem__(self, key)


def test_fleet_reads_each_host_once_and_names_the_outlier(facts):
    good = F.node(facts, config())
    odd = F.node(facts, config(nccl_env_roce_dscp=24))
    hostvars = {"a": Vars(__nccl_env_node=good, group_names=["gpu_nodes"]),
                "b": Vars(__nccl_env_node=good, group_names=["gpu_nodes"]),
                "c": Vars(__nccl_env_node=odd, group_names=["gpu_nodes"]),
                "d": Vars(group_names=["gpu_nodes"])}                          # did not get that far
    Vars.reads = 0
    report = F.fleet(hostvars, ["a", "b", "c", "d"])
    assert Vars.reads == 3
    assert report["consistent"] is False and sorted(report["messages"]) == ["c"]
    assert report["messages"]["c"] == ["fabric roce: NCCL_IB_TC = 98, most hosts have 106"]
    assert F.fleet(hostvars, ["a", "b"])["consistent"] is True


def test_fleet_leaves_out_hosts_without_rails(facts):
    skipped = F.node(dict(facts, rails=[]), config(nccl_env_no_rails="skip"))
    hostvars = {"a": Vars(__nccl_env_node=F.node(facts, config()), group_names=[]),
                "b": Vars(__nccl_env_node=skipped, group_names=[])}
    assert F.fleet(hostvars, ["a", "b"])["compared"][0]["hosts"] == ["a"]


def test_filter_names():
    assert sorted(F.FilterModule().filters()) == ["nccl_env_config_errors", "nccl_env_fleet", "nccl_env_node",
                                                  "nccl_env_verify_errors"]


# ------------------------------------------------------------------ NCCL_DMABUF_ENABLE
def _gdr(release, open_module, loaded):
    """ansible_facts.gdr's peer_memory as gdr_readiness decides it (the one dma-buf decision)."""
    from ansible_collections.rdma.fabric.plugins.module_utils import _gdr_readiness
    return {"peer_memory": _gdr_readiness.peer_memory_state(set(loaded), open_module, release)}


@pytest.mark.parametrize("release, open_module, loaded, expected", [
    ("6.8.0-45-generic", True, [], 1),                     # open module on >= 5.12, no peer memory
    ("6.8.0-45-generic", True, ["nvidia_peermem"], 0),     # peer memory present: NCCL uses it
    ("5.11.0-27-generic", True, [], 0),                    # kernel too old for dma-buf
    ("6.8.0-45-generic", False, [], 0),                    # proprietary module: no dma-buf
    ("5.12.0", True, [], 1),
])
def test_node_dmabuf_enable_from_the_gdr_facts(facts, release, open_module, loaded, expected):
    node = F.node(facts, config(nccl_env_dmabuf_enable="auto"), "gpu1", _gdr(release, open_module, loaded))
    assert node["errors"] == []
    assert node["settings"]["NCCL_DMABUF_ENABLE"] == expected
    assert "NCCL_DMABUF_ENABLE=%d\n" % expected in node["text"]


def test_node_dmabuf_unset_or_without_gdr_facts(facts):
    gdr = _gdr("6.8.0-45-generic", True, [])
    assert "NCCL_DMABUF_ENABLE" not in F.node(facts, config(nccl_env_dmabuf_enable="unset"), "gpu1", gdr)["settings"]
    assert "NCCL_DMABUF_ENABLE" not in F.node(facts, config(), "gpu1", gdr)["settings"]     # the default
    node = F.node(facts, config(nccl_env_dmabuf_enable="auto"), "gpu1")
    assert "NCCL_DMABUF_ENABLE" not in node["settings"]
    assert [n for n in node["notes"] if "NCCL_DMABUF_ENABLE is left out" in n]
    assert F.config_errors(config(nccl_env_dmabuf_enable="yes")) == [
        "nccl_env_dmabuf_enable must be one of auto, unset, got 'yes'"]
    errors = F.config_errors(config(nccl_env_extra={"NCCL_DMABUF_ENABLE": 1}))
    assert len(errors) == 1 and "nccl_env_dmabuf_enable" in errors[0]


def test_node_dmabuf_and_the_health_check_agree(facts):
    from ansible_collections.rdma.fabric.plugins.module_utils import _health
    for loaded in ([], ["nvidia_peermem"]):
        gdr = _gdr("6.8.0-45-generic", True, loaded)
        value = F.node(facts, config(nccl_env_dmabuf_enable="auto"), "gpu1", gdr)["settings"]["NCCL_DMABUF_ENABLE"]
        obs = {"facts": {"devices": {}}, "gdr": dict(gdr, gpu_count=1, gpus=[])}
        assert [f["check"] for f in _health.judge(obs, {"dmabuf_enable": value})] == []
        assert [f["check"] for f in _health.judge(obs, {"dmabuf_enable": 1 - value})] == ["dmabuf"]
