#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: mlxconfig
short_description: Manage a ConnectX NIC's non-volatile configuration (mlxconfig), next-boot aware
version_added: 0.2.0
author: rdma.fabric contributors (@rdma-fabric)
extends_documentation_fragment: [rdma.fabric.attributes, rdma.fabric.resource]
description:
  - Per device, reads the Default, Current and Next Boot value of every parameter given, with one
    C(mlxconfig -d <pci address> -e query NAME...) (or mstflint's C(mstconfig)).
  - Plans only what differs from the B(Next Boot) value, never from Current, and applies it with one
    C(mlxconfig -d <pci address> -y set NAME=VALUE...) per device, then reads it back. A value set
    with mlxconfig takes effect only after a firmware reset (C(mlxfwreset)) or a reboot; comparing
    against Current right after a set would write and reboot forever.
  - RV(pending) names, per device, the parameters whose Next Boot value differs from the Current one,
    the reset or reboot that is still owed. The module never resets or reboots; the
    rdma.fabric.nic_firmware role does, when allowed.
  - The boot in which each pending value was set (or first seen pending) is kept in O(boot_record),
    with the kernel's boot id. A parameter still pending in a later boot is RV(not_taken) - a reset
    happened and the firmware did not make the value current - and does not count in
    RV(reboot_required), so that no caller reboots for it again.
  - Wanted values are checked before any write against what the device prints - a number where it
    prints a number, one of the labels or numbers of a known enumeration (C(LINK_TYPE_P*),
    C(PCI_WR_ORDERING)) and of every boolean (C(True(1))/C(False(0))) - and a name the device does
    not have is an error naming it.
  - Before any read, a value wider than its firmware field (C(CNP_DSCP_Pn) 6 bits, C(CNP_802P_PRIO_Pn)
    3, C(ROCE_CC_PRIO_MASK_Pn) and C(MAX_ACC_OUT_READ) 8), a port suffix other than C(_P1)/C(_P2) and
    one device under two names (its PCI address and its RDMA device name) are refused naming the field.
options:
  state:
    description:
      - V(merged) sets every parameter of O(config[].params) whose Next Boot value differs.
      - V(gathered) returns the values of the parameters named in O(config[].params) (a list of names
        or a dict, whose values are then ignored); every parameter when it is empty.
      - V(rendered) returns the C(set) commands for O(config) without touching the host.
      - V(parsed) parses O(running_config), a captured C(mlxconfig -e query) (or C(query)) output.
    type: str
    choices: [merged, gathered, rendered, parsed]
    default: merged
  config:
    description: One entry per device.
    type: list
    elements: dict
    suboptions:
      device:
        description:
          - The device - a PCI address (C(0000:3b:00.0) or C(3b:00.0)), an RDMA device name (C(mlx5_0),
            resolved to its PCI address through C($SYSFS_PATH/class/infiniband/<name>/device)) or an mst
            device path (C(/dev/mst/mt4125_pciconf0)).
          - The NV configuration belongs to the adapter; per-port parameters have the suffix C(_P1), C(_P2).
        type: str
        required: true
      params:
        description:
          - Parameter name to value, as mlxconfig takes them - a label (C(ETH), C(True), C(force_relax)) or a
            number (C(2), C(1)); a YAML boolean is C(True)/C(False). Raw parameters are given by their names
            the same way.
          - With O(state=gathered), a list of names is also accepted.
        type: raw
  firmware:
    description:
      - Also read each device's firmware with C(flint -d <pci address> q) (or C(mstflint)) and return
        the version and PSID in RV(firmware). A failure to read is reported there, not as a module failure.
    type: bool
    default: false
  firmware_updates:
    description:
      - Also ask the firmware manager which firmware is available for each device - C(mlxfwmanager --query)
        (NVIDIA MFT), else mstflint's C(mstfwmanager), else C(mlxup) - and return the current and available
        FW versions per device in RV(firmware_updates). Reads only, in check mode too; a failure to read is
        reported there, not as a module failure.
    type: bool
    default: false
  firmware_updates_online:
    description:
      - With O(firmware_updates), ask NVIDIA's server (C(--online), as C(mlxup) does by default) instead of
        the images the tool carries; the node needs the network. The release notes the server sends come
        back per device.
      - Only with O(state=merged) or O(state=gathered) (the states that read the host).
    type: bool
    default: false
  boot_record:
    description:
      - Where the boot id of each pending value's set is kept (JSON, written atomically, only when it
        changes); empty to keep none, and then nothing is ever RV(not_taken). An absolute path without C(..).
    type: str
    default: /var/lib/rdma-fabric/mlxconfig-boot.json
  running_config:
    description: A captured C(mlxconfig -e query) or C(mlxconfig query) output, for O(state=parsed).
    type: str
attributes:
  action_group:
    membership:
      - rdma.fabric.firmware
  check_mode:
    description: Computes the C(set) commands and the Next Boot values they would give; writes nothing, not even O(boot_record).
  diff_mode:
    description: Shows RV(before) and RV(after) of each device whose values change.
  platform:
    description: Linux with NVIDIA MFT (C(mlxconfig), C(flint)) or mstflint (C(mstconfig), C(mstflint)); root.
notes:
  - Part of the write is not undone by a failure midway - mlxconfig applies one device's values as
    one NV transaction, so a failure leaves the earlier devices set and that device unchanged.
"""

EXAMPLES = r"""
- name: Ethernet on both ports, congestion control on priority 3, relaxed ordering for GPUDirect
  rdma.fabric.mlxconfig:
    config:
      - device: mlx5_0
        params:
          LINK_TYPE_P1: ETH
          ROCE_CC_PRIO_MASK_P1: 8
          PCI_WR_ORDERING: force_relax
  register: nv

