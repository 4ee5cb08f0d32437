# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Bad input, table-driven (issue 15): every module and role-filter entry point refuses
with a message that names the field and the value, through ``fail_json`` (no traceback),
and writes nothing: the fake sysfs / GRUB tree keeps every file's content and mtime, and
no command but the reads the case allows runs.

A case is ``(id, entry, args, words)``: ``entry`` names the module (or filter) run, ``args``
its arguments, ``words`` what the message must hold (the field and the value)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import math
import os

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.areas.opensm import extra_option_errors, ha_errors, partition_errors
from ansible_collections.rdma.fabric.plugins.module_utils.areas import gpudirect as _gpudirect
from ansible_collections.rdma.fabric.plugins.module_utils.areas import nccl_env as _nccl_env
from ansible_collections.rdma.fabric.plugins.module_utils.areas.roce_qos import config_errors as roce_qos_config_errors
from ansible_collections.rdma.fabric.plugins.modules import (
    dcqcn, gdr_readiness, kernel_cmdline, lldp_dcb, mlnx_qos, node_files, pcie_acs, rdma_facts, sm_info,
    state_check,
)
from ansible_collections.rdma.fabric.tests.unit import helpers
from ansible_collections.rdma.fabric.tests.unit.plugins.module_utils.resources.test_pcie_acs import SWITCH_TREE

import yaml

NAN, INF = float("nan"), float("inf")
REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))

MLNX_REPORT = """DCBX mode: OS controlled
Priority trust state: pcp
Receive buffer size (bytes): 0,262016,0,0,0,0,0,0,max_buffer_size=262016
Cable len: 7
PFC configuration:
\tpriority    0   1   2   3   4   5   6   7
\tenabled     0   0   0   1   0   0   0   0
\tbuffer      0   0   0   1   0   0   0   0
tc: 0 ratelimit: unlimited, tsa: ets, bw: 50%
\t priority:  0
"""
SMIR = """$ saquery SMIR
SMInfoRecord dump:
\tRID
\t\tLID...........................1
\tSMInfo dump:
\t\tGUID..........................0x00001000010000011
\t\tSM_Key........................0x0000000000000000
\t\tActCount......................121
\t\tPriority......................10
\t\tSMState.......................3
"""
IBSTAT = """CA 'mlx5_0'
\tCA type: MT4129
\tNumber of ports: 1
\tPort 1:
\t\tState: Active
\t\tBase lid: x
"""
GARBAGE = "this is not tool output\nat all\n"


def _cfg(**entry):
    return dict({"interface": "eth2"}, **entry)


def _mq(**entry):
    return {"config": [_cfg(**entry)]}


def _dq(**entry):
    return {"config": [dict({"interface": "eth2", "rdma_device": "mlx5_0"}, **entry)]}


def _kc(*arguments, **extra):
    args = {"arguments": list(arguments), "backend": "grub", "update_command": ["/bin/true"]}
    args.update(extra)
    return args


def _arg(name, value=None, state="present"):
    return {"name": name, "value": value, "state": state}


