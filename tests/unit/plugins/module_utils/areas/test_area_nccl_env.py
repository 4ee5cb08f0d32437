# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The nccl_env area object (plugins/module_utils/areas/nccl_env.py) through the
rdma.fabric.area_* filters: the settings from the argument spec and their checks, the node's
plan from rdma_facts (tmp sysfs tree + topology of test_rdma_facts: two RoCE rails
mlx5_0/mlx5_1, a storage NIC), the files and the node_files call, the records of the role's
verify and the drift check, and the fleet check over hostvars."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import hashlib
import os

import pytest
import yaml
from ansible.errors import AnsibleError, AnsibleFilterError

from ansible_collections.rdma.fabric.plugins.filter.area import FilterModule
from ansible_collections.rdma.fabric.plugins.module_utils.facts import _rdma_facts as rf
from ansible_collections.rdma.fabric.plugins.module_utils.drift import _drift_areas as A
from ansible_collections.rdma.fabric.plugins.module_utils.areas import nccl_env as N
from ansible_collections.rdma.fabric.plugins.plugin_utils import _role_specs as S
from ansible_collections.rdma.fabric.tests.unit.plugins.module_utils.facts.test_rdma_facts import TOPO_TEXT, host_sysfs

F = FilterModule().filters()
ROLE = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "..", "roles", "nccl_env")
with open(os.path.join(ROLE, "defaults", "main.yml")) as _handle:
    DEFAULTS = yaml.safe_load(_handle)


def variables(host="gpu1", **changes):
    values = dict(DEFAULTS, nccl_env_roce_dscp=26)   # the default's template, as Ansible resolves it
    values.update(changes)
    values["inventory_hostname"] = host
    return values


def spec(host="gpu1", **changes):
    return N.spec(variables(host, **changes), None)


def errors(**changes):
    return F["area_errors"](spec(**changes), "nccl_env")


def plan(facts, host="gpu1", gdr=None, **changes):
    return F["area_plan"]({"rdma": facts, "gdr": gdr}, "nccl_env", spec(host, **changes))


@pytest.fixture
def facts(tmp_path, monkeypatch):
    host_sysfs(tmp_path, monkeypatch)
    subsets = set(rf.SUBSETS)
    raw = {"devices": rf.read_rdma_sysfs(subsets), "topo_text": TOPO_TEXT, "gpu_list": None,
           "gpu_pci": {}, "errors": []}
    return rf.derive(raw, subsets)


# ------------------------------------------------------------------ settings and their checks

def test_defaults_have_no_error():
    assert errors() == []


def test_dscp_default_is_the_roce_qos_dscp_else_26():
    assert DEFAULTS["nccl_env_roce_dscp"] == "{{ roce_qos_roce_dscp | default(26) }}"
    assert errors(nccl_env_roce_dscp="26") == []


def test_settings_are_the_argument_spec_variables_without_prefix_flags_converted():
    options = S.role_options("nccl_env")
    assert sorted(options) == sorted(DEFAULTS)
    flags = sorted(name[len("nccl_env_"):] for name, option in options.items() if option.get("type") == "bool")
    assert sorted(N.FLAGS) == flags
    settings = N.settings(variables(nccl_env_verify="no", nccl_env_header_rails="yes"))
    assert sorted(settings) == sorted(name[len("nccl_env_"):] for name in DEFAULTS)
    assert settings["verify"] is False and settings["header_rails"] is True
    with pytest.raises(Exception, match=r"nccl_env_verify='maybe': expected a boolean"):
        N.settings(variables(nccl_env_verify="maybe"))


def test_the_role_var_is_the_area_spec_built_from_the_checked_variables():
    with open(os.path.join(ROLE, "vars", "main.yml")) as handle:
        assert yaml.safe_load(handle)["__nccl_env_spec"] == "{{ lookup('rdma.fabric.role_spec', 'nccl_env') }}"
    values = variables(host="gpu 7")

    def get(name, *default):
        if name in values:
            return values[name]
        if default:
            return default[0]
        raise KeyError(name)
    built = S.build("nccl_env", get, None)
    assert built == spec("gpu 7") and built["host"] == "gpu 7"
    values["nccl_env_ib_sl"] = "sixteen"
    with pytest.raises(AnsibleError, match=r"rdma.fabric.nccl_env: nccl_env_ib_sl='sixteen'"):
        S.build("nccl_env", get, None)


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
def test_each_bad_value_is_named(facts, name, value, expected):
    found = errors(**{name: value})
    assert len(found) == 1 and expected in found[0], found
    with pytest.raises(AnsibleFilterError, match="^nccl_env: "):
        plan(facts, **{name: value})


