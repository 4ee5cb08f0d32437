#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: state_check
short_description: Check several rdma.fabric resources against their wanted state in one call, and converge drifted areas
version_added: 0.2.0
author: rdma.fabric contributors (@rdma-fabric)
extends_documentation_fragment: [rdma.fabric.attributes, rdma.fabric.attributes.read_only]
description:
  - Runs, for each entry of O(resources), that module's own reader, compare and prediction
    (what the module does in check mode) and returns its C(before), C(after) (the state a
    real run would make) and C(commands). Nothing is written, whatever the check mode, unless
    O(apply) is set.
  - One module call for every area of a node, so a fleet drift check costs one round trip
    per host for the checks. An entry that fails (a tool missing, bad config) gives its
    error as its result; the other entries are still checked.
options:
  facts:
    description:
      - Readers to run first, in the same call; their results come back as RV(facts).
        C(rdma_facts) takes C(gather_subset) (M(rdma.fabric.rdma_facts)), C(gdr_readiness)
        takes C(gdr_level) (M(rdma.fabric.gdr_readiness)), C(sm_info) takes C(ca), C(port),
        C(timeout), C(environment) (M(rdma.fabric.sm_info); the environment only its commands get), C(opensm)
        takes C(ibstat) (the OS family markers, and the ports when true).
      - Another reader, an option its reader does not take or a value it would refuse fails the module
        before anything is read, naming the reader, the option and the value.
    type: dict
  areas:
    description:
      - The drift check's areas, those C(plugins/module_utils/areas/_registry.py) plans on the node
        (V(opensm), V(roce_qos), V(nccl_env), V(gpudirect), V(nic_firmware)), each
        with its spec (C(__ROLE_spec) of the role's vars, rendered on the controller; it
        holds no facts). The module reads the facts these areas need, decides what each role
        would set with the roles' own planners, checks it and returns one record per drifted
        setting as RV(drift_records), the whole check in one call.
      - Used by M(rdma.fabric.drift_check); the specs are internal to the collection.
      - An opensm spec holds the rendered opensm.conf, with the SM_Key. Never logged; in the result
        every secret found in the specs (module_utils/common/_secrets.py, such as an C(sm_key) value) is masked,
        and nothing else.
    type: dict
  host:
    description: The host name the records of O(areas) carry.
    type: str
  apply:
    description:
      - With O(areas), also converge, in the same call, each area that drifted (has records) with its
        role's module calls, in the role's order, built from the same plan the role applies (the
        area object's C(apply_requests)); each goes through its module's whole lifecycle (read, plan,
        apply, read back). V(roce_qos) runs mlnx_qos, dcqcn, lldp_dcb (with C(roce_qos_lldp)), the
        boot applier's node_files (with C(roce_qos_persist)) and the drift spec's node_files;
        V(nccl_env) the NCCL files' node_files and the drift spec's; V(gpudirect) kernel_cmdline,
        pcie_acs (the redirect bits on the GPU-NIC paths), the peer-memory module's C(modprobe),
        the ACS boot unit's node_files and the drift spec's.
      - Only V(roce_qos), V(nccl_env) and V(gpudirect) are applied; V(opensm) and V(nic_firmware)
        (service restarts, the SMs' HA order, firmware resets and reboots) are checked only; their
        roles converge them. A reboot the kernel arguments need is not made.
      - An area stops at its first failure; V(roce_qos) then restores, on the interface the failure
        happened on, what its role's rescue restores (C(roce_qos_rollback_on_failure)); the other
        areas still run and the module fails naming the host, the area, the resource, what was
        applied and the state read back. An area whose plan has errors (its role would stop the
        host) is not applied and fails the module.
      - Then, when something was applied, the facts are read again and the areas checked again, as
        RV(drift_records_after). A node that did not drift runs nothing (no write).
      - In check mode nothing is written; RV(applied) holds the predictions, RV(changed) says
        whether a real run would change something.
    type: bool
    default: false
  apply_unless_drifted:
    description:
      - With O(apply), the areas whose drift defers the whole apply to a later call; the node is then
        only checked, and RV(apply_deferred) says why.
      - C(playbooks/site.yml) gives V(nic_firmware) for a host its firmware play may reboot
        (C(nic_firmware_reboot=if_required)), whose ports may come back with another link type; its
        other areas are converged after that play.
    type: list
    elements: str
    choices: [opensm, roce_qos, nccl_env, gpudirect, nic_firmware]
    default: []
  return_facts:
    description: Return what the readers read as RV(facts). M(rdma.fabric.drift_check) needs only the records.
    type: bool
    default: true
  resources:
    description:
      - The resources to check.
      - Never logged (a C(node_files) entry may hold a file with a key); in the result every secret found
        in them is masked, and nothing else.
    type: list
    elements: dict
    default: []
    suboptions:
      resource:
        description: The module whose resource to check.
        type: str
        required: true
        choices: [dcqcn, kernel_cmdline, kernel_module, lldp_dcb, mlnx_qos, mlxconfig, node_files, pcie_acs]
      name:
        description: A label for the entry in the results (default the resource).
        type: str
      area:
        description: The area the entry belongs to (for reports), for example V(roce_qos).
        type: str
      state:
        description: The state the module would run with (V(merged), V(replaced)); another one fails the entry.
        type: str
        default: merged
      config:
        description:
          - The module's O(rdma.fabric.mlnx_qos#module:config); for V(node_files) C({files, units}), for
            V(kernel_cmdline) its parameters (C(arguments), C(backend), C(grub_file), ...), for V(pcie_acs)
            its parameters (C(state), C(devices), C(clear)), for V(kernel_module) C({name}) (a kernel
            module loaded with C(modprobe NAME) when the kernel does not show it loaded).
        type: raw
      options:
        description:
          - Other options of the module (for V(lldp_dcb), C(dcbx_check) and C(switch_dcbx_to_os)); for
            V(node_files), C(content=true) returns the text of each file (up to 64 KiB) in C(before); for
            V(mlxconfig), C(firmware=true) also reads each device's firmware version and PSID (C(flint q)),
            and C(boot_record) is the module's O(rdma.fabric.mlxconfig#module:boot_record) (the boot each
            pending value was set in; an absolute path, empty for none, the module's default when absent).
          - Each a boolean but C(boot_record); an option the module does not take here fails the entry.
        type: dict
attributes:
  action_group:
    membership:
      - rdma.fabric.node
  check_mode:
    description: Reads only, whatever the check mode, without O(apply); with O(apply), check mode
      writes nothing and returns what the calls would change.
  platform:
    description: Linux hosts, with each resource's tools.
seealso:
  - module: rdma.fabric.drift_check
"""

EXAMPLES = r"""
- name: Check the QoS of two ports and the boot unit in one call
  rdma.fabric.state_check:
    resources:
      - resource: mlnx_qos
        area: roce_qos
        state: replaced
        config: [{interface: eth2, trust: dscp, pfc: [3]}, {interface: eth3, trust: dscp, pfc: [3]}]
      - resource: node_files
        area: roce_qos
        config:
          units: [{name: rdma-fabric-roce-qos.service, enabled: true}]
  register: checked
"""

RETURN = r"""
facts:
  description: What the readers of O(facts) returned, as C(rdma), C(gdr) and C(sm).
  returned: always
  type: dict
facts_errors:
  description: Per reader of O(facts) that failed, its error.
  returned: always
  type: dict
drift_records:
  description:
    - With O(areas), one record C({host, area, object, setting, expected, actual}) per drifted
      setting, per area that could not be planned (C(setting=config)) and per reader that failed.
  returned: when O(areas) is given
  type: list
  elements: dict
drift_records_after:
  description:
    - With O(apply), the records of the check made again after the apply (the state read back); the
      records of RV(drift_records) when nothing was applied, and in check mode. A kernel argument set
      and not yet booted stays a record (C(/proc/cmdline), C(pending reboot)).
  returned: when O(areas) and O(apply) are given
  type: list
  elements: dict
plans:
  description:
    - With O(apply), what the steps after a node-side converge read (C(playbooks/site.yml)), per area
      planned on the node. V(nccl_env) - its plan as the role's fleet check compares it (C(active),
      C(settings), C(fabric), C(fleet), C(notes), C(warnings), C(errors)). V(gpudirect) - readiness from
      the facts read last (C(ready), C(not_ready), C(summary), C(ready_gpus)), C(kernel_cmdline) (the
      module's parameters), C(notes), C(reboot_required) (a kernel argument written, not booted) and
      C(pending_arguments) (C([{name}])).
  returned: when O(apply) is true
  type: dict
applied:
  description:
    - With O(apply), per area applied, its module calls in order, each C({name, resource, failed,
      result}); C(result) is the module's (C(before), C(commands), C(after), C(changed); on a failure
      C(msg), C(applied), C(failed_command), C(not_attempted), C(after) read back). After a
      V(roce_qos) failure, the restores follow (C(name) C(restore mlnx_qos), ...).
    - An area that did not drift is not there.
  returned: when O(areas) and O(apply) are given
  type: dict
  sample: {"roce_qos": [{"name": "mlnx_qos", "resource": "mlnx_qos", "failed": false,
           "result": {"changed": true, "commands": ["mlnx_qos -i eth2 --trust dscp"], "before": [], "after": []}}]}
apply_deferred:
  description:
    - With O(apply), why nothing was applied although the node may have drifted (the areas of
      O(apply_unless_drifted) that drifted).
  returned: when O(apply) is true and an area of O(apply_unless_drifted) drifted
  type: str
changed:
  description: With O(apply), whether any applied call changed the node (its C(before) differs from its C(after)).
  returned: always
  type: bool
msg:
  description: With O(apply), when an area failed, per area failed the host, the area, the resource, what was applied and the state read back.
  returned: on failure
  type: str
checked:
  description: With O(areas), the areas checked.
  returned: when O(areas) is given
  type: list
  elements: str
results:
  description:
    - One entry per O(resources) entry, in order, with C(area), C(resource), C(name),
      C(failed) and C(result) (the module's C(before), C(after), C(commands); or C(msg)).
  returned: always
  type: list
  elements: dict
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.rdma.fabric.plugins.module_utils.common import _secrets
from ansible_collections.rdma.fabric.plugins.module_utils.drift._drift_areas import NODE_AREAS, readers
from ansible_collections.rdma.fabric.plugins.module_utils.drift._state_check import (
    RESOURCES, apply_areas, areas_errors, check_all, check_areas, facts_errors, gather_facts)


def argument_spec():
    resource = dict(
        resource=dict(type="str", required=True, choices=sorted(RESOURCES)),
        name=dict(type="str"),
        area=dict(type="str"),
        state=dict(type="str", default="merged"),
        config=dict(type="raw"),
        options=dict(type="dict"),
    )
    # An opensm spec holds opensm.conf, with the SM_Key (and a node_files resource may hold such a
    # file): no_log, so AnsibleModule does not log them to the node's journal; main() then masks
    # only the secrets in them in the result (no_log alone masks every string of the specs, the
    # records' expected values too).
    return dict(facts=dict(type="dict"), areas=dict(type="dict", no_log=True), host=dict(type="str"),
                return_facts=dict(type="bool", default=True), apply=dict(type="bool", default=False),
                apply_unless_drifted=dict(type="list", elements="str", choices=list(NODE_AREAS), default=[]),
                resources=dict(type="list", elements="dict", default=[], options=resource, no_log=True))


def main():
    module = AnsibleModule(argument_spec=argument_spec(), supports_check_mode=True)
    module.no_log_values.clear()
    module.no_log_values.update(_secrets.secret_values([module.params["areas"], module.params["resources"]]))
    areas = dict((k, v) for k, v in (module.params["areas"] or {}).items() if v is not None)
    unknown = sorted(set(areas) - set(NODE_AREAS))
    if unknown:
        module.fail_json(msg="areas: %s not planned on the node; one of %s" % (", ".join(unknown), ", ".join(NODE_AREAS)))
    # the readers and the areas checked before anything runs: each message names the field and
    # the value (a secret's value masked), nothing is read
    errors = facts_errors(module.params["facts"]) + areas_errors(areas)
    if errors:
        module.fail_json(msg="; ".join(errors))
    wanted = dict(readers(areas), **(module.params["facts"] or {}))
    facts, errors = gather_facts(module, wanted)
    out = dict(changed=False, facts=facts if module.params["return_facts"] else {}, facts_errors=errors,
               results=check_all(module, module.params["resources"]))
    host = module.params["host"] or "localhost"
    if areas and module.params["apply"]:
        out.update(apply_areas(module, host, areas, wanted, facts, errors,
                               unless_drifted=module.params["apply_unless_drifted"]))
        if out.pop("failed"):
            module.fail_json(invocation=invocation(module.params), **out)
    elif areas:
        out.update(check_areas(module, host, areas, facts, errors))
    module.exit_json(invocation=invocation(module.params), **out)


def invocation(params):
    """What the result echoes of the call (AnsibleModule echoes every option): the areas by name,
    not their specs. A spec is what the controller sent (its settings and rendered files, about
    10 KB per host), which the node would serialize, mask and send back and the controller's
    worker parse again, for a result nobody reads (the drift check's action returns its own)."""
    out = dict((name, value) for name, value in params.items() if name != "areas")
    out["areas"] = sorted(params.get("areas") or {})
    return {"module_args": out}


if __name__ == "__main__":
    main()
