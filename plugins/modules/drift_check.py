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
    that differs. Nothing is written on the node.
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
  area_groups:
    description:
      - Area name to the inventory group whose hosts it applies to. For each area whose group
        holds the host, the action builds the role's C(__ROLE_spec) variable (for
        example C(__roce_qos_spec), the area object's spec), exposed by an C(import_role) of the role's
        C(drift_spec) tasks, which run nothing. An area of another group costs nothing.
      - C(playbooks/drift_check.yml) uses it. Exactly one of O(area_groups) and O(areas).
    type: dict
  areas:
    description:
      - Area name to spec, each templated by the task (for example
        C({{ __roce_qos_spec }})). Empty entries are ignored.
      - Exactly one of O(area_groups) and O(areas).
    type: dict
attributes:
  action_group:
    description: Use C(group/rdma.fabric.drift) in C(module_defaults) to set defaults for this module.
    support: full
    membership:
      - rdma.fabric.drift
  check_mode:
    description: Always reads only.
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

- name: Check the node's RoCE QoS in one call
  rdma.fabric.drift_check:
    areas:
      roce_qos: "{{ __roce_qos_spec }}"
  register: drift_check_result

- name: Check each host's areas, by the groups they apply to (as playbooks/drift_check.yml does)
  rdma.fabric.drift_check:
    area_groups:
      roce_qos: roce_nodes
      nccl_env: gpu_nodes
      gpudirect: gpu_nodes
  register: drift_check_result
"""

RETURN = r"""
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
"""
