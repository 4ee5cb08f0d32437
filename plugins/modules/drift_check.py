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
  - An action plugin. Per host it makes one M(rdma.fabric.state_check) call for every
    area's resources and returns one record C({host, area, object, setting, expected,
    actual}) per smallest setting that differs. Each area's expected state comes from
    O(inputs), which the roles' C(drift_inputs) tasks compute on the controller with the same
    filters and templates the role converges with, from the facts the play read once
    (O(gathered)). Nothing is written on the node.
  - A gather that fails, or a resource that cannot be read, is a record of its own (area
    C(host), or the area with setting C(read)), never "no drift".
  - Used by C(playbooks/drift_check.yml), where each role's C(drift_inputs) tasks give the
    inputs; M(rdma.fabric.drift_report) writes the fleet's reports.
options:
  gathered:
    description:
      - The registered result of the play's first M(rdma.fabric.state_check) call (its
        C(facts)). When that read failed the host gets one record (area C(host)) naming the error.
    type: dict
  inputs:
    description:
      - One dict per area, as each role's C(tasks/drift_inputs.yml) sets it (for example
        C(__drift_input_roce_qos)); empty entries are ignored.
    type: list
    elements: raw
    required: true
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
