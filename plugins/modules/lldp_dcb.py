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
description:
  - Reads the LLDP admin status and the IEEE DCBX TLVs lldpad sends on one interface
    (C(lldptool get-lldp), C(lldptool -t -i IF), one C(-c) argument per call) and writes
    with C(lldptool -T) / C(set-lldp) only the arguments that differ, one call per TLV.
  - When the NIC's DCBX is firmware controlled (read with C(mlnx_qos -i IF)), lldptool
    settings do nothing; the module fails then, or with O(switch_dcbx_to_os=true) runs
    C(mlnx_qos -i IF --dcbx os) first.
  - O(state=gathered) also returns the neighbour's (switch's) PFC and APP TLVs and where
    they disagree with ours.
options:
  interface:
    description: The network interface. Required except with O(state=parsed).
    type: str
  state:
    description:
      - V(merged) sets the arguments given and adds the APP entries given.
      - V(replaced) also deletes APP entries not given.
      - V(gathered) reads, V(rendered) returns the commands without a host, V(parsed)
        parses O(running_config).
    type: str
    choices: [merged, replaced, gathered, rendered, parsed]
    default: merged
  running_config:
    description: A TLV dump (C(lldptool -t -i IF)) for O(state=parsed).
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
    description: The wanted LLDP state.
    type: dict
    suboptions:
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
        description: ETS Recommendation TLV.
        type: dict
        suboptions:
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
    description: Use C(group/rdma.fabric.qos) in C(module_defaults) to set defaults for this module.
    support: full
    membership:
      - rdma.fabric.qos
  check_mode:
    description: Computes the commands; writes nothing.
    support: full
  diff_mode:
    description: Returns the state before and after as a diff.
    support: full
  platform:
    description: Linux hosts running lldpad.
    support: full
    platforms: posix
notes:
  - Commands are returned as the argv joined with single spaces, starting with the bare
    tool name.
seealso:
  - module: rdma.fabric.mlnx_qos
"""

EXAMPLES = r"""
- name: Host is authoritative for PFC and announces RoCE v2 on priority 3
  rdma.fabric.lldp_dcb:
    interface: eth2
    switch_dcbx_to_os: true
    config:
      admin_status: rxtx
      pfc: {willing: false, enabled: [3], enable_tx: true}
      app: [{priority: 3, selector: 3, protocol: 4791}]
      app_enable_tx: true
    state: replaced

- name: Compare with the switch
  rdma.fabric.lldp_dcb:
    interface: eth2
    state: gathered
  register: lldp
"""

RETURN = r"""
before:
  description: The state read before any change.
  returned: when state is merged or replaced
  type: dict
commands:
  description: The commands run (check mode, that would run).
  returned: when state is merged or replaced
  type: list
  elements: str
  sample: ["lldptool -T -i eth2 -V PFC willing=no enabled=3 enableTx=yes"]
after:
  description: The state read back; in check mode the same as before.
  returned: when state is merged or replaced
  type: dict
