# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The nccl_env role's argument spec documents exactly the variables and defaults of
defaults/main.yml, and every public variable is prefixed and commented."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

import yaml

ROLE = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "roles", "nccl_env")


def _load(*parts):
    with open(os.path.join(ROLE, *parts)) as handle:
        return yaml.safe_load(handle)


DEFAULTS = _load("defaults", "main.yml")
OPTIONS = _load("meta", "argument_specs.yml")["argument_specs"]["main"]["options"]
TYPES = {"str": str, "path": str, "int": int, "bool": bool, "list": list, "dict": dict}


def test_every_default_is_documented_and_every_option_has_a_default_entry():
    assert sorted(DEFAULTS) == sorted(OPTIONS)


# Defaults computed from another role's variable, and what they resolve to without it.
TEMPLATED = {"nccl_env_roce_dscp": ("{{ roce_qos_roce_dscp | default(26) }}", 26)}


def test_defaults_match_the_spec():
    for name, spec in OPTIONS.items():
        if name in TEMPLATED:
            assert DEFAULTS[name] == TEMPLATED[name][0] and spec.get("default") == TEMPLATED[name][1], name
            continue
        assert spec.get("default") == DEFAULTS[name], name
        if DEFAULTS[name] is not None and spec["type"] in TYPES:
            assert isinstance(DEFAULTS[name], TYPES[spec["type"]]), name
        if "choices" in spec and DEFAULTS[name] is not None:
            assert DEFAULTS[name] in spec["choices"], name


def test_names_are_prefixed_and_commented():
    with open(os.path.join(ROLE, "defaults", "main.yml")) as handle:
        lines = handle.read().splitlines()
    for name in DEFAULTS:
        assert name.startswith("nccl_env_"), name
        index = [i for i, line in enumerate(lines) if re.match(r"^%s:" % name, line)][0]
        above = [line for line in lines[:index] if line.strip()]
        # the nearest non-blank line above is a comment, or another variable of a commented pair
        assert above[-1].startswith("#") or re.match(r"^nccl_env_\w+:", above[-1]), name


TAGS = {"nccl_env_preflight", "nccl_env_gather", "nccl_env_fleet", "nccl_env_render", "nccl_env_verify"}


def test_private_variables_are_double_underscored():
    names = set()
    for folder in ("tasks", "vars"):
        for filename in os.listdir(os.path.join(ROLE, folder)):
            with open(os.path.join(ROLE, folder, filename)) as handle:
                # role_spec lookup names are not variables
                text = re.sub(r"lookup\('rdma\.fabric\.role_spec', '\w+'\)", "", handle.read())
                names.update(re.findall(r"\b(_*nccl_env_\w+)", text))
    stray = sorted(name for name in names if not name.startswith("__nccl_env_") and name not in DEFAULTS and name not in TAGS)
    assert stray == []