MODULE_CASES = [
    # ---- mlnx_qos
    ("mlnx_qos-iface-dotdot", "mlnx_qos", _mq(interface=".."), ["interface", "'..'"]),
    ("mlnx_qos-iface-slash", "mlnx_qos", _mq(interface="eth0/../x"), ["interface", "eth0/../x"]),
    ("mlnx_qos-iface-newline", "mlnx_qos", _mq(interface="eth2\n"), ["interface", "eth2\\n"]),
    ("mlnx_qos-iface-long", "mlnx_qos", _mq(interface="e" * 16), ["interface", "e" * 16]),
    ("mlnx_qos-iface-dash", "mlnx_qos", _mq(interface="-a"), ["interface", "-a"]),
    ("mlnx_qos-iface-twice", "mlnx_qos", {"config": [_cfg(), _cfg()]}, ["interface=eth2", "twice"]),
    ("mlnx_qos-pfc-8", "mlnx_qos", _mq(pfc=[8]), ["pfc[0]", "8"]),
    ("mlnx_qos-pfc-dup", "mlnx_qos", _mq(pfc=[3, 3]), ["pfc", "[3, 3]", "twice"]),
    ("mlnx_qos-prio_tc-7", "mlnx_qos", _mq(prio_tc=[0] * 7), ["prio_tc", "7"]),
    ("mlnx_qos-prio_tc-8", "mlnx_qos", _mq(prio_tc=[0] * 7 + [8]), ["prio_tc[7]", "8"]),
    ("mlnx_qos-tcbw-sum", "mlnx_qos", _mq(tsa=["ets"] * 8, tcbw=[50, 50, 0, 0, 0, 0, 0, 1]), ["tcbw", "101"]),
    ("mlnx_qos-tcbw-101", "mlnx_qos", _mq(tcbw=[101] + [0] * 7), ["tcbw[0]", "101"]),
    ("mlnx_qos-rate-nan", "mlnx_qos", _mq(ratelimit=[NAN] + [0.0] * 7), ["ratelimit[0]", "nan"]),
    ("mlnx_qos-rate-inf", "mlnx_qos", _mq(ratelimit=[INF] + [0.0] * 7), ["ratelimit[0]", "inf"]),
    ("mlnx_qos-rate-frac", "mlnx_qos", _mq(ratelimit=[2.5] + [0.0] * 7), ["ratelimit[0]", "2.5"]),
    ("mlnx_qos-rate-neg", "mlnx_qos", _mq(ratelimit=[-1.0] + [0.0] * 7), ["ratelimit[0]", "-1"]),
    ("mlnx_qos-buffer-neg", "mlnx_qos", _mq(buffer_size=[-1] + [0] * 7), ["buffer_size[0]", "-1"]),
    ("mlnx_qos-prio2buffer-9", "mlnx_qos", _mq(prio2buffer=[9] + [0] * 7), ["prio2buffer[0]", "9"]),
    ("mlnx_qos-cable-big", "mlnx_qos", _mq(cable_len=70000), ["cable_len", "70000"]),
    ("mlnx_qos-dscp-64", "mlnx_qos", _mq(trust="dscp", dscp2prio=[{"dscp": 64, "priority": 3}]),
     ["dscp2prio[0].dscp", "64"]),
    ("mlnx_qos-dscp-prio-8", "mlnx_qos", _mq(trust="dscp", dscp2prio=[{"dscp": 26, "priority": 8}]),
     ["dscp2prio[0].priority", "8"]),
    ("mlnx_qos-dscp-twice", "mlnx_qos",
     _mq(trust="dscp", dscp2prio=[{"dscp": 26, "priority": 3}, {"dscp": 26, "priority": 3}]),
     ["dscp2prio[1]", "DSCP 26", "twice"]),
    ("mlnx_qos-dscp-two-prios", "mlnx_qos", _mq(trust="dscp", dscp2prio=[{"dscp": 26, "priority": 3},
                                                                         {"dscp": 26, "priority": 4}]),
     ["dscp2prio[1]", "DSCP 26", "priority 3 and 4"]),
    ("mlnx_qos-dscp-pcp", "mlnx_qos", _mq(trust="pcp", dscp2prio={26: 3}), ["dscp2prio", "trust=pcp"]),
    ("mlnx_qos-dscp-junk", "mlnx_qos", _mq(trust="dscp", dscp2prio="junk"), ["dscp2prio", "junk"]),
    ("mlnx_qos-parsed-garbage", "mlnx_qos", {"state": "parsed", "running_config": GARBAGE},
     ["running_config", "this is not tool output"]),
    ("mlnx_qos-parsed-rate", "mlnx_qos",
     {"state": "parsed", "running_config": MLNX_REPORT.replace("unlimited", "1.2.3 Gbps")},
     ["running_config line 9", "1.2.3"]),
    ("mlnx_qos-parsed-buffer", "mlnx_qos",
     {"state": "parsed", "running_config": MLNX_REPORT.replace("0,262016", "0,lots")},
     ["running_config line 3", "lots"]),
    ("mlnx_qos-parsed-pfc", "mlnx_qos",
     {"state": "parsed", "running_config": MLNX_REPORT.replace("0   0   0   1   0", "0   0   0   x   0", 1)},
     ["running_config line 7", "x"]),
    ("mlnx_qos-parsed-maxbuf", "mlnx_qos",
     {"state": "parsed", "running_config": MLNX_REPORT.replace("max_buffer_size=262016", "max_buffer_size=big")},
     ["running_config line 3", "big"]),
    # ---- dcqcn
    ("dcqcn-cnp-dscp-64", "dcqcn", _dq(np={"params": {"cnp_dscp": 64}}), ["np.params.cnp_dscp", "64"]),
    ("dcqcn-cnp-prio-8", "dcqcn", _dq(np={"params": {"cnp_802p_prio": 8}}), ["np.params.cnp_802p_prio", "8"]),
    ("dcqcn-param-nan", "dcqcn", _dq(rp={"params": {"rpg_gd": NAN}}), ["rp.params.rpg_gd", "nan"]),
    ("dcqcn-param-inf", "dcqcn", _dq(rp={"params": {"rpg_gd": INF}}), ["rp.params.rpg_gd", "inf"]),
    ("dcqcn-param-bool", "dcqcn", _dq(rp={"params": {"rpg_gd": True}}), ["rp.params.rpg_gd", "True"]),
    ("dcqcn-param-text", "dcqcn", _dq(rp={"params": {"rpg_gd": "x"}}), ["rp.params.rpg_gd", "'x'"]),
    ("dcqcn-param-neg", "dcqcn", _dq(rp={"params": {"rpg_ai_rate": -1}}), ["rp.params.rpg_ai_rate", "-1"]),
    ("dcqcn-param-name-slash", "dcqcn", _dq(np={"params": {"../x": 1}}), ["np.params", "../x"]),
    ("dcqcn-param-name-nl", "dcqcn", _dq(np={"params": {"cnp_dscp\n": 1}}), ["np.params", "cnp_dscp\\n"]),
    ("dcqcn-param-enable", "dcqcn", _dq(np={"params": {"enable": 1}}), ["np.params", "enable"]),
    ("dcqcn-prio-9", "dcqcn", _dq(np={"enabled_priorities": [9]}), ["np.enabled_priorities[0]", "9"]),
    ("dcqcn-prio-dup", "dcqcn", _dq(rp={"enabled_priorities": [3, 3]}), ["rp.enabled_priorities", "twice"]),
    ("dcqcn-clamp-2", "dcqcn", _dq(rp={"params": {"clamp_tgt_rate": 2}}), ["rp.params.clamp_tgt_rate", "2", "0-1"]),
    ("dcqcn-clamp-ati-2", "dcqcn", _dq(rp={"params": {"clamp_tgt_rate_after_time_inc": 2}}),
     ["rp.params.clamp_tgt_rate_after_time_inc", "2"]),
    ("dcqcn-rp-int-max", "dcqcn", _dq(rp={"params": {"rate_reduce_monitor_period": 2 ** 31}}),
     ["rp.params.rate_reduce_monitor_period", "2147483648"]),
    ("dcqcn-np-param-under-rp", "dcqcn", _dq(rp={"params": {"cnp_dscp": 48}}), ["rp.params.cnp_dscp", "roce_np"]),
    ("dcqcn-rp-param-under-np", "dcqcn", _dq(np={"params": {"rpg_gd": 11}}), ["np.params.rpg_gd", "roce_rp"]),
    ("dcqcn-second-param-bad", "dcqcn", _dq(np={"params": {"min_time_between_cnps": 4, "cnp_dscp": 64}}),
     ["np.params.cnp_dscp", "64"]),
    ("dcqcn-tos-256", "dcqcn", _dq(roce_tos=256), ["roce_tos", "256"]),
    ("dcqcn-cm-tos-neg", "dcqcn", _dq(rdma_cm_tos=-1), ["rdma_cm_tos", "-1"]),
    ("dcqcn-tos-no-device", "dcqcn", {"config": [{"interface": "eth2", "roce_tos": 106}]},
     ["roce_tos=106", "rdma_device"]),
    ("dcqcn-np-no-iface", "dcqcn", {"config": [{"rdma_device": "mlx5_0", "np": {"enabled_priorities": [3]}}]},
     ["np", "interface"]),
    ("dcqcn-iface-dotdot", "dcqcn", _dq(interface=".."), ["interface", "'..'"]),
    ("dcqcn-device-slash", "dcqcn", _dq(rdma_device="mlx5_0/../x", roce_tos=106), ["rdma_device", "mlx5_0/../x"]),
    ("dcqcn-parsed-garbage", "dcqcn", {"state": "parsed", "running_config": GARBAGE},
     ["running_config line 1", "this is not tool output"]),
    ("dcqcn-parsed-param-lots", "dcqcn", {"state": "parsed", "running_config":
                                          "/sys/class/net/eth2/ecn/roce_np/enable/3:1\n"
                                          "/sys/class/net/eth2/ecn/roce_np/cnp_dscp:lots\n"},
     ["running_config line 2", "'lots'"]),
    ("dcqcn-parsed-enable-x", "dcqcn", {"state": "parsed", "running_config":
                                        "/sys/class/net/eth2/ecn/roce_np/enable/3:x\n"},
     ["running_config line 1", "'x'"]),
    ("dcqcn-parsed-tclass", "dcqcn", {"state": "parsed", "running_config":
                                      "/sys/class/infiniband/mlx5_0/tc/1/traffic_class:Global tclass=zz\n"},
     ["running_config line 1", "tclass=zz"]),
    # ---- lldp_dcb
    ("lldp-iface-space", "lldp_dcb", _mq(interface="eth 2", admin_status="rxtx"), ["interface", "eth 2"]),
    ("lldp-iface-dotdot", "lldp_dcb", _mq(interface="..", admin_status="rxtx"), ["interface", "'..'"]),
    ("lldp-pfc-8", "lldp_dcb", _mq(pfc={"enabled": [8]}), ["pfc.enabled[0]", "8"]),
    ("lldp-pfc-dup", "lldp_dcb", _mq(pfc={"enabled": [1, 1]}), ["pfc.enabled", "twice"]),
    ("lldp-up2tc-7", "lldp_dcb", _mq(ets_cfg={"up2tc": [0] * 7}), ["ets_cfg.up2tc", "7"]),
    ("lldp-up2tc-8", "lldp_dcb", _mq(ets_cfg={"up2tc": [8] + [0] * 7}), ["ets_cfg.up2tc[0]", "8"]),
    ("lldp-tcbw-sum", "lldp_dcb", _mq(ets_cfg={"tcbw": [50, 40, 0, 0, 0, 0, 0, 0]}), ["ets_cfg.tcbw", "90"]),
    ("lldp-tcbw-101", "lldp_dcb", _mq(ets_rec={"tcbw": [101] + [0] * 7}), ["ets_rec.tcbw[0]", "101"]),
    ("lldp-app-sel-6", "lldp_dcb", _mq(app=[{"priority": 3, "selector": 6, "protocol": 26}]),
     ["app[0].selector", "6"]),
    ("lldp-app-dscp-64", "lldp_dcb", _mq(app=[{"priority": 3, "selector": 5, "protocol": 64}]),
     ["app[0].protocol", "64"]),
    ("lldp-app-prio-9", "lldp_dcb", _mq(app=[{"priority": 9, "selector": 5, "protocol": 26}]),
     ["app[0].priority", "9"]),
    ("lldp-app-twice", "lldp_dcb",
     _mq(app=[{"priority": 3, "selector": 5, "protocol": 26}, {"priority": 4, "selector": 5, "protocol": 26}]),
     ["app[1]", "protocol 26", "twice"]),
    ("lldp-parsed-garbage", "lldp_dcb", {"state": "parsed", "running_config": GARBAGE},
     ["running_config", "this is not tool output"]),
    # ---- node_files
    ("files-relative", "node_files", {"files": [{"path": "etc/x", "content": "a"}]}, ["files[0].path", "etc/x"]),
    ("files-dotdot", "node_files", {"files": [{"path": "/etc/../x", "content": "a"}]}, ["files[0].path", "/etc/../x"]),
    ("files-newline", "node_files", {"files": [{"path": "/etc/x\n", "content": "a"}]}, ["files[0].path", "/etc/x\\n"]),
    ("files-root", "node_files", {"files": [{"path": "/", "content": "a"}]}, ["files[0].path", "'/'"]),
    ("files-mode-9", "node_files", {"files": [{"path": "/etc/x", "content": "a", "mode": "0999"}]},
     ["files[0].mode", "0999"]),
    ("files-mode-text", "node_files", {"files": [{"path": "/etc/x", "content": "a", "mode": "rwx"}]},
     ["files[0].mode", "rwx"]),
    ("files-mode-big", "node_files", {"files": [{"path": "/etc/x", "content": "a", "mode": 0o17777}]},
     ["files[0].mode", "8191"]),
    ("files-owner", "node_files", {"files": [{"path": "/etc/x", "content": "a", "owner": "ro ot"}]},
     ["files[0].owner", "ro ot"]),
    ("files-no-content", "node_files", {"files": [{"path": "/etc/x"}]}, ["files[0].content", "NoneType"]),
    ("files-twice", "node_files", {"files": [{"path": "/etc/x", "content": "a"}, {"path": "/etc/x", "content": "b"}]},
     ["files[1].path", "/etc/x", "twice"]),
    ("units-name", "node_files", {"units": [{"name": "../x.service", "enabled": True}]},
     ["units[0].name", "../x.service"]),
    ("units-twice", "node_files", {"units": [{"name": "a.service"}, {"name": "a.service"}]},
     ["units[1].name", "a.service", "twice"]),
    # ---- kernel_cmdline
    ("kc-name-newline", "kernel_cmdline", _kc(_arg("iommu\n", "pt")), ["arguments[0].name", "iommu\\n"]),
    ("kc-name-space", "kernel_cmdline", _kc(_arg("a b")), ["arguments[0].name", "a b"]),
    ("kc-name-eq", "kernel_cmdline", _kc(_arg("iommu=pt")), ["arguments[0].name", "iommu=pt"]),
    ("kc-name-empty", "kernel_cmdline", _kc(_arg("")), ["arguments[0].name", "''"]),
    ("kc-name-dollar", "kernel_cmdline", _kc(_arg("$x")), ["arguments[0].name", "$x"]),
    ("kc-value-newline", "kernel_cmdline", _kc(_arg("iommu", "pt\n")), ["iommu", "pt\\n"]),
    ("kc-value-newline-absent", "kernel_cmdline", _kc(_arg("foo", "1\nGRUB_X=1", "absent")),
     ["arguments[0].value", "1\\nGRUB_X=1"]),
    ("kc-value-quote", "kernel_cmdline", _kc(_arg("foo", 'a"b')), ["foo", 'a"b']),
    ("kc-value-subst", "kernel_cmdline", _kc(_arg("foo", "$(reboot)")), ["foo", "$(reboot)"]),
    ("kc-value-empty", "kernel_cmdline", _kc(_arg("foo", "")), ["arguments[0].value", "foo"]),
    ("kc-iommu-on", "kernel_cmdline", _kc(_arg("iommu", "on")), ["iommu", "'on'"]),
    ("kc-intel-iommu", "kernel_cmdline", _kc(_arg("intel_iommu", "maybe")), ["intel_iommu", "maybe"]),
    ("kc-passthrough-2", "kernel_cmdline", _kc(_arg("iommu.passthrough", "2")), ["iommu.passthrough", "'2'"]),
    ("kc-contradict", "kernel_cmdline", _kc(_arg("iommu", "nopt"), _arg("iommu.passthrough", "1")),
     ["iommu=nopt", "iommu.passthrough=1", "contradict"]),
    ("kc-contradict-pt", "kernel_cmdline", _kc(_arg("iommu", "pt"), _arg("iommu.passthrough", "off")),
     ["iommu=pt", "iommu.passthrough=off", "contradict"]),
    ("kc-contradict-line", "kernel_cmdline", _kc(_arg("iommu", "nopt"), grub_line="quiet iommu.passthrough=1"),
     ["iommu=nopt", "iommu.passthrough=1", "contradict"]),
    ("kc-pci-bare-acs", "kernel_cmdline", _kc(_arg("pci", "realloc,disable_acs_redir")), ["disable_acs_redir"]),
    ("kc-pci-acs-bad-dev", "kernel_cmdline", _kc(_arg("pci", "disable_acs_redir=zz:zz")), ["disable_acs_redir", "zz:zz"]),
    ("kc-pci-realloc", "kernel_cmdline", _kc(_arg("pci", "realloc=maybe")), ["realloc", "maybe"]),
    ("kc-pci-ecrc", "kernel_cmdline", _kc(_arg("pci", "ecrc=x")), ["ecrc", "'x'"]),
    ("kc-pci-lone-dev", "kernel_cmdline", _kc(_arg("pci", "disable_acs_redir=0000:17:00.0,0000:18:00.0")),
     ["0000:18:00.0", "PCI device"]),
    ("kc-pci-config-acs", "kernel_cmdline", _kc(_arg("pci", "config_acs=12@0000:17:00.0")), ["config_acs", "12@0000:17:00.0"]),
    ("kc-pci-empty-opt", "kernel_cmdline", _kc(_arg("pci", "realloc,,noats")), ["pci", "realloc,,noats"]),
    ("kc-twice", "kernel_cmdline", _kc(_arg("iommu", "pt"), _arg("iommu", "nopt")), ["arguments[1]", "iommu", "already"]),
    # ---- pcie_acs
    ("acs-devices-garbage", "pcie_acs", {"devices": ["zz"]}, ["devices", "'zz'"]),
    ("acs-devices-fn-9", "pcie_acs", {"devices": ["0000:17:00.9"]}, ["devices", "0000:17:00.9"]),
    ("acs-devices-twice", "pcie_acs", {"devices": ["0000:17:00.0", "17:00.0"]}, ["devices", "0000:17:00.0", "twice"]),
    ("acs-devices-absent", "pcie_acs", {"devices": ["0000:ee:00.0"]}, ["devices", "0000:ee:00.0", "not found"]),
    ("acs-devices-absent-redirect", "pcie_acs", {"devices": ["0000:ee:00.0"], "state": "redirect_disabled"},
     ["devices", "0000:ee:00.0", "not found"]),
    ("acs-parsed-garbage", "pcie_acs", {"state": "parsed", "running_config": GARBAGE},
     ["running_config line 1", "this is not tool output"]),
    ("acs-parsed-blank", "pcie_acs", {"state": "parsed", "running_config": "\n\n"}, ["running_config", "empty"]),
    ("acs-parsed-devices-absent", "pcie_acs", {"state": "parsed", "running_config": SWITCH_TREE,
                                               "devices": ["0000:ee:00.0"]}, ["devices", "0000:ee:00.0"]),
    # ---- rdma_facts
    ("facts-ibstat-garbage", "rdma_facts", {"captured": {"ibstat": GARBAGE}}, ["captured.ibstat", "this is not"]),
    ("facts-ibstat-lid", "rdma_facts", {"captured": {"ibstat": IBSTAT}}, ["captured.ibstat line 6", "'Base lid: x'"]),
    ("facts-ib2n-garbage", "rdma_facts", {"captured": {"ibdev2netdev": GARBAGE}}, ["captured.ibdev2netdev", "this is"]),
    ("facts-gids-garbage", "rdma_facts", {"captured": {"show_gids": GARBAGE}}, ["captured.show_gids", "this is not"]),
    ("facts-topo-garbage", "rdma_facts", {"captured": {"nvidia_smi_topo": GARBAGE}},
     ["captured.nvidia_smi_topo", "this is not"]),
    ("facts-captured-empty", "rdma_facts", {"captured": {"ibstat": ""}}, ["captured", "ibstat"]),
    # ---- gdr_readiness
    ("gdr-lspci-garbage", "gdr_readiness", {"captured": {"lspci": GARBAGE}}, ["captured.lspci line 1", "this is not"]),
    ("gdr-modules-garbage", "gdr_readiness", {"captured": {"proc_modules": GARBAGE}},
     ["captured.proc_modules line 1", "this is not"]),
    ("gdr-driver-garbage", "gdr_readiness", {"captured": {"nvidia_driver_version": GARBAGE}},
     ["captured.nvidia_driver_version", "this is not"]),
    ("gdr-release-garbage", "gdr_readiness", {"captured": {"kernel_release": "banana"}},
     ["captured.kernel_release", "banana"]),
    ("gdr-ibstat-garbage", "gdr_readiness", {"captured": {"ibstat": GARBAGE}}, ["captured.ibstat", "this is not"]),
    ("gdr-proc-root", "gdr_readiness", {"proc_root": "/nonexistent/proc"}, ["proc_root", "/nonexistent/proc"]),
    # ---- sm_info
    ("sm-parsed-garbage", "sm_info", {"state": "parsed", "running_config": GARBAGE},
     ["running_config line 1", "this is not tool output"]),
    ("sm-parsed-blank", "sm_info", {"state": "parsed", "running_config": " \n"}, ["running_config", "empty"]),
    ("sm-parsed-guid-17", "sm_info", {"state": "parsed", "running_config": SMIR},
     ["running_config line 6", "0x00001000010000011", "17 hex digits"]),
    ("sm-parsed-sminfo-guid-17", "sm_info", {"state": "parsed", "running_config":
                                             "sminfo: sm lid 1 sm guid 0x00001000010000011, activity count 5 "
                                             "priority 10 state 3 SMINFO_MASTER\n"},
     ["running_config line 1", "0x00001000010000011"]),
    ("sm-lids-0", "sm_info", {"lids": [0]}, ["lids", "[0]"]),
    ("sm-lids-multicast", "sm_info", {"lids": [0xC000]}, ["lids", "49152"]),
    ("sm-lids-twice", "sm_info", {"lids": [5, 5]}, ["lids", "[5, 5]", "twice"]),
    ("sm-port-0", "sm_info", {"port": 0}, ["port", "0"]),
    ("sm-timeout-neg", "sm_info", {"timeout": -1}, ["timeout", "-1"]),
]

