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
description:
  - Reads the QoS state of one interface with C(mlnx_qos -i IF -a), compares it with
    O(config) and runs only the C(mlnx_qos) calls needed, in the fewest calls the tool
    allows. A converged interface gets no write call at all.
  - C(--trust) and C(--dscp2prio) are never combined (mlnx_qos refuses it). The trust call
    runs before the DSCP map call, and the module never deletes a DSCP mapping (a move is
    one C(set); O(state=replaced) sets unnamed DSCPs back to C(dscp >> 3)), so the driver
    never sees its last DSCP entry deleted and never flips trust back to C(pcp).
  - When C(--buffer_size) and C(--prio2buffer) both change they go in separate calls,
    sizes first (MLNX_OFED's sysfs path ignores C(--prio2buffer) next to C(--buffer_size)).
    C(--dcbx fw) is sent last, since mlx5 returns to OS mode on any DCB write.
  - mlx5 QoS settings are volatile; a reboot or driver reload resets them.
options:
  interface:
    description:
      - The network interface, for example C(eth2). Required except with O(state=parsed).
    type: str
  state:
    description:
      - V(merged) applies the options given; O(config.pfc) adds priorities, O(config.dscp2prio)
        moves only the DSCPs given.
      - V(replaced) makes O(config.pfc) the exact set of lossless priorities and
        O(config.dscp2prio) the whole 64-entry table (DSCPs not given go back to the
        firmware default C(dscp >> 3)). Options left out are not touched in either state.
      - V(gathered) returns the current state; V(rendered) returns the commands that set
        O(config) from scratch, without touching the host; V(parsed) parses
        O(running_config).
    type: str
    choices: [merged, replaced, gathered, rendered, parsed]
    default: merged
  running_config:
    description:
      - The text C(mlnx_qos -i IF) printed, for O(state=parsed). Any release's layout.
    type: str
  config:
    description:
      - The wanted QoS state. Every option is optional; only those given are compared.
    type: dict
    suboptions:
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
        description: Size in bytes of each receive buffer (8 values).
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
    description: Use C(group/rdma.fabric.qos) in C(module_defaults) to set defaults for this module.
    support: full
    membership:
      - rdma.fabric.qos
  check_mode:
    description: Computes the commands and the predicted state; runs no write.
    support: full
  diff_mode:
    description: Returns the state before and after as a diff.
    support: full
  platform:
    description: Linux hosts with mlnx_qos (mlnx-tools) and a DCB-capable NIC.
    support: full
    platforms: posix
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
- name: Lossless RoCE on eth2 (trust DSCP, DSCP 26 -> priority 3, PFC on 3)
  rdma.fabric.mlnx_qos:
    interface: eth2
    config:
      trust: dscp
      pfc: [3]
      dscp2prio:
        - {dscp: 26, priority: 3}
        - {dscp: 48, priority: 6}
    state: replaced

- name: ETS 50/50 between TC0 and TC3, TC6 strict for CNPs
  rdma.fabric.mlnx_qos:
    interface: eth2
    config:
      prio_tc: [0, 0, 0, 3, 0, 0, 6, 0]
      tsa: [ets, strict, strict, ets, strict, strict, strict, strict]
      tcbw: [50, 0, 0, 50, 0, 0, 0, 0]

- name: Read the current state
  rdma.fabric.mlnx_qos:
    interface: eth2
    state: gathered
  register: qos

- name: Commands for a boot-time script
  rdma.fabric.mlnx_qos:
    interface: eth2
    config: {trust: dscp, pfc: [3]}
    state: rendered
"""

RETURN = r"""
before:
  description: The state read before any change (same keys as O(config)).
  returned: when state is merged or replaced
  type: dict
  sample: {"trust": "pcp", "pfc": [], "dcbx": "os", "cable_len": 7}
commands:
  description: The mlnx_qos calls run (or, in check mode, that would run).
  returned: when state is merged or replaced
  type: list
  elements: str
  sample: ["mlnx_qos -i eth2 --pfc 0,0,0,1,0,0,0,0 --trust dscp",
           "mlnx_qos -i eth2 --dscp2prio set,26,3"]
after:
  description:
    - The state read back after the changes; in check mode the predicted state.
  returned: when state is merged or replaced
  type: dict
gathered:
  description: The current state of the interface.
  returned: when state is gathered
  type: dict
rendered:
  description: The commands that set O(config) from scratch.
  returned: when state is rendered
  type: list
  elements: str
parsed:
  description: The state parsed from O(running_config).
  returned: when state is parsed
  type: dict
applied:
  description: On a failure midway, the commands that did run.
  returned: failure
  type: list
  elements: str
failed_command:
  description: On a failure midway, the command that failed.
  returned: failure
  type: str
not_attempted:
  description: On a failure midway, the commands not run.
  returned: failure
  type: list
  elements: str
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.rdma.fabric.plugins.module_utils._common import ToolError, find_tool
from ansible_collections.rdma.fabric.plugins.module_utils._qos_validate import ValidationError
from ansible_collections.rdma.fabric.plugins.module_utils import _mlnx_qos as Q


def argument_spec():
    list_int = dict(type="list", elements="int")
    return dict(
        interface=dict(type="str"),
        state=dict(type="str", default="merged",
                   choices=["merged", "replaced", "gathered", "rendered", "parsed"]),
        running_config=dict(type="str"),
        config=dict(type="dict", options=dict(
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
        )),
    )


def main():
    module = AnsibleModule(
        argument_spec=argument_spec(),
        required_if=[
            ("state", "merged", ("interface", "config")),
            ("state", "replaced", ("interface", "config")),
            ("state", "gathered", ("interface",)),
            ("state", "rendered", ("interface", "config")),
            ("state", "parsed", ("running_config",)),
        ],
        supports_check_mode=True,
    )
    params = module.params
    state = params["state"]
    interface = params["interface"]

    if state == "parsed":
        try:
            parsed = Q.parse_report(params["running_config"])
        except Q.MlnxQosError as exc:
            module.fail_json(msg="running_config: %s" % exc.msg)
        module.exit_json(changed=False, parsed=Q.to_config(parsed))

    if not interface or interface.startswith("-") or any(c.isspace() or c == "/" for c in interface):
        module.fail_json(msg="interface=%r: not a valid interface name" % (interface,))

    try:
        want = Q.normalize_want(params["config"]) if state != "gathered" else None
    except ValidationError as exc:
        module.fail_json(msg=exc.msg)

    if state == "rendered":
        try:
            # Rendered renders the options given as merged does (only the DSCPs given):
            # it is meant for re-applying after a reboot, when the map is the default again.
            commands = Q.plan_commands(want, None, "merged", interface)
        except ValidationError as exc:
            module.fail_json(msg=exc.msg)
        module.exit_json(changed=False, rendered=[Q.command_string(c) for c in commands])

    if not Q.interface_exists(interface):
        module.fail_json(msg="interface=%s: no such network interface (%s has no entry for it)"
                         % (interface, Q.sysfs_path("class", "net")))
    try:
        tool = find_tool(module, Q.TOOL)
        have = Q.read_state(module, tool, interface)
    except ToolError as exc:
        module.fail_json(**exc.as_result())

    if state == "gathered":
        module.exit_json(changed=False, gathered=Q.to_config(have))

    try:
        commands = Q.plan_commands(want, have, state, interface)
    except ValidationError as exc:
        module.fail_json(msg=exc.msg, before=Q.to_config(have))

    result = dict(changed=bool(commands), before=Q.to_config(have),
                  commands=[Q.command_string(c) for c in commands])
    if not commands:
        result["after"] = result["before"]
    elif module.check_mode:
        predicted = Q.desired_state(want, have, state)
        result["after"] = Q.to_config(predicted)
    else:
        try:
            Q.apply_commands(module, tool, commands)
        except Q.ApplyError as exc:
            try:
                readback = Q.to_config(Q.read_state(module, tool, interface))
            except ToolError as read_exc:
                readback = None
                exc.msg += " Reading the state back failed too: %s" % read_exc.msg
            module.fail_json(msg=exc.msg + " State read back: %s" % (readback,), changed=bool(exc.applied),
                             applied=exc.applied, failed_command=exc.failed,
                             not_attempted=exc.not_attempted, before=result["before"], after=readback,
                             commands=result["commands"], rc=exc.error.rc,
                             stdout=exc.error.stdout, stderr=exc.error.stderr)
        try:
            after = Q.read_state(module, tool, interface)
        except ToolError as exc:
            module.fail_json(msg="all commands ran but reading %s back failed: %s" % (interface, exc.msg),
                             changed=True, **dict((k, v) for k, v in result.items() if k != "changed"))
        result["after"] = Q.to_config(after)
        try:
            leftover = Q.plan_commands(want, after, state, interface)
        except ValidationError:
            leftover = []
        if leftover:
            module.warn("%s did not keep everything: still needed %s"
                        % (interface, "; ".join(Q.command_string(c) for c in leftover)))
    if module._diff and commands:
        result["diff"] = dict(before=result["before"], after=result["after"],
                              before_header="mlnx_qos -i %s (before)" % interface,
                              after_header="mlnx_qos -i %s (after)" % interface)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
