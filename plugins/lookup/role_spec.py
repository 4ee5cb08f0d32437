# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""rdma.fabric.role_spec: a role's settings dict, files or drift spec, built in Python from the
host's variables (plugins/plugin_utils/_role_specs.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: role_spec
author: rdma.fabric contributors (@rdma-fabric)
short_description: An area object's spec, built from the host's variables
version_added: 0.3.0
description:
  - Returns the spec of an area object (plugins/module_utils/areas/), built in Python from the host's
    variables. The variables read are the options of the role's C(meta/argument_specs.yml), checked as
    the role's argument validation checks them (a refused value is an error naming the variable and the
    value), plus the few the area names from elsewhere (for example C(inventory_hostname)).
  - The roles' C(vars/main.yml) define their C(__AREA_spec) with it (for example C(__roce_qos_spec)), so
    the role's tasks, the drift check and C(playbooks/plan.yml) read the same spec, with one home for
    which variable goes where.
  - It costs less controller CPU than Jinja dict literals. Ansible compiles every template string in
    every forked worker, once per host, and only the variables whose values are templates are templated here.
  - Files are rendered with P(rdma.fabric.role_template#lookup).
  - The names are the areas V(roce_qos), V(nccl_env), V(gpudirect), V(opensm), V(rails) and V(health).
options:
  _terms:
    description: The names, each one of those listed above.
    required: true
    type: list
    elements: str
"""

EXAMPLES = r"""
- name: Show the settings the roce_qos role applies (its defaults and the inventory's values)
  ansible.builtin.debug:
    msg: "{{ lookup('rdma.fabric.role_spec', 'roce_qos').settings }}"
"""

RETURN = r"""
_raw:
  description: The spec of each name, in the order of the terms.
  type: list
  elements: raw
"""

from ansible.errors import AnsibleLookupError
from ansible.plugins.lookup import LookupBase

from ansible_collections.rdma.fabric.plugins.plugin_utils import _role_specs


class LookupModule(LookupBase):
    def run(self, terms, variables=None, **kwargs):
        if kwargs:
            raise AnsibleLookupError("role_spec: takes no options, got %s" % ", ".join(sorted(kwargs)))
        variables = variables or {}
        get = _role_specs.getter(self._templar, variables)
        render = _role_specs.renderer(self._loader, self._templar, variables)
        # build refuses a name it does not know, naming it and the names it knows
        return [_role_specs.build(term, get, render) for term in terms]
