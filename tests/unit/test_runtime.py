# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""meta/runtime.yml action_groups: every module is in a group, every member exists, and each
module's ``action_group`` attribute names exactly the groups it is in (what ansible-doc shows)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import importlib
import os

import pytest
import yaml

TOP = os.path.join(os.path.dirname(__file__), "..", "..")
MODULES = sorted(name[:-3] for name in os.listdir(os.path.join(TOP, "plugins", "modules"))
                 if name.endswith(".py") and not name.startswith("_"))

with open(os.path.join(TOP, "meta", "runtime.yml")) as handle:
    RUNTIME = yaml.safe_load(handle)
GROUPS = RUNTIME.get("action_groups") or {}


def _short(member):
    """A group member as a module short name; FQCNs of this collection are accepted."""
    assert isinstance(member, str), "action_groups: %r is not a module name" % (member,)
    return member[len("rdma.fabric."):] if member.startswith("rdma.fabric.") else member


def test_groups_exist():
    assert GROUPS, "meta/runtime.yml has no action_groups"
    for group, members in GROUPS.items():
        assert isinstance(members, list) and members, "action_groups.%s is empty" % group


@pytest.mark.parametrize("group", sorted(GROUPS))
def test_every_member_exists(group):
    for member in GROUPS[group]:
        assert _short(member) in MODULES, "action_groups.%s: no module %r in plugins/modules" % (group, member)


@pytest.mark.parametrize("name", MODULES)
def test_every_module_in_a_group(name):
    groups = [group for group, members in GROUPS.items() if name in map(_short, members)]
    assert groups, "module %s is in no action group of meta/runtime.yml" % name


@pytest.mark.parametrize("name", MODULES)
def test_action_group_attribute(name):
    module = importlib.import_module("ansible_collections.rdma.fabric.plugins.modules." + name)
    doc = yaml.safe_load(module.DOCUMENTATION)
    attribute = (doc.get("attributes") or {}).get("action_group")
    assert attribute, "%s has no action_group attribute" % name
    want = sorted("rdma.fabric." + group for group, members in GROUPS.items() if name in map(_short, members))
    assert sorted(attribute.get("membership") or []) == want, "%s: action_group membership %r, runtime.yml says %r" % (
        name, attribute.get("membership"), want)