def test_gid_addresses_need_index_selection():
    assert errors(nccl_env_gid_addresses={"mlx5_0": "10.0.0.1"}, nccl_env_gid_selection="address_family") == [
        "nccl_env_gid_addresses ({'mlx5_0': '10.0.0.1'}) choose the GID of NCCL_IB_GID_INDEX and "
        "need nccl_env_gid_selection: index (it is address_family)"]


def test_null_options_are_fine_and_unknown_names_can_be_allowed():
    assert errors(nccl_env_roce_dscp=None, nccl_env_ib_sl="", nccl_env_extra={"MY_PLUGIN": "1"},
                  nccl_env_allow_unknown=["MY_PLUGIN"]) == []


# ------------------------------------------------------------------ the plan

def test_plan_settings_text_files_and_the_node_files_call(facts):
    planned = plan(facts)
    assert planned["errors"] == [] and planned["active"] is True and planned["fabric"] == "roce"
    assert planned["settings"] == {"NCCL_IB_HCA": "=mlx5_0,mlx5_1", "NCCL_IB_GID_INDEX": 3, "NCCL_IB_TC": 106}
    rails = planned["rails"]
    assert planned["text"] == (
        "# Managed by Ansible (rdma.fabric.nccl_env): local changes are overwritten.\n"
        "# Rails (GPU -> device:port netdev, PCIe relation):\n"
        + "".join("#   %s -> %s:%s %s %s\n" % (r["gpu"], r["device"], r["port"], r["netdev"], r["relation"])
                  for r in rails)
        + "NCCL_IB_GID_INDEX=3\nNCCL_IB_HCA==mlx5_0,mlx5_1\nNCCL_IB_TC=106\n")
    assert [r["device"] for r in rails] == ["mlx5_0", "mlx5_1"]
    assert planned["files"] == [{"path": "/etc/nccl.conf", "content": planned["text"], "mode": "0644",
                                 "owner": "root", "group": "root"}]
    assert planned["requests"] == [{"resource": "node_files", "name": "NCCL files", "options": {"content": True},
                                    "config": {"files": planned["files"], "units": []}}]
    assert planned["state"]["files"]["/etc/nccl.conf"]["checksum"] == \
        hashlib.sha256(planned["text"].encode("utf-8")).hexdigest()
    assert planned["fleet"] == {"groups": [], "per_node": ["NCCL_IB_HCA", "NCCL_IB_GID_INDEX"]}
    # ansible_facts.rdma alone plans the same (no dma-buf decision without gdr facts)
    assert F["area_plan"](facts, "nccl_env", spec()) == planned


def test_plan_environment_file_owner_and_group(facts):
    planned = plan(facts, nccl_env_environment_file="/etc/default/nccl", nccl_env_file_owner="nccl",
                   nccl_env_file_group="hpc")
    assert [(f["path"], f["owner"], f["group"]) for f in planned["files"]] == [
        ("/etc/nccl.conf", "nccl", "hpc"), ("/etc/default/nccl", "nccl", "hpc")]
    assert all(f["content"] == planned["text"] for f in planned["files"])


def test_plan_options_extra_and_no_header_rails(facts):
    planned = plan(facts, nccl_env_header_rails=False, nccl_env_roce_dscp=None, nccl_env_ib_timeout=20,
                   nccl_env_extra={"NCCL_DEBUG": "WARN", "NCCL_ALGO": None}, nccl_env_gid_selection="address_family")
    assert planned["settings"] == {"NCCL_IB_HCA": "=mlx5_0,mlx5_1", "NCCL_IB_ADDR_FAMILY": "AF_INET",
                                   "NCCL_IB_ROCE_VERSION_NUM": 2, "NCCL_IB_TIMEOUT": 20, "NCCL_DEBUG": "WARN"}
    assert planned["text"].splitlines()[0:2] == ["# Managed by Ansible (rdma.fabric.nccl_env): local changes are "
                                                 "overwritten.", "NCCL_DEBUG=WARN"]


def test_plan_exclude_leaves_a_rail_out(facts):
    assert plan(facts, nccl_env_ib_hca_exclude=["mlx5_1"])["settings"]["NCCL_IB_HCA"] == "=mlx5_0"


def test_rail_without_roce_v2_ipv4_gid_names_rail_and_gids(facts):
    broken = copy.deepcopy(facts)
    broken["rails"][1]["ipv4_gids"] = [g for g in broken["rails"][1]["ipv4_gids"] if g["type"] != "RoCE v2"]
    planned = plan(broken)
    assert len(planned["errors"]) == 1
    assert planned["errors"][0].startswith("gpu1: rail %s -> mlx5_1 port 1 (netdev ens2np0) has no RoCE v2 GID with "
                                           "an IPv4 address on that netdev" % broken["rails"][1]["gpu"])
    assert planned["text"] is None and planned["files"] == [] and planned["requests"] == []


