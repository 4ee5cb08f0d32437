#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: drift_check
short_description: Compare a node's managed state with what the roles would set, one record per drifted setting
version_added: 0.2.0
author: rdma.fabric contributors (@rdma-fabric)
description:
  - An action plugin. Per host it makes one M(rdma.fabric.state_check) call for every area and
    returns one record C({host, area, object, setting, expected, actual}) per smallest setting
    that differs. Nothing is written on the node, unless O(apply) is set.
  - Each area (V(opensm), V(roce_qos), V(nccl_env), V(gpudirect)) goes as its role's
    spec, the role's settings and the files rendered from its templates on the controller,
    with slots for what only the node knows (the port GUID, the OS family's paths, the ACS
    bridges). The node reads the facts, decides with the roles' own planners (the code the
    roles' filters run) what each role would set, checks it and judges it, in that same
    call, one round trip per host.
  - A reader that fails, or a resource that cannot be read, is a record of its own (area
    C(host), or the area with setting C(read)); variables a role refuses are the area's
    C(config) records. Never "no drift".
  - Used by C(playbooks/drift_check.yml) (and C(site.yml), which converges only what it
    finds); M(rdma.fabric.drift_report) writes the fleet's reports.
options:
  apply:
    description:
      - Also converge, in the same call, each V(roce_qos), V(nccl_env) and V(gpudirect) area that
        drifted, with its role's module calls (M(rdma.fabric.state_check) O(rdma.fabric.state_check#module:apply)),
        then check again (a first converge in one node call per host). RV(drift_records) stays what
        differed before, for the report.
      - V(opensm) and V(nic_firmware) are checked only (service restarts, the SMs' HA order, firmware
        resets and reboots stay with their roles); a reboot the kernel arguments need is not made.
      - The task fails when an area failed (its message names the host, the area, the resource, what
        was applied and the state read back; V(roce_qos) rolls back as its role does), or when the
        node could not be checked.
      - Another value than a boolean is refused, naming the option.
    type: bool
    default: false
  apply_var:
    description:
      - The name of the variable that holds O(apply), read from the host's variables (V(false) when it
        is undefined) and templated only when it holds a template; an error names that variable.
      - A task argument that is a template costs a Jinja compile in every host's worker;
        C(playbooks/drift_check.yml) reads V(__drift_check_apply), which is most often undefined.
      - Not with O(apply).
    type: str
  apply_defer:
    description:
      - With O(apply), what C(playbooks/site.yml) converges in its check's own call, leaving the rest to
        its later plays.
      - A host that could not be checked is reported as the check reports it (a record of area
        C(host)) instead of failing the task.
      - A host checked for V(nic_firmware) whose C(nic_firmware_reboot) is V(if_required) and whose
        firmware drifted is only checked (its firmware converge may reboot it with other link types).
      - Either host's result has RV(apply_deferred).
    type: bool
    default: false
  area_groups:
    description:
      - Area name to the inventory group whose hosts it applies to. For each area whose group
        holds the host, the action builds what the role's C(__ROLE_spec) variable is inside the role
        (for example C(__roce_qos_spec), the area object's spec) from the host's variables over the
        role's defaults (no role needs to be imported). An area of another group costs nothing.
      - A play may set C(__ROLE_spec) itself; the action then templates that instead.
      - C(playbooks/drift_check.yml) uses it. Exactly one of O(area_groups) and O(areas).
    type: dict
  environment_var:
    description:
      - The name of a variable (V(rdma_fabric_environment) in C(playbooks/drift_check.yml)) whose
        mapping of environment variables the node call gets, under the task's own C(environment)
        (which wins where both set a name), as the play's C(environment) keyword would give it
        without templating the keyword in every host's worker.
      - Undefined or null, nothing is added; a value that is no mapping of names is an error naming the
        variable and the value.
    type: str
  areas:
    description:
      - Area name to spec, each templated by the task (for example
        C({{ __roce_qos_spec }})). Empty entries are ignored.
      - Exactly one of O(area_groups) and O(areas).
    type: dict
  settings:
    description:
      - Variables of the areas' roles (for example V(gpudirect_reboot)) to return in RV(settings),
        as the role sees them (the host's value over the role's default) and checked against the
        role's argument spec, for a play that imports no role to decide with (C(site.yml)).
      - A name that is no variable of the roles, a value the argument spec refuses, or a secret
        (V(opensm_sm_key)) is an error naming the variable.
    type: list
    elements: str
    default: []
  settings_var:
    description:
      - The name of the variable that holds O(settings), read as O(apply_var) reads its own (none when
        it is undefined).
      - Not with O(settings).
    type: str
attributes:
  action_group:
    description: Use C(group/rdma.fabric.drift) in C(module_defaults) to set defaults for this module.
    support: full
    membership:
      - rdma.fabric.drift
  check_mode:
    description: Reads only without O(apply); with O(apply), check mode writes nothing and returns what would change.
    support: full
  diff_mode:
    description: Not used.
    support: none
  platform:
    description: Linux hosts.
    support: full
    platforms: posix
  action:
    description: Runs on the controller and executes modules on the host.
    support: full
seealso:
  - module: rdma.fabric.state_check
  - module: rdma.fabric.drift_report
"""

EXAMPLES = r"""
- name: Expose the RoCE QoS role's settings (runs nothing)
  ansible.builtin.import_role:
    name: rdma.fabric.roce_qos
    tasks_from: drift_spec

- name: Check the node's RoCE QoS in one call, with the spec the role's variable gives
  rdma.fabric.drift_check:
    areas:
      roce_qos: "{{ __roce_qos_spec }}"
  register: drift_check_result

- name: Converge each drifted area in the same call (a first converge)
  rdma.fabric.drift_check:
    area_groups:
      roce_qos: roce_nodes
      nccl_env: gpu_nodes
      gpudirect: gpu_nodes
    apply: true
    settings: [gpudirect_reboot]
  register: converge_result

- name: Check each host's areas, by the groups they apply to (as playbooks/drift_check.yml does)
  rdma.fabric.drift_check:
    area_groups:
      roce_qos: roce_nodes
      nccl_env: gpu_nodes
      gpudirect: gpu_nodes
  register: drift_check_result
"""

RETURN = r"""
settings:
  description: The variables O(settings) named, as the roles see them.
  returned: when O(settings) is not empty
  type: dict
  sample: {"gpudirect_reboot": "never"}
drift_records:
  description: One record per drifted setting; empty when the node matches.
  returned: always
  type: list
  elements: dict
  sample: [{"host": "gpu-01", "area": "roce_qos", "object": "eth2", "setting": "pfc", "expected": [3], "actual": []}]
checked:
  description: The areas checked.
  returned: always
  type: list
  elements: str
applied:
  description:
    - With O(apply), per area applied (one that drifted), its module calls in order, each
      C({name, resource, failed, result}) with the module's result (C(before), C(commands), C(after),
      C(changed); on a failure C(msg), C(applied), C(failed_command), C(not_attempted)).
  returned: when O(apply) is true
  type: dict
apply_deferred:
  description:
    - With O(apply_defer), why this host's areas were not applied in this call (a later call
      converges them).
  returned: when the apply was deferred
  type: str
  sample: "nic_firmware drifted: the other areas are applied after it"
drift_records_after:
  description:
    - With O(apply), the records of the check made after the apply (what still differs, read back;
      a kernel argument not yet booted is C(pending reboot)); in check mode, RV(drift_records).
  returned: when O(apply) is true
  type: list
  elements: dict
plans:
  description:
    - With O(apply), what C(playbooks/site.yml) reads after the call (the NCCL fleet check, the
      GPUDirect readiness and reboot state), per area planned on the node; the keys of
      M(rdma.fabric.state_check)'s RV(rdma.fabric.state_check#module:plans).
  returned: when O(apply) is true
  type: dict
changed:
  description: With O(apply), whether an applied call changed the node.
  returned: always
  type: bool
msg:
  description: With O(apply), when an area failed or the node could not be checked, why.
  returned: on failure
  type: str
"""
