# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every option of every module and every variable of every role has a refused input (issue 26).

The rule: bad input gets a clear error naming the variable the user set and the value (a
secret: the variable only), and changes nothing. test_bad_input.py holds the large table;
this file enumerates what there is to cover and fails listing any option or variable that no
case refuses:

- module options: each plugins/modules/*.py's argument spec as its main() hands it to
  AnsibleModule (nested suboptions as ``config.np.params``); the action-plugin modules
  (drift_check, drift_report, health_report) from their DOCUMENTATION and its fragments;
- role variables: each roles/*/meta/argument_specs.yml, entry point main.

A case runs the real entry point: a module's main() through ``helpers.run_module`` in the
bad-input world of test_bad_input.py (a fake sysfs and GRUB tree, no command but reads; the
working directory is the test's tmp dir, so a relative path the module took would show as a
change); an action plugin's run(); a role's variables through ``_role_checks.py`` (the role's
argument spec as validate_argument_spec checks it, then its tasks/preflight.yml asserts, or the
first asserts of tasks/main.yml for a role without one, in a separate process). The message must hold the case's words (the option and the value) and,
for a secret, not the value.

Coverage counts, per option: the cases here, the automatic ones (a bool gets ``maybe``, a
choice ``bogus``), and the cases of test_bad_input.py whose words name the option. An option
that cannot be refused by design is in ACCEPTS_ANYTHING with the reason. A case that shows a
defect left for someone else is in KNOWN_DEFECTS (strict xfail: fixed, it fails until removed)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import importlib
import json
import os
import re
import subprocess
import sys
from unittest import mock

import pytest
import yaml
from ansible.errors import AnsibleError
from ansible.module_utils import basic
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar
from ansible_collections.rdma.fabric.tests.unit.helpers import patch_module_args

from ansible_collections.rdma.fabric.tests.unit import helpers
from ansible_collections.rdma.fabric.tests.unit.bad_input import test_bad_input as table
from ansible_collections.rdma.fabric.tests.unit.bad_input.test_bad_input import GARBAGE, NAN, World

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
PLUGINS = os.path.join(REPO, "plugins")
MODULES = sorted(n[:-3] for n in os.listdir(os.path.join(PLUGINS, "modules")) if n.endswith(".py") and n[0] != "_")
# the action plugins that are the whole task (not those that only run their module on the node and
# filter its result, plugin_utils/_untrusted: their options are the module's)
ACTIONS = sorted(n[:-3] for n in os.listdir(os.path.join(PLUGINS, "action")) if n.endswith(".py") and n[0] != "_"
                 and "_untrusted" not in open(os.path.join(PLUGINS, "action", n)).read())
# the roles a play runs (an internal role such as area_steps has no main tasks: its steps are
# checked through the roles that import them)
ROLES = sorted(r for r in os.listdir(os.path.join(REPO, "roles"))
               if os.path.exists(os.path.join(REPO, "roles", r, "meta", "argument_specs.yml"))
               and os.path.exists(os.path.join(REPO, "roles", r, "tasks", "main.yml")))


# ================================================================================ enumeration
class _Spec(Exception):
    pass


def _capture(self, *args, **kwargs):
    raise _Spec(kwargs.get("argument_spec", args[0] if args else None))


def module_spec(name):
    """The argument spec ``name``'s main() gives AnsibleModule (main stopped right there)."""
    module = importlib.import_module("ansible_collections.rdma.fabric.plugins.modules." + name)
    with mock.patch.object(basic.AnsibleModule, "__init__", _capture), patch_module_args({}):
        try:
            module.main()
        except _Spec as spec:
            return spec.args[0]
    raise AssertionError("%s: main() made no AnsibleModule" % name)


def action_spec(name):
    """An action plugin's options: its module's DOCUMENTATION with the doc fragments it extends."""
    module = importlib.import_module("ansible_collections.rdma.fabric.plugins.modules." + name)
    doc = yaml.safe_load(module.DOCUMENTATION)
    options = {}
    for fragment in doc.get("extends_documentation_fragment") or []:
        frag = importlib.import_module("ansible_collections.rdma.fabric.plugins.doc_fragments." + fragment.split(".")[-1])
        options.update(yaml.safe_load(frag.ModuleDocFragment.DOCUMENTATION)["options"])
    options.update(doc.get("options") or {})
    return dict((k, {"type": v.get("type", "str"), "choices": v.get("choices"), "no_log": v.get("no_log"),
                     "options": v.get("suboptions")}) for k, v in options.items())


def _walk(spec, prefix=""):
    for key, option in sorted((spec or {}).items()):
        path = prefix + key
        yield path, option
        yield from _walk(option.get("options") or option.get("suboptions"), path + ".")


def _role_spec(role):
    with open(os.path.join(REPO, "roles", role, "meta", "argument_specs.yml")) as handle:
        return yaml.safe_load(handle)["argument_specs"]["main"]["options"]


MODULE_SPECS = dict((m, action_spec(m) if m in ACTIONS else module_spec(m)) for m in MODULES)
MODULE_OPTIONS = dict(((m, p), o) for m in MODULES for p, o in _walk(MODULE_SPECS[m]))
ROLE_VARIABLES = dict(((r, p), o) for r in ROLES for p, o in _walk(_role_spec(r)))


def _option(spec, path):
    option = {"options": spec}
    for part in path.split("."):
        option = (option.get("options") or option.get("suboptions") or {})[part]
    return option


# ================================================================================ the cases
def _mq(**entry):
    return {"config": [dict({"interface": "eth2"}, **entry)]}


def _dq(**entry):
    return {"config": [dict({"interface": "eth2", "rdma_device": "mlx5_0"}, **entry)]}


def _kc(**extra):
    return dict({"arguments": [{"name": "iommu", "value": "pt"}], "backend": "grub", "update_command": ["/bin/true"]},
                **extra)


def _pt(state="server", **test):
    """perftest with one rail's test (``test`` over a sound one)."""
    return {"state": state, "tests": [dict({"rail": 0, "device": "mlx5_0", "tcp_port": 18515}, **test)]}


def _cab(**entry):
    return {"state": "parsed", "running_config": GARBAGE,
            "cabling": [dict({"hca": "node1 mlx5_0", "leaf": "leaf1"}, **entry)]}


def _sgn(**entry):
    return dict({"name": "n1", "state": "pass", "scopes": ["health"]}, **entry)


def _sg(**given):
    """scheduler_gate with one node's verdict; a key of the node's entry goes in it, the others are options."""
    node = _sgn(**dict((k, v) for k, v in given.items() if k in _SG_NODE))
    return dict({"scheduler": "slurm", "nodes": [node]}, **dict((k, v) for k, v in given.items() if k not in _SG_NODE))


_SG_NODE = ("name", "state", "findings", "check_prefix", "scopes", "check", "subject", "figure", "time")


# the fabric_test filter's verdict for no host, what fabric_test_report takes when the case is elsewhere
VERDICT = {"passed": [], "failed": {}, "findings": [], "skipped": []}