gathered:
  description: The current state, with C(neighbor) (the peer's PFC and APP TLVs) and C(neighbor_mismatch).
  returned: when state is gathered
  type: dict
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

from ansible_collections.rdma.fabric.plugins.module_utils._common import ToolError, find_tool, run_tool
from ansible_collections.rdma.fabric.plugins.module_utils._qos_validate import ValidationError
from ansible_collections.rdma.fabric.plugins.module_utils import _lldp_dcb as L
from ansible_collections.rdma.fabric.plugins.module_utils import _mlnx_qos as Q


def argument_spec():
    ets = dict(
        up2tc=dict(type="list", elements="int"),
        tsa=dict(type="list", elements="str", choices=["ets", "strict", "vendor"]),
        tcbw=dict(type="list", elements="int"),
        enable_tx=dict(type="bool"),
    )
    ets_cfg = dict(ets, willing=dict(type="bool"))
    return dict(
        interface=dict(type="str"),
        state=dict(type="str", default="merged", choices=["merged", "replaced", "gathered", "rendered", "parsed"]),
        running_config=dict(type="str"),
        switch_dcbx_to_os=dict(type="bool", default=False),
        dcbx_check=dict(type="bool", default=True),
        config=dict(type="dict", options=dict(
            admin_status=dict(type="str", choices=list(L.ADMIN_CHOICES)),
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
    state, interface = params["state"], params["interface"]

    if state == "parsed":
        module.exit_json(changed=False, parsed=L.parse_tlvs(params["running_config"]))
    if not interface or interface.startswith("-") or any(c.isspace() or c == "/" for c in interface):
        module.fail_json(msg="interface=%r: not a valid interface name" % (interface,))
    try:
        want = L.normalize_want(params["config"]) if state != "gathered" else {}
    except ValidationError as exc:
        module.fail_json(msg=exc.msg)
    if state == "rendered":
        module.exit_json(changed=False, rendered=[" ".join(c) for c in L.plan_commands(want, None, "merged", interface)])
    if not Q.interface_exists(interface):
        module.fail_json(msg="interface=%s: no such network interface" % interface)

    try:
        tool = find_tool(module, L.TOOL)

        def run(argv):
            return run_tool(module, argv, check_rc=False)
        if state == "gathered":
            have = L.read_state(run, tool, interface, ["pfc", "ets_cfg", "ets_rec", "app"], neighbor=True)
            gathered = L.to_result(have)
            gathered["neighbor"] = dict((k, have["neighbor"][k]) for k in ("pfc", "app"))
            gathered["neighbor_mismatch"] = L.neighbor_mismatch(have)
            module.exit_json(changed=False, gathered=gathered)
        have = L.read_state(run, tool, interface, L.tlvs_wanted(want))
    except ToolError as exc:
        module.fail_json(**exc.as_result())

    commands = [[tool] + c[1:] for c in L.plan_commands(want, have, state, interface)]
    shown = [" ".join([L.TOOL] + c[1:]) for c in commands]

    if commands and params["dcbx_check"]:
        qos_tool = find_tool(module, Q.TOOL, required=False)
        if not qos_tool:
            module.warn("mlnx_qos not found: DCBX mode not checked")
        else:
            try:
                dcbx = Q.read_state(module, qos_tool, interface)["dcbx"]
            except ToolError as exc:
                module.fail_json(msg="reading the DCBX mode of %s failed: %s" % (interface, exc.msg))
            if dcbx == "fw":
                if not params["switch_dcbx_to_os"]:
                    module.fail_json(msg="%s: DCBX is firmware controlled (mlnx_qos: 'DCBX mode: Firmware "
                                         "controlled'), so lldptool settings would do nothing; set "
                                         "switch_dcbx_to_os: true or run mlnx_qos -i %s --dcbx os"
                                     % (interface, interface), before=L.to_result(have), commands=shown)
                commands.insert(0, [qos_tool, "-i", interface, "--dcbx", "os"])
                shown.insert(0, "mlnx_qos -i %s --dcbx os" % interface)

    result = dict(changed=bool(commands), before=L.to_result(have), commands=shown)
    if commands and not module.check_mode:
        applied = []
        for index, argv in enumerate(commands):
            try:
                rc, out, err = run_tool(module, argv, check_rc=False)
                if rc != 0:
                    L._call(lambda a: (rc, out, err), argv)
            except ToolError as exc:
                module.fail_json(msg="lldptool failed midway. Applied: %s. Failed: %s (%s). Not attempted: %s."
                                 % ("; ".join(applied) or "none", shown[index], exc.msg,
                                    "; ".join(shown[index + 1:]) or "none"),
                                 changed=bool(applied), applied=applied, failed_command=shown[index],
                                 not_attempted=shown[index + 1:], before=result["before"])
            applied.append(shown[index])
        try:
            result["after"] = L.to_result(L.read_state(run, tool, interface, L.tlvs_wanted(want)))
        except ToolError as exc:
            module.fail_json(msg="applied %s but reading back failed: %s" % (shown, exc.msg), changed=True)
    else:
        result["after"] = result["before"]
    if module._diff and commands:
        result["diff"] = dict(before=result["before"], after=result["after"])
    module.exit_json(**result)


if __name__ == "__main__":
    main()
