# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The health role: argument spec = defaults/main.yml, every variable prefixed and commented,
and the checks the role builds from its variables are accepted by the judge."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

import yaml

from ansible_collections.rdma.fabric.plugins.module_utils.reports import _health

ROLE = os.path.join(os.path.dirname(__file__), "..", "..", "roles", "health")
TYPES = {"str": str, "int": int, "bool": bool, "list": list, "dict": dict, "float": (int, float)}


def _load(*parts):
    with open(os.path.join(ROLE, *parts)) as handle:
        return yaml.safe_load(handle)


DEFAULTS = _load("defaults", "main.yml")
OPTIONS = _load("meta", "argument_specs.yml")["argument_specs"]["main"]["options"]


def test_spec_matches_defaults():
    assert sorted(DEFAULTS) == sorted(OPTIONS)
    for name, spec in OPTIONS.items():
        assert spec.get("default") == DEFAULTS[name], name
        if DEFAULTS[name] is not None:
            assert isinstance(DEFAULTS[name], TYPES[spec["type"]]), name
        if "choices" in spec and DEFAULTS[name] is not None:
            assert DEFAULTS[name] in spec["choices"], name


def test_names_are_prefixed_and_commented():
    with open(os.path.join(ROLE, "defaults", "main.yml")) as handle:
        lines = handle.read().splitlines()
    for name in DEFAULTS:
        assert name.startswith("health_") and not name.startswith("health_gate_"), name
        index = [i for i, line in enumerate(lines) if re.match(r"^%s:" % name, line)][0]
        above = [line for line in lines[:index] if line.strip()]
        assert above[-1].startswith("#") or re.match(r"^health_\w+:", above[-1]), name


def test_default_thresholds_and_models_are_valid_checks():
    checks = dict(DEFAULTS["health_thresholds"], gpu_models=DEFAULTS["health_gpu_models"],
                  nic_models=DEFAULTS["health_nic_models"], ignore_devices=[], sm=True, sm_priority=None, gdr=True,
                  dmabuf_enable=None)
    merged = _health.merge_checks(checks)
    assert merged["gpu_models"]["H100"] == {"ports": 8, "min_rate_gbps": 400}