- name: Say what a reset still has to make current
  ansible.builtin.debug:
    msg: "{{ nv.pending }}"
  when: nv.reboot_required

- name: Read three parameters and the firmware version
  rdma.fabric.mlxconfig:
    state: gathered
    firmware: true
    config:
      - device: "0000:3b:00.0"
        params: [LINK_TYPE_P1, SRIOV_EN, NUM_OF_VFS]
"""

RETURN = r"""
before:
  description:
    - Per device (C(device)), its C(pci_address), C(device_type), C(params) (per parameter its C(default),
      C(current) and C(next_boot) values as mlxconfig prints them) and C(pending) (the names whose next-boot
      value is not current).
  returned: when state is merged
  type: list
  elements: dict
  sample: [{"device": "mlx5_0", "pci_address": "0000:3b:00.0", "device_type": "ConnectX7",
            "params": {"LINK_TYPE_P1": {"default": "IB(1)", "current": "IB(1)", "next_boot": "IB(1)"}}, "pending": []}]
commands:
  description: The C(mlxconfig set) commands run (check mode, that would run).
  returned: when state is merged
  type: list
  elements: str
  sample: ["/usr/bin/mlxconfig -d 0000:3b:00.0 -y set LINK_TYPE_P1=ETH"]
after:
  description: The same as RV(before), read back after the set (predicted in check mode).
  returned: when state is merged
  type: list
  elements: dict
pending:
  description: Per device, the parameters whose next-boot value differs from the current one, with both values.
  returned: always
  type: dict
  sample: {"mlx5_0": {"LINK_TYPE_P1": {"current": "IB(1)", "next_boot": "ETH(2)"}}}
reboot_required:
  description: A pending parameter that no reset has been tried for yet (RV(not_taken) ones do not count).
  returned: always
  type: bool
not_taken:
  description:
    - Per device, the wanted parameters still pending in a later boot than the one they were set in - the
      firmware did not take them. Rebooting again will not help; the role fails naming them.
  returned: always
  type: dict
  sample: {"mlx5_0": {"ATS_ENABLED": {"wanted": "False", "current": "True(1)", "next_boot": "False(0)"}}}
firmware:
  description: Per device, C(fw_version), C(psid), C(product_version), C(image_type), C(fw_release_date), or C(error).
  returned: when O(firmware) is true
  type: dict
  sample: {"mlx5_0": {"fw_version": "28.39.1002", "psid": "MT_0000000838"}}
firmware_updates:
  description:
    - The firmware manager's answer - C(tool), C(argv) and per device found (C(devices)) C(pci_device_name),
      C(psid), C(part_number), C(description), C(fw_current), C(fw_available), C(update) (true when an
      available version differs from the current one, null when none is available for the PSID), C(status),
      C(release_notes) - or C(error) naming the command and why.
  returned: when O(firmware_updates) is true
  type: dict
  sample: {"tool": "/usr/bin/mlxfwmanager", "argv": ["/usr/bin/mlxfwmanager", "--query"], "devices": [
           {"pci_device_name": "/dev/mst/mt4123_pciconf0", "psid": "MT_0000000223", "fw_current": "20.31.1014",
            "fw_available": "20.35.1012", "update": true, "status": "Update required"}]}
gathered:
  description: The values read, same shape as RV(before).
  returned: when state is gathered
  type: list
  elements: dict
rendered:
  description: The C(set) commands for O(config).
  returned: when state is rendered
  type: list
  elements: str
parsed:
  description: The devices of O(running_config) as the parser reads them (C(device), C(device_type), C(params)).
  returned: when state is parsed
  type: list
  elements: dict
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.rdma.fabric.plugins.module_utils.parsers import _mlxfw
from ansible_collections.rdma.fabric.plugins.module_utils.resources._nvconfig import DEFAULT_BOOT_RECORD, MlxconfigResource
from ansible_collections.rdma.fabric.plugins.module_utils.resources._resource import run_resource

STATES = ["merged", "gathered", "rendered", "parsed"]


def argument_spec():
    return dict(
        state=dict(type="str", default="merged", choices=STATES),
        config=dict(type="list", elements="dict", options=dict(
            device=dict(type="str", required=True),
            params=dict(type="raw"),
        )),
        firmware=dict(type="bool", default=False),
        firmware_updates=dict(type="bool", default=False),
        firmware_updates_online=dict(type="bool", default=False),
        boot_record=dict(type="str", default=DEFAULT_BOOT_RECORD),
        running_config=dict(type="str"),
    )


class _WithUpdates(MlxconfigResource):
    """The resource, with the firmware manager's query in its result (O(firmware_updates))."""

    def extra_result(self):
        result = MlxconfigResource.extra_result(self)
        params = self.module.params
        if params["firmware_updates"] and params["state"] in ("merged", "gathered"):
            result["firmware_updates"] = _mlxfw.read_updates(self.module, params["firmware_updates_online"])
        return result


def main():
    module = AnsibleModule(
        argument_spec=argument_spec(),
        required_if=[("state", "merged", ("config",)), ("state", "rendered", ("config",)),
                     ("state", "gathered", ("config",)), ("state", "parsed", ("running_config",))],
        supports_check_mode=True,
    )
    params = module.params
    record = params["boot_record"]
    if record and (not record.startswith("/") or ".." in record.split("/") or "\x00" in record):
        module.fail_json(msg="boot_record=%r: expected an absolute path without '..' (or empty for none)" % record)
    resource = _WithUpdates(module, firmware=params["firmware"], boot_record=params["boot_record"] or None)
    run_resource(module, resource, params["state"], params["config"], params["running_config"])


if __name__ == "__main__":
    main()
