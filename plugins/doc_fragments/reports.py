# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The options and attributes every fleet report writer shares (drift_report, health_report)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    DOCUMENTATION = r"""
options:
  report_dir:
    description:
      - Directory for the reports, created with mode C(0750) when missing.
      - Each file is written atomically (a temporary file in the same directory, its mode set on
        the open descriptor, fsync, rename), so a reader never sees half a report and no
        symlink in the directory is followed.
    type: path
    required: true
  report_mode:
    description:
      - Mode of the report files, whatever the umask, as an octal string.
      - When not given, the inventory variable C(rdma_fabric_report_mode), else C(0640), since
        the reports name hosts, devices and settings and are not for every local user.
    type: raw
  title:
    description:
      - The heading printed above the table; by default the report's name, C(rdma.fabric drift check)
        or C(rdma.fabric fabric health).
    type: str
attributes:
  check_mode:
    description: Writes the reports in check mode too.
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
"""
