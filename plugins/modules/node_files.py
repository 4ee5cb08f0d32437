#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: node_files
short_description: Install the files and systemd units a role needs in one task, writing only what differs
version_added: 0.2.0
author: rdma.fabric contributors (@rdma-fabric)
extends_documentation_fragment: [rdma.fabric.attributes, rdma.fabric.resource]
description:
  - Reads every file in O(files) (stat and content) and the state of every unit in O(units)
    (one C(systemctl is-enabled) and one C(systemctl is-active) call for all of them),
    compares them with what is wanted and changes only what differs. A converged node gets
    the reads only.
  - Files are written atomically (a temporary file in the same directory, fsync, mode and
    owner set, then rename). A reader never sees half a file, and a failed write leaves the
    previous file in place. Missing parent directories are created (mode 0755).
  - When a unit file under C(/etc/systemd/system) (or another unit directory) is written or
    removed, C(systemctl daemon-reload) runs before any unit is enabled or started.
  - Without systemd running (a container without an init), files are still installed and
    units are reported as not managed, with a warning.
options:
  files:
    description: The files to install or remove, each path once.
    type: list
    elements: dict
    default: []
    suboptions:
      path:
        description: Absolute, normalised path of the file.
        type: str
        required: true
      content:
        description: The whole content (UTF-8), for example from C(lookup('ansible.builtin.template', ...)).
        type: str
      state:
        description: V(present) writes O(files[].content); V(absent) removes the file.
        type: str
        choices: [present, absent]
        default: present
      mode:
        description:
          - Octal mode of the file as a quoted string, for example V('0755').
          - An unquoted number whose digits are all octal is refused as ambiguous (V(644) is the number 644,
            mode 1204, and YAML reads an unquoted V(0644) as 420). Quote the mode.
        type: raw
        default: "0644"
      owner:
        description: Owner of the file.
        type: str
        default: root
      group:
        description: Group of the file.
        type: str
        default: root
  units:
    description: systemd units to enable or disable, start or stop, each unit once.
    type: list
    elements: dict
    default: []
    suboptions:
      name:
        description: The unit name, for example V(rdma-fabric-acs.service).
        type: str
        required: true
      enabled:
        description: Whether the unit is enabled; unset leaves it as it is.
        type: bool
      active:
        description: Whether the unit runs now (V(true) starts it, V(false) stops it); unset leaves it.
        type: bool
  state:
    description:
      - V(merged) makes the node match O(files) and O(units); V(gathered) only reads them.
    type: str
    choices: [merged, gathered]
    default: merged
attributes:
  action_group:
    membership:
      - rdma.fabric.node
  diff_mode:
    description: Returns the state before and after, with the text of files up to 64 KiB.
  platform:
    description: Linux; units need systemd.
seealso:
  - module: ansible.builtin.copy
  - module: ansible.builtin.systemd_service
"""

EXAMPLES = r"""
- name: Install the ACS boot script and its unit, enabled
  rdma.fabric.node_files:
    files:
      - path: /usr/local/sbin/rdma-fabric-acs
        content: "{{ lookup('ansible.builtin.template', 'rdma-fabric-acs.sh.j2') }}"
        mode: "0755"
      - path: /etc/systemd/system/rdma-fabric-acs.service
        content: "{{ lookup('ansible.builtin.template', 'rdma-fabric-acs.service.j2') }}"
      - path: /etc/rdma-fabric/obsolete.conf
        state: absent
    units:
      - name: rdma-fabric-acs.service
        enabled: true
"""

RETURN = r"""
before:
  description:
    - What was read before any change. C(files) maps each path to C(state) (present or
      absent) and, when present, C(checksum) (SHA-256), C(mode), C(owner), C(group) (and
      C(content) in diff mode); C(units) maps each unit to C(enabled), C(active) and the
      word systemctl printed (C(unit_state)).
  returned: always, except with state gathered
  type: dict
  sample: {"files": {"/etc/nccl.conf": {"state": "absent"}}, "units": {}}
commands:
  description: What was done (or, in check mode, would be done), in order.
  returned: always, except with state gathered
  type: list
  elements: str
  sample: ["write /etc/nccl.conf (mode 0644, root:root)", "systemctl daemon-reload",
           "systemctl enable rdma-fabric-acs.service"]
after:
  description: The state read back after the changes (predicted in check mode); same shape as RV(before).
  returned: always, except with state gathered
  type: dict
gathered:
  description: The state read, same shape as RV(before).
  returned: when state is gathered
  type: dict
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.rdma.fabric.plugins.module_utils.resources._node_files import NodeFilesResource
from ansible_collections.rdma.fabric.plugins.module_utils.resources._resource import run_resource


def argument_spec():
    return dict(
        files=dict(type="list", elements="dict", default=[], options=dict(
            path=dict(type="str", required=True),
            content=dict(type="str", no_log=False),
            state=dict(type="str", choices=["present", "absent"], default="present"),
            mode=dict(type="raw", default="0644"),
            owner=dict(type="str", default="root"),
            group=dict(type="str", default="root"),
        )),
        units=dict(type="list", elements="dict", default=[], options=dict(
            name=dict(type="str", required=True),
            enabled=dict(type="bool"),
            active=dict(type="bool"),
        )),
        state=dict(type="str", choices=["merged", "gathered"], default="merged"),
    )


def main():
    module = AnsibleModule(argument_spec=argument_spec(), supports_check_mode=True)
    params = module.params
    run_resource(module, NodeFilesResource(module), params["state"],
                 {"files": params["files"], "units": params["units"]})


if __name__ == "__main__":
    main()