def test_rails_with_different_gid_indexes_is_an_error(facts):
    planned = plan(facts, nccl_env_gid_addresses={"mlx5_1": "10.100.0.1"})
    assert len(planned["errors"]) == 1 and "mlx5_0=3, mlx5_1=11" in planned["errors"][0]


def test_environment_file_refuses_values_a_shell_would_change(facts):
    planned = plan(facts, nccl_env_environment_file="/etc/default/nccl",
                   nccl_env_extra={"NCCL_DEBUG_SUBSYS": "INIT NET"})
    assert planned["errors"] == ["nccl_env_environment_file is set, but the values of NCCL_DEBUG_SUBSYS hold "
                                 "characters that systemd EnvironmentFile= or a shell would not read verbatim "
                                 "(allowed: letters, digits and _ . , : = ^ / + @ % -)"]


def test_node_without_rails_fails_or_is_skipped(facts):
    empty = dict(facts, rails=[], gpus=[], topology=None)
    planned = plan(empty, host="cpu1")
    assert planned["active"] is False and len(planned["errors"]) == 1
    assert planned["errors"][0].startswith("cpu1 has no NCCL rail (a GPU with a nearest RDMA NIC): RDMA devices: "
                                           "mlx5_0, mlx5_1, mlx5_2, mlx5_10; GPUs: 0 (no nvidia-smi or no GPU "
                                           "topology)")
    planned = plan(empty, host="cpu1", nccl_env_no_rails="skip")
    assert planned["errors"] == [] and "nccl_env_no_rails is skip" in planned["notes"][0]
    assert planned["requests"] == [] and planned["files"] == []


def test_down_rail_is_a_warning(facts):
    down = copy.deepcopy(facts)
    down["rails"][0]["state"] = "DOWN"
    planned = plan(down)
    assert planned["errors"] == [] and planned["warnings"][0].startswith("WARNING: mlx5_0 (")


def test_plan_needs_rdma_facts():
    with pytest.raises(AnsibleFilterError, match="expected ansible_facts.rdma"):
        F["area_plan"]({}, "nccl_env", spec())


def test_text_errors_find_edited_values_hca_and_gid(facts):
    planned = plan(facts)
    assert N.text_errors(planned["text"], planned, facts["extra_nics"]) == []
    text = planned["text"].replace("NCCL_IB_HCA==mlx5_0,mlx5_1", "NCCL_IB_HCA==mlx5_0,mlx5_2") \
        .replace("NCCL_IB_GID_INDEX=3", "NCCL_IB_GID_INDEX=0") + "NCCL_DEBUG=INFO\n"
    problems = N.text_errors(text, planned, ["mlx5_2"])
    assert "NCCL_DEBUG=INFO is in the file but not intended" in problems
    assert "NCCL_IB_GID_INDEX is '0' in the file, intended '3'" in problems
    assert any(p.startswith("NCCL_IB_HCA==mlx5_0,mlx5_2 lists mlx5_0, mlx5_2; the rails in GPU order are mlx5_0, "
                            "mlx5_1 and the NICs that are not rails are mlx5_2") for p in problems), problems
    assert any(p.startswith("NCCL_IB_GID_INDEX=0 is not a RoCE v2 GID with an IPv4 address on mlx5_0") for p in problems)


# ------------------------------------------------------------------ records: the role's verify and the drift check

def read_back(text, **changes):
    """What node_files reports of /etc/nccl.conf holding ``text`` (content only when read)."""
    entry = {"state": "present", "checksum": hashlib.sha256(text.encode("utf-8")).hexdigest(), "mode": "0644",
             "owner": "root", "group": "root"}
    entry.update(changes)
    return {"files": {"/etc/nccl.conf": entry}, "units": {}}


def verify(actual, planned):
    """The role's verify: the files as node_files left them against the plan's state."""
    return F["area_records"]({"node_files": {"before": actual, "after": planned["state"]}}, "nccl_env", "gpu1")


