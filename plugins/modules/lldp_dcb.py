#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: lldp_dcb
short_description: Manage LLDP DCBX TLVs (PFC, ETS, APP) of an interface with lldptool
version_added: 0.1.0
author: rdma.fabric contributors (@rdma-fabric)
extends_documentation_fragment: [rdma.fabric.attributes, rdma.fabric.resource]
description:
  - Reads the LLDP admin status and the IEEE DCBX TLVs lldpad sends on every interface of
    O(config) (C(lldptool get-lldp), C(lldptool -t -i IF), one C(-c) argument per call) and
    writes with C(lldptool -T) / C(set-lldp) only the arguments that differ, one call per
    TLV. Every interface is read and planned before the first write.
  - When the NIC's DCBX is firmware controlled (read with C(mlnx_qos -i IF), only on an
    interface that has something to write), lldptool settings do nothing; the module fails
    then, or with O(switch_dcbx_to_os=true) runs C(mlnx_qos -i IF --dcbx os) first.
  - O(state=gathered) also returns the neighbour's (switch's) PFC and APP TLVs and where
    they disagree with ours.
options:
  state:
    description:
      - V(merged) sets the arguments given and adds the APP entries given.
      - V(replaced) also deletes APP entries not given.
      - V(gathered) reads the interfaces named in O(config), V(rendered) returns the
        commands without a host, V(parsed) parses O(running_config).
    type: str
    choices: [merged, replaced, gathered, rendered, parsed]
    default: merged
  running_config:
    description:
      - A TLV dump (C(lldptool -t [-n] -i IF)) for O(state=parsed). Text that holds no
        TLV, or a TLV whose body cannot be parsed, is an error.
    type: str
  switch_dcbx_to_os:
    description:
      - When the NIC's DCBX is firmware controlled, switch it to OS control with
        C(mlnx_qos --dcbx os) instead of failing.
    type: bool
    default: false
  dcbx_check:
    description:
      - Check the DCBX mode with mlnx_qos before writing. Skipped (with a warning) when
        mlnx_qos is not installed.
    type: bool
    default: true
  config:
    description: The wanted LLDP state, one entry per interface.
    type: list
    elements: dict
    suboptions:
      interface:
        description: The network interface (kernel name rules, each once).
        type: str
        required: true
      admin_status:
        description: LLDP admin status.
        type: str
        choices: [rx, tx, rxtx, disabled]
      pfc:
        description: PFC TLV.
        type: dict
        suboptions:
          willing:
            description: Accept the peer's PFC configuration.
            type: bool
          enabled:
            description: PFC-enabled priorities (0-7); an empty list means none.
            type: list
            elements: int
          enable_tx:
            description: Send the TLV.
            type: bool
      ets_cfg:
        description: ETS Configuration TLV.
        type: dict
        suboptions:
          willing:
            description: Accept the peer's ETS configuration.
            type: bool
          # the settings ets_rec has too (a YAML merge key, the anchor used below)
          <<: &ets_settings
            up2tc:
              description: TC of each priority (8 values, 0-7).
              type: list
              elements: int
            tsa:
              description: Algorithm of each TC (8 values).
              type: list
              elements: str
              choices: [ets, strict, vendor]
            tcbw:
              description: Bandwidth percent of each TC (8 values, sum 100).
              type: list
              elements: int
            enable_tx:
              description: Send the TLV.
              type: bool
      ets_rec:
        description: ETS Recommendation TLV, the settings of O(config[].ets_cfg) without O(config[].ets_cfg.willing).
        type: dict
        suboptions: *ets_settings
      app:
        description:
          - APP TLV entries. Selector 1 ethertype, 2 TCP/SCTP port, 3 UDP/DCCP port,
            4 any port, 5 DSCP.
          - "RoCE v2 is C({priority: 3, selector: 3, protocol: 4791})."
        type: list
        elements: dict
        suboptions:
          priority:
            description: Priority 0-7.
            type: int
            required: true
          selector:
            description: Selector 1-5.
            type: int
            required: true
          protocol:
            description: Protocol id (port, ethertype or DSCP 0-63).
            type: int
            required: true
      app_enable_tx:
        description: Send the APP TLV.
        type: bool
