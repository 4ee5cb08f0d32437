"""The area registry (areas/_registry) is the one list of the areas: every role with an area object
is in it and every row is a role with one; every other list derives from it."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import yaml

from ansible_collections.rdma.fabric.plugins.filter import area as area_filter
from ansible_collections.rdma.fabric.plugins.module_utils.areas import _registry
from ansible_collections.rdma.fabric.plugins.module_utils.drift import _drift_areas, _drift_timer, _state_check
from ansible_collections.rdma.fabric.plugins.plugin_utils import _role_specs

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", ".."))
AREAS_DIR = os.path.join(REPO, "plugins", "module_utils", "areas")


def _area_roles():
    """The roles with an area object: roles/NAME with plugins/module_utils/areas/NAME.py."""
    roles = os.listdir(os.path.join(REPO, "roles"))
    return set(r for r in roles if os.path.isfile(os.path.join(AREAS_DIR, r + ".py")))


def test_every_role_with_an_area_is_a_row_and_every_row_is_such_a_role():
    assert _area_roles() == set(_registry.names())
    for area in _registry.AREAS:
        assert os.path.isdir(os.path.join(REPO, "roles", area.name, "meta")), area.name
        assert area.module_name == area.name


def test_a_row_names_an_area_object_that_has_what_its_capabilities_need():
    for area in _registry.AREAS:
        obj = _registry.module(area.name)
        assert obj.NAME == area.name
        assert callable(obj.config_errors)
        assert area.planned in (_registry.NODE, _registry.CONTROLLER, _registry.SWITCH)
        # the fleet comparison is a capability exactly when the object has one
        assert area.fleet == callable(getattr(obj, "fleet", None)), area.name
        if area.planned == _registry.NODE:
            # state_check plans it from the spec: the facts it reads, its requests, a group to map it to
            assert obj.FACTS and callable(obj.drift_requests) and callable(obj.plan) and area.group
        else:
            assert not area.timer and not area.applied, area.name   # the node checks only what it planned
        if area.applied:
            assert callable(obj.apply_requests)
        if area.role_spec:
            assert callable(obj.spec)


def test_a_row_with_a_module_name_is_imported_only_when_asked():
    lazy = [a for a in _registry.AREAS if a.planned != _registry.NODE]
    assert lazy and all(a.module_name == a.name for a in lazy)
    assert [a.name for a in _registry.AREAS if a.planned == _registry.NODE] == list(_drift_areas.NODE_AREAS)


def test_the_lists_of_the_areas_derive_from_the_registry():
    assert _drift_areas.NODE_AREAS == _registry.names(planned="node")
    assert set(_drift_areas.AREA_OBJECTS) == set(_drift_areas.AREAS) == set(_registry.names(planned="node"))
    assert _state_check.APPLIED_AREAS == _registry.names(applied=True) == ("roce_qos", "nccl_env", "gpudirect")
    assert _drift_timer.timer_areas() == _registry.names(timer=True)
    assert set(_role_specs.AREA_OBJECTS) == set(_role_specs.SPECS) == set(_registry.names(role_spec=True))
    assert set(area_filter.AREAS) == set(_registry.names())
    for name, obj in area_filter.AREAS.items():
        assert obj is _registry.module(name)


def test_the_filters_documented_choices_are_the_registrys():
    def choices(name):
        with open(os.path.join(REPO, "plugins", "filter", name + ".yml")) as handle:
            return yaml.safe_load(handle)["DOCUMENTATION"]["options"]["area"]["choices"]
    assert choices("area_errors") == list(_registry.names())
    assert choices("area_fleet") == list(_registry.names(fleet=True))


def test_an_unknown_area_is_an_error_naming_the_areas():
    try:
        _registry.row("roce")
    except KeyError as exc:
        assert "'roce' is not an area" in str(exc) and "roce_qos" in str(exc)
    else:
        raise AssertionError("no error")


def test_the_switch_area_is_planned_per_switch_with_no_node_timer():
    row = _registry.row("switch_qos")
    assert (row.planned, row.timer, row.applied, row.group, row.role_spec) == ("switch", False, False, None, False)
    assert "switch_qos" not in _drift_areas.NODE_AREAS and "switch_qos" not in _drift_timer.timer_areas()


def test_state_checks_docs_name_every_area_planned_on_the_node():
    from ansible_collections.rdma.fabric.plugins.modules import state_check
    areas = yaml.safe_load(state_check.DOCUMENTATION)["options"]["areas"]["description"][0]
    assert all("V(%s)" % name in areas for name in _registry.names(planned="node"))
