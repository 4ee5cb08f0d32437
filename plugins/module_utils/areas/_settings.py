# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What every area object does with its role's variables: the settings (keys without the
role's prefix) from the templated value of every variable of the role's argument spec, the
boolean ones converted as ``| bool`` converts them, a value that is no boolean refused by name."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.module_utils.parsing.convert_bool import boolean

from ansible_collections.rdma.fabric.plugins.module_utils.common._common import PlanError


def flag(name, value):
    """The boolean variable ``name``; null is false; a value that is no boolean (``maybe``:
    the bool filter would make it false) is a PlanError naming the variable and the value."""
    if value is None:
        return False
    try:
        return boolean(value, strict=True)
    except TypeError:
        raise PlanError("%s=%r: expected a boolean (true/false, yes/no, on/off, 1/0)" % (name, value))


def role_settings(variables, prefix, flags):
    """``{key: value}`` of the variables named ``prefix + key``, each of ``flags`` a boolean."""
    out = {}
    for name, value in variables.items():
        if name.startswith(prefix):
            key = name[len(prefix):]
            out[key] = flag(name, value) if key in flags else value
    return out