# module: [(option, args, words)] - words: what the message must hold (the option, the value)
MODULE_CASES = {
    "dcqcn": [
        ("config", {"config": [{"interface": "eth2", "np": {"enabled_priorities": [3]}}, {"interface": "eth2"}]},
         ["config[1]", "interface=eth2", "twice"]),
        ("config.port", _dq(port=0, roce_tos=106), ["config[0].port=0"]),
        ("config.rp", {"config": [{"rdma_device": "mlx5_0", "rp": {"enabled_priorities": [3]}}]},
         ["config[0].rp", "interface"]),
    ],
    "gdr_readiness": [
        ("captured", {"captured": {"proc_cmdline": ""}}, ["captured:", "give at least one"]),
        ("captured.nvidia_smi_topo", {"captured": {"nvidia_smi_topo": GARBAGE}},
         ["captured.nvidia_smi_topo", "this is not tool output"]),
        ("captured.nvidia_smi_gpus", {"captured": {"nvidia_smi_gpus": GARBAGE}},
         ["captured.nvidia_smi_gpus", "this is not tool output"]),
        ("captured.ibdev2netdev", {"captured": {"ibdev2netdev": GARBAGE}},
         ["captured.ibdev2netdev", "this is not tool output"]),
        ("bundle", {"bundle": "/nonexistent/bundle"}, ["bundle=", "/nonexistent/bundle"]),
    ],
    "ib_fabric": [
        ("running_config", {"state": "parsed", "running_config": GARBAGE},
         ["running_config", "this is not tool output"]),
        ("ca", {"ca": "../x"}, ["ca=", "../x"]),
        ("port", {"port": 0}, ["port=0"]),
        ("timeout", {"timeout": -1}, ["timeout=-1"]),
        ("expected_width", {"expected_width": "5X"}, ["expected_width='5X'"]),
        ("expected_speed", {"expected_speed": "warp"}, ["expected_speed='warp'"]),
        ("thresholds", {"thresholds": {"SymbolErrorCounter": -1}}, ["thresholds.SymbolErrorCounter=-1"]),
        ("thresholds", {"thresholds": {"bogus": 1}}, ["thresholds.bogus"]),
        ("cabling", {"cabling": [{"hca": "node1 mlx5_0", "leaf": "leaf1"}, {"hca": "node1 mlx5_0", "leaf": "leaf2"}]},
         ["cabling[1]", "node1 mlx5_0 port 1", "cabling[0]"]),
        ("cabling.hca", _cab(hca=""), ["cabling[0].hca=''"]),
        ("cabling.leaf", _cab(leaf=""), ["cabling[0].leaf=''"]),
        ("cabling.port", _cab(port=0), ["cabling[0].port=0"]),
        ("cabling.rail", _cab(rail=-1), ["cabling[0].rail=-1"]),
        ("cabling.leaf_port", _cab(leaf_port=0), ["cabling[0].leaf_port=0"]),
        ("cabling.guid", _cab(guid="node1"), ["cabling[0].guid='node1'"]),
        ("cabling.leaf_guid", _cab(leaf_guid="0xzz"), ["cabling[0].leaf_guid='0xzz'"]),
    ],
    "kernel_cmdline": [
        ("grub_file", _kc(grub_file="etc/default/grub"), ["grub_file", "etc/default/grub"]),
        ("update_command", _kc(update_command=[""]), ["update_command", "''"]),
        ("proc_cmdline", _kc(proc_cmdline="proc/cmdline"), ["proc_cmdline", "proc/cmdline"]),
    ],
    "lldp_dcb": [
        ("config", {"config": [{"interface": "eth2", "admin_status": "rxtx"}, {"interface": "eth2"}]},
         ["config[1]", "interface=eth2", "twice"]),
        ("config.ets_rec.up2tc", _mq(ets_rec={"up2tc": [9] + [0] * 7}), ["config[0].ets_rec.up2tc[0]=9"]),
    ],
    "mlnx_qos": [
        ("config", {"config": [{"interface": "eth2", "pfc": [3]}, {"interface": "eth2"}]},
         ["config[1]", "interface=eth2", "twice"]),
        ("config.tsa", _mq(tsa=["ets"] * 7), ["config[0].tsa=", "expected exactly 8 values, got 7"]),
    ],
    "node_files": [
        ("files.content", {"files": [{"path": "/etc/x", "content": None}]}, ["files[0].content", "NoneType"]),
        ("files.group", {"files": [{"path": "/etc/x", "content": "a", "group": "wh eel"}]},
         ["files[0].group", "wh eel"]),
    ],
    "nccl_test": [
        ("binary", {"binary": "build/all_reduce_perf"}, ["binary='build/all_reduce_perf'"]),
        ("launcher", {"launcher": ["mpirun", "-np", "2;id"]}, ["launcher[2]", "2;id"]),
        ("launcher", {"launcher": []}, ["launcher=[]"]),
        ("args", {"args": ["-g", "`id`"]}, ["args[1]", "`id`"]),
        ("env_file", {"env_file": "/nonexistent/nccl.conf"}, ["env_file=", "/nonexistent/nccl.conf"]),
        ("timeout", {"timeout": 0}, ["timeout=0"]),
        ("running_config", {"state": "parsed", "running_config": GARBAGE},
         ["running_config", "this is not tool output"]),
    ],
    "mlxconfig": [
        ("config", {"config": [{"device": "mlx5_0", "params": {"SRIOV_EN": 1}},
                               {"device": "mlx5_0", "params": {"NUM_OF_VFS": 2}}]}, ["config[1]", "device=mlx5_0", "twice"]),
        ("config.device", {"config": [{"device": "mlx5 0", "params": {"SRIOV_EN": 1}}]}, ["config[0].device", "mlx5 0"]),
        ("config.params", {"config": [{"device": "mlx5_0", "params": {"link_type_p1": "ETH"}}]},
         ["config[0].params", "link_type_p1"]),
        ("config.params", {"config": [{"device": "mlx5_0", "params": {"SRIOV_EN": "a b"}}]},
         ["config[0].params.SRIOV_EN", "a b"]),
        ("config.params", {"config": [{"device": "mlx5_0", "params": {"NUM_OF_VFS": -1}}]},
         ["config[0].params.NUM_OF_VFS=-1"]),
        ("config.params", {"config": [{"device": "mlx5_0", "params": "SRIOV_EN=1"}]}, ["config[0].params", "SRIOV_EN=1"]),
        ("boot_record", {"config": [{"device": "mlx5_0", "params": {"SRIOV_EN": 1}}], "boot_record": "rec.json"},
         ["boot_record", "rec.json"]),
        ("running_config", {"state": "parsed", "running_config": GARBAGE}, ["running_config", "this is not tool output"]),
    ],
    "perftest": [
        ("duration", {"duration": 0}, ["duration=0"]),
        ("timeout", {"timeout": 0}, ["timeout=0"]),
        ("extra_args", {"extra_args": ["-s", "1; reboot"]}, ["extra_args[1]", "1; reboot"]),
        ("job_dir", dict(_pt(), job_dir="jobs"), ["job_dir=", "jobs"]),
        ("bind_address", dict(_pt(), bind_address="::1"), ["bind_address='::1'"]),
        ("running_config", {"state": "parsed", "running_config": GARBAGE},
         ["running_config", "this is not tool output"]),
        ("tests", {"state": "server", "tests": [_pt()["tests"][0], dict(_pt()["tests"][0], tcp_port=18516)]},
         ["tests[1].rail=0", "tests[0]"]),
        ("tests", {"state": "gathered", "tests": _pt()["tests"]}, ["tests", "state=gathered"]),
        ("tests.rail", _pt(rail=-1), ["tests[0].rail=-1"]),
        ("tests.device", _pt(device="mlx5 0"), ["tests[0].device='mlx5 0'"]),
        ("tests.ib_port", _pt(ib_port=0), ["tests[0].ib_port=0"]),
        ("tests.tcp_port", _pt(tcp_port=80), ["tests[0].tcp_port=80"]),
        ("tests.gid_index", _pt(gid_index=300), ["tests[0].gid_index=300"]),
        ("tests.peer", _pt("client", peer="a;b"), ["tests[0].peer='a;b'"]),
    ],
    "rail_addresses": [
        ("running_config", {"state": "parsed", "running_config": GARBAGE},
         ["running_config line 1", "this is not tool output"]),
        ("config", {"config": [{"interface": "eth2"}, {"interface": "eth2"}]}, ["config[1]", "interface=eth2", "twice"]),
        ("config.interface", _mq(interface="../x"), ["config[0].interface", "../x"]),
        ("config.addresses", _mq(addresses=["10.0.0.1"]), ["config[0].addresses[0]", "10.0.0.1"]),
        ("config.arp_ignore", _mq(arp_ignore=9), ["config[0].arp_ignore=9"]),
        ("config.arp_announce", _mq(arp_announce=3), ["config[0].arp_announce=3"]),
        ("config.rp_filter", _mq(rp_filter=3), ["config[0].rp_filter=3"]),
        ("config.table", _mq(table=254), ["config[0].table=254"]),
        ("config.rule_priority", _mq(table=10, rule_priority=0), ["config[0].rule_priority=0"]),
        ("config.gateways", _mq(table=10, gateways=["x"]), ["config[0].gateways[0]", "'x'"]),
    ],
    "rdma_facts": [
        ("captured.nvidia_smi_gpus", {"captured": {"nvidia_smi_gpus": GARBAGE}},
         ["captured.nvidia_smi_gpus", "this is not tool output"]),
        ("bundle", {"bundle": "/nonexistent/bundle"}, ["bundle=", "/nonexistent/bundle"]),
    ],
    "rdma_health": [
        ("interval", {"interval": -1}, ["interval=-1"]),
        ("interval", {"interval": NAN}, ["interval=nan"]),
        ("flap_window", {"flap_window": -5}, ["flap_window=-5"]),
        ("boot_grace", {"boot_grace": -5}, ["boot_grace=-5"]),
        ("state_file", {"state_file": "var/health-state.json"}, ["state_file", "var/health-state.json"]),
        ("nccl_log", {"nccl_log": "/nonexistent/nccl.log"}, ["nccl_log=", "/nonexistent/nccl.log"]),
        ("nccl_log", {"nccl_log": "nccl.log"}, ["nccl_log=", "nccl.log"]),
        ("nccl_log_text", {"nccl_log_text": GARBAGE}, ["nccl_log_text", "NET/IB"]),
        ("bundle", {"bundle": "/nonexistent/bundle"}, ["bundle=", "/nonexistent/bundle"]),
        ("checks", {"checks": {"bogus": 1}}, ["checks", "'bogus'"]),
        ("checks", {"checks": {"max_pause_per_s": -1}}, ["checks.max_pause_per_s=-1"]),
    ],
    "scheduler_gate": [
        ("scheduler", _sg(scheduler="pbs"), ["scheduler (scheduler_gate)='pbs'"]),
        ("reason_prefix", _sg(reason_prefix="drain=me"), ["reason_prefix", "'drain=me'"]),
        ("reason_prefix", _sg(reason_prefix=""), ["reason_prefix", "=''"]),
        ("recovery_runs", _sg(recovery_runs=0), ["recovery_runs (scheduler_gate_recovery_runs)=0"]),
        ("recovery_seconds", _sg(recovery_seconds=-1), ["recovery_seconds (scheduler_gate_recovery_seconds)=-1"]),
        ("recovery_seconds", _sg(recovery_seconds=NAN), ["recovery_seconds", "=nan"]),
        ("wait_timeout", _sg(wait_timeout=-5), ["wait_timeout (scheduler_gate_wait_timeout)=-5"]),
        ("nodes", {"scheduler": "slurm", "nodes": [_sgn(), _sgn()]}, ["nodes", "'n1'", "twice"]),
        ("nodes.name", _sg(name="n1 n2"), ["nodes[0].name='n1 n2'"]),
        ("nodes.scopes", _sg(scopes=["bandwidth"]), ["nodes[0].scopes=['bandwidth']"]),
        ("nodes.scopes", _sg(scopes=[]), ["nodes[0].scopes=[]"]),
        ("nodes.check", _sg(state="fail", check="perftest write_bw"), ["nodes[0].check='perftest write_bw'"]),
        ("nodes.check", _sg(state="fail", check="bandwidth"), ["nodes[0].check='bandwidth'", "never"]),
        ("nodes.check_prefix", _sg(findings=[], check_prefix="health x."), ["nodes[0].check_prefix='health x.'"]),
        ("nodes.subject", _sg(state="fail", check="health.link", subject="rail0 [healthy 3/3 since 2026-12-06T07:30:00Z]"),
         ["nodes[0].subject=", "[healthy 3/3"]),
        ("nodes.figure", _sg(state="fail", check="health.link", figure="down [healthy 3/3 since 2026-12-06T07:30:00Z]"),
         ["nodes[0].figure=", "[healthy 3/3"]),
        ("nodes.time", _sg(time=-1), ["nodes[0].time=-1"]),
        ("nodes.time", _sg(time=NAN), ["nodes[0].time=nan"]),
        ("nodes.findings", _sg(findings=[{"check": "link", "subject": "mlx5_0", "severity": "fatal"}]),
         ["nodes[0].findings[0].severity='fatal'"]),
        ("nodes.findings", _sg(findings=[{"subject": "mlx5_0", "severity": "error"}]),
         ["nodes[0].findings[0]=", "'mlx5_0'", "names no check"]),
    ],
    "sm_info": [
        ("ca", {"ca": "../x"}, ["ca=", "../x"]),
    ],
    "state_check": [
        ("facts", {"facts": {"rdma_facts": {"gather_subset": ["bogus"]}}}, ["facts.rdma_facts", "bogus"]),
        ("facts", {"facts": {"bogus": {}}}, ["facts", "bogus"]),
        ("areas", {"areas": {"bogus": {}}}, ["areas", "bogus"]),
        ("areas", {"areas": {"roce_qos": "junk"}}, ["areas.roce_qos", "junk"]),
        ("resources", {"resources": [{"resource": "bogus", "config": {}}]}, ["resources", "bogus"]),
        ("resources.config", {"resources": [{"resource": "node_files", "config": "junk"}]},
         ["resources[0].config", "junk"]),
        ("resources.state", {"resources": [{"resource": "node_files", "config": {"files": []}, "state": "bogus"}]},
         ["resources[0].state", "bogus"]),
        ("resources.options", {"resources": [{"resource": "node_files", "config": {"files": []},
                                              "options": {"bogus": 1}}]},
         ["resources[0].options", "bogus"]),
    ],
}