# state_check: a refused resource is a failed entry of ``results`` (the others still run)
STATE_CHECK_CASES = [
    ("sc-mlnx-pfc", {"resource": "mlnx_qos", "config": [_cfg(pfc=[9])]}, ["pfc[0]", "9"]),
    ("sc-mlnx-iface", {"resource": "mlnx_qos", "config": [_cfg(interface="../x", pfc=[3])]}, ["interface", "../x"]),
    ("sc-dcqcn-dscp", {"resource": "dcqcn", "config": [dict(_cfg(rdma_device="mlx5_0"),
                                                            np={"params": {"cnp_dscp": 64}})]},
     ["cnp_dscp", "64"]),
    ("sc-lldp-app", {"resource": "lldp_dcb", "config": [_cfg(app=[{"priority": 3, "selector": 7, "protocol": 1}])]},
     ["selector", "7"]),
    ("sc-files-mode", {"resource": "node_files", "config": {"files": [{"path": "/etc/x", "content": "",
                                                                       "mode": "777x"}]}},
     ["files[0].mode", "777x"]),
    ("sc-kc-newline", {"resource": "kernel_cmdline", "config": {"arguments": [{"name": "iommu\n"}]}},
     ["arguments[0].name", "iommu\\n"]),
    ("sc-kc-contradict", {"resource": "kernel_cmdline", "config": {"backend": "grub", "arguments": [
        {"name": "iommu", "value": "nopt"}, {"name": "iommu.passthrough", "value": "y"}]}},
     ["iommu=nopt", "iommu.passthrough=y"]),
]


