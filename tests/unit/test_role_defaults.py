# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Each role's defaults/main.yml says what its meta/argument_specs.yml says (issue 30): the same
variables, and the same default values, so the argument spec stays the one contract. A default
given as a template (resolved at run time from another role's variable or the host's groups)
is the only value allowed to differ from the spec's documented default."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest
import yaml

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
ROLES = sorted(r for r in os.listdir(os.path.join(REPO, "roles"))
               if os.path.exists(os.path.join(REPO, "roles", r, "meta", "argument_specs.yml")))


def _load(role, *path):
    with open(os.path.join(REPO, "roles", role, *path)) as handle:
        return yaml.safe_load(handle) or {}


@pytest.mark.parametrize("role", ROLES)
def test_defaults_match_the_argument_spec(role):
    options = _load(role, "meta", "argument_specs.yml")["argument_specs"]["main"]["options"]
    defaults = _load(role, "defaults", "main.yml")
    assert sorted(set(defaults) - set(options)) == [], "defaults/main.yml variables the argument spec lacks"
    wrong = []
    for name, option in options.items():
        if name not in defaults:
            if "default" in option:
                wrong.append("%s: default %r in the spec, absent from defaults/main.yml" % (name, option["default"]))
            continue
        value = defaults[name]
        if isinstance(value, str) and "{{" in value:
            continue
        if option.get("default") != value:
            wrong.append("%s: spec default %r, defaults/main.yml %r" % (name, option.get("default"), value))
    assert wrong == []


def test_roles_are_checked():
    assert {"roce_qos", "gpudirect", "nccl_env", "opensm", "rails", "health", "nic_firmware"} <= set(ROLES)