# action plugin: [(option, args, words)]; report_dir is set to a fresh directory unless given
ACTION_CASES = {
    "drift_check": [
        ("areas", {"areas": ["roce_qos"]}, ["areas", "['roce_qos']"]),
        ("area_groups", {"area_groups": {"rails": "gpu_nodes"}}, ["area_groups", "'rails'"]),
        ("settings", {"area_groups": {}, "settings": "gpudirect_reboot"}, ["settings", "'gpudirect_reboot'"]),
        ("settings", {"area_groups": {}, "settings": ["gpudirect_reboots"]}, ["settings", "gpudirect_reboots"]),
        ("apply_var", {"area_groups": {}, "apply_var": ["__a"]}, ["apply_var", "['__a']", "the name of a variable"]),
        ("apply_var", {"area_groups": {}, "apply_var": "__a", "apply": True}, ["apply and apply_var"]),
        ("settings_var", {"area_groups": {}, "settings_var": ""}, ["settings_var=''", "the name of a variable"]),
        ("environment_var", {"area_groups": {}, "environment_var": 5}, ["environment_var=5", "the name of a variable"]),
    ],
    "drift_report": [
        ("report_dir", {"report_dir": "@FILE@"}, ["report_dir", "@FILE@"]),
        ("report_mode", {"report_mode": "0999"}, ["report_mode", "0999"]),
        ("result_var", {"result_var": "drift result"}, ["result_var", "drift result"]),
        ("started_var", {"started_var": "drift started"}, ["started_var", "drift started"]),
        ("return_records", {"return_records": "sometimes"}, ["return_records", "sometimes"]),
    ],
    "fabric_test_report": [
        ("report_dir", {"report_dir": "@FILE@", "verdict": VERDICT}, ["report_dir", "@FILE@"]),
        ("report_mode", {"report_mode": "0999", "verdict": VERDICT}, ["report_mode", "0999"]),
        ("verdict", {"verdict": "passed"}, ["verdict", "'passed'"]),
        ("verdict", {"verdict": {"passed": ["node1"]}}, ["verdict", "{'passed': ['node1']}"]),
        ("report_name", {"report_name": "../ib", "verdict": VERDICT}, ["report_name", "'../ib'"]),
    ],
    "health_report": [
        ("report_dir", {"report_dir": "@FILE@"}, ["report_dir", "@FILE@"]),
        ("report_mode", {"report_mode": "rwx"}, ["report_mode", "rwx"]),
        ("result_var", {"result_var": "health result"}, ["result_var", "health result"]),
    ],
    "switch_qos_plan": [
        ("report_dir", {"report_dir": "@FILE@"}, ["report_dir", "@FILE@", "not a directory"]),
        ("report_dir", {"report_dir": ""}, ["report_dir=''"]),
        ("report_mode", {"report_mode": "0999"}, ["report_mode", "0999"]),
    ],
}


def _role_defaults(role):
    with open(os.path.join(REPO, "roles", role, "defaults", "main.yml")) as handle:
        return yaml.safe_load(handle)


# What an action reads from the task's variables besides its arguments, sound (on top of the
# play's): switch_qos_plan plans the leaf from its switch_qos_* variables (the role's defaults
# and one port facing no host), so a bad option is the one thing wrong.
ACTION_TASK_VARS = {
    "switch_qos_plan": dict(_role_defaults("switch_qos"), switch_qos_ports=[{"name": "Ethernet0", "speed": 400}],
                            switch_qos_report_dir="/nonexistent/switch-qos-report"),
}