def _roce_settings(**over):
    with open(os.path.join(REPO, "roles", "roce_qos", "defaults", "main.yml")) as handle:
        defaults = yaml.safe_load(handle)
    base = dict((k[len("roce_qos_"):], v) for k, v in defaults.items())
    base.update(over)
    return base


def _role_defaults(role, **over):
    with open(os.path.join(REPO, "roles", role, "defaults", "main.yml")) as handle:
        config = yaml.safe_load(handle)
    config.update(over)
    return config


def nccl_env_config_errors(variables):
    """The nccl_env role's checks (its preflight) of these variables."""
    return _nccl_env.config_errors(_nccl_env.settings(variables))


FILTER_CASES = [
    ("rq-lossless-8", lambda: roce_qos_config_errors(_roce_settings(lossless_priority=8)),
     ["roce_qos_lossless_priority", "8"]),
    ("rq-lossless-nan", lambda: roce_qos_config_errors(_roce_settings(lossless_priority=NAN)),
     ["roce_qos_lossless_priority", "nan"]),
    ("rq-roce-dscp-64", lambda: roce_qos_config_errors(_roce_settings(roce_dscp=64)), ["roce_qos_roce_dscp", "64"]),
    ("rq-cnp-dscp-inf", lambda: roce_qos_config_errors(_roce_settings(cnp_dscp=INF)), ["roce_qos_cnp_dscp", "inf"]),
    ("rq-pfc-dup", lambda: roce_qos_config_errors(_roce_settings(pfc_priorities=[3, 3])),
     ["roce_qos_pfc_priorities", "twice"]),
    ("rq-dcqcn-prio-9", lambda: roce_qos_config_errors(_roce_settings(dcqcn_priorities=[9])),
     ["roce_qos_dcqcn_priorities[0]", "9"]),
    ("rq-iface", lambda: roce_qos_config_errors(_roce_settings(interfaces=["../x"])),
     ["roce_qos_interfaces[0]", "../x"]),
    ("rq-np-cnp-dscp", lambda: roce_qos_config_errors(_roce_settings(dcqcn_np_params={"cnp_dscp": 10})),
     ["roce_qos_dcqcn_np_params.cnp_dscp=10", "roce_qos_cnp_dscp=48"]),
    ("rq-roce-cnp-same-dscp", lambda: roce_qos_config_errors(_roce_settings(cnp_dscp=26)),
     ["roce_qos_roce_dscp=26", "roce_qos_cnp_dscp=26", "two priorities"]),
    ("rq-extra-dscp-two-prios", lambda: roce_qos_config_errors(_roce_settings(
        dscp2prio_extra=[{"dscp": 10, "priority": 1}, {"dscp": 10, "priority": 2}])),
     ["roce_qos_dscp2prio_extra[0].dscp=10", "roce_qos_dscp2prio_extra[1].dscp=10", "two priorities"]),
    ("rq-extra-dscp-twice", lambda: roce_qos_config_errors(_roce_settings(
        dscp2prio_extra=[{"dscp": 10, "priority": 1}, {"dscp": 10, "priority": 1}])),
     ["roce_qos_dscp2prio_extra[0].dscp=10", "roce_qos_dscp2prio_extra[1].dscp=10", "twice"]),
    ("rq-extra-moves-roce", lambda: roce_qos_config_errors(_roce_settings(
        dscp2prio_extra=[{"dscp": 26, "priority": 1}])), ["roce_qos_dscp2prio_extra[0].dscp=26", "roce_qos_roce_dscp"]),
    ("rq-np-cnp-prio", lambda: roce_qos_config_errors(_roce_settings(dcqcn_np_params={"cnp_802p_prio": 5})),
     ["roce_qos_dcqcn_np_params.cnp_802p_prio=5", "roce_qos_cnp_priority=6"]),
    ("rq-rp-param-unknown", lambda: roce_qos_config_errors(_roce_settings(dcqcn_rp_params={"rpg_bogus": 1})),
     ["roce_qos_dcqcn_rp_params", "'rpg_bogus'"]),
    ("rq-rp-param-of-np", lambda: roce_qos_config_errors(_roce_settings(dcqcn_rp_params={"min_time_between_cnps": 1})),
     ["roce_qos_dcqcn_rp_params.min_time_between_cnps", "roce_np"]),
    ("rq-persist-dir-newline", lambda: roce_qos_config_errors(dict(_roce_settings(), persist_dir="/etc/x\nTEST")),
     ["roce_qos_persist_dir", "'/etc/x\\nTEST'"]),
    ("rq-persist-dir-quote", lambda: roce_qos_config_errors(dict(_roce_settings(), persist_dir='/etc/x", RUN+="/bin/sh')),
     ["roce_qos_persist_dir", "RUN+="]),
    ("rq-tos-ecn", lambda: roce_qos_config_errors(_roce_settings(tos_ecn="bogus")), ["roce_qos_tos_ecn", "bogus"]),
    ("rq-default-tos", lambda: roce_qos_config_errors(_roce_settings(default_tos=300)),
     ["roce_qos_default_tos", "300"]),
    # the modules' normalisers, named as the role's variables (not tcbw, config.tsa: issue 26)
    ("rq-tcbw-sum", lambda: roce_qos_config_errors(_roce_settings(tcbw=[50, 0, 0, 40, 0, 0, 0, 0])),
     ["roce_qos_tcbw=[50, 0, 0, 40, 0, 0, 0, 0]", "sums to 90"]),
    ("rq-tcbw-short", lambda: roce_qos_config_errors(_roce_settings(tcbw=[50, 0, 0, 50])),
     ["roce_qos_tcbw=[50, 0, 0, 50]", "8 values"]),
    ("rq-tcbw-strict-tc", lambda: roce_qos_config_errors(_roce_settings(
        tsa=["strict", "ets", "ets", "ets", "ets", "ets", "ets", "ets"])),
     ["roce_qos_tcbw[0]=50", "strict in roce_qos_tsa"]),
    ("rq-tsa-bogus", lambda: roce_qos_config_errors(_roce_settings(tsa=["bogus"] + ["ets"] * 7)),
     ["roce_qos_tsa[0]='bogus'"]),
    ("rq-prio-tc-9", lambda: roce_qos_config_errors(_roce_settings(prio_tc=[9] * 8)), ["roce_qos_prio_tc[0]=9"]),
    ("rq-cable-len", lambda: roce_qos_config_errors(_roce_settings(cable_len=-1)), ["roce_qos_cable_len=-1"]),
    ("rq-buffer-unsized", lambda: roce_qos_config_errors(_roce_settings(
        buffer_size=[0] * 8, prio2buffer=[0, 0, 0, 1, 0, 0, 0, 0])),
     ["roce_qos_buffer_size=[0, 0, 0, 0, 0, 0, 0, 0]", "roce_qos_prio2buffer=[0, 0, 0, 1, 0, 0, 0, 0]"]),
    ("rq-extra-dscp-70", lambda: roce_qos_config_errors(_roce_settings(dscp2prio_extra=[{"dscp": 70, "priority": 1}])),
     ["roce_qos_dscp2prio_extra[0].dscp=70"]),
    ("rq-rp-param", lambda: roce_qos_config_errors(_roce_settings(dcqcn_rp_params={"rpg_gd": -1})),
     ["roce_qos_dcqcn_rp_params.rpg_gd=-1"]),
    ("rq-np-param-in-rp", lambda: roce_qos_config_errors(_roce_settings(dcqcn_rp_params={"cnp_dscp": 1})),
     ["roce_qos_dcqcn_rp_params.cnp_dscp", "roce_qos_dcqcn_np_params"]),
    ("rq-trust-pcp-map", lambda: roce_qos_config_errors(_roce_settings(trust="pcp")),
     ["roce_qos_trust=pcp", "roce_qos_roce_dscp"]),
    ("nccl-dscp-64", lambda: nccl_env_config_errors(_role_defaults("nccl_env", nccl_env_roce_dscp=64)),
     ["nccl_env_roce_dscp", "64"]),
    ("nccl-sl-16", lambda: nccl_env_config_errors(_role_defaults("nccl_env", nccl_env_ib_sl=16)),
     ["nccl_env_ib_sl", "16"]),
    ("nccl-gid-sel", lambda: nccl_env_config_errors(_role_defaults("nccl_env", nccl_env_gid_selection="bogus")),
     ["nccl_env_gid_selection", "bogus"]),
    ("gd-arg-newline", lambda: _gpudirect.config_errors(_gpudirect.settings(_role_defaults(
        "gpudirect", gpudirect_kernel_arguments=[{"name": "iommu\n", "value": "pt"}]))),
     ["gpudirect_kernel_arguments[0].name", "iommu\\n"]),
    ("gd-args-type", lambda: _gpudirect.config_errors(_gpudirect.settings(_role_defaults(
        "gpudirect", gpudirect_kernel_arguments="x"))),
     ["gpudirect_kernel_arguments", "'x'"]),
    ("osm-part-name", lambda: partition_errors([{"name": "bad name\n", "pkey": "0x7fff"}]),
     ["opensm_partitions[0].name", "bad name\\n"]),
    ("osm-parts-type", lambda: partition_errors("x"), ["opensm_partitions", "'x'"]),
    ("osm-extra-sm-key-space", lambda: extra_option_errors({"sm_key ": "0x1"}),
     ["opensm_extra_options['sm_key ']", "sm_key", "opensm_sm_key"]),
    ("osm-extra-sm-key-case", lambda: extra_option_errors({"SM_Key": "0x2"}),
     ["opensm_extra_options['SM_Key']", "opensm_sm_key"]),
    ("osm-extra-priority-upper", lambda: extra_option_errors({" SM_PRIORITY": 15}),
     ["opensm_extra_options[' SM_PRIORITY']", "sm_priority", "opensm_priority"]),
    ("osm-extra-guid-tab", lambda: extra_option_errors({"guid\t": "0x1"}), ["guid\\t", "opensm_guid"]),
    ("osm-extra-log-file", lambda: extra_option_errors({"log_file": "/tmp/x"}), ["log_file", "opensm_log_file"]),
    ("osm-extra-value-newline", lambda: extra_option_errors({"sweep_interval": "10\nsm_priority 15"}),
     ["opensm_extra_options['sweep_interval']", "10\\nsm_priority 15", "line break"]),
    ("osm-extra-value-cr", lambda: extra_option_errors({"sweep_interval": "10\rsm_key 0x1"}),
     ["sweep_interval", "10\\rsm_key 0x1", "line break"]),
    ("osm-extra-value-u2028", lambda: extra_option_errors({"qos_policy_file": "a\u2028sm_key 0x1"}),
     ["qos_policy_file", "line break"]),
    ("osm-extra-key-newline", lambda: extra_option_errors({"sweep_interval 10\nsm_key": 1}),
     ["opensm_extra_options['sweep_interval 10\\nsm_key']", "not an opensm.conf option name"]),
    ("osm-extra-key-space-inside", lambda: extra_option_errors({"sweep interval": 1}),
     ["opensm_extra_options['sweep interval']", "option name"]),
    ("osm-extra-value-list", lambda: extra_option_errors({"sweep_interval": [1]}),
     ["opensm_extra_options['sweep_interval']", "[1]", "list"]),
    ("osm-extra-value-nan", lambda: extra_option_errors({"sweep_interval": NAN}), ["sweep_interval", "nan"]),
    ("osm-extra-not-dict", lambda: extra_option_errors(["sm_key"]), ["opensm_extra_options", "['sm_key']"]),
    ("osm-extra-secret-value", lambda: extra_option_errors({"vendor_password": "pw\n"}),
     ["opensm_extra_options['vendor_password']", "not printed", "line break"]),
    ("osm-ha-role", lambda: ha_errors([{"host": "sm1", "fabric": "f", "role": "boss", "standby_rank": None,
                                        "priority": None, "master_priority": 14, "guid": ""}]),
     ["sm1", "boss"]),
]


