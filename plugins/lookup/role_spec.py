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
short_description: A role's settings dict, files or drift spec, built from the host's variables
version_added: 0.3.0
description:
  - Returns one of the dicts or lists the rdma.fabric roles read their variables through, built
    in Python from the host's variables. The roles' C(vars/main.yml) define their private
    variables with it (for example C(__roce_qos_settings) and C(__roce_qos_drift_spec)), so the
    role's tasks and the drift check read the same dicts, with one home for which variable
    goes where.
  - It costs less controller CPU than the Jinja dict literals it replaces. Ansible compiles
    every template string in every forked worker, once per host, and only the variables whose
    values are templates are templated here.
  - Files are rendered with P(rdma.fabric.role_template#lookup).
  - "The names are V(roce_qos_settings), V(roce_qos_files), V(roce_qos_units), V(roce_qos_drift_spec),
    V(nccl_env) (the nccl_env area object's spec) and V(gpudirect) (the gpudirect area object's spec)."
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
    msg: "{{ lookup('rdma.fabric.role_spec', 'roce_qos_settings') }}"
"""

RETURN = r"""
_raw:
  description: The dict or list of each name, in the order of the terms.
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