def test_verify_of_the_files_read_back(facts):
    planned = plan(facts)
    assert verify(read_back(planned["text"]), planned) == []
    changed = planned["text"] + "NCCL_DEBUG=INFO\n"
    found = verify(read_back(changed, mode="0600", owner="nobody"), planned)
    assert [(r["object"], r["setting"], r["expected"], r["actual"]) for r in found] == [
        ("/etc/nccl.conf", "content", planned["state"]["files"]["/etc/nccl.conf"]["checksum"],
         hashlib.sha256(changed.encode("utf-8")).hexdigest()),
        ("/etc/nccl.conf", "mode", "0644", "0600"), ("/etc/nccl.conf", "owner", "root", "nobody")]
    # with the text read (diff mode), one record per NCCL variable, as the drift check names it
    found = verify(read_back(changed, content=changed), planned)
    assert [(r["host"], r["area"], r["object"], r["setting"], r["expected"], r["actual"]) for r in found] == [
        ("gpu1", "nccl_env", "/etc/nccl.conf", "NCCL_DEBUG", None, "INFO")]
    assert [r["setting"] for r in verify({"files": {"/etc/nccl.conf": {"state": "absent"}}}, planned)] == [
        "NCCL_IB_GID_INDEX", "NCCL_IB_HCA", "NCCL_IB_TC"]


def test_skipped_and_failed_results_have_no_records():
    assert F["area_records"]({"node_files": {"skipped": True}}, "nccl_env", "n") == []
    assert F["area_records"]({"node_files": {"failed": True, "msg": "x"}}, "nccl_env", "n") == []


def test_the_drift_check_runs_the_plans_call_and_names_records_as_the_verify(facts):
    the_spec = spec()
    inputs = A.plan_inputs("nccl_env", the_spec, {"rdma": facts, "gdr": {}}, "gpu1")
    requests, judged = A.requests_of([inputs], "gpu1")
    planned = plan(facts)
    assert judged == [] and [A.module_request(r) for r in requests] == [dict(planned["requests"][0], area="nccl_env")]
    drifted = planned["text"].replace("NCCL_IB_GID_INDEX=3", "NCCL_IB_GID_INDEX=5")
    before = read_back(drifted, content=drifted)
    after = {"files": {"/etc/nccl.conf": dict(planned["state"]["files"]["/etc/nccl.conf"])}, "units": {}}
    entries = [{"area": "nccl_env", "resource": "node_files", "name": "NCCL files", "failed": False,
                "result": {"changed": True, "before": before, "after": after}}]
    records = A.judge("gpu1", requests, entries)
    assert [(r["object"], r["setting"], r["expected"], r["actual"]) for r in records] == [
        ("/etc/nccl.conf", "NCCL_IB_GID_INDEX", "3", "5")]
    assert records == verify(before, planned)


def test_the_drift_check_reports_config_and_plan_errors_as_config_records(facts):
    inputs = A.plan_inputs("nccl_env", spec(nccl_env_ib_sl=16), {"rdma": facts}, "gpu1")
    requests, judged = A.requests_of([inputs], "gpu1")
    assert requests == [] and judged[0]["setting"] == "config" and "nccl_env_ib_sl" in judged[0]["actual"]
    inputs = A.plan_inputs("nccl_env", spec(), {"rdma": dict(facts, rails=[], gpus=[])}, "gpu1")
    requests, judged = A.requests_of([inputs], "gpu1")
    assert requests == [] and judged[0]["actual"].startswith("gpu1 has no NCCL rail")
    skipped = A.plan_inputs("nccl_env", spec(nccl_env_no_rails="skip"), {"rdma": dict(facts, rails=[])}, "gpu1")
    assert A.requests_of([skipped], "gpu1") == ([], [])


# ------------------------------------------------------------------ the fleet check

class Vars(dict):
    """Stands for one host of Ansible's hostvars; counts the reads of the plan."""
    reads = 0

    def __getitem__(self, key):
        if key == "__nccl_env":
            Vars.reads += 1
        return dict.__getitem__(self, key)


def test_fleet_reads_each_host_once_and_names_the_outlier(facts):
    good = plan(facts)
    odd = plan(facts, nccl_env_roce_dscp=24)
    hostvars = {"a": Vars(__nccl_env=good, group_names=["gpu_nodes"]),
                "b": Vars(__nccl_env=good, group_names=["gpu_nodes"]),
                "c": Vars(__nccl_env=odd, group_names=["gpu_nodes"]),
                "d": Vars(group_names=["gpu_nodes"])}                          # did not get that far
    Vars.reads = 0
    report = F["area_fleet"](hostvars, "nccl_env", ["a", "b", "c", "d"], good["fleet"])
    assert Vars.reads == 3
    assert report["consistent"] is False and sorted(report["messages"]) == ["c"]
    assert report["messages"]["c"] == ["fabric roce: NCCL_IB_TC = 98, most hosts have 106"]
    assert F["area_fleet"](hostvars, "nccl_env", ["a", "b"], good["fleet"])["consistent"] is True