# ------------------------------------------------------------------------------ the world
class World(object):
    """A tmp sysfs + GRUB tree and a command recorder; ``changes()`` lists every file whose
    content or mtime moved, ``writes`` every command that was not a read."""

    READS = ("lspci", "mlnx_qos", "lldptool", "sminfo", "saquery", "ibstat", "nvidia-smi", "systemctl", "modinfo")

    def __init__(self, root):
        self.root = root
        self.calls = []
        net = root / "sys" / "class" / "net" / "eth2" / "ecn"
        for point in ("roce_np", "roce_rp"):
            (net / point / "enable").mkdir(parents=True)
            for prio in range(8):
                (net / point / "enable" / str(prio)).write_text("0\n")
        (net / "roce_np" / "cnp_dscp").write_text("48\n")
        (net / "roce_rp" / "rpg_gd").write_text("11\n")
        tc = root / "sys" / "class" / "infiniband" / "mlx5_0" / "tc" / "1"
        tc.mkdir(parents=True)
        (tc / "traffic_class").write_text("")
        (root / "etc").mkdir()
        (root / "etc" / "x").write_text("keep\n")
        self.grub = root / "etc" / "grub"
        self.grub.write_text('GRUB_CMDLINE_LINUX_DEFAULT=""\nGRUB_CMDLINE_LINUX="quiet"\n')
        (root / "proc_cmdline").write_text("BOOT_IMAGE=/vmlinuz quiet\n")
        self.before = self.snapshot()

    def snapshot(self):
        out = {}
        for path in sorted(self.root.rglob("*")):
            if path.is_file():
                out[str(path)] = (path.read_bytes(), path.stat().st_mtime_ns)
        return out

    def changes(self):
        after = self.snapshot()
        return sorted(p for p in set(self.before) | set(after) if self.before.get(p) != after.get(p))

    def run_command(self, argv, **kwargs):
        self.calls.append(list(argv))
        tool = os.path.basename(argv[0])
        if tool == "lspci":
            return 0, SWITCH_TREE, ""
        if tool == "mlnx_qos" and argv[-1] == "-a":
            return 0, MLNX_REPORT, ""
        return 1, "", "%s: refused by the bad-input world" % tool

    def writes(self):
        return [c for c in self.calls if os.path.basename(c[0]) not in self.READS or
                (os.path.basename(c[0]) == "mlnx_qos" and c[-1] != "-a")]


