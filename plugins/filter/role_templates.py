# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""role_templates: the templates directory of one of this collection's roles, so that a role's
vars render its templates the same from any task (the role's own, or the drift check's, which
is not in the role and whose template search path does not hold the role's templates)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

from ansible.errors import AnsibleFilterError

ROLES_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "roles")
_ROLE = re.compile(r"[a-z][a-z0-9_]*")


def role_templates(role):
    if not isinstance(role, str) or not _ROLE.fullmatch(role):
        raise AnsibleFilterError("role_templates: expected the name of a role of rdma.fabric, got %r" % (role,))
    path = os.path.join(ROLES_DIR, role, "templates")
    if not os.path.isdir(path):
        raise AnsibleFilterError("role_templates: rdma.fabric has no role %r with templates (looked in %s)"
                                 % (role, path))
    return path


class FilterModule(object):
    def filters(self):
        return {"role_templates": role_templates}