# What every case of a role starts from (on top of the role's defaults): what a sound
# inventory must set (opensm: a SM_Key and one master; rails: the pools).
ROLE_BASE = {
    "opensm": {"opensm_sm_key": "0x5ca1ab1e0ddba11", "opensm_role": "master"},
    "rails": {"rails_pools": ["10.0.0.0/16", "10.1.0.0/16"],
              "rails_nics": ["eth2", "eth3"]},
    # switch_qos: the leaf's one port, facing the inventory's host
    "switch_qos": {"switch_qos_ports": [{"name": "Ethernet0", "speed": 400, "host": "node1", "host_interface": "eth2"}]},
}


def _sq(**port):
    """switch_qos_ports: the leaf's port (``port`` over a sound one), then a second sound one."""
    return {"switch_qos_ports": [dict({"name": "Ethernet0", "speed": 400, "host": "node1", "host_interface": "eth2"},
                                      **port), {"name": "Ethernet4", "speed": 400}]}


# role: [(variable, {variable: value, ...}, words[, secret values the message must not hold])]
ROLE_CASES = {
    "nic_firmware": [
        ("nic_firmware_cc_priorities", {"nic_firmware_cc_priorities": [9]}, ["nic_firmware_cc_priorities=[9]"]),
        ("nic_firmware_cnp_dscp", {"nic_firmware_cnp_dscp": 64}, ["nic_firmware_cnp_dscp=64"]),
        ("nic_firmware_cnp_priority", {"nic_firmware_cnp_priority": 8}, ["nic_firmware_cnp_priority=8"]),
        ("nic_firmware_max_acc_out_read", {"nic_firmware_max_acc_out_read": 300}, ["nic_firmware_max_acc_out_read=300"]),
        ("nic_firmware_params", {"nic_firmware_params": {"sriov en": 1}}, ["nic_firmware_params", "sriov en"]),
        ("nic_firmware_params", {"nic_firmware_params": {"SRIOV_EN": "a b"}}, ["nic_firmware_params.SRIOV_EN", "a b"]),
        ("nic_firmware_devices", {"nic_firmware_devices": [""]}, ["nic_firmware_devices=['']"]),
        ("nic_firmware_versions", {"nic_firmware_versions": {"MT_0000000838": "28.39"}},
         ["nic_firmware_versions.MT_0000000838='28.39'"]),
        ("nic_firmware_reboot_timeout", {"nic_firmware_reboot_timeout": 5}, ["nic_firmware_reboot_timeout=5"]),
        ("nic_firmware_boot_record", {"nic_firmware_boot_record": "state.json"}, ["nic_firmware_boot_record='state.json'"]),
    ],
    "fabric_test": [
        ("fabric_test_peers", {"fabric_test_peers": 0}, ["fabric_test_peers=0"]),
        ("fabric_test_duration", {"fabric_test_duration": 0}, ["fabric_test_duration=0"]),
        ("fabric_test_timeout", {"fabric_test_timeout": -1}, ["fabric_test_timeout=-1"]),
        ("fabric_test_devices", {"fabric_test_devices": ["mlx5 0"]}, ["fabric_test_devices", "mlx5 0"]),
        ("fabric_test_devices", {"fabric_test_devices": ["mlx5_0", "mlx5_0"]},
         ["fabric_test_devices=['mlx5_0', 'mlx5_0']", "twice"]),
        ("fabric_test_tcp_port", {"fabric_test_tcp_port": 80}, ["fabric_test_tcp_port=80"]),
        ("fabric_test_address", {"fabric_test_address": "10.0.0.1 x"}, ["fabric_test_address", "10.0.0.1 x"]),
        ("fabric_test_thresholds", {"fabric_test_thresholds": {"bw_fraction": 2}},
         ["fabric_test_thresholds.bw_fraction=2"]),
        ("fabric_test_thresholds", {"fabric_test_thresholds": {"bogus": 1}}, ["fabric_test_thresholds.bogus"]),
        ("fabric_test_node_type", {"fabric_test_node_type": "BM.GPU.H10.8"},
         ["fabric_test_node_type", "BM.GPU.H10.8"]),
        ("fabric_test_leaves", {"fabric_test_leaves": {"node1": 5}}, ["fabric_test_leaves", "{'node1': 5}"]),
        ("fabric_test_known_good", {"fabric_test_known_good": [""]}, ["fabric_test_known_good", "['']"]),
        ("fabric_test_nccl_launcher", {"fabric_test_nccl_launcher": ["mpirun", "-np", "{np};id"]},
         ["fabric_test_nccl_launcher", "{np};id"]),
        ("fabric_test_report_dir", {"fabric_test_report_dir": ""}, ["fabric_test_report_dir", "''"]),
        ("fabric_test_verdict_file", {"fabric_test_verdict_file": "var/fabric-test.json"},
         ["fabric_test_verdict_file", "var/fabric-test.json"]),
        ("fabric_test_verdict_file", {"fabric_test_verdict_file": "/var/lib/../../etc/cron.d/x"},
         ["fabric_test_verdict_file", "/var/lib/../../etc/cron.d/x", ".."]),
        ("fabric_test_group", {"fabric_test_group": "pod\x1b[2J"}, ["fabric_test_group", "pod"]),
        ("fabric_test_loopback", {"fabric_test_loopback": "sometimes"}, ["fabric_test_loopback", "sometimes"]),
        ("fabric_test_timeout", {"fabric_test_duration": 30, "fabric_test_timeout": 20},
         ["fabric_test_timeout=20", "shorter than the test"]),
        ("fabric_test_duration", {"fabric_test_duration": 86400}, ["fabric_test_duration=86400"]),
    ],
    "gpudirect": [
        ("gpudirect_kernel_arguments.value", {"gpudirect_kernel_arguments": [{"name": "iommu", "value": "pt\n"}]},
         ["gpudirect_kernel_arguments", "iommu", "value 'pt\\n'"]),
        ("gpudirect_grub_file", {"gpudirect_grub_file": "etc/default/grub"},
         ["gpudirect_grub_file", "etc/default/grub"]),
        ("gpudirect_proc_cmdline", {"gpudirect_proc_cmdline": "proc/cmdline"},
         ["gpudirect_proc_cmdline", "proc/cmdline"]),
        ("gpudirect_grub_update_command", {"gpudirect_grub_update_command": [""]},
         ["gpudirect_grub_update_command", "['']"]),
        ("gpudirect_acs_script_path", {"gpudirect_acs_script_path": "sbin/acs"}, ["gpudirect_acs_script_path", "sbin/acs"]),
        ("gpudirect_unit_dir", {"gpudirect_unit_dir": "etc/systemd"}, ["gpudirect_unit_dir", "etc/systemd"]),
        ("gpudirect_acs_unit_after", {"gpudirect_acs_unit_after": ["bad unit\n"]},
         ["gpudirect_acs_unit_after", "bad unit\\n"]),
        ("gpudirect_modules_load_dir", {"gpudirect_modules_load_dir": "etc/modules"},
         ["gpudirect_modules_load_dir", "etc/modules"]),
        ("gpudirect_reboot_timeout", {"gpudirect_reboot_timeout": 0}, ["gpudirect_reboot_timeout", "got 0"]),
        ("gpudirect_health_retries", {"gpudirect_health_retries": -1}, ["gpudirect_health_retries", "-1"]),
        ("gpudirect_health_delay", {"gpudirect_health_delay": -1}, ["gpudirect_health_delay", "-1"]),
    ],
    "health": [
        ("health_interval", {"health_interval": -1}, ["health_interval=-1"]),
        ("health_state_file", {"health_state_file": "var/state.json"}, ["health_state_file", "var/state.json"]),
        ("health_flap_window", {"health_flap_window": -1}, ["health_flap_window=-1"]),
        ("health_boot_grace", {"health_boot_grace": -1}, ["health_boot_grace=-1"]),
        ("health_nccl_log", {"health_nccl_log": "nccl.log"}, ["health_nccl_log", "nccl.log"]),
        ("health_gpu_models", {"health_gpu_models": {"H100": {"ports": -1}}}, ["health_gpu_models.H100.ports=-1"]),
        ("health_nic_models", {"health_nic_models": {"CX7": "fast"}}, ["health_nic_models.CX7", "fast"]),
        ("health_thresholds", {"health_thresholds": {"max_pause_per_s": -1}},
         ["health_thresholds.max_pause_per_s=-1"]),
        ("health_ignore_devices", {"health_ignore_devices": ["mlx5/0"]}, ["health_ignore_devices[0]", "mlx5/0"]),
        ("health_sm_priority", {"health_sm_priority": 16}, ["health_sm_priority=16"]),
        ("health_dmabuf_enable", {"health_dmabuf_enable": 5}, ["health_dmabuf_enable=5"]),
        ("health_checks", {"health_checks": {"bogus": 1}}, ["health_checks", "'bogus'"]),
        ("health_report_dir", {"health_report_dir": ""}, ["health_report_dir", "''"]),
        ("health_bundle_dir", {"health_bundle_dir": "bundles\n"}, ["health_bundle_dir", "bundles\\n"]),
        ("health_timer_every", {"health_timer_every": "sometimes"}, ["health_timer_every", "sometimes"]),
        ("health_timer_textfile", {"health_timer_textfile": "rdma.prom"}, ["health_timer_textfile", "rdma.prom"]),
        ("health_scheduler_gate_reason_prefix",
         {"health_scheduler_gate": "slurm", "health_scheduler_gate_reason_prefix": "drain=me"},
         ["health_scheduler_gate_reason_prefix", "drain=me"]),
        ("health_scheduler_gate_recovery_runs",
         {"health_scheduler_gate": "slurm", "health_scheduler_gate_recovery_runs": 0},
         ["health_scheduler_gate_recovery_runs=0"]),
        ("health_scheduler_gate_recovery_seconds",
         {"health_scheduler_gate": "slurm", "health_scheduler_gate_recovery_seconds": -1},
         ["health_scheduler_gate_recovery_seconds=-1"]),
    ],
    "health_gate": [
        ("health_gate_expected_devices", {"health_gate_expected_devices": -1}, ["health_gate_expected_devices=-1"]),
        ("health_gate_expected_gpus", {"health_gate_expected_gpus": -1}, ["health_gate_expected_gpus=-1"]),
        ("health_gate_min_rate_gbps", {"health_gate_min_rate_gbps": -1}, ["health_gate_min_rate_gbps=-1"]),
        ("health_gate_ignore_devices", {"health_gate_ignore_devices": ["mlx5/0"]},
         ["health_gate_ignore_devices[0]", "mlx5/0"]),
        ("health_gate_counter_limits", {"health_gate_counter_limits": {"symbol_error": -1}},
         ["health_gate_counter_limits.symbol_error=-1"]),
    ],
    "nccl_env": [
        ("nccl_env_conf_path", {"nccl_env_conf_path": "etc/nccl.conf"}, ["nccl_env_conf_path", "etc/nccl.conf"]),
        ("nccl_env_file_owner", {"nccl_env_file_owner": "ro ot"}, ["nccl_env_file_owner", "ro ot"]),
        ("nccl_env_file_group", {"nccl_env_file_group": "wh eel"}, ["nccl_env_file_group", "wh eel"]),
        ("nccl_env_environment_file", {"nccl_env_environment_file": "nccl.env"},
         ["nccl_env_environment_file", "nccl.env"]),
        ("nccl_env_ib_hca_exclude", {"nccl_env_ib_hca_exclude": [{"device": "mlx5_0"}]},
         ["nccl_env_ib_hca_exclude", "{'device': 'mlx5_0'}"]),
        ("nccl_env_gid_addresses", {"nccl_env_gid_addresses": {"mlx5_0": "10.0.0.300"}},
         ["nccl_env_gid_addresses.mlx5_0", "10.0.0.300"]),
        ("nccl_env_net_gdr_level", {"nccl_env_net_gdr_level": "BOGUS"}, ["nccl_env_net_gdr_level", "BOGUS"]),
        ("nccl_env_socket_ifname", {"nccl_env_socket_ifname": "eth0\nNCCL_X=1"},
         ["nccl_env_socket_ifname", "eth0\\nNCCL_X=1"]),
        ("nccl_env_ib_qps_per_connection", {"nccl_env_ib_qps_per_connection": 0},
         ["nccl_env_ib_qps_per_connection", "got 0"]),
        ("nccl_env_cross_nic", {"nccl_env_cross_nic": 5}, ["nccl_env_cross_nic", "got 5"]),
        ("nccl_env_ib_timeout", {"nccl_env_ib_timeout": 99}, ["nccl_env_ib_timeout", "got 99"]),
        ("nccl_env_extra", {"nccl_env_extra": {"BAD NAME": "1"}}, ["nccl_env_extra", "BAD NAME"]),
        ("nccl_env_allow_unknown", {"nccl_env_allow_unknown": "NCCL_X"}, ["nccl_env_allow_unknown", "NCCL_X"]),
        ("nccl_env_fleet_groups", {"nccl_env_fleet_groups": [["gpu"]]}, ["nccl_env_fleet_groups", "[['gpu']]"]),
        ("nccl_env_fleet_per_node", {"nccl_env_fleet_per_node": [{"NCCL_IB_HCA": 1}]},
         ["nccl_env_fleet_per_node", "{'NCCL_IB_HCA': 1}"]),
    ],
    "opensm": [
        ("opensm_fabric", {"opensm_fabric": "ib\n0"}, ["opensm_fabric", "ib\\n0"]),
        ("opensm_standby_rank", {"opensm_standby_rank": 0}, ["opensm_standby_rank=0"]),
        ("opensm_master_priority", {"opensm_master_priority": 16}, ["opensm_master_priority=16"]),
        ("opensm_priority", {"opensm_priority": 16}, ["opensm_priority=16"]),
        ("opensm_guid", {"opensm_guid": "0xzz"}, ["opensm_guid=0xzz"]),
        ("opensm_ca", {"opensm_ca": "mlx5/0"}, ["opensm_ca", "mlx5/0"]),
        ("opensm_ca_port", {"opensm_ca_port": 0}, ["opensm_ca_port", "0"]),
        ("opensm_sm_key", {"opensm_sm_key": "0xsecret5ca1ab1e"}, ["opensm_sm_key"], ["0xsecret5ca1ab1e", "secret"]),
        ("opensm_m_key", {"opensm_m_key": "0xsecret5ca1ab1e"}, ["opensm_m_key"], ["0xsecret5ca1ab1e", "secret"]),
        ("opensm_m_key_lease_period", {"opensm_m_key_lease_period": 70000}, ["opensm_m_key_lease_period", "70000"]),
        ("opensm_sminfo_polling_timeout", {"opensm_sminfo_polling_timeout": 10}, ["opensm_sminfo_polling_timeout=10"]),
        ("opensm_polling_retry_number", {"opensm_polling_retry_number": 0}, ["opensm_polling_retry_number=0"]),
        ("opensm_cache_dir", {"opensm_cache_dir": "var/cache/opensm"}, ["opensm_cache_dir", "var/cache/opensm"]),
        ("opensm_routing_engine", {"opensm_routing_engine": "ftree\nsm_key 0x1"},
         ["opensm_routing_engine", "ftree\\nsm_key 0x1"]),
        ("opensm_log_file", {"opensm_log_file": "opensm.log"}, ["opensm_log_file", "opensm.log"]),
        ("opensm_log_flags", {"opensm_log_flags": "0xzz"}, ["opensm_log_flags=0xzz"]),
        ("opensm_log_max_size", {"opensm_log_max_size": -1}, ["opensm_log_max_size=-1"]),
        ("opensm_verify_retries", {"opensm_verify_retries": -1}, ["opensm_verify_retries", "-1"]),
        ("opensm_verify_delay", {"opensm_verify_delay": -1}, ["opensm_verify_delay", "-1"]),
        ("opensm_query_environment", {"opensm_query_environment": {"BAD NAME": "1"}},
         ["opensm_query_environment", "BAD NAME"]),
        ("opensm_ha_hosts", {"opensm_ha_hosts": ["node1", "sm9"]}, ["opensm_ha_hosts[1]", "sm9", "inventory"]),
        ("opensm_ha_hosts", {"opensm_ha_hosts": "node1"}, ["opensm_ha_hosts='node1'", "list"]),
    ],
    "rails": [
        ("rails_pools", {"rails_pools": ["10.0.0.0/16", "banana"]}, ["rails_pools[1]", "banana"]),
        ("rails_management", {"rails_management": ["banana"]}, ["rails_management", "banana"]),
        ("rails_leaf_ports", {"rails_leaf_ports": 0}, ["rails_leaf_ports", "got 0"]),
        ("rails_oversubscription", {"rails_oversubscription": "zz"}, ["rails_oversubscription", "zz"]),
        ("rails_subnet_prefix", {"rails_scheme": "shared", "rails_subnet_prefix": 31},
         ["rails_subnet_prefix", "/31"]),
        ("rails_release", {"rails_release": ["node1"]}, ["rails_release", "node1", "still in the play"]),
        ("rails_allocation_file", {"rails_allocation_file": "rails\n.yml"}, ["rails_allocation_file", "rails\\n.yml"]),
        ("rails_nics", {"rails_nics": ["eth2", ""]}, ["rails_nics[1]", "empty"]),
        ("rails_sysctls", {"rails_sysctls": {"forwarding": 1}}, ["rails_sysctls", "forwarding"]),
        ("rails_table_base", {"rails_table_base": 252}, ["rails_table_base=252", "253"]),
        ("rails_rule_priority_base", {"rails_rule_priority_base": 0}, ["rails_rule_priority_base=0"]),
        ("rails_header", {"rails_header": "Managed\n[Network]"}, ["rails_header", "Managed\\n[Network]"]),
        ("rails_leaf_port_format", {"rails_leaf_port_format": "swp{bogus}"}, ["rails_leaf_port_format", "swp{bogus}"]),
    ],
    "roce_qos": [
        ("roce_qos_cnp_priority", {"roce_qos_cnp_priority": 8}, ["roce_qos_cnp_priority=8"]),
        ("roce_qos_dscp2prio_extra.priority", {"roce_qos_dscp2prio_extra": [{"dscp": 10, "priority": 9}]},
         ["roce_qos_dscp2prio_extra[0].priority=9"]),
        ("roce_qos_prio_tc", {"roce_qos_prio_tc": [9] * 8}, ["roce_qos_prio_tc[0]=9"]),
        ("roce_qos_pfc_priorities_by_interface", {"roce_qos_pfc_priorities_by_interface": {"eth0": [3, 9]}},
         ["roce_qos_pfc_priorities_by_interface.eth0[1]=9"]),
        ("roce_qos_tsa", {"roce_qos_tsa": ["ets"] * 7}, ["roce_qos_tsa=", "got 7"]),
        ("roce_qos_tcbw", {"roce_qos_tcbw": [10] * 8}, ["roce_qos_tcbw[1]=10"]),
        ("roce_qos_buffer_size", {"roce_qos_buffer_size": [-1] * 8, "roce_qos_prio2buffer": [0] * 8},
         ["roce_qos_buffer_size[0]=-1"]),
        ("roce_qos_prio2buffer", {"roce_qos_prio2buffer": [9] * 8}, ["roce_qos_prio2buffer[0]=9"]),
        ("roce_qos_cable_len", {"roce_qos_cable_len": -1}, ["roce_qos_cable_len=-1"]),
        ("roce_qos_dcqcn_np_params", {"roce_qos_dcqcn_np_params": {"bogus": 1}}, ["roce_qos_dcqcn_np_params", "bogus"]),
        ("roce_qos_dcqcn_rp_params", {"roce_qos_dcqcn_rp_params": {"rpg_gd": -1}},
         ["roce_qos_dcqcn_rp_params.rpg_gd=-1"]),
        ("roce_qos_persist_dir", {"roce_qos_persist_dir": "etc/rdma-fabric"}, ["roce_qos_persist_dir", "etc/rdma-fabric"]),
        ("roce_qos_rdma_cm_roce_mode", {"roce_qos_rdma_cm_roce_mode": "v3"}, ["roce_qos_rdma_cm_roce_mode", "v3"]),
        ("roce_qos_rdma_cm_roce_mode", {"roce_qos_rdma_cm_roce_mode": "roce v2"},
         ["roce_qos_rdma_cm_roce_mode", "roce v2", "RoCE v2"]),
        ("roce_qos_rdma_cm_roce_mode", {"roce_qos_rdma_cm_roce_mode": 2}, ["roce_qos_rdma_cm_roce_mode", "2"]),
    ],
    "switch_qos": [
        ("switch_qos_ports", {"switch_qos_ports": []}, ["switch_qos_ports=[]"]),
        ("switch_qos_ports", _sq(name="Ethernet4"), ["switch_qos_ports[1].name='Ethernet4'", "twice"]),
        ("switch_qos_ports.name", _sq(name="Ethernet 0"), ["switch_qos_ports[0].name='Ethernet 0'"]),
        ("switch_qos_ports.speed", _sq(speed=0), ["switch_qos_ports[0].speed=0"]),
        ("switch_qos_ports.speed", _sq(speed=800), ["switch_qos_ports[0].speed=800", "no ECN row"]),
        ("switch_qos_ports.host", _sq(host="gpu99"), ["switch_qos_ports[0].host='gpu99'"]),
        ("switch_qos_ports.host_interface", _sq(host_interface="eth 2"), ["switch_qos_ports[0].host_interface='eth 2'"]),
        ("switch_qos_ports.host_interface", _sq(host=None, host_interface="eth2"),
         ["switch_qos_ports[0].host_interface='eth2'", "without its host"]),
        ("switch_qos_pfc_priorities", {"switch_qos_pfc_priorities": [3, 9]}, ["switch_qos_pfc_priorities=9"]),
        ("switch_qos_pfc_priorities", {"switch_qos_pfc_priorities": [3, 3]}, ["switch_qos_pfc_priorities=[3, 3]", "twice"]),
        ("switch_qos_ecn_thresholds", {"switch_qos_ecn_thresholds": {400: {"min_kb": 8000, "max_kb": 800}}},
         ["switch_qos_ecn_thresholds.400.max_kb=800", "min_kb=8000"]),
        ("switch_qos_ecn_thresholds",
         {"switch_qos_ecn_thresholds": {400: {"min_kb": 800, "max_kb": 8000, "probability": 0}}},
         ["switch_qos_ecn_thresholds.400.probability=0"]),
        ("switch_qos_watchdog_detect_ms", {"switch_qos_watchdog_detect_ms": 0}, ["switch_qos_watchdog_detect_ms=0"]),
        ("switch_qos_watchdog_restore_ms", {"switch_qos_watchdog_restore_ms": -1}, ["switch_qos_watchdog_restore_ms=-1"]),
        ("switch_qos_cable_length_m", {"switch_qos_cable_length_m": 0}, ["switch_qos_cable_length_m=0"]),
        ("switch_qos_mtu", {"switch_qos_mtu": 1000}, ["switch_qos_mtu=1000"]),
        ("switch_qos_mtu", {"switch_qos_mtu": 9600}, ["switch_qos_mtu=9600"]),
        ("switch_qos_report_dir", {"switch_qos_report_dir": "switch-qos-report"},
         ["switch_qos_report_dir='switch-qos-report'", "absolute"]),
    ],
}