@pytest.fixture
def world(tmp_path, monkeypatch):
    w = World(tmp_path)
    monkeypatch.setenv("SYSFS_PATH", str(tmp_path / "sys"))
    return w


MAINS = {"mlnx_qos": mlnx_qos.main, "dcqcn": dcqcn.main, "lldp_dcb": lldp_dcb.main, "node_files": node_files.main,
         "kernel_cmdline": kernel_cmdline.main, "pcie_acs": pcie_acs.main, "rdma_facts": rdma_facts.main,
         "gdr_readiness": gdr_readiness.main, "sm_info": sm_info.main, "state_check": state_check.main}


def _words_in(msg, words):
    missing = [w for w in words if w not in msg]
    assert not missing, "message %r does not name %r" % (msg, missing)
    assert "Traceback" not in msg


def _prepare(world, name, args):
    args = dict(args)
    if name == "kernel_cmdline":
        if "grub_line" in args:
            world.grub.write_text('GRUB_CMDLINE_LINUX="%s"\n' % args.pop("grub_line"))
            world.before = world.snapshot()
        args.setdefault("grub_file", str(world.grub))
        args.setdefault("proc_cmdline", str(world.root / "proc_cmdline"))
    if name == "node_files":
        for entry in args.get("files") or []:
            if entry["path"].startswith("/etc/x"):
                entry["path"] = entry["path"].replace("/etc/x", str(world.root / "etc" / "x"), 1)
    return args


