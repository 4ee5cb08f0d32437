#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: sm_info
short_description: Report the InfiniBand subnet manager (master and standby SMs) of a fabric
version_added: 0.1.0
author: rdma.fabric contributors (@rdma-fabric)
extends_documentation_fragment: [rdma.fabric.attributes, rdma.fabric.attributes.read_only]
description:
  - Asks the fabric which subnet manager (SM) is MASTER and in which state every other SM port is.
  - C(sminfo) without a LID asks the SM whose LID the local port holds (PortInfo SMLid), that is the master as this
    port sees it. C(saquery SMIR) and C(saquery -s) list the SMs the master's SA knows; each of those LIDs,
    and any given in O(lids), is then asked directly with C(sminfo LID) for its live state.
  - GUIDs are returned as C(0x) and 16 lower-case hex digits (sminfo prints them without zero padding).
  - With O(state=parsed) the same facts are read from captured output of those commands (for example
    the RV(gathered.running_config) of an earlier run or a support bundle); nothing runs on the host.
  - The module never changes the fabric. It does not use C(sminfo -s/-p/-a), which would set SM state.
options:
  state:
    description:
      - V(gathered) queries the fabric through the local InfiniBand port.
      - V(parsed) reads O(running_config) instead.
    type: str
    choices: [gathered, parsed]
    default: gathered
  running_config:
    description:
      - Captured output of C(sminfo), C(sminfo LID), C(saquery SMIR) and/or C(saquery -s), optionally
        with C($ command) lines before each output. Required with O(state=parsed).
    type: str
  ca:
    description:
      - Local CA (HCA) name to send the queries from, passed as C(-C). Default is the tools' own choice
        (the first CA with an active port).
    type: str
  port:
    description:
      - Local CA port number, passed as C(-P).
    type: int
  timeout:
    description:
      - Per-query MAD timeout in milliseconds, passed as C(-t). Default is the tools' own (about 1 s).
    type: int
  lids:
    description:
      - Extra SM LIDs to ask directly with C(sminfo LID), for example the known standby LIDs while the
        master is down (then the SA cannot list the SMs).
    type: list
    elements: int
    default: []
  discover:
    description:
      - Ask the SA (C(saquery SMIR), C(saquery -s)) for the SM ports. Without it only the local port's
        master and O(lids) are queried.
    type: bool
    default: true
attributes:
  action_group:
    membership:
      - rdma.fabric.facts
  platform:
    description: Linux hosts with infiniband-diags (C(sminfo), C(saquery)) and an InfiniBand port (or the ibsim simulator).
notes:
  - The tools talk to the fabric through libibumad; to use the ibsim simulator set C(LD_PRELOAD) to
    C(libumad2sim.so) and C(SIM_HOST) in the play's or task's C(environment).
  - Right after a master dies, C(sminfo) without a LID fails until a standby has taken over (about
    C(sminfo_polling_timeout) x C(polling_retry_number)); pass the standby LIDs in O(lids) to watch it.
requirements:
  - infiniband-diags (C(sminfo), C(saquery)) on the target for O(state=gathered).
"""

EXAMPLES = r"""
- name: Read the master SM and the state of every SM port
  rdma.fabric.sm_info:
  register: sm

- name: Exactly one master, at least one standby
  ansible.builtin.assert:
    that:
      - sm.gathered.master_count == 1
      - sm.gathered.standby_count >= 1

- name: Watch a standby (LID 5) while the master is down
  rdma.fabric.sm_info:
    lids: [5]
    discover: false
  register: sm
  until: sm.gathered.sm_ports | selectattr('lid', 'equalto', 5) | selectattr('state', 'equalto', 'master') | list | length == 1
  retries: 60
  delay: 1

- name: Facts from a support bundle
  rdma.fabric.sm_info:
    state: parsed
    running_config: "{{ lookup('ansible.builtin.file', 'bundle/sminfo.txt') }}"
