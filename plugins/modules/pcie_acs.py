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
extends_documentation_fragment: [rdma.fabric.attributes, rdma.fabric.resource]
description:
  - Reads C(lspci -D -nn -vvv) and audits the ACS control (C(ACSCtl)) of every PCIe bridge
    and switch port above the given endpoints (by default every NVIDIA GPU and Mellanox/NVIDIA
    ConnectX NIC), and reports, per GPU, the bridges on its path to each NIC.
  - The bridges above an endpoint come from the sysfs device path
    (C($SYSFS_PATH/bus/pci/devices/<bdf>)), or, when that path holds no bridge (simulated
    sysfs), from the bridges' C(Bus:) secondary numbers in the same lspci output.
  - With O(state=redirect_disabled), writes C(setpci -s <bdf> ECAP_ACS+0x6.w=<value>:<mask>)
    only on bridges where a bit of O(clear) is still set, and only on the switch ports between a
    GPU and its own NIC, the NIC(s) that meet it at the nearest PCIe switch both sit below (the
    ports below that switch and the one where they meet), whatever O(devices) holds. A root port
    is never written, nor a path between rails (a GPU and a NIC that meet only at a root port,
    the host bridge or not at all); when the endpoints hold no such pair nothing is written and
    a warning says so. The new control word is the current one with those bits cleared; the mask
    makes setpci leave every other bit as it is.
  - With O(state=redirect_disabled), a bridge whose ACS lspci could not read (C(<access denied>),
    not root) fails the module before any write.
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
    membership:
      - rdma.fabric.gpudirect
  check_mode:
    description: Computes the setpci commands and the new control words without writing.
  diff_mode:
    description: Shows RV(before) and RV(after), the audit of the bridges, when a bridge changes.
  platform:
    description: Linux with pciutils; root is needed for lspci to print ACS lines and for setpci.
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
  description: setpci commands run (or that would run in check mode), in order.
  returned: always
  type: list
  elements: str
  sample: ["/usr/bin/setpci -s 0000:17:01.0 ECAP_ACS+0x6.w=0000:002c"]
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
  description: Per GPU, per NIC, the bridges on the peer-to-peer path between them (every pair, audit only).
  returned: always
  type: dict
rails:
  description:
    - Per GPU, its own NIC(s) (below the nearest shared PCIe switch) and the bridges between them, the
      only bridges O(state=redirect_disabled) may write. Empty when no GPU and NIC share a switch.
  returned: always
  type: dict
redirect_enabled:
  description:
    - Bridges that still have a O(clear) bit set after the run (read back; predicted in check mode).
    - A bridge that kept a bit setpci cleared is also named in a warning.
  returned: always
  type: list
  elements: str
parsed:
  description: The audit of O(running_config).
  returned: when O(state=parsed)
  type: dict
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.rdma.fabric.plugins.module_utils.resources._pcie_acs import PcieAcsResource
from ansible_collections.rdma.fabric.plugins.module_utils.resources._resource import run_resource


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
    params = module.params
    run_resource(module, PcieAcsResource(module), "parsed" if params["state"] == "parsed" else "merged",
                 dict(devices=params["devices"], clear=params["clear"], state=params["state"]),
                 params["running_config"])


if __name__ == "__main__":
    main()
