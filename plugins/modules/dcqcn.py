#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: dcqcn
short_description: Manage mlx5 DCQCN (ECN sysfs) and the RoCE default ToS
version_added: 0.1.0
author: rdma.fabric contributors (@rdma-fabric)
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
  - Writes only the files whose value differs; a converged host gets no write.
  - The ECN files come with MLNX_OFED's mlx5 driver; the inbox driver has no C(ecn/)
    directory and the module then fails with a clear message. All values are volatile
    (reset by a reboot or driver reload).
options:
  interface:
    description:
      - Network interface whose C(ecn/) files to manage. Needed for O(config.np) and
        O(config.rp).
    type: str
  rdma_device:
    description:
      - RDMA device (for example C(mlx5_0)) for O(config.roce_tos) and O(config.rdma_cm_tos).
    type: str
  port:
    description: Port of O(rdma_device).
    type: int
    default: 1
  state:
    description:
      - V(merged) turns the listed priorities on and sets the parameters given.
      - V(replaced) also turns every priority not listed off (per point given).
      - V(gathered) returns the current values; V(rendered) returns the writes for
        O(config) as C(path=value) without touching the host (as merged; parameter names
        are not checked); V(parsed) reads O(running_config).
    type: str
    choices: [merged, replaced, gathered, rendered, parsed]
    default: merged
  running_config:
    description:
      - For O(state=parsed) the output of
        C(grep -r . /sys/class/net/IF/ecn /sys/class/infiniband/DEV/tc
        /sys/kernel/config/rdma_cm/DEV), one
        C(path:value) line per file (C(path=value) lines are accepted too).
      - O(interface) and O(rdma_device) pick what to return when the text holds several.
    type: str
  config:
    description: The wanted values.
    type: dict
    suboptions:
      np:
        description: Notification point (receiver) settings, C(ecn/roce_np/).
        type: dict
        suboptions:
          enabled_priorities:
            description: Priorities (0-7) with ECN notification enabled.
            type: list
            elements: int
          params:
            description:
              - Parameter file name to integer, for example C(cnp_dscp), C(cnp_802p_prio),
                C(min_time_between_cnps). Names the device does not have are rejected with
                the list of those it has.
            type: dict
      rp:
        description: Reaction point (sender) settings, C(ecn/roce_rp/).
        type: dict
        suboptions:
          enabled_priorities:
            description: Priorities (0-7) with ECN reaction enabled.
            type: list
            elements: int
          params:
            description:
              - Parameter file name to integer, for example C(rpg_time_reset),
                C(rpg_ai_rate), C(clamp_tgt_rate). Checked against the files present.
            type: dict
      roce_tos:
        description:
          - Default ToS (0-255) of RoCE verbs traffic on O(rdma_device) O(port)
            (C(tc/<port>/traffic_class)), for example V(106) (DSCP 26 with ECT(0)). Needs
            O(rdma_device) and MLNX_OFED's mlx5_ib.
        type: int
      rdma_cm_tos:
        description:
          - Default ToS (0-255) of RDMA-CM connections on O(rdma_device) O(port) that set
            none themselves, the rdma_cm configfs
            C($SYSFS_PATH/kernel/config/rdma_cm/<rdma_device>/ports/<port>/default_roce_tos)
            that mlnx-tools' C(cma_roce_tos) sets. Needs O(rdma_device), configfs mounted and
            the C(rdma_cm) module loaded.
          - The configfs group C(rdma_cm/<rdma_device>) exists only after a C(mkdir); the
            module creates it when absent (also in check mode and for V(gathered), to read
            the value) and removes it again at the end, as C(cma_roce_tos) does. The value
            stays in the kernel after the C(rmdir).
        type: int
