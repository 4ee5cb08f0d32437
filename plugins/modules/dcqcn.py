#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: dcqcn
short_description: Manage mlx5 DCQCN (ECN sysfs), the RoCE default ToS and the RDMA-CM default RoCE mode
version_added: 0.1.0
author: rdma.fabric contributors (@rdma-fabric)
extends_documentation_fragment: [rdma.fabric.attributes, rdma.fabric.resource]
description:
  - Per interface, sets the per-priority ECN enables C(ecn/roce_np/enable/<prio>) and
    C(ecn/roce_rp/enable/<prio>) and the notification point (NP, the receiver that sends
    CNPs) and reaction point (RP, the sender that slows down) parameters the device has,
    under C($SYSFS_PATH/class/net/<interface>/ecn/) (default C(/sys)). Parameters sit
    next to C(enable/), there is no C(params/) directory.
  - Per RDMA device port, sets the default RoCE traffic class
    C(/sys/class/infiniband/<rdma_device>/tc/<port>/traffic_class), so RDMA traffic that
    does not pick its own ToS lands in the lossless class. It lives in this module so that
    one module owns every QoS sysfs write and O(state=rendered) lists them all for a
    boot-time re-apply.
  - Per RDMA device port, sets the RDMA-CM defaults in the rdma_cm configfs, the ToS
    (O(config[].rdma_cm_tos)) and the RoCE mode (O(config[].rdma_cm_roce_mode)) of
    connections that choose none themselves.
  - Writes only the files whose value differs; a converged host gets no write.
  - The ECN files come with MLNX_OFED's mlx5 driver; the inbox driver has no C(ecn/)
    directory and the module then fails with a clear message. All values are volatile
    (reset by a reboot or driver reload).
options:
  state:
    description:
      - V(merged) turns the listed priorities on and sets the parameters given.
      - V(replaced) also turns every priority not listed off (per point given).
      - V(gathered) returns the current values of the entries of O(config) (only their
        O(config[].interface), O(config[].rdma_device) and O(config[].port) are used);
        V(rendered) returns the writes for O(config) as C(path=value) without touching the
        host (as merged; parameter names are not checked); V(parsed) reads
        O(running_config).
    type: str
    choices: [merged, replaced, gathered, rendered, parsed]
    default: merged
  running_config:
    description:
      - For O(state=parsed) the output of
        C(grep -r . /sys/class/net/IF/ecn /sys/class/infiniband/DEV/tc
        /sys/kernel/config/rdma_cm/DEV) for one interface and device, one
        C(path:value) line per file (C(path=value) lines are accepted too). Text with no
        such line is an error, not an empty result.
      - A C(default_roce_mode) line must hold C(RoCE v2) or C(IB/RoCE v1); it is returned as
        V(v2) or V(v1).
    type: str
  config:
    description:
      - The wanted values, one entry per interface; every interface is read and planned
        before the first write, in one module call.
    type: list
    elements: dict
    suboptions:
      interface:
        description:
          - Network interface whose C(ecn/) files to manage (kernel name rules, each once).
            Needed for O(config[].np) and O(config[].rp); an entry without it manages only
            the ToS of O(config[].rdma_device) and is known as C(rdma_device/port).
        type: str
      rdma_device:
        description:
          - RDMA device of the interface (for example C(mlx5_0)), for
            O(config[].roce_tos), O(config[].rdma_cm_tos) and O(config[].rdma_cm_roce_mode).
        type: str
      port:
        description: Port of O(config[].rdma_device).
        type: int
        default: 1
      np:
        description: Notification point (receiver) settings, C(ecn/roce_np/).
        type: dict
        suboptions:
          enabled_priorities:
            description: Priorities (0-7) on which an ECN-marked packet received gets a CNP sent back.
            type: list
            elements: int
          params:
            description:
              - Parameter file name to integer, for example C(cnp_dscp), C(cnp_802p_prio),
                C(min_time_between_cnps). Names the device does not have are rejected with
                the list of those it has. Ranges are those of the firmware fields the mlx5
                driver writes (it truncates a wider value instead of refusing it), so C(cnp_dscp) is
                0-63, C(cnp_802p_prio) 0-7, C(clamp_tgt_rate) and C(clamp_tgt_rate_after_time_inc)
                0-1, the others 0 to 2^31-1, all checked for every entry before the first write.
                A roce_rp parameter given under O(config[].np) (or the reverse) is refused.
            type: dict
      rp:
        description: Reaction point (sender) settings, C(ecn/roce_rp/).
        type: dict
        suboptions:
          enabled_priorities:
            description: Priorities (0-7) whose sending rate a CNP received slows down.
            type: list
            elements: int
          params:
            description:
              - Parameter file name to integer, for example C(rpg_time_reset),
                C(rpg_ai_rate), C(clamp_tgt_rate). Checked against the files present.
            type: dict
      roce_tos:
        description:
          - Default ToS (0-255) of RoCE verbs traffic on O(config[].rdma_device) O(config[].port)
            (C(tc/<port>/traffic_class)), for example V(106) (DSCP 26 with ECT(0)). Needs
            O(config[].rdma_device) and MLNX_OFED's mlx5_ib.
        type: int
      rdma_cm_tos:
        description:
          - Default ToS (0-255) of RDMA-CM connections on O(config[].rdma_device) O(config[].port) that set
            none themselves, the rdma_cm configfs
            C($SYSFS_PATH/kernel/config/rdma_cm/<rdma_device>/ports/<port>/default_roce_tos)
            that mlnx-tools' C(cma_roce_tos) sets. Needs O(config[].rdma_device), configfs mounted and
            the C(rdma_cm) module loaded.
          - The configfs group C(rdma_cm/<rdma_device>) exists only after a C(mkdir); the
            module creates it when absent (also in check mode and for V(gathered), to read
            the value) and removes it again at the end, as C(cma_roce_tos) does. The value
            stays in the kernel after the C(rmdir).
        type: int
      rdma_cm_roce_mode:
        description:
          - Default RoCE mode (GID type) of RDMA-CM connections on O(config[].rdma_device)
            O(config[].port), the rdma_cm configfs
            C($SYSFS_PATH/kernel/config/rdma_cm/<rdma_device>/ports/<port>/default_roce_mode)
            that mlnx-tools' C(cma_roce_mode) reads and sets (C(-m 2) / C(-m 1)). Needs
            O(config[].rdma_device), configfs mounted and the C(rdma_cm) module loaded.
          - V(v2) is the kernel's C(RoCE v2) (RoCE over UDP/IP, routable; what NCCL and routed
            RoCE fabrics need), V(v1) the kernel's C(IB/RoCE v1) (the only mode of an
            InfiniBand port). The kernel's spellings V(RoCE v2) and V(IB/RoCE v1) are accepted
            too and mean the same. The returned states (RV(before), RV(after), RV(gathered),
            RV(parsed)) hold V(v2) or V(v1) (any other text the kernel shows as it is);
            RV(commands) hold the kernel's text that is written.
          - The kernel refuses a mode the port does not support (C(EINVAL)); the module then
            fails as for any refused write, naming the file.
          - The configfs group is created and removed as for O(config[].rdma_cm_tos); the mode
            stays in the kernel after the C(rmdir) and is reset by a reboot or driver reload.
        type: str
        choices: [v2, v1, RoCE v2, IB/RoCE v1]