def test_the_table_is_large_enough():
    assert len(MODULE_CASES) + len(STATE_CHECK_CASES) + len(FILTER_CASES) >= 100
    assert set(MAINS) - set(["state_check"]) == set(case[1] for case in MODULE_CASES)


@pytest.mark.parametrize("name, args, words", [c[1:] for c in MODULE_CASES], ids=[c[0] for c in MODULE_CASES])
def test_module_refuses_naming_field_and_value(monkeypatch, world, name, args, words):
    args = _prepare(world, name, args)
    kind, result = helpers.run_module(monkeypatch, MAINS[name], args, run_command=world.run_command,
                                      bin_dir="/usr/bin/")
    assert kind == "fail", result
    _words_in(result["msg"], words)
    assert world.writes() == []
    assert world.changes() == []
    assert not result.get("changed")


@pytest.mark.parametrize("request_, words", [c[1:] for c in STATE_CHECK_CASES], ids=[c[0] for c in STATE_CHECK_CASES])
def test_state_check_reports_the_refusal(monkeypatch, world, request_, words):
    request_ = dict(request_)
    if request_["resource"] == "kernel_cmdline":
        request_["config"] = dict(request_["config"], grub_file=str(world.grub), update_command=["/bin/true"],
                                  proc_cmdline=str(world.root / "proc_cmdline"), backend="grub")
    good = {"resource": "node_files", "name": "ok", "config": {"files": [], "units": []}}
    kind, result = helpers.run_module(monkeypatch, state_check.main, {"resources": [request_, good]},
                                      run_command=world.run_command, bin_dir="/usr/bin/")
    assert kind == "exit", result
    bad, ok = result["results"]
    assert bad["failed"] is True and ok["failed"] is False
    _words_in(bad["result"]["msg"], words)
    assert world.writes() == []
    assert world.changes() == []


