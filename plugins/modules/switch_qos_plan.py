#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: switch_qos_plan
short_description: Plan and render one switch's side of lossless RoCE from the hosts' own QoS
version_added: 0.4.0
author: rdma.fabric contributors (@rdma-fabric)
description:
  - An action plugin, run on the controller for each switch (leaf) of the play, in the
    rdma.fabric.switch_qos role. It never connects to the switch.
  - Reads the switch's C(switch_qos_*) variables (checked against the role's C(meta/argument_specs.yml))
    and the roce_qos settings of each host its C(switch_qos_ports) face (the roce_qos role's
    defaults under the host's own C(roce_qos_*) values), and plans one lossless intent with the
    switch_qos area object (RoCE priority and TC, DSCP to TC, PFC, a strict CNP class, ECN/WRED
    per link speed, the PFC watchdog, cable length and MTU). Hosts on one leaf that want different
    lossless settings are an error.
  - Renders the intent for C(switch_qos_os) and refuses what that platform refuses (Enterprise SONiC's
    documented ranges, which its modules do not enforce; EOS through pyavd's schema; the
    sonic-yang-models constraints on CONFIG_DB; NVUE's ranges), naming the variable and the value.
  - Compares the intent with each host's view of its leaf port (the host variable
    C(switch_qos_lossless), a C(lossless) entry of rdma.fabric.rdma_health per netdev) and, on community
    SONiC, with the running CONFIG_DB in C(switch_qos_running_config) (SONiC's default AZURE DSCP map
    sends DSCP 26 to the lossy TC 1). Records have the drift check's shape (C(host) the switch,
    C(object) its port, the host end named in C(actual)).
  - Writes, under O(report_dir), C(<os>/<switch>.<ext>) (the rendering; for EOS also C(eos/<switch>.cfg),
    pyavd's CLI) and C(records/<switch>.json), each atomically.
options:
  report_dir:
    description: Directory for the renderings and records, created with mode C(0750) when missing.
    type: path
  report_mode:
    description: Mode of the files written, as an octal string; default C(rdma_fabric_report_mode), else C(0640).
    type: raw
  write:
    description: Write the files (false returns the plan only).
    type: bool
    default: true
attributes:
  check_mode:
    description: Writes the renderings in check mode too (rendering is the point of a check run).
    support: full
  diff_mode:
    description: Not used.
    support: none
  action:
    description: Runs on the controller only.
    support: full
  platform:
    description: The controller.
    support: full
    platforms: posix
  action_group:
    description:
      - Use C(group/) and the name of the action group below (C(membership)) in C(module_defaults)
        to set defaults for this module.
    support: full
    membership:
      - rdma.fabric.switch_qos
seealso:
  - module: rdma.fabric.rdma_health
"""

EXAMPLES = r"""
- name: Plan and render the leaf's lossless QoS
  rdma.fabric.switch_qos_plan:
    report_dir: "{{ switch_qos_report_dir }}"
  register: __switch_qos_plan
"""

RETURN = r"""
os:
  description: The switch OS.
  returned: success
  type: str
intent:
  description: The lossless intent the switch renders.
  returned: success
  type: dict
rendered:
  description: The rendering (module steps, AVD structured config, CONFIG_DB tables or NVUE lines).
  returned: success
  type: raw
cli:
  description: The EOS CLI pyavd renders (eos only; null without pyavd).
  returned: success
  type: str
steps:
  description: The Enterprise SONiC module steps by module name (dell_sonic only).
  returned: success
  type: dict
records:
  description: Disagreements between the intent and the hosts' views or the running configuration.
  returned: success
  type: list
  elements: dict
files:
  description: The files written, relative to O(report_dir).
  returned: success
  type: list
  elements: str
summary:
  description: The summary line.
  returned: success
  type: str
nvue_differences:
  description: Each difference from NVIDIA's lossless defaults, explained (cumulus only).
  returned: success
  type: list
  elements: dict
"""

from ansible.module_utils.basic import AnsibleModule


def main():
    module = AnsibleModule(argument_spec=dict(report_dir=dict(type="path"), report_mode=dict(type="raw"),
                                              write=dict(type="bool", default=True)),
                           supports_check_mode=True)
    module.fail_json(msg="rdma.fabric.switch_qos_plan is an action plugin: it runs on the controller")


if __name__ == "__main__":
    main()
