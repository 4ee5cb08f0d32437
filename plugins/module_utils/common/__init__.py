# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Helpers every job shares: tool calls and the sysfs root, file I/O, what is secret, and the one home of each
value type (PCI address, GUID, DSCP).

- ``_common``  tool invocation (locale, timeouts, ToolError), the sysfs root, PlanError, captured texts
- ``_fileio``  every file written (atomic, no symlink followed) and every file a user names read
- ``_secrets`` the one list of what is secret and the one way to hide it (standard library only)
- ``_bdf``     PCI addresses (domain:bus:device.function): parsed and canonical
- ``_guid``    InfiniBand GUIDs and 64-bit keys: parsed and canonical
- ``_dscp``    DSCP, ToS and ECN arithmetic, mlx5's default DSCP-to-priority map"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type