@pytest.mark.parametrize("call, words", [c[1:] for c in FILTER_CASES], ids=[c[0] for c in FILTER_CASES])
def test_role_filter_names_variable_and_value(call, words):
    errors = call()
    assert errors, "no error for a bad value"
    assert any(all(w in e for w in words) for e in errors), errors
    # a role's message names the role's variables, never a module's field alone
    assert not [e for e in errors if "(mlnx_qos)" in e or "(dcqcn)" in e or "(lldp_dcb)" in e], errors


def test_a_sound_input_passes_the_same_checks(monkeypatch, world):
    """The table's refusals are not the module refusing everything: a good config of each
    kind still goes through (rendered: no I/O)."""
    kind, result = helpers.run_module(monkeypatch, mlnx_qos.main, {"state": "rendered", "config": [_cfg(pfc=[3])]})
    assert kind == "exit" and result["rendered"]
    kind, result = helpers.run_module(monkeypatch, dcqcn.main, {"state": "rendered", "config": [
        dict(_cfg(rdma_device="mlx5_0"), np={"params": {"cnp_dscp": 48}})]})
    assert kind == "exit"
    assert roce_qos_config_errors(_roce_settings()) == []
    assert not math.isnan(1.0)


def test_opensm_extra_options_keep_a_key_value_secret_and_pass_good_ones():
    assert extra_option_errors({"sweep_interval": 10, "qos": True, "console": "off", "sa_key": "0xbeef"}) == []
    errors = extra_option_errors({"sa_key": "0xdead\nsm_key 0x1"})
    assert errors and "sa_key" in errors[0] and "line break" in errors[0] and "0xdead" not in errors[0]
    assert all("0x2" not in e for e in extra_option_errors({"SM_KEY": "0x2"}))
