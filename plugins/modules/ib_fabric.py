#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: ib_fabric
short_description: Check InfiniBand links, port error counters, duplicate GUIDs and cabling from one node
version_added: 0.2.0
author: rdma.fabric contributors (@rdma-fabric)
extends_documentation_fragment: [rdma.fabric.attributes, rdma.fabric.attributes.read_only]
description:
  - Reads the whole InfiniBand fabric from one port (typically the subnet manager's node) with the real
    infiniband-diags, C(iblinkinfo --line) for every port's link and peer and C(ibqueryerrors -r) for the
    error counters, and reports in the record shape the drift check and health share
    (C(host), C(check), C(object), C(expected), C(actual), C(severity), C(diagnosis)).
  - "Checks: C(ib.link_width) and C(ib.link_speed), a link that is up below O(expected_width) or
    O(expected_speed); C(ib.port_errors), a port counter above its threshold (O(thresholds));
    C(ib.duplicate_guid), one port GUID in two places; C(ib.cabling), an HCA port of the rail plan
    (O(cabling)) that is not on its leaf, naming the switch and port it is on and the leaf it should be on."
  - A check that could not run (C(ibqueryerrors) missing, no subnet manager to give LIDs) gives a
    C(warning) record with the reason, never a silent pass.
  - With O(state=parsed) the same checks run on captured output (O(running_config)), for example the
    RV(running_config) of an earlier run or a support bundle; nothing runs on the host.
  - The module never changes the fabric (no C(ibqueryerrors -k/-K)).
options:
  state:
    description:
      - V(gathered) queries the fabric through the local port; V(parsed) reads O(running_config).
    type: str
    choices: [gathered, parsed]
    default: gathered
  running_config:
    description:
      - Captured C(iblinkinfo) (either layout) and optionally C(ibqueryerrors) output, with or without
        C($ command) lines before each. Required with O(state=parsed).
    type: str
  ca:
    description: Local CA to query from, passed as C(-C).
    type: str
  port:
    description: Local CA port, passed as C(-P).
    type: int
  timeout:
    description: Per-MAD timeout in milliseconds, passed as C(-t).
    type: int
  host:
    description:
      - The C(host) of the records; by default the node's host name. Pass C(inventory_hostname) to match
        the other reports.
    type: str
  expected_width:
    description:
      - The width every up link should run at, as iblinkinfo prints it (V(4X); V(4x) and V(4) are accepted).
        A link narrower than this is an C(ib.link_width) record. Not checked when omitted.
    type: str
  expected_speed:
    description:
      - The speed every up link should run at, as a name (V(SDR) V(DDR) V(QDR) V(FDR10) V(FDR) V(EDR)
        V(HDR) V(NDR) V(XDR)) or as iblinkinfo's per-lane rate (V(53.125 Gbps) or V(53.125)).
        A slower link is an C(ib.link_speed) record. Not checked when omitted.
    type: str
  port_errors:
    description:
      - Read the port counters with C(ibqueryerrors -r). It addresses ports by LID, so a subnet
        manager must have swept the fabric; without one the check gives a warning record.
    type: bool
    default: true
  thresholds:
    description:
      - "Per counter, the count above which a port is reported, merged over the defaults: infiniband-diags'
        own suggestions (its shipped C(error_thresholds) file): SymbolErrorCounter, LinkErrorRecoveryCounter,
        LinkDownedCounter, PortRcvErrors, LocalLinkIntegrityErrors, ExcessiveBufferOverrunErrors 10;
        PortRcvRemotePhysicalErrors, PortRcvSwitchRelayErrors, PortXmitDiscards, PortXmitConstraintErrors,
        PortRcvConstraintErrors, VL15Dropped 100. PortXmitWait and QP1Dropped only when given here.
        A null value drops a counter."
      - The module runs C(ibqueryerrors) with an empty threshold file (every non-zero counter) and applies these.
    type: dict
    default: {}
  cabling:
    description:
      - The rail plan's cabling, one entry per HCA port.
    type: list
    elements: dict
    default: []
    suboptions:
      hca:
        description:
          - The HCA's node description (C(node1 mlx5_0), what iblinkinfo prints) or its port GUID.
          - Any root on the fabric can set a node description; a description seen on two port GUIDs is an
            C(ib.cabling) record of its own, never resolved by picking one. Give O(cabling[].guid) to match by GUID.
        type: str
        required: true
      guid:
        description: The HCA port's GUID; the port is then found by it alone (O(cabling[].hca) only names it).
        type: str
      leaf_guid:
        description: The leaf switch's GUID; the HCA port's peer must be that switch (O(cabling[].leaf) only names it).
        type: str
      port:
        description: The HCA port.
        type: int
        default: 1
      leaf:
        description: The node description (or GUID) of the leaf switch this HCA port must be on.
        type: str
        required: true
      rail:
        description: The rail index, named in the record.
        type: int
      leaf_port:
        description: The leaf port it must be on; a right leaf on another port is a C(warning) record.
        type: int
attributes:
  action_group:
    membership:
      - rdma.fabric.facts
  platform:
    description: Linux hosts with infiniband-diags (C(iblinkinfo), C(ibqueryerrors)) and an InfiniBand port (or the ibsim simulator).
notes:
  - C(iblinkinfo) discovers by directed route and works without a subnet manager (LIDs are then 0);
    C(ibqueryerrors) needs the LIDs an SM assigns.
  - To use the ibsim simulator set C(LD_PRELOAD) to C(libumad2sim.so) and C(SIM_HOST) in the task's C(environment).
  - Duplicate GUIDs are found from what discovery saw; libibnetdisc merges two nodes with one GUID, so
    the symptom is one CA port GUID reached from two switch ports, or one GUID with two node descriptions.
requirements:
  - infiniband-diags (C(iblinkinfo), C(ibqueryerrors)) on the target for O(state=gathered).
seealso:
  - module: rdma.fabric.sm_info
"""

EXAMPLES = r"""
- name: Check the fabric from the SM node against the rail plan
  rdma.fabric.ib_fabric:
    host: "{{ inventory_hostname }}"
    expected_width: 4X
    expected_speed: HDR
    thresholds:
      SymbolErrorCounter: 0
    cabling:
      - {hca: "node1 mlx5_0", leaf: leaf-r0, rail: 0}
      - {hca: "node1 mlx5_1", leaf: leaf-r1, rail: 1}
  register: fabric

- name: Fail on any finding
  ansible.builtin.assert:
    that: fabric.records | selectattr('severity', 'equalto', 'error') | list | length == 0
    fail_msg: "{{ fabric.records | map(attribute='diagnosis') | list }}"

- name: The same checks on a support bundle
  rdma.fabric.ib_fabric:
    state: parsed
    running_config: "{{ lookup('ansible.builtin.file', 'bundle/iblinkinfo.txt') }}"
    expected_speed: "53.125 Gbps"
"""

RETURN = r"""
links:
  description:
    - Every port iblinkinfo printed, with C(node), C(node_type) (V(switch), V(ca), V(router) or null when
      the layout does not say), C(node_guid), C(port_guid), C(lid), C(port), C(ext_port), C(width),
      C(speed) (iblinkinfo's text), C(speed_name) (V(HDR)...), C(state), C(phys_state), and C(peer)
      (C(node), C(port), C(port_guid), C(lid), C(ext_port), C(could_be_width), C(could_be_speed)) or null.
  returned: always
  type: list
  elements: dict
errors:
  description: Ports ibqueryerrors printed, with C(node), C(node_guid), C(port_guid), C(port) (or V(ALL)),
    C(counters) (every non-zero counter) and C(link) (the C(-r) link info).
  returned: always
  type: list
  elements: dict
duplicate_guids:
  description: Port GUIDs seen in two places, with C(guid), C(seen_at) (switch/port) and C(nodes).
  returned: always
  type: list
  elements: dict
cabling:
  description: Per planned HCA port C(hca), C(port), C(rail), C(expected_leaf), C(expected_leaf_port),
    C(switch), C(switch_port) (where it is), C(state) and C(ok).
  returned: always
  type: list
  elements: dict
records:
  description: The findings, C(host), C(check), C(object), C(expected), C(actual), C(severity), C(diagnosis)
    (C(setting) for a counter; C(switch), C(switch_port), C(expected_leaf) for cabling).
  returned: always
  type: list
  elements: dict
  sample:
    - host: sm1
      check: ib.cabling
      object: "rail1/node3 mlx5_1 port 1"
      expected: leaf-r1
      actual: leaf-r0 port 5
      severity: error
      diagnosis: "node3 mlx5_1 port 1 (rail 1) is cabled to leaf-r0 port 5; it should be on leaf-r1 (rail 1's leaf)"
error_summary:
  description: ibqueryerrors' summary (C(nodes), C(bad_nodes), C(ports), C(bad_ports), C(pma_failures)), or null.
  returned: always
  type: dict
running_config:
  description: Every command run and its output, with C($ command) and C([rc=N]) lines; feed it back with O(state=parsed).
  returned: when O(state=gathered)
  type: str
"""

import socket

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.rdma.fabric.plugins.module_utils.reports import _ib_fabric
from ansible_collections.rdma.fabric.plugins.module_utils.common._common import RDMA_DEVICE_MAX, ToolError, check_name


def argument_spec():
    return dict(
        state=dict(type="str", choices=["gathered", "parsed"], default="gathered"),
        running_config=dict(type="str"),
        ca=dict(type="str"),
        port=dict(type="int"),
        timeout=dict(type="int"),
        host=dict(type="str"),
        expected_width=dict(type="str"),
        expected_speed=dict(type="str"),
        port_errors=dict(type="bool", default=True),
        thresholds=dict(type="dict", default={}),
        cabling=dict(type="list", elements="dict", default=[], options=dict(
            hca=dict(type="str", required=True),
            guid=dict(type="str"),
            leaf_guid=dict(type="str"),
            port=dict(type="int", default=1),
            leaf=dict(type="str", required=True),
            rail=dict(type="int"),
            leaf_port=dict(type="int"),
        )),
    )


def main():
    module = AnsibleModule(
        argument_spec=argument_spec(),
        required_if=[("state", "parsed", ["running_config"])],
        supports_check_mode=True,
    )
    params = module.params
    try:
        for name in ("port", "timeout"):
            if params[name] is not None and params[name] <= 0:
                raise ValueError("%s=%s: a positive integer" % (name, params[name]))
        if params["ca"] is not None:
            check_name("ca", params["ca"], "CA", RDMA_DEVICE_MAX)
        width = _ib_fabric.normalize_width(params["expected_width"]) if params["expected_width"] else None
        speed = _ib_fabric.normalize_speed(params["expected_speed"]) if params["expected_speed"] else None
        thresholds = _ib_fabric.merge_thresholds(params["thresholds"])
        plan = _ib_fabric.check_cabling(params["cabling"])
    except ValueError as exc:
        module.fail_json(msg=str(exc))
    host = params["host"] or socket.gethostname()

    raw = None
    if params["state"] == "parsed":
        link_text, error_text = _ib_fabric.split_capture(params["running_config"])
        unavailable = None
    else:
        try:
            link_text, error_text, unavailable, raw = _ib_fabric.gather(
                module, ca=params["ca"], port=params["port"], timeout=params["timeout"], port_errors=params["port_errors"])
        except ToolError as exc:
            module.fail_json(changed=False, **exc.as_result())
    try:
        result = _ib_fabric.evaluate(link_text, error_text, host, expected_width=width, expected_speed=speed,
                                     thresholds=thresholds, plan=plan, errors_unavailable=unavailable)
    except ValueError as exc:
        module.fail_json(msg="running_config: %s" % exc if params["state"] == "parsed" else str(exc),
                         running_config=raw)
    if raw is not None:
        result["running_config"] = raw
    module.exit_json(changed=False, **result)


if __name__ == "__main__":
    main()
