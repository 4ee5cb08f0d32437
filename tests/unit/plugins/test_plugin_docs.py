# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every module's DOCUMENTATION, EXAMPLES and RETURN, and every filter's doc file, is YAML that
parses to what ansible-doc needs (a plain scalar with ': ' in it silently breaks a page)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import importlib
import os

import pytest
import yaml

PLUGINS = os.path.join(os.path.dirname(__file__), "..", "..", "..", "plugins")
MODULES = sorted(name[:-3] for name in os.listdir(os.path.join(PLUGINS, "modules"))
                 if name.endswith(".py") and not name.startswith("_"))
FILTER_DOCS = sorted(name for name in os.listdir(os.path.join(PLUGINS, "filter")) if name.endswith(".yml"))


def _descriptions(options, path):
    for name, option in (options or {}).items():
        assert option.get("description"), "%s.%s has no description" % (path, name)
        _descriptions(option.get("suboptions"), "%s.%s" % (path, name))


@pytest.mark.parametrize("name", MODULES)
def test_module_docs_parse(name):
    module = importlib.import_module("ansible_collections.rdma.fabric.plugins.modules." + name)
    doc = yaml.safe_load(module.DOCUMENTATION)
    assert doc["module"] == name and doc["short_description"] and doc["description"]
    _descriptions(doc.get("options"), name)
    assert isinstance(yaml.safe_load(module.EXAMPLES), list)
    returns = yaml.safe_load(module.RETURN)
    assert returns is None or all(entry.get("description") for entry in returns.values())


@pytest.mark.parametrize("name", FILTER_DOCS)
def test_filter_docs_parse(name):
    with open(os.path.join(PLUGINS, "filter", name)) as handle:
        doc = yaml.safe_load(handle)
    assert doc["DOCUMENTATION"]["name"] == name[:-4]
    _descriptions(doc["DOCUMENTATION"].get("options"), name)
    assert doc["RETURN"]["_value"]["description"]
