#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: pcie_acs
short_description: Audit PCIe ACS on the bridges between GPUs and NICs, and clear ACS redirect at runtime
version_added: 0.1.0
author: rdma.fabric contributors (@rdma-fabric)
description:
  - Reads C(lspci -D -nn -vvv) and audits the ACS control (C(ACSCtl)) of every PCIe bridge
    and switch port above the given endpoints (by default every NVIDIA GPU and Mellanox/NVIDIA
    ConnectX NIC), and reports, per GPU, the bridges on its path to each NIC.
  - The bridges above an endpoint come from the sysfs device path
    (C($SYSFS_PATH/bus/pci/devices/<bdf>)), or, when that path holds no bridge (simulated
    sysfs), from the bridges' C(Bus:) secondary numbers in the same lspci output.
  - With O(state=redirect_disabled), writes C(setpci -s <bdf> ECAP_ACS+0x6.w=<value>:<mask>)
    only on bridges where a bit of O(clear) is still set, and only on the bridges of a GPU-NIC
    path (below and at the switch where the two meet; a root port above a shared switch keeps its
    isolation). When no GPU-NIC pair is found among the endpoints, every bridge above them is a target. The new control word is the current
    one with those bits cleared; the mask makes setpci leave every other bit as it is.
  - Runtime changes are lost at reboot or on a hot reset of the switch; re-apply at boot or use
    C(pci=disable_acs_redir=) through M(rdma.fabric.kernel_cmdline).
options:
  state:
    description:
      - V(audited) only reads. V(redirect_disabled) clears the O(clear) bits where set.
        V(parsed) audits O(running_config) (a captured C(lspci -vvv)) without touching the host.
    type: str
    choices: [audited, redirect_disabled, parsed]
    default: audited
  devices:
    description:
      - Endpoint PCI functions (C(0000:1a:00.0) or C(1a:00.0)) whose upstream bridges are audited.
      - Default, every NVIDIA GPU and every Mellanox/NVIDIA ConnectX NIC in the lspci output.
    type: list
    elements: str
  clear:
    description:
      - ACS control bits cleared with O(state=redirect_disabled) and counted as "redirect" in the audit.
      - V(redirect) - ReqRedir, CmpltRedir and EgressCtrl (mask C(002c)), the bits that send GPU-NIC
        peer-to-peer up to the root complex or block it; SrcValid, TransBlk, UpstreamFwd and
        DirectTrans are kept.
      - V(all) - the seven ACS control bits (mask C(007f)), like the NCCL troubleshooting loop
        writing C(0000).
    type: str
    choices: [redirect, all]
    default: redirect
  running_config:
    description:
      - Output of C(lspci -vvv) (with or without C(-D)/C(-nn)) for O(state=parsed).
    type: str
attributes:
  action_group:
    description: Use C(group/rdma.fabric.gpudirect) in C(module_defaults) to set defaults for this module.
    support: full
    membership:
      - rdma.fabric.gpudirect
  check_mode:
    description: Computes the setpci commands and the new control words without writing.
    support: full
  diff_mode:
    description: Shows the control words of the bridges that change.
    support: full
  platform:
    description: Linux with pciutils; root is needed for lspci to print ACS lines and for setpci.
    support: full
    platforms: posix
"""

EXAMPLES = r"""
- name: Audit ACS between GPUs and NICs
  rdma.fabric.pcie_acs:
  register: acs

- name: Clear ACS redirect on the switch ports between GPUs and NICs (until reboot)
  rdma.fabric.pcie_acs:
    state: redirect_disabled
  become: true

- name: Audit a captured lspci -vvv
  rdma.fabric.pcie_acs:
    state: parsed
    running_config: "{{ lookup('file', 'lspci-vvv.txt') }}"
    devices: ["18:00.0", "1a:00.0"]
"""

RETURN = r"""
before:
  description: Audit of each bridge before any change, keyed by BDF.
  returned: always
  type: dict
  sample: {"0000:17:01.0": {"bdf": "0000:17:01.0", "port_type": "Downstream Port", "acs": true,
           "ctl_word": "001d", "redirect": true, "ctl": {"ReqRedir": true}}}
after:
  description: Same after the change (read back; predicted in check mode).
  returned: always
  type: dict
commands:
  description: setpci argv lists run (or that would run in check mode).
  returned: always
  type: list
  elements: list
  sample: [["/usr/bin/setpci", "-s", "0000:17:01.0", "ECAP_ACS+0x6.w=0000:002c"]]
changes:
  description: Per changed bridge, C(bdf), C(before) and C(after) control words (hex).
  returned: always
  type: list
  elements: dict
endpoints:
  description: Per audited endpoint, the bridges above it, nearest first.
  returned: always
  type: dict
pairs:
  description: Per GPU, per NIC, the bridges on the peer-to-peer path between them.
  returned: always
  type: dict
