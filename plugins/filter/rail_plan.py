# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rail planner's filters (logic in plugin_utils/_rail_plan.py); documentation in the NAME.yml files."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


from ansible_collections.rdma.fabric.plugins.plugin_utils import _rail_plan
from ansible_collections.rdma.fabric.plugins.plugin_utils._filters import wrap


def rail_plan(nodes, pools, scheme="p2p", allocation=None, management=None, release=None, leaf_ports=64,
              oversubscription=1, spine_ports=None, subnet_prefix=None, leaf_name="rail{rail}-leaf{stripe}",
              spine_name="spine{spine}"):
    """Every node's address, peer/gateway, leaf and leaf port on every rail, and the new allocation."""
    return _rail_plan.plan(nodes, pools, scheme=scheme, allocation=allocation, management=management,
                           release=release, leaf_ports=leaf_ports, oversubscription=oversubscription,
                           spine_ports=spine_ports, subnet_prefix=subnet_prefix, leaf_name=leaf_name,
                           spine_name=spine_name)


def rail_switches(nodes, rails, leaf_ports=64, oversubscription=1, spine_ports=None):
    """Host ports, leaves, uplinks and spines of a rail-optimised fabric."""
    return _rail_plan.switch_count(nodes, rails, leaf_ports=leaf_ports, oversubscription=oversubscription,
                                   spine_ports=spine_ports)


def rail_layouts(nodes=64, gpus=8, rail_options=(4, 8), leaf_ports=64, oversubscription=1, spine_ports=None,
                 table=False):
    """Switch counts of several rail counts side by side (a list, or a text table)."""
    entries = _rail_plan.layouts(nodes, gpus, list(rail_options), leaf_ports, oversubscription, spine_ports)
    return _rail_plan.layouts_table(entries) if table else entries


def rail_plan_csv(plan):
    """The plan's table as CSV (for cabling)."""
    return _rail_plan.csv_text(plan)


def rail_plan_table(plan):
    """The plan's table as aligned text, with a summary line."""
    return _rail_plan.text_table(plan)


def rail_plan_svg(plan):
    """The layout as an SVG picture."""
    return _rail_plan.svg(plan)


def _wrap(function):
    return wrap(function, _rail_plan.RailPlanError)


class FilterModule(object):
    def filters(self):
        functions = (rail_plan, rail_switches, rail_layouts, rail_plan_csv, rail_plan_table, rail_plan_svg)
        return dict((function.__name__, _wrap(function)) for function in functions)