# Options and variables no input can be wrong for, by design (each reviewed: keep it short).
ACCEPTS_ANYTHING = {
    ("drift_report", "title"): "a free-form title printed above the table",
    ("health_report", "title"): "a free-form title printed above the table",
    ("rdma_health", "host"): "a label the findings carry (the role passes inventory_hostname)",
    ("state_check", "host"): "a label the drift records carry (drift_check passes inventory_hostname)",
    ("state_check", "resources.name"): "a label of the entry in the results",
    ("state_check", "resources.area"): "a label of the entry in the reports",
    ("gdr_readiness", "captured.proc_cmdline"): "a kernel command line is any words; the audit looks for the IOMMU "
                                                "ones in it",
    ("nccl_env", "nccl_env_header"): "a comment: every line of it is written as a '#' line",
    ("fabric_test_report", "title"): "a free-form title printed above the table",
    ("ib_fabric", "host"): "a label the records carry (pass inventory_hostname to match the other reports)",
}

# case id: the defect the case shows, left for the owners of the files it is in
KNOWN_DEFECTS = {}


# ================================================================================ automatic cases
def _bad_value(option):
    """``maybe`` for a bool, a value out of the choices; None when neither."""
    if option.get("type") == "bool":
        return "maybe"
    if option.get("choices"):
        bad = 99 if option.get("type") == "int" else "bogus"
        return [bad] if option.get("type") == "list" else bad
    return None