redirect_enabled:
  description: Bridges that still have a O(clear) bit set after the run.
  returned: always
  type: list
  elements: str
parsed:
  description: The audit of O(running_config).
  returned: when O(state=parsed)
  type: dict
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.rdma.fabric.plugins.module_utils._common import ToolError, find_tool
from ansible_collections.rdma.fabric.plugins.module_utils import _pcie_acs as acs


def _audit(devices, wanted, mask, use_sysfs):
    if wanted:
        endpoints = [acs.normalize_bdf(b) for b in wanted]
    else:
        endpoints = [b for b, d in devices.items() if acs.is_gpu(d) or acs.is_rdma_nic(d)]
    chains = dict((b, acs.sysfs_chain(b) if use_sysfs else None) for b in endpoints)
    bridges, ups = acs.audit(devices, endpoints, chains, mask)
    return bridges, ups


def main():
    module = AnsibleModule(
        argument_spec=dict(
            state=dict(type="str", choices=["audited", "redirect_disabled", "parsed"], default="audited"),
            devices=dict(type="list", elements="str"),
            clear=dict(type="str", choices=["redirect", "all"], default="redirect"),
            running_config=dict(type="str"),
        ),
        required_if=[("state", "parsed", ["running_config"])],
        supports_check_mode=True,
    )
    state = module.params["state"]
    mask = acs.CLEAR_MASKS[module.params["clear"]]
    bad = [bdf for bdf in module.params["devices"] or [] if not acs.valid_bdf(bdf)]
    if bad:
        module.fail_json(msg="devices: %s not PCI addresses ([domain:]bus:dev.fn, e.g. 0000:1a:00.0)"
                         % ", ".join(repr(b) for b in bad))

    result = dict(changed=False, commands=[], changes=[])
    try:
        if state == "parsed":
            devices = acs.parse_lspci(module.params["running_config"])
            bridges, ups = _audit(devices, module.params["devices"], mask, use_sysfs=False)
            result.update(parsed=bridges, before=bridges, after=bridges, endpoints=ups,
                          pairs=acs.pair_paths(devices, ups),
                          redirect_enabled=sorted(b for b, e in bridges.items() if e["redirect"]))
            module.exit_json(**result)
        lspci = find_tool(module, "lspci")
        devices = acs.parse_lspci(acs.read_lspci(module, lspci))
        bridges, ups = _audit(devices, module.params["devices"], mask, use_sysfs=True)
        pairs = acs.pair_paths(devices, ups)
        result.update(before=bridges, after=bridges, endpoints=ups, pairs=pairs)
        denied = sorted(b for b, e in bridges.items() if e["acs"] is None)
        if denied:
            module.warn("lspci printed '<access denied>' for %s: run as root (become) to see ACS" % ", ".join(denied))
        steps = []
        if state == "redirect_disabled":
            setpci = find_tool(module, "setpci")
            steps = acs.plan(acs.write_targets(bridges, pairs), mask, setpci)
        result["commands"] = [s["argv"] for s in steps]
        result["changes"] = [dict(bdf=s["bdf"], before=s["before"], after=s["after"]) for s in steps]
        if steps:
            result["changed"] = True
            if module._diff:
                result["diff"] = dict(
                    before="".join("%s ACSCtl %s\n" % (s["bdf"], s["before"]) for s in steps),
                    after="".join("%s ACSCtl %s\n" % (s["bdf"], s["after"]) for s in steps),
                    before_header="ACS control", after_header="ACS control")
            if module.check_mode:
                predicted = dict(bridges)
                for s in steps:
                    word = int(s["after"], 16)
                    predicted[s["bdf"]] = dict(bridges[s["bdf"]], ctl_word=s["after"], redirect=bool(word & mask),
                                               ctl=acs.word_to_flags(word))
                result["after"] = predicted
            else:
                try:
                    acs.apply(module, steps)
                except ToolError as exc:
                    fail = exc.as_result()
                    changed_bdfs = getattr(exc, "changed_bdfs", [])
                    fail.update(changed=bool(changed_bdfs), changed_bdfs=changed_bdfs,
                                commands=result["commands"], before=bridges)
                    module.fail_json(**fail)
                after_devices = acs.parse_lspci(acs.read_lspci(module, lspci))
                after = dict((b, acs.bridge_state(after_devices[b], mask)) for b in bridges if b in after_devices)
                result["after"] = after
                still = sorted(s["bdf"] for s in steps if after.get(s["bdf"], {}).get("redirect"))
                if still:
                    module.fail_json(msg="setpci ran but ACSCtl still has redirect bits on %s" % ", ".join(still),
                                     **result)
        result["redirect_enabled"] = sorted(b for b, e in result["after"].items() if e["redirect"])
    except ToolError as exc:
        fail = exc.as_result()
        fail.update((k, v) for k, v in result.items() if k not in fail)
        module.fail_json(**fail)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