attributes:
  action_group:
    description: Use C(group/rdma.fabric.qos) in C(module_defaults) to set defaults for this module.
    support: full
    membership:
      - rdma.fabric.qos
  check_mode:
    description: Computes the writes and the predicted state; writes nothing.
    support: full
  diff_mode:
    description: Returns the values before and after as a diff.
    support: full
  platform:
    description: Linux hosts with the MLNX_OFED mlx5 driver.
    support: full
    platforms: posix
notes:
  - Writes are returned as C(path=value) strings, the path under C($SYSFS_PATH)
    (default C(/sys)).
  - O(state=gathered) returns C(rdma_cm_tos) only when the rdma_cm configfs is present.
seealso:
  - module: rdma.fabric.mlnx_qos
"""

EXAMPLES = r"""
- name: DCQCN on priority 3, CNPs with DSCP 48 on priority 6, RoCE ToS 106
  rdma.fabric.dcqcn:
    interface: eth2
    rdma_device: mlx5_0
    config:
      np:
        enabled_priorities: [3]
        params: {cnp_dscp: 48, cnp_802p_prio: 6}
      rp:
        enabled_priorities: [3]
      roce_tos: 106
      rdma_cm_tos: 106
    state: replaced

- name: Read the values
  rdma.fabric.dcqcn:
    interface: eth2
    state: gathered
"""

RETURN = r"""
before:
  description: The values read before any write.
  returned: when state is merged or replaced
  type: dict
  sample: {"np": {"enabled_priorities": [], "params": {"cnp_dscp": 0}}, "rp": null, "roce_tos": null, "rdma_cm_tos": 0}
commands:
  description: The sysfs writes done (check mode, that would be done) as C(path=value).
  returned: when state is merged or replaced
  type: list
  elements: str
  sample: ["/sys/class/net/eth2/ecn/roce_np/cnp_dscp=48", "/sys/class/net/eth2/ecn/roce_np/enable/3=1"]
after:
  description: The values read back after the writes; in check mode the predicted values.
  returned: when state is merged or replaced
  type: dict
gathered:
  description: The current values.
  returned: when state is gathered
  type: dict
rendered:
  description: The writes for O(config) as C(path=value).
  returned: when state is rendered
  type: list
  elements: str
parsed:
  description: The values parsed from O(running_config).
  returned: when state is parsed
  type: dict
applied:
  description: On a failure midway, the writes done.
  returned: failure
  type: list
  elements: str
failed_command:
  description: On a failure midway, the write that failed.
  returned: failure
  type: str
not_attempted:
  description: On a failure midway, the writes not tried.
  returned: failure
  type: list
  elements: str
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.rdma.fabric.plugins.module_utils._qos_validate import ValidationError
from ansible_collections.rdma.fabric.plugins.module_utils import _dcqcn as D


def argument_spec():
    point = dict(type="dict", options=dict(
        enabled_priorities=dict(type="list", elements="int"),
        params=dict(type="dict"),
    ))
    return dict(
        interface=dict(type="str"),
        rdma_device=dict(type="str"),
        port=dict(type="int", default=1),
        state=dict(type="str", default="merged",
                   choices=["merged", "replaced", "gathered", "rendered", "parsed"]),
        running_config=dict(type="str"),
        config=dict(type="dict", options=dict(
            np=point,
            rp=dict(point),
            roce_tos=dict(type="int"),
            rdma_cm_tos=dict(type="int"),
        )),
    )


def _check_name(module, field, value):
    if value is not None and (not value or value.startswith(".") or "/" in value or any(c.isspace() for c in value)):
        module.fail_json(msg="%s=%r: not a valid name" % (field, value))