attributes:
  action_group:
    membership:
      - rdma.fabric.qos
  platform:
    description: Linux hosts running lldpad.
notes:
  - Commands are returned as the argv joined with single spaces, starting with the bare
    tool name.
seealso:
  - module: rdma.fabric.mlnx_qos
"""

EXAMPLES = r"""
- name: Host is authoritative for PFC and announces RoCE v2 on priority 3, on two ports
  rdma.fabric.lldp_dcb:
    switch_dcbx_to_os: true
    state: replaced
    config:
      - interface: eth2
        admin_status: rxtx
        pfc: {willing: false, enabled: [3], enable_tx: true}
        app: [{priority: 3, selector: 3, protocol: 4791}]
        app_enable_tx: true
      - interface: eth3
        admin_status: rxtx
        pfc: {willing: false, enabled: [3], enable_tx: true}
        app: [{priority: 3, selector: 3, protocol: 4791}]
        app_enable_tx: true

- name: Compare with the switch
  rdma.fabric.lldp_dcb:
    state: gathered
    config: [{interface: eth2}]
  register: lldp
"""

RETURN = r"""
before:
  description: The LLDP state of each interface read before any change (C(admin_status) and the TLVs), one dict per O(config) entry, with C(interface).
  returned: when state is merged or replaced
  type: list
  elements: dict
commands:
  description: The commands run (check mode, that would run), every interface in order.
  returned: when state is merged or replaced
  type: list
  elements: str
  sample: ["lldptool -T -i eth2 -V PFC willing=no enabled=3 enableTx=yes"]
after:
  description: The state read back (only interfaces written to are read again); in check mode the predicted state.
  returned: when state is merged or replaced
  type: list
  elements: dict
gathered:
  description:
    - The current state of each interface, with C(neighbor) (the peer's PFC and APP TLVs,
      and who it is - C(system_name), C(port_id) without its subtype label, C(port_id_subtype),
      C(chassis_id)) and C(neighbor_mismatch).
  returned: when state is gathered
  type: list
  elements: dict
rendered:
  description: The commands for O(config).
  returned: when state is rendered
  type: list
  elements: str
parsed:
  description: The TLVs parsed from O(running_config).
  returned: when state is parsed
  type: dict
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.rdma.fabric.plugins.module_utils.resources._lldp_dcb import ADMIN_CHOICES, LldpDcbResource
from ansible_collections.rdma.fabric.plugins.module_utils.resources._resource import MODULE_KWARGS, module_argument_spec, run_module


def argument_spec():
    ets = dict(
        up2tc=dict(type="list", elements="int"),
        tsa=dict(type="list", elements="str", choices=["ets", "strict", "vendor"]),
        tcbw=dict(type="list", elements="int"),
        enable_tx=dict(type="bool"),
    )
    ets_cfg = dict(ets, willing=dict(type="bool"))
    return module_argument_spec(dict(
        interface=dict(type="str", required=True),
        admin_status=dict(type="str", choices=list(ADMIN_CHOICES)),
        pfc=dict(type="dict", options=dict(
            willing=dict(type="bool"),
            enabled=dict(type="list", elements="int"),
            enable_tx=dict(type="bool"),
        )),
        ets_cfg=dict(type="dict", options=ets_cfg),
        ets_rec=dict(type="dict", options=ets),
        app=dict(type="list", elements="dict", options=dict(
            priority=dict(type="int", required=True),
            selector=dict(type="int", required=True),
            protocol=dict(type="int", required=True),
        )),
        app_enable_tx=dict(type="bool"),
    ), switch_dcbx_to_os=dict(type="bool", default=False), dcbx_check=dict(type="bool", default=True))


def main():
    module = AnsibleModule(argument_spec=argument_spec(), **MODULE_KWARGS)
    params = module.params
    run_module(module, LldpDcbResource(module, dcbx_check=params["dcbx_check"],
                                       switch_dcbx_to_os=params["switch_dcbx_to_os"]))


if __name__ == "__main__":
    main()
