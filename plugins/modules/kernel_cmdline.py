#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: kernel_cmdline
short_description: Ensure kernel command line arguments in the boot configuration
version_added: 0.1.0
author: rdma.fabric contributors (@rdma-fabric)
extends_documentation_fragment: [rdma.fabric.attributes, rdma.fabric.resource]
description:
  - Ensures kernel arguments are present (with their value) or absent in the boot
    configuration, idempotently, keeping every other argument and its quoting.
  - Debian/Ubuntu (I(backend=grub)) edits C(GRUB_CMDLINE_LINUX) in O(grub_file) and in the
    C(<grub_file>.d/*.cfg) drop-ins that C(grub-mkconfig) sources after it, then runs
    O(update_command) only when a file changed. C(GRUB_CMDLINE_LINUX_DEFAULT) is never touched.
  - "Before the first write it creates C(<grub_file>.rdma-fabric-update-pending), and removes it once
    O(update_command) succeeded: a run killed (or a node losing power) in between leaves it, and the
    next run runs O(update_command) again although the files already hold the arguments (RV(before)
    then has C(boot_loader_update_pending=true)). Without it the files would look done while the
    generated boot configuration, what the node boots, never got the arguments."
  - "When a drop-in sets C(GRUB_CMDLINE_LINUX) again without building on C($GRUB_CMDLINE_LINUX),
    the value in O(grub_file) is dead; the module then edits the drop-in (the assignment
    grub-mkconfig really uses) and says so in RV(notes). Drop-ins that append
    (C(GRUB_CMDLINE_LINUX=\"$GRUB_CMDLINE_LINUX ...\")) are edited where the argument is, new
    arguments go to the last assignment."
  - RHEL family (I(backend=grubby)) reads C(grubby --info=ALL) and runs
    C(grubby --update-kernel=ALL --remove-args=... --args=...) (BLS entries) when an entry differs.
  - "Repeated arguments: C(pci=) arguments add up in the kernel, so wanted C(pci) sub-options are
    merged into the existing ones (identity is the text before C(=): C(realloc) and C(realloc=off)
    are the same sub-option), keeping the others; when a change is needed all C(pci=) words are
    folded into one. Any other name is single-valued (the kernel keeps the last occurrence):
    V(present) leaves exactly one occurrence, replacing the last one in place."
  - "A value holding C(;) (C(disable_acs_redir=A;B)) is written inside GRUB double quotes
    (C(\\\"pci=...;...\\\") in C(/etc/default/grub), C(\"pci=...;...\") in BLS options): grub.cfg and
    BLS options are read by GRUB's script lexer, where an unquoted C(;) ends the command and
    silently cuts the kernel command line. GRUB and the kernel both drop those quotes."
  - Validates the values it knows and refuses malformed ones before any write - C(pci=)
    sub-options (C(disable_acs_redir=<pci_dev>[;<pci_dev>]*), C(config_acs=<flags>@<pci_dev>[;...]),
    C(realloc[=on|off]), C(noats), ...), C(iommu=), C(intel_iommu=), C(amd_iommu=),
    C(iommu.passthrough=), C(iommu.strict=). The often quoted C(pci=realloc,disable_acs_redir)
    has no device list and is refused.
  - Returns RV(reboot_required) by comparing the wanted arguments with the running command line.
  - C(changed) compares RV(before) with RV(after) as read back from the boot configuration.
options:
  arguments:
    description:
      - Kernel arguments to manage.
    type: list
    elements: dict
    required: true
    suboptions:
      name:
        description:
          - Parameter name, without C(=) (for example C(pci), C(iommu), C(intel_iommu), C(quiet)).
        type: str
        required: true
      value:
        description:
          - Value after C(=). Omit for a bare flag such as C(quiet).
          - For O(arguments[].name=pci), a comma list of sub-options.
          - With O(arguments[].state=absent), only occurrences with this value are removed
            (for C(pci), the listed sub-options; a sub-option without C(=) matches any value of it).
        type: str
      state:
        description:
          - Whether the argument must be present (with O(arguments[].value)) or absent.
        type: str
        choices: [present, absent]
        default: present
  backend:
    description:
      - How the boot configuration is edited. V(auto) uses V(grubby) when C(grubby) is installed,
        else V(grub).
    type: str
    choices: [auto, grub, grubby]
    default: auto
  grub_file:
    description:
      - GRUB defaults file (V(grub) backend). Drop-ins are read from C(<grub_file>.d/*.cfg).
    type: path
    default: /etc/default/grub
  update_command:
    description:
      - Command regenerating grub.cfg after a change (V(grub) backend). Default C(update-grub),
        else C(grub-mkconfig -o /boot/grub/grub.cfg), else C(grub2-mkconfig -o /boot/grub2/grub.cfg).
    type: list
    elements: str
  backup:
    description:
      - Keep a timestamped copy (C(<file>.<pid>.<date>~)) of every GRUB defaults file before changing it.
      - When the boot-loader update (O(update_command)) fails, the previous text of every file written is put
        back in place (atomically) whatever this says, the backup is kept, and the message says both.
    type: bool
    default: true
  proc_cmdline:
    description:
      - Running kernel command line, compared with the wanted arguments for RV(reboot_required).
    type: path
    default: /proc/cmdline
attributes:
  action_group:
    membership:
      - rdma.fabric.gpudirect
  check_mode:
    description: Computes the new files, commands and RV(reboot_required) without writing.
  diff_mode:
    description: Shows RV(before) and RV(after) (the kernel arguments, per grubby entry with grubby).
  platform:
    description: Linux hosts booting with GRUB 2 (Debian family) or grubby/BLS (RHEL family).
notes:
  - The kernel compares parameter names exactly for C(pci=), C(iommu=) and the like; this module
    does too (C(intel-iommu) is not C(intel_iommu)).
  - Values holding quotes, backslashes, C($), backquotes or whitespace are refused.
"""

EXAMPLES = r"""
- name: IOMMU passthrough and ACS redirect off on the switch ports between GPUs and NICs
  rdma.fabric.kernel_cmdline:
    arguments:
      - name: iommu
        value: pt
      - name: pci
        value: "disable_acs_redir=0000:17:00.0;0000:18:00.0"
  register: cmdline

- name: Drop an argument, keep the other pci= sub-options
  rdma.fabric.kernel_cmdline:
    arguments:
      - name: pci
        value: noats
        state: absent
      - name: intel_iommu
        state: absent
"""

RETURN = r"""
before:
  description: Arguments before (the effective C(GRUB_CMDLINE_LINUX), or per grubby entry).
  returned: always
  type: dict
  contains:
    arguments:
      description: Kernel words (quoting removed), in order; for grubby, those of the first entry.
      type: list
      elements: str
    entries:
      description: grubby only; per kernel entry, C(kernel) and C(arguments).
      type: list
      elements: dict
  sample: {"arguments": ["console=tty0", "iommu=pt"]}
after:
  description: Arguments after the change (predicted in check mode), same layout as RV(before).
  returned: always
  type: dict
commands:
  description:
    - Commands run (or that would run in check mode), in order - the grubby calls, or the GRUB defaults
      files written (C(write PATH)) and the grub.cfg update.
  returned: always
  type: list
  elements: str
  sample: ["write /etc/default/grub", "/usr/sbin/update-grub"]
changed_files:
  description: GRUB defaults files written (or that would be in check mode).
  returned: always
  type: list
  elements: str
backup_files:
  description: Backup copies made with O(backup=true).
  returned: when backups were made
  type: list
  elements: str
reboot_required:
  description: True when the running kernel command line (O(proc_cmdline)) lacks the effect of a wanted argument.
  returned: always
  type: bool
running:
  description: Arguments not yet in effect in the running kernel.
  returned: always
  type: list
  elements: dict
notes:
  description: Remarks on what was edited where (for example a drop-in overriding O(grub_file)).
  returned: always
  type: list
  elements: str
backend:
  description: Backend used.
  returned: always
  type: str
  sample: grub
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.rdma.fabric.plugins.module_utils.resources._kernel_cmdline import KernelCmdlineResource
from ansible_collections.rdma.fabric.plugins.module_utils.resources._resource import run_resource


def main():
    module = AnsibleModule(
        argument_spec=dict(
            arguments=dict(type="list", elements="dict", required=True, options=dict(
                name=dict(type="str", required=True),
                value=dict(type="str"),
                state=dict(type="str", choices=["present", "absent"], default="present"),
            )),
            backend=dict(type="str", choices=["auto", "grub", "grubby"], default="auto"),
            grub_file=dict(type="path", default="/etc/default/grub"),
            update_command=dict(type="list", elements="str"),
            backup=dict(type="bool", default=True),
            proc_cmdline=dict(type="path", default="/proc/cmdline"),
        ),
        supports_check_mode=True,
    )
    run_resource(module, KernelCmdlineResource(module), "merged", dict(module.params))


if __name__ == "__main__":
    main()