# the least an entry of a list of dicts needs, so a bad sub-option is the one thing wrong
ENTRY_BASE = {
    ("dcqcn", "config"): {"interface": "eth2", "rdma_device": "mlx5_0"},
    ("kernel_cmdline", "arguments"): {"name": "iommu", "value": "pt"},
    ("lldp_dcb", "config"): {"interface": "eth2"},
    ("lldp_dcb", "config.app"): {"priority": 3, "selector": 5, "protocol": 26},
    ("mlnx_qos", "config"): {"interface": "eth2"},
    ("node_files", "files"): {"path": "/etc/x", "content": "a"},
    ("node_files", "units"): {"name": "a.service"},
    ("rail_addresses", "config"): {"interface": "eth2"},
    ("state_check", "resources"): {"resource": "node_files", "config": {"files": []}},
    ("gpudirect", "gpudirect_kernel_arguments"): {"name": "iommu", "value": "pt"},
    ("roce_qos", "roce_qos_dscp2prio_extra"): {"dscp": 10, "priority": 1},
    ("scheduler_gate", "nodes"): {"name": "n1", "scopes": ["health"]},
    ("switch_qos", "switch_qos_ports"): {"name": "Ethernet0", "speed": 400},
}
ARGS_BASE = {"kernel_cmdline": _kc(), "fabric_test_report": {"verdict": VERDICT},
             "scheduler_gate": {"scheduler": "slurm"}}


