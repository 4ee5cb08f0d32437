# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The attributes every rdma.fabric module shares.

A module extends ``rdma.fabric.attributes`` (action group, platform) and, for what check and
diff mode do, either ``rdma.fabric.resource`` (it changes the node through the resource engine)
or ``rdma.fabric.attributes.read_only``. ansible-core merges each attribute one level deep, the
module's keys winning: a module names its action group's ``membership`` (what
tests/unit/test_runtime.py compares with meta/runtime.yml), its platform's ``description`` and,
where it has more to say than the fragment, its own ``description`` of an attribute.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    DOCUMENTATION = r"""
attributes:
  action_group:
    description:
      - Use C(group/) and the name of the action group below (C(membership)) in C(module_defaults)
        to set defaults for this module.
    support: full
  platform:
    description: Linux hosts.
    support: full
    platforms: posix
"""

    # A module that only reads (facts, checks): nothing differs in check mode, nothing to diff.
    READ_ONLY = r"""
attributes:
  check_mode:
    description: Read-only; runs the same in check mode.
    support: full
  diff_mode:
    description: Read-only; there is nothing to diff.
    support: none
"""
