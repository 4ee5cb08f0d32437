# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rails role's filters (logic in plugin_utils/_rails_role.py); documentation in the NAME.yml files."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


from ansible_collections.rdma.fabric.plugins.plugin_utils import _rails_role
from ansible_collections.rdma.fabric.plugins.plugin_utils._filters import wrap


def rails_config_errors(config, hosts=None):
    """Every problem of the role's variables, each naming the variable and the value."""
    return _rails_role.config_errors(config, hosts)


def rails_interfaces(node_plan, sysctls=None, table_base=100, rule_priority_base=1000, policy_routing=True):
    """One node's rail_addresses config."""
    return _rails_role.interfaces(node_plan, sysctls=sysctls, table_base=table_base,
                                  rule_priority_base=rule_priority_base, policy_routing=policy_routing)


def rails_files(node_plan, config, backend, header="Managed by Ansible (rdma.fabric.rails)"):
    """One node's persistent rail files (node_files entries)."""
    return _rails_role.persistent_files(node_plan, config, backend, header=header)


def rails_verify(node_plan, host, config, live, facts):
    """Findings where the live rail state misses the plan."""
    return _rails_role.verify(host, node_plan, config, live, facts)


def rails_cabling(node_plan, host, neighbors, port_format="swp{port}"):
    """Findings where a rail NIC's LLDP neighbour is not the planned leaf and port."""
    return _rails_role.cabling(host, node_plan, neighbors, port_format=port_format)


def rails_findings_text(records):
    """The findings as one line each."""
    return _rails_role.summary(records)


def rails_nodes(hosts, hostvars):
    """The planner's nodes: each host's rails_nics, else its rdma_facts rails."""
    return _rails_role.nodes(hosts, hostvars)


def rails_lldp_config(config):
    """The rdma.fabric.lldp_dcb gathered config of the rail interfaces."""
    return _rails_role.lldp_config(config)


def rails_neighbors(gathered):
    """lldp_dcb gathered -> {interface: neighbor}."""
    return _rails_role.neighbors(gathered)


def _wrap(function):
    return wrap(function, _rails_role.RailsRoleError)


class FilterModule(object):
    def filters(self):
        functions = (rails_config_errors, rails_interfaces, rails_files, rails_verify, rails_cabling, rails_findings_text, rails_nodes,
                     rails_lldp_config, rails_neighbors)
        return dict((function.__name__, _wrap(function)) for function in functions)