def _place(owner, spec, path, value):
    """Arguments holding ``value`` at the dotted ``path`` (list-of-dict levels get one entry)."""
    parts = path.split(".")
    leaf = {parts[-1]: value}
    for depth in range(len(parts) - 1, 0, -1):
        where = ".".join(parts[:depth])
        entry = dict(ENTRY_BASE.get((owner, where), {}), **leaf)
        leaf = {parts[depth - 1]: [entry] if _option(spec, where).get("type") == "list" else entry}
    return leaf


def _auto(owner, spec, path, option):
    value = _bad_value(option)
    if value is None:
        return None
    shown = value[0] if isinstance(value, list) else value
    return (path, dict(ARGS_BASE.get(owner, {}), **_place(owner, spec, path, value)), [path.split(".")[-1], str(shown)])


def _cases(owner, spec, explicit, names):
    """``[(id, owner, option, args, words, hidden)]``: the explicit cases, then the automatic ones."""
    out, seen = [], {}
    rows = list(explicit) + [c for c in (_auto(owner, spec, p, o) for p, o in names) if c]
    for row in rows:
        option, args, words = row[:3]
        hidden = list(row[3]) if len(row) > 3 else []
        seen[option] = seen.get(option, 0) + 1
        case_id = "%s:%s" % (owner, option) + ("#%d" % seen[option] if seen[option] > 1 else "")
        out.append((case_id, owner, option, args, words, hidden))
    return out


def _module_cases(kinds):
    out = []
    for module in MODULES:
        if (module in ACTIONS) != (kinds == "action"):
            continue
        explicit = (ACTION_CASES if kinds == "action" else MODULE_CASES).get(module, [])
        names = [(p, o) for (m, p), o in sorted(MODULE_OPTIONS.items()) if m == module]
        out.extend(_cases(module, MODULE_SPECS[module], explicit, names))
    return out


def _role_cases():
    out = []
    for role in ROLES:
        names = [(p, o) for (r, p), o in sorted(ROLE_VARIABLES.items()) if r == role]
        for case in _cases(role, _role_spec(role), ROLE_CASES.get(role, []), names):
            case_id, owner, option, args, words, hidden = case
            variable = option.split(".")[0]
            if ROLE_VARIABLES[(role, variable)].get("no_log"):
                hidden = hidden or [str(v) for v in args.values()]
            out.append((case_id, owner, option, dict(ROLE_BASE.get(role, {}), **args), words, hidden))
    return out


ALL_MODULE_CASES = _module_cases("module")
ALL_ACTION_CASES = _module_cases("action")
ALL_ROLE_CASES = _role_cases()


def _params(cases):
    return [pytest.param(*c[1:], id=c[0], marks=[pytest.mark.xfail(strict=True, reason=KNOWN_DEFECTS[c[0]])]
                         if c[0] in KNOWN_DEFECTS else []) for c in cases]


# ================================================================================ test_bad_input.py's cases
def _names(text, name):
    return re.search(r"(?<![A-Za-z0-9_])%s(?![A-Za-z0-9_])" % re.escape(name), text) is not None


def _paths_in(spec, args, prefix=""):
    """The dotted option paths ``args`` sets."""
    for key, value in (args or {}).items():
        option = (spec or {}).get(key)
        if option is None:
            continue
        path = prefix + key
        yield path
        sub = option.get("options") or option.get("suboptions")
        for item in (value if isinstance(value, list) else [value]):
            if sub and isinstance(item, dict):
                yield from _paths_in(sub, item, path + ".")


def imported_coverage():
    """(owner, option) -> ids of test_bad_input.py cases whose words name it: a module case
    names each option it sets whose name is a word of its message; a filter case names each
    role variable (or ``variable[N].sub``) it spells out."""
    found = {}
    for case in table.MODULE_CASES:
        case_id, module, args, words = case[:4]
        text = " ".join(words)
        for path in set(_paths_in(MODULE_SPECS[module], args)):
            if _names(text, path.split(".")[-1]):
                found.setdefault((module, path), []).append(case_id)
    for case in table.FILTER_CASES:
        case_id, words = case[0], case[2]
        text = " ".join(words)
        for (role, path) in ROLE_VARIABLES:
            top, _dot, rest = path.partition(".")
            pattern = re.escape(top) + (r"(\[\d+\])?\." + re.escape(rest) if rest else "")
            if re.search(r"(?<![A-Za-z0-9_])%s(?![A-Za-z0-9_])" % pattern, text):
                found.setdefault((role, path), []).append(case_id)
    return found


# ================================================================================ runners
@pytest.fixture
def world(tmp_path, monkeypatch):
    w = World(tmp_path)
    monkeypatch.setenv("SYSFS_PATH", str(tmp_path / "sys"))
    monkeypatch.chdir(tmp_path)
    return w


def _module_args(world, module, args):
    args = copy.deepcopy(args)
    if module == "kernel_cmdline":
        args.setdefault("grub_file", str(world.grub))
        args.setdefault("proc_cmdline", str(world.root / "proc_cmdline"))
    if module == "node_files":
        for entry in args.get("files") or []:
            if isinstance(entry, dict) and str(entry.get("path", "")).startswith("/etc/x"):
                entry["path"] = entry["path"].replace("/etc/x", str(world.root / "etc" / "x"), 1)
    if module == "rdma_health":
        args.setdefault("interval", 0)
        args.setdefault("state_file", str(world.root / "var" / "health-state.json"))
    return args


def _words_in(msg, words, hidden=()):
    missing = [w for w in words if w not in msg]
    assert not missing, "message %r does not name %r" % (msg, missing)
    assert "Traceback" not in msg
    shown = [h for h in hidden if h in msg]
    assert not shown, "message %r shows the secret %r" % (msg, shown)


@pytest.mark.parametrize("module, option, args, words, hidden", _params(ALL_MODULE_CASES))
def test_module_option_is_refused(monkeypatch, world, module, option, args, words, hidden):
    main = importlib.import_module("ansible_collections.rdma.fabric.plugins.modules." + module).main
    kind, result = helpers.run_module(monkeypatch, main, _module_args(world, module, args),
                                      run_command=world.run_command, bin_dir="/usr/bin/")
    if module == "state_check" and kind == "exit":   # a refused resource is a failed entry of the results
        failed = [r["result"].get("msg", "") for r in result.get("results") or [] if r.get("failed")]
        kind, result = ("fail", {"msg": failed[0]}) if failed else (kind, result)
    assert kind == "fail", result
    _words_in(result["msg"], words, hidden)
    assert world.writes() == [] and world.changes() == []
    assert not result.get("changed")