"""

RETURN = r"""
gathered:
  description: Facts read from the fabric (O(state=gathered)).
  returned: when O(state=gathered)
  type: dict
  contains:
    master:
      description:
        - The master SM as the local port sees it, confirmed by asking its LID directly; null when no
          SM answered as MASTER.
        - Keys C(lid), C(guid), C(priority), C(state), C(state_id), C(activity_count), C(source).
      type: dict
      sample: {lid: 1, guid: "0x0000000000100001", priority: 10, state: master, state_id: 3, activity_count: 118, source: sminfo}
    sm_ports:
      description:
        - Every SM port that answered, sorted by LID, same keys as RV(gathered.master).
        - C(state) is one of V(master), V(standby), V(discovering), V(not_active), V(unknown).
        - C(source) is V(sminfo) (live answer) or V(saquery_smir) (the master's last poll, when the
          port did not answer directly).
      type: list
      elements: dict
    master_count:
      description: Number of SM ports in state MASTER; more than one means a split fabric.
      type: int
      sample: 1
    standby_count:
      description: Number of SM ports in state STANDBY.
      type: int
      sample: 1
    issm_ports:
      description: Ports with the IsSM capability bit from C(saquery -s) (C(lid), C(port), C(master_sm_lid),
        C(capability_mask), C(sm_disabled)).
      type: list
      elements: dict
    errors:
      description: Queries that failed, as C(lid) (or null) and the tool's C(error) words.
      type: list
      elements: dict
    running_config:
      description: The raw output of every command run, with C($ command) and C([rc=N]) lines; feed it
        back with O(state=parsed).
      type: str
parsed:
  description: The same facts as RV(gathered) (without C(running_config)) read from O(running_config).
  returned: when O(state=parsed)
  type: dict
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.rdma.fabric.plugins.module_utils.common._common import RDMA_DEVICE_MAX, ToolError, check_name
from ansible_collections.rdma.fabric.plugins.module_utils.parsers._sm_info import gather, parse


def main():
    module = AnsibleModule(
        argument_spec=dict(
            state=dict(type="str", choices=["gathered", "parsed"], default="gathered"),
            running_config=dict(type="str"),
            ca=dict(type="str"),
            port=dict(type="int"),
            timeout=dict(type="int"),
            lids=dict(type="list", elements="int", default=[]),
            discover=dict(type="bool", default=True),
        ),
        required_if=[("state", "parsed", ["running_config"])],
        supports_check_mode=True,
    )
    params = module.params
    for name in ("port", "timeout"):
        if params[name] is not None and params[name] <= 0:
            module.fail_json(msg="%s must be a positive integer, got %s" % (name, params[name]))
    if params["ca"] is not None:
        try:
            check_name("ca", params["ca"], "CA", RDMA_DEVICE_MAX)
        except ValueError as exc:
            module.fail_json(msg=str(exc))
    bad_lids = [lid for lid in params["lids"] if not 0 < lid < 0xC000]
    if bad_lids:
        module.fail_json(msg="lids must be unicast LIDs 1-49151, got %s" % bad_lids)
    twice = sorted(set(lid for i, lid in enumerate(params["lids"]) if lid in params["lids"][:i]))
    if twice:
        module.fail_json(msg="lids=%s: LID(s) %s given twice; give each LID once" % (params["lids"], twice))

    if params["state"] == "parsed":
        try:
            parsed = parse(params["running_config"])
        except ValueError as exc:
            module.fail_json(msg=str(exc))
        module.exit_json(changed=False, parsed=parsed)

    try:
        facts, raw = gather(module, ca=params["ca"], port=params["port"], timeout=params["timeout"],
                            lids=params["lids"], discover=params["discover"])
    except ToolError as exc:
        module.fail_json(changed=False, **exc.as_result())
    facts["running_config"] = raw
    module.exit_json(changed=False, gathered=facts)


if __name__ == "__main__":
    main()