attributes:
  action_group:
    membership:
      - rdma.fabric.qos
  check_mode:
    description: Computes the writes and the predicted state; writes nothing.
  platform:
    description: Linux hosts with the MLNX_OFED mlx5 driver.
notes:
  - Writes are returned as C(path=value) strings, the path under C($SYSFS_PATH)
    (default C(/sys)).
  - O(state=gathered) returns C(rdma_cm_tos) and C(rdma_cm_roce_mode) only when the rdma_cm configfs is present.
seealso:
  - module: rdma.fabric.mlnx_qos
"""

EXAMPLES = r"""
- name: DCQCN on priority 3, CNPs with DSCP 48 on priority 6, RoCE ToS 106, on two ports
  rdma.fabric.dcqcn:
    state: replaced
    config:
      - interface: eth2
        rdma_device: mlx5_0
        np:
          enabled_priorities: [3]
          params: {cnp_dscp: 48, cnp_802p_prio: 6}
        rp:
          enabled_priorities: [3]
        roce_tos: 106
        rdma_cm_tos: 106
        rdma_cm_roce_mode: v2
      - interface: eth3
        rdma_device: mlx5_1
        np: {enabled_priorities: [3]}
        rp: {enabled_priorities: [3]}

- name: RDMA-CM connections on RoCE v2 by default (what cma_roce_mode -d mlx5_2 -p 1 -m 2 sets)
  rdma.fabric.dcqcn:
    state: merged
    config:
      - rdma_device: mlx5_2
        port: 1
        rdma_cm_roce_mode: v2

- name: Read the values
  rdma.fabric.dcqcn:
    state: gathered
    config: [{interface: eth2, rdma_device: mlx5_0}]
"""

RETURN = r"""
before:
  description: The values read before any write, one dict per O(config) entry, with C(interface).
  returned: when state is merged or replaced
  type: list
  elements: dict
  sample: [{"interface": "eth2", "np": {"enabled_priorities": [], "params": {"cnp_dscp": 0}}, "rp": null,
            "roce_tos": null, "rdma_cm_tos": 0, "rdma_cm_roce_mode": "v1"}]
commands:
  description: The sysfs writes done (check mode, that would be done) as C(path=value).
  returned: when state is merged or replaced
  type: list
  elements: str
  sample: ["/sys/class/net/eth2/ecn/roce_np/cnp_dscp=48", "/sys/class/net/eth2/ecn/roce_np/enable/3=1",
           "/sys/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_mode=RoCE v2"]
after:
  description: The values read back from sysfs after the writes (in check mode, predicted), same shape as RV(before).
  returned: when state is merged or replaced
  type: list
  elements: dict
gathered:
  description: The current values, same shape as RV(before).
  returned: when state is gathered
  type: list
  elements: dict
rendered:
  description: The writes for O(config) as C(path=value).
  returned: when state is rendered
  type: list
  elements: str
parsed:
  description: The values parsed from O(running_config).
  returned: when state is parsed
  type: dict
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.rdma.fabric.plugins.module_utils.resources._dcqcn import ROCE_MODE_CHOICES, DcqcnResource
from ansible_collections.rdma.fabric.plugins.module_utils.resources._resource import MODULE_KWARGS, module_argument_spec, run_module


def argument_spec():
    point = dict(type="dict", options=dict(
        enabled_priorities=dict(type="list", elements="int"),
        params=dict(type="dict"),
    ))
    return module_argument_spec(dict(
        interface=dict(type="str"),
        rdma_device=dict(type="str"),
        port=dict(type="int", default=1),
        np=point,
        rp=dict(point),
        roce_tos=dict(type="int"),
        rdma_cm_tos=dict(type="int"),
        rdma_cm_roce_mode=dict(type="str", choices=list(ROCE_MODE_CHOICES)),
    ))


def main():
    module = AnsibleModule(argument_spec=argument_spec(), **MODULE_KWARGS)
    run_module(module, DcqcnResource(module))


if __name__ == "__main__":
    main()