def test_fleet_leaves_out_hosts_without_rails_and_compares_within_groups(facts):
    skipped = plan(dict(facts, rails=[]), nccl_env_no_rails="skip")
    hostvars = {"a": Vars(__nccl_env=plan(facts), group_names=["x"]), "b": Vars(__nccl_env=skipped, group_names=[])}
    assert F["area_fleet"](hostvars, "nccl_env", ["a", "b"])["compared"][0]["hosts"] == ["a"]
    grouped = plan(facts, nccl_env_fleet_groups=["x"])["fleet"]
    assert F["area_fleet"](hostvars, "nccl_env", ["a", "b"], grouped)["compared"][0]["scope"] == "group x"


def test_fleet_of_an_area_without_one_and_bad_options_are_filter_errors():
    with pytest.raises(AnsibleFilterError, match="area_fleet: the roce_qos area has no fleet check"):
        F["area_fleet"]({}, "roce_qos", [])
    with pytest.raises(AnsibleFilterError, match="nccl_env fleet: groups must be a list"):
        F["area_fleet"]({}, "nccl_env", [], {"groups": "gpu_nodes"})


def test_no_nccl_filter_is_left():
    plugins = os.path.join(ROLE, "..", "..", "plugins", "filter")
    assert not [name for name in os.listdir(plugins) if name.startswith("nccl")]


# ------------------------------------------------------------------ NCCL_DMABUF_ENABLE
def _gdr(release, open_module, loaded):
    """ansible_facts.gdr's peer_memory as gdr_readiness decides it (the one dma-buf decision)."""
    from ansible_collections.rdma.fabric.plugins.module_utils.facts import _gdr_readiness
    return {"peer_memory": _gdr_readiness.peer_memory_state(set(loaded), open_module, release)}


@pytest.mark.parametrize("release, open_module, loaded, expected", [
    ("6.8.0-45-generic", True, [], 1),                     # open module on >= 5.12, no peer memory
    ("6.8.0-45-generic", True, ["nvidia_peermem"], 0),     # peer memory present: NCCL uses it
    ("5.11.0-27-generic", True, [], 0),                    # kernel too old for dma-buf
    ("6.8.0-45-generic", False, [], 0),                    # proprietary module: no dma-buf
    ("5.12.0", True, [], 1),
])
def test_plan_dmabuf_enable_from_the_gdr_facts(facts, release, open_module, loaded, expected):
    planned = plan(facts, gdr=_gdr(release, open_module, loaded), nccl_env_dmabuf_enable="auto")
    assert planned["errors"] == []
    assert planned["settings"]["NCCL_DMABUF_ENABLE"] == expected
    assert "NCCL_DMABUF_ENABLE=%d\n" % expected in planned["text"]


def test_plan_dmabuf_unset_or_without_gdr_facts(facts):
    gdr = _gdr("6.8.0-45-generic", True, [])
    assert "NCCL_DMABUF_ENABLE" not in plan(facts, gdr=gdr, nccl_env_dmabuf_enable="unset")["settings"]
    assert "NCCL_DMABUF_ENABLE" not in plan(facts, gdr=gdr)["settings"]     # the default
    planned = plan(facts, nccl_env_dmabuf_enable="auto")
    assert "NCCL_DMABUF_ENABLE" not in planned["settings"]
    assert [n for n in planned["notes"] if "NCCL_DMABUF_ENABLE is left out" in n]
    assert errors(nccl_env_dmabuf_enable="yes") == ["nccl_env_dmabuf_enable must be one of auto, unset, got 'yes'"]
    found = errors(nccl_env_extra={"NCCL_DMABUF_ENABLE": 1})
    assert len(found) == 1 and "nccl_env_dmabuf_enable" in found[0]


def test_plan_dmabuf_and_the_health_check_agree(facts):
    from ansible_collections.rdma.fabric.plugins.module_utils.reports import _health
    for loaded in ([], ["nvidia_peermem"]):
        gdr = _gdr("6.8.0-45-generic", True, loaded)
        value = plan(facts, gdr=gdr, nccl_env_dmabuf_enable="auto")["settings"]["NCCL_DMABUF_ENABLE"]
        obs = {"facts": {"devices": {}}, "gdr": dict(gdr, gpu_count=1, gpus=[])}
        assert [f["check"] for f in _health.judge(obs, {"dmabuf_enable": value})] == []
        assert [f["check"] for f in _health.judge(obs, {"dmabuf_enable": 1 - value})] == ["dmabuf"]