def _run_action(name, args, task_vars):
    action = importlib.import_module("ansible_collections.rdma.fabric.plugins.action." + name)
    task = mock.MagicMock()
    task.args = args
    task.async_val = 0
    # an action that reads the task's variables templates them (ActionBase's templar over them)
    templar = Templar(loader=DataLoader(), variables=task_vars) if name in ACTION_TASK_VARS else None
    plugin = action.ActionModule(task, mock.MagicMock(), mock.MagicMock(), loader=None, templar=templar,
                                 shared_loader_obj=None)

    def no_module(*a, **k):
        raise AssertionError("bad input reached the node")
    plugin._execute_module = no_module
    with mock.patch("ansible.plugins.action.ActionBase.run", return_value={}):
        try:
            result = plugin.run(task_vars=task_vars)
        except AnsibleError as exc:
            return "fail", {"msg": str(exc)}
    return ("fail" if result.get("failed") else "exit"), result


@pytest.mark.parametrize("action, option, args, words, hidden", _params(ALL_ACTION_CASES))
def test_action_option_is_refused(tmp_path, action, option, args, words, hidden):
    report_dir = tmp_path / "reports"
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    args = json.loads(json.dumps(args).replace("@FILE@", str(blocker)))
    words = [w.replace("@FILE@", str(blocker)) for w in words]
    if action != "drift_check":
        args.setdefault("report_dir", str(report_dir))
    kind, result = _run_action(action, args, _task_vars(action))
    assert kind == "fail", result
    _words_in(result["msg"], words, hidden)
    assert not report_dir.exists()


def _task_vars(action):
    result_var = {"drift_report": "drift_check_result", "health_report": "health_result"}.get(action)
    return dict(copy.deepcopy(ACTION_TASK_VARS.get(action, {})), inventory_hostname="node1",
                ansible_play_hosts_all=["node1"], ansible_play_hosts=["node1"],
                hostvars={"node1": {result_var: {"drift_records": [], "checked": [], "findings": []}}})


@pytest.mark.parametrize("action", sorted(ACTION_TASK_VARS))
def test_an_action_task_vars_base_is_sound(tmp_path, action):
    """The base an action's cases start from is accepted: the refusals are the bad option's."""
    kind, result = _run_action(action, {"report_dir": str(tmp_path / "reports")}, _task_vars(action))
    assert kind == "exit", result
    assert (tmp_path / "reports").is_dir()


@pytest.fixture(scope="module")
def role_checks():
    """Every role case through _role_checks.py, in one process."""
    cases = [{"id": c[0], "role": c[1], "vars": c[3]} for c in ALL_ROLE_CASES]
    cases += [{"id": "sound:" + role, "role": role, "vars": ROLE_BASE.get(role, {})} for role in ROLES]
    proc = subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__), "_role_checks.py"), REPO],
                          input=json.dumps(cases), capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


@pytest.mark.parametrize("role, variable, values, words, hidden", _params(ALL_ROLE_CASES))
def test_role_variable_is_refused(request, role_checks, role, variable, values, words, hidden):
    outcome = role_checks[request.node.callspec.id]
    assert outcome["stage"] != "accepted", "%s accepted %r" % (role, values)
    _words_in(outcome["msg"], words, hidden)


@pytest.mark.parametrize("role", ROLES)
def test_a_sound_inventory_passes_the_same_checks(role_checks, role):
    """The refusals are not a check that refuses everything: the defaults (with what an
    inventory must set) pass the spec and the preflight."""
    assert role_checks["sound:" + role] == {"stage": "accepted", "msg": ""}


# ================================================================================ coverage
def test_every_option_and_variable_has_a_refused_input():
    covered = set(imported_coverage())
    covered.update((c[1], c[2]) for c in ALL_MODULE_CASES + ALL_ACTION_CASES + ALL_ROLE_CASES)
    missing = [k for k in sorted(set(MODULE_OPTIONS) | set(ROLE_VARIABLES))
               if k not in covered and k not in ACCEPTS_ANYTHING]
    assert not missing, "no refused-input case (add one here, or a reviewed ACCEPTS_ANYTHING entry): %s" % (
        ", ".join("%s %s" % k for k in missing))


def test_the_tables_name_real_options():
    """A case or an exception for an option that is gone is stale."""
    known = set(MODULE_OPTIONS) | set(ROLE_VARIABLES)
    stale = [k for k in ACCEPTS_ANYTHING if k not in known]
    stale += [(c[1], c[2]) for c in ALL_MODULE_CASES + ALL_ACTION_CASES + ALL_ROLE_CASES if (c[1], c[2]) not in known]
    ids = set(c[0] for c in ALL_MODULE_CASES + ALL_ACTION_CASES + ALL_ROLE_CASES)
    stale += [k for k in KNOWN_DEFECTS if k not in ids]
    assert not stale, stale
    assert all(reason.strip() for reason in list(ACCEPTS_ANYTHING.values()) + list(KNOWN_DEFECTS.values()))
    assert len(ACCEPTS_ANYTHING) <= 10, "ACCEPTS_ANYTHING is for the few options no value can be wrong for"


def test_the_enumeration_sees_every_module_and_role():
    assert set(m for m, _p in MODULE_OPTIONS) == set(MODULES)
    assert set(r for r, _p in ROLE_VARIABLES) == set(ROLES) and len(ROLES) >= 7
    # nested suboptions are there, and the captured specs agree with the documented ones
    assert ("lldp_dcb", "config.ets_cfg.tcbw") in MODULE_OPTIONS and ("dcqcn", "config.np.params") in MODULE_OPTIONS
    for module in MODULES:
        if module not in ACTIONS:
            doc = yaml.safe_load(importlib.import_module(
                "ansible_collections.rdma.fabric.plugins.modules." + module).DOCUMENTATION)["options"]
            assert set(p for p, _o in _walk(doc)) == set(p for (m, p) in MODULE_OPTIONS if m == module), module


@pytest.mark.parametrize("action, result_var", [("drift_report", "drift_check_result"), ("health_report", "health_result")])
def test_a_report_with_an_unreachable_host_is_not_itself_unreachable(tmp_path, action, result_var):
    """ansible-core reads a true "unreachable" in a result as the task's own host being unreachable:
    a run_once report naming one unreachable node would mark every host unreachable and end the run
    (site.yml would converge nothing). The report returns them as unreachable_hosts."""
    task_vars = dict(copy.deepcopy(ACTION_TASK_VARS.get(action, {})), inventory_hostname="node1",
                     ansible_play_hosts_all=["node1", "node2"], ansible_play_hosts=["node1"],
                     hostvars={"node1": {result_var: {"drift_records": [], "checked": [], "findings": []}},
                               "node2": {result_var: {"unreachable": True, "msg": "no route"}}})
    kind, result = _run_action(action, {"report_dir": str(tmp_path / "reports"), "fail_on_drift": False}
                               if action == "drift_report" else {"report_dir": str(tmp_path / "reports")}, task_vars)
    assert "unreachable" not in result, result
    assert result["unreachable_hosts"] == ["node2"], result


def test_the_drift_report_leaves_the_records_out_when_asked_and_names_the_unchecked_hosts(tmp_path):
    task_vars = dict(copy.deepcopy(ACTION_TASK_VARS.get("drift_report", {})), inventory_hostname="node1",
                     ansible_play_hosts_all=["node1", "node2", "node3"], ansible_play_hosts=["node1", "node3"],
                     hostvars={"node1": {"drift_check_result": {"drift_records": [], "checked": ["roce_qos"]}},
                               "node2": {"drift_check_result": {"unreachable": True, "msg": "no route"}},
                               # reached, but its check failed (the action's host record)
                               "node3": {"drift_check_result": {"checked": [], "drift_records": [
                                   {"host": "node3", "area": "host", "object": "", "setting": "check",
                                    "expected": "checked", "actual": "state_check failed: boom"}]}}})
    args = {"report_dir": str(tmp_path / "reports"), "fail_on_drift": False}
    kind, full = _run_action("drift_report", dict(args), task_vars)
    kind, slim = _run_action("drift_report", dict(args, return_records=False), task_vars)
    assert "records" not in slim and full["records"]
    assert slim["unchecked_hosts"] == full["unchecked_hosts"] == ["node3"]
    assert slim["unreachable_hosts"] == ["node2"]
    with open(str(tmp_path / "reports" / "drift.json")) as handle:
        assert json.load(handle)["records"] == full["records"]     # the reports hold them all