def main():
    module = AnsibleModule(
        argument_spec=argument_spec(),
        required_if=[
            ("state", "merged", ("config",)),
            ("state", "replaced", ("config",)),
            ("state", "rendered", ("config",)),
            ("state", "parsed", ("running_config",)),
            ("state", "gathered", ("interface", "rdma_device"), True),
        ],
        supports_check_mode=True,
    )
    params = module.params
    state = params["state"]
    interface, rdma_device, port = params["interface"], params["rdma_device"], params["port"]
    _check_name(module, "interface", interface)
    _check_name(module, "rdma_device", rdma_device)
    if port is not None and port < 1:
        module.fail_json(msg="port=%s: ports are numbered from 1" % port)

    if state == "parsed":
        try:
            tree = D.parse_running_config(params["running_config"])
        except D.DcqcnError as exc:
            module.fail_json(msg=exc.msg)
        module.exit_json(changed=False, parsed=D.to_result(D.parse_tree(tree, interface, rdma_device, port)))

    try:
        want = D.normalize_want(params["config"], interface, rdma_device) if state != "gathered" else {}
    except ValidationError as exc:
        module.fail_json(msg=exc.msg)

    if state == "rendered":
        writes = D.plan_writes(want, None, "merged", interface, rdma_device, port)
        module.exit_json(changed=False, rendered=[D.write_string(w) for w in writes])

    read_interface = interface if (state == "gathered" or "np" in want or "rp" in want) else None
    read_device = rdma_device if (state == "gathered" or "roce_tos" in want) else None
    read_cm_device = rdma_device if (state == "gathered" or "rdma_cm_tos" in want) else None
    rdma_cm = D.RdmaCmGroups()

    def read():
        tree = D.read_tree(read_interface, read_device, port, read_cm_device, rdma_cm,
                           rdma_cm_required=state != "gathered")
        # An empty name matches nothing: report only what this task manages.
        found = D.parse_tree(tree, read_interface or "", rdma_device or "", port)
        keep = {"roce_tos": read_device, "rdma_cm_tos": read_cm_device}
        return dict((k, v) for k, v in found.items() if keep.get(k, read_interface))

    try:
        run(module, state, want, read, rdma_cm, interface, rdma_device, port)
    finally:
        rdma_cm.release()


def run(module, state, want, read, rdma_cm, interface, rdma_device, port):
    try:
        have = read()
    except D.DcqcnError as exc:
        _fail(module, rdma_cm, msg=exc.msg)

    if state == "gathered":
        _exit(module, rdma_cm, changed=False, gathered=D.to_result(have))

    try:
        writes = D.plan_writes(want, have, state, interface, rdma_device, port)
    except ValidationError as exc:
        _fail(module, rdma_cm, msg=exc.msg, before=D.to_result(have))

    result = dict(changed=bool(writes), before=D.to_result(have), commands=[D.write_string(w) for w in writes])
    if not writes:
        result["after"] = result["before"]
    elif module.check_mode:
        result["after"] = D.to_result(D.desired_state(want, have, state))
    else:
        try:
            D.apply_writes(writes)
        except D.ApplyError as exc:
            try:
                readback = D.to_result(read())
            except D.DcqcnError as read_exc:
                readback = None
                exc.msg += " Reading back failed too: %s" % read_exc.msg
            _fail(module, rdma_cm, msg=exc.msg + " State read back: %s" % (readback,), changed=bool(exc.applied),
                  applied=exc.applied, failed_command=exc.failed, not_attempted=exc.not_attempted,
                  before=result["before"], after=readback, commands=result["commands"])
        result["after"] = D.to_result(read())
    if module._diff and writes:
        result["diff"] = dict(before=result["before"], after=result["after"],
                              before_header="dcqcn sysfs (before)", after_header="dcqcn sysfs (after)")
    _exit(module, rdma_cm, **result)


def _exit(module, rdma_cm, **result):
    # exit_json/fail_json end the process: remove the rdma_cm groups this run created first.
    for error in rdma_cm.release():
        module.warn(error)
    module.exit_json(**result)


def _fail(module, rdma_cm, **result):
    errors = rdma_cm.release()
    if errors:
        result["msg"] += " Cleanup failed too: %s" % "; ".join(errors)
    module.fail_json(**result)


if __name__ == "__main__":
    main()
