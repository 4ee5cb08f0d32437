#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: mlnx_qos
short_description: Manage NIC QoS (trust, PFC, DSCP map, ETS, buffers) with mlnx_qos
version_added: 0.1.0
author: rdma.fabric contributors (@rdma-fabric)
extends_documentation_fragment: [rdma.fabric.attributes, rdma.fabric.resource]
description:
  - Reads the QoS state of every interface in O(config) with C(mlnx_qos -i IF -a) (one call
    each), compares it with the wanted state keyed by interface, and runs only the
    C(mlnx_qos) calls needed, in the fewest calls the tool allows. A converged interface
    gets no write call at all; one task configures every port of a node.
  - Every entry is validated and every interface planned before the first write. A failure
    on one interface stops the run and reports what was applied on each interface, the
    command that failed, what was not attempted and the state read back.
  - C(--trust) and C(--dscp2prio) are never combined (mlnx_qos refuses it). The trust call
    runs before the DSCP map call, and the module never deletes a DSCP mapping (a move is
    one C(set); O(state=replaced) sets unnamed DSCPs back to C(dscp >> 3)), so the driver
    never sees its last DSCP entry deleted and never flips trust back to C(pcp).
  - When C(--buffer_size) and C(--prio2buffer) both change they go in separate calls,
    sizes first (MLNX_OFED's sysfs path ignores C(--prio2buffer) next to C(--buffer_size)).
    C(--dcbx fw) is sent last, since mlx5 returns to OS mode on any DCB write.
  - mlx5 QoS settings are volatile; a reboot or driver reload resets them.
options:
  state:
    description:
      - V(merged) applies the options given; O(config[].pfc) adds priorities, O(config[].dscp2prio)
        moves only the DSCPs given.
      - V(replaced) makes O(config[].pfc) the exact set of lossless priorities and
        O(config[].dscp2prio) the whole 64-entry table (DSCPs not given go back to the
        firmware default C(dscp >> 3)). Options left out are not touched in either state.
      - V(gathered) returns the current state of the interfaces named in O(config);
        V(rendered) returns the commands that set O(config) from scratch, without touching
        the host; V(parsed) parses O(running_config).
    type: str
    choices: [merged, replaced, gathered, rendered, parsed]
    default: merged
  running_config:
    description:
      - The text C(mlnx_qos -i IF) printed, for O(state=parsed). Any release's layout.
    type: str
  config:
    description:
      - The wanted QoS state, one entry per interface. Every option but O(config[].interface)
        is optional; only those given are compared. With O(state=gathered) only
        O(config[].interface) is read.
    type: list
    elements: dict
    suboptions:
      interface:
        description:
          - The network interface, for example C(eth2); at most 15 characters, no C(/),
            C(:) or whitespace, not C(.) or C(..), each interface once.
        type: str
        required: true
      dcbx:
        description: DCBX mode, OS controlled (V(os)) or firmware controlled (V(fw)).
        type: str
        choices: [os, fw]
      trust:
        description: Priority trust state.
        type: str
        choices: [pcp, dscp]
      pfc:
        description: The lossless (PFC-enabled) priorities, each 0-7, for example V([3]).
        type: list
        elements: int
      dscp2prio:
        description:
          - "DSCP to priority map, a list of C({dscp, priority}) dicts or a dict
            C({dscp: priority}). DSCP 0-63, priority 0-7. Needs trust C(dscp)."
          - With O(state=merged) only the DSCPs given move; with O(state=replaced) the
            DSCPs not given go back to C(dscp >> 3).
        type: raw
      prio_tc:
        description: The traffic class of each priority 0-7 (8 values, each 0-7).
        type: list
        elements: int
      tsa:
        description: Transmission selection algorithm of each TC (8 values).
        type: list
        elements: str
        choices: [ets, strict, vendor]
      tcbw:
        description:
          - Bandwidth share in percent of each TC (8 values). ETS TCs must sum to 100 and
            every other TC must be 0.
        type: list
        elements: int
      ratelimit:
        description: Rate limit of each TC in whole Gbps (8 values), 0 means unlimited.
        type: list
        elements: float
      buffer_size:
        description:
          - Size in bytes of each receive buffer (8 values). When given, the buffer of every
            PFC priority must have a size above 0 (a lossless priority on an empty buffer
            drops instead of pausing); the module refuses the config otherwise.
        type: list
        elements: int
      prio2buffer:
        description: The receive buffer (0-7) of each priority (8 values).
        type: list
        elements: int
      cable_len:
        description: Cable length in meters used for the buffer xoff/xon thresholds, 0-65535.
        type: int
attributes:
  action_group:
    membership:
      - rdma.fabric.qos
  platform:
    description: Linux hosts with mlnx_qos (mlnx-tools) and a DCB-capable NIC.
  check_mode:
    description: Computes the mlnx_qos calls and the predicted state; runs no write call.
  diff_mode:
    description: Returns the QoS state before and after as a diff, one per interface that changed.
notes:
  - Commands are returned as strings, the argv joined with single spaces, starting with
    the bare tool name C(mlnx_qos); C(str.split()) gives the argv back.
  - After applying, the module reads the interface again and warns about options the
    device did not keep (mlnx_qos exits 0 when a rate limit cannot be set).
seealso:
  - module: rdma.fabric.lldp_dcb
  - module: rdma.fabric.dcqcn
"""

EXAMPLES = r"""
- name: Lossless RoCE on two ports (trust DSCP, DSCP 26 -> priority 3, PFC on 3)
  rdma.fabric.mlnx_qos:
    state: replaced
    config:
      - interface: eth2
        trust: dscp
        pfc: [3]
        dscp2prio:
          - {dscp: 26, priority: 3}
          - {dscp: 48, priority: 6}
      - interface: eth3
        trust: dscp
        pfc: [3]
        dscp2prio: {26: 3, 48: 6}

- name: ETS 50/50 between TC0 and TC3, TC6 strict for CNPs
  rdma.fabric.mlnx_qos:
    config:
      - interface: eth2
        prio_tc: [0, 0, 0, 3, 0, 0, 6, 0]
        tsa: [ets, strict, strict, ets, strict, strict, strict, strict]
        tcbw: [50, 0, 0, 50, 0, 0, 0, 0]

- name: Read the current state of two ports
  rdma.fabric.mlnx_qos:
    state: gathered
    config: [{interface: eth2}, {interface: eth3}]
  register: qos

- name: Commands for a boot-time script
  rdma.fabric.mlnx_qos:
    state: rendered
    config:
      - {interface: eth2, trust: dscp, pfc: [3]}

- name: Parse a captured report (a support bundle)
  rdma.fabric.mlnx_qos:
    state: parsed
    running_config: "{{ lookup('ansible.builtin.file', 'bundle/mlnx_qos-eth2.txt') }}"
"""

RETURN = r"""
before:
  description:
    - The state of each interface read before any change, one dict per O(config) entry,
      in O(config) order, with C(interface) and the same keys as O(config).
  returned: when state is merged or replaced
  type: list
  elements: dict
  sample: [{"interface": "eth2", "trust": "pcp", "pfc": [], "dcbx": "os", "cable_len": 7}]
commands:
  description: The mlnx_qos calls run (or, in check mode, that would run), every interface in order.
  returned: when state is merged or replaced
  type: list
  elements: str
  sample: ["mlnx_qos -i eth2 --pfc 0,0,0,1,0,0,0,0 --trust dscp",
           "mlnx_qos -i eth2 --dscp2prio set,26,3"]
after:
  description:
    - The state of each interface read back after the changes (only interfaces written to
      are read again); in check mode the predicted state. Same shape as RV(before).
  returned: when state is merged or replaced
  type: list
  elements: dict
gathered:
  description: The current state of each interface, same shape as RV(before).
  returned: when state is gathered
  type: list
  elements: dict
rendered:
  description: The commands that set O(config) from scratch.
  returned: when state is rendered
  type: list
  elements: str
parsed:
  description: The state parsed from O(running_config) (one interface's report).
  returned: when state is parsed
  type: dict
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.rdma.fabric.plugins.module_utils.resources._mlnx_qos import MlnxQosResource
from ansible_collections.rdma.fabric.plugins.module_utils.resources._resource import MODULE_KWARGS, module_argument_spec, run_module


def argument_spec():
    list_int = dict(type="list", elements="int")
    return module_argument_spec(dict(
        interface=dict(type="str", required=True),
        dcbx=dict(type="str", choices=["os", "fw"]),
        trust=dict(type="str", choices=["pcp", "dscp"]),
        pfc=list_int,
        dscp2prio=dict(type="raw"),
        prio_tc=list_int,
        tsa=dict(type="list", elements="str", choices=["ets", "strict", "vendor"]),
        tcbw=list_int,
        ratelimit=dict(type="list", elements="float"),
        buffer_size=list_int,
        prio2buffer=list_int,
        cable_len=dict(type="int"),
    ))


def main():
    module = AnsibleModule(argument_spec=argument_spec(), **MODULE_KWARGS)
    run_module(module, MlnxQosResource(module))


if __name__ == "__main__":
    main()
