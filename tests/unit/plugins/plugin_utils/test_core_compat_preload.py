# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""rdma.fabric.linear imports the collection's filter and lookup plugins in the main process before
the first fork of a task that may call them (issue 44: the fabric test's workers spent more than
half of their CPU importing them, each by itself)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import sys

import pytest

from ansible_collections.rdma.fabric.plugins.plugin_utils import _core_compat as compat

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))


def test_every_filter_and_lookup_of_the_collection_is_imported_under_the_loaders_name():
    names = compat.preload_filters()
    filters = sorted(f[:-3] for f in os.listdir(os.path.join(REPO, "plugins", "filter"))
                     if f.endswith(".py") and not f.startswith("_"))
    lookups = sorted(f[:-3] for f in os.listdir(os.path.join(REPO, "plugins", "lookup"))
                     if f.endswith(".py") and not f.startswith("_"))
    assert "fabric_test" in filters and "role_spec" in lookups
    assert names == (["ansible_collections.rdma.fabric.plugins.filter." + n for n in filters]
                     + ["ansible_collections.rdma.fabric.plugins.lookup." + n for n in lookups])
    assert all(name in sys.modules for name in names)


def test_a_plugin_that_fails_to_import_is_left_to_the_worker(tmp_path, monkeypatch):
    package = tmp_path / "preload_pkg" / "filter"
    package.mkdir(parents=True)
    (tmp_path / "preload_pkg" / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    (package / "fine.py").write_text("VALUE = 1\n")
    (package / "broken.py").write_text("raise ImportError('a dependency is missing')\n")
    (package / "_private.py").write_text("raise AssertionError('not a plugin: never imported')\n")
    (package / "notes.txt").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert compat.preload_filters("preload_pkg.filter", str(package), lookups=False) == ["preload_pkg.filter.fine"]
    assert compat.preload_filters("preload_pkg.filter", str(tmp_path / "missing"), lookups=False) == []


class _Role(object):
    def __init__(self, name):
        self.name = name

    def get_name(self, include_role_fqcn=True):
        return self.name if include_role_fqcn else self.name.split(".")[-1]


class _Task(object):
    def __init__(self, role=None, args=None, variables=None, when=None, loop=None, action="ansible.builtin.debug"):
        self._role, self.args, self.vars, self.when, self.loop = role, args or {}, variables or {}, when or [], loop
        self.action = action


@pytest.mark.parametrize("task, expected", [
    (_Task(role=_Role("rdma.fabric.fabric_test")), True),
    (_Task(args={"name": "rdma.fabric.health", "tasks_from": "scheduler_gate"}), True),
    # an include of one of its roles: the role's tasks start it when they are queued, not the include
    (_Task(args={"name": "rdma.fabric.health", "tasks_from": "scheduler_gate"}, action="ansible.builtin.include_role"), False),
    (_Task(args={"name": "rdma.fabric.nccl_env"}, action="import_role"), False),
    (_Task(args={"name": "rdma.fabric.health"}, action="include_role",
           variables={"v": "{{ x | rdma.fabric.health_verdicts }}"}), True),
    (_Task(variables={"x": "{{ nodes | rdma.fabric.fabric_test('plan', spec) }}"}), True),
    (_Task(when=["hostvars | rdma.fabric.area_fleet('nccl_env', ansible_play_hosts)"]), True),
    (_Task(loop="{{ raw | rdma.fabric.health_bundle_files }}"), True),
    (_Task(role=_Role("community.general.thing"), args={"msg": "rdma fabric"}), False),
    (_Task(args={"data": "pong"}), False),
])
def test_which_tasks_start_the_import(task, expected):
    assert compat.task_uses_collection(task) is expected


def test_it_can_be_turned_off(monkeypatch):
    monkeypatch.setenv(compat.FILTERS_ENV, "0")
    assert not compat.filters_preload_enabled()
    monkeypatch.setenv(compat.FILTERS_ENV, "1")
    assert compat.filters_preload_enabled()
