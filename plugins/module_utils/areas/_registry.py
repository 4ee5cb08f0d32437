# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The areas, one row each: the only list of them. An area is a role with an area object
(``areas/NAME.py``, the role ``roles/NAME``, its spec ``lookup('rdma.fabric.role_spec', NAME)``
and ``__NAME_spec``); the row says what the collection does with it:

- ``planned``: ``node`` (the drift check's ``state_check`` plans it on the node from the spec the
  role leaves there, ``areas/_spec``), ``controller`` (the role plans it per host on the controller
  through the ``rdma.fabric.area_*`` filters) or ``switch`` (planned on the controller per switch);
- ``applied``: ``state_check``'s ``apply`` converges it in the same call (site.yml's one call);
- ``fleet``: it compares the plans of the play's hosts (``area_fleet``, the module's ``fleet``);
- ``timer``: the node's periodic drift check (``drift/_drift_timer``) checks it against its spec;
- ``group``: the inventory group the drift check maps it to (``drift_check``'s ``area_groups``);
- ``role_spec``: its spec is built from the role's argument spec (``plugin_utils/_role_specs``).

The filters (``plugins/filter/area.py``), the role specs (``_role_specs``), the drift check
(``drift/_drift_areas``, ``_state_check``) and the node's timer derive their lists from here. An
area planned on the node is imported here (``state_check`` and the node's timer carry it, and
nothing else); the others are imported on first use, on the controller. Standard library only.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import importlib

from ansible_collections.rdma.fabric.plugins.module_utils.areas import gpudirect, nccl_env, nic_firmware, opensm, roce_qos

NODE, CONTROLLER, SWITCH = "node", "controller", "switch"
_PACKAGE = "ansible_collections.rdma.fabric.plugins.module_utils.areas"


class Area(object):
    """One area's row. ``module`` is the area object (a module), or its name under ``areas/``
    for an area that is not planned on the node (imported on first use)."""

    __slots__ = ("name", "module", "planned", "applied", "fleet", "timer", "group", "role_spec")

    def __init__(self, name, module, planned, applied=False, fleet=False, timer=False, group=None, role_spec=True):
        self.name, self.module, self.planned = name, module, planned
        self.applied, self.fleet, self.timer, self.group, self.role_spec = applied, fleet, timer, group, role_spec

    def __repr__(self):
        shown = [(k, self.module_name if k == "module" else getattr(self, k)) for k in self.__slots__]
        return "Area(%s)" % ", ".join("%s=%r" % item for item in shown)

    @property
    def module_name(self):
        return self.module if isinstance(self.module, str) else self.module.__name__.rsplit(".", 1)[-1]


# In the order the drift check plans and applies them (OpenSM first: an InfiniBand port stays
# INIT until a subnet manager has swept the fabric).
AREAS = (
    Area("opensm", opensm, NODE, timer=True, group="sm_nodes"),
    Area("roce_qos", roce_qos, NODE, applied=True, timer=True, group="roce_nodes"),
    Area("nccl_env", nccl_env, NODE, applied=True, fleet=True, timer=True, group="gpu_nodes"),
    Area("gpudirect", gpudirect, NODE, applied=True, timer=True, group="gpu_nodes"),
    Area("nic_firmware", nic_firmware, NODE, fleet=True, timer=True, group="firmware_nodes"),
    Area("health", "health", CONTROLLER),
    Area("rails", "rails", CONTROLLER),
    Area("fabric_test", "fabric_test", CONTROLLER),
    Area("switch_qos", "switch_qos", SWITCH, role_spec=False),
)
_BY_NAME = dict((area.name, area) for area in AREAS)


def names(**capabilities):
    """The names of the areas whose row has every one of ``capabilities`` (``planned="node"``,
    ``applied=True``, ...), in the table's order."""
    return tuple(area.name for area in AREAS
                 if all(getattr(area, key) == value for key, value in capabilities.items()))


def row(name):
    """The area's row; KeyError naming the areas there are."""
    if name not in _BY_NAME:
        raise KeyError("%r is not an area (one of %s)" % (name, ", ".join(sorted(_BY_NAME))))
    return _BY_NAME[name]


def module(name):
    """The area object of ``name`` (imported on first use for an area not planned on the node)."""
    area = row(name)
    if isinstance(area.module, str):
        area.module = importlib.import_module("%s.%s" % (_PACKAGE, area.module))
    return area.module


def modules(**capabilities):
    """``{name: area object}`` of the areas with ``capabilities``."""
    return dict((name, module(name)) for name in names(**capabilities))
