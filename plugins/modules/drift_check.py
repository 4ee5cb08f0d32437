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
  - The areas of O(areas) (V(roce_qos), V(nccl_env), V(gpudirect)) are decided on the node, in
    that same call: the controller renders each role's spec (its settings and files, with no
    facts), and the node reads the facts and plans with the roles' own planners (the code the
    roles' filters run), so a host costs one round trip.
  - The areas of O(inputs) (V(opensm), whose files are rendered from the role's templates with
    the port GUID the node reports) come from the roles' C(drift_inputs) tasks, computed on the
    controller from an earlier read (O(gathered)); their resources go in the same call.
  - A gather that fails, or a resource that cannot be read, is a record of its own (area
    C(host), or the area with setting C(read)), never "no drift".
  - Used by C(playbooks/drift_check.yml), where each role's C(drift_inputs) tasks give the
    inputs; M(rdma.fabric.drift_report) writes the fleet's reports.
options:
  areas:
    description:
      - Area name to spec, for the areas planned on the node; the spec of each is its role's
        C(__ROLE_drift_spec) variable (for example C(__roce_qos_drift_spec), exposed by an
        C(import_role) of the role's C(drift_spec) tasks). Empty entries are ignored.
    type: dict
  gathered:
    description:
      - The registered result of the M(rdma.fabric.state_check) read the O(inputs) came from
        (its C(facts)). When that read failed the host gets one record (area C(host)) naming the error.
    type: dict
  inputs:
    description:
      - One dict per area computed on the controller, as the role's C(tasks/drift_inputs.yml) sets
        it (C(__drift_input_opensm)); empty entries are ignored.
    type: list
    elements: raw
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
- name: Compare every area of the node
  rdma.fabric.drift_check:
    gathered: "{{ drift_facts }}"
    inputs:
      - "{{ __drift_input_roce_qos | default(none) }}"
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
