#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: rail_addresses
short_description: Manage the live addresses, sysctls and per-rail policy routing of RDMA rail interfaces
version_added: 0.3.0
author: rdma.fabric contributors (@rdma-fabric)
extends_documentation_fragment: [rdma.fabric.attributes, rdma.fabric.resource]
description:
  - Per rail interface, makes the kernel state match O(config) - the addresses (IPv4 and
    IPv6, link-local IPv6 is left alone), the link up, the per-interface IPv4 sysctls a
    multi-NIC RoCE host needs (C(arp_ignore), C(arp_announce), C(rp_filter) under
    C(/proc/sys/net/ipv4/conf/<interface>/)) and, with O(config[].table), source policy
    routing - the rail's connected routes (and a default via O(config[].gateways)) in its own
    table and one C(from ADDRESS lookup TABLE) rule per address, so traffic leaves on the NIC
    that owns its source address even when several rails share a subnet.
  - Reads every interface (C(ip -j addr), C(ip -j rule), C(ip -j route show table T), the
    sysctl files) and plans every change before the first one; a converged node gets the reads
    only. The changes are volatile - the persistent configuration (systemd-networkd or
    NetworkManager files) is written by the M(rdma.fabric.node_files) task of the
    C(rdma.fabric.rails) role.
  - IPv6 addresses are added with C(nodad), so the rule and route that use them as source
    work at once.
options:
  state:
    description:
      - V(merged) adds what is missing and sets the values given; it removes nothing.
      - V(replaced) also removes, per interface listed, the addresses not listed (link-local
        IPv6 excepted), the routes of its O(config[].table) not wanted and the rules that point
        at that table or come from its addresses but are not wanted.
      - V(gathered) returns the state of the interfaces of O(config) (their
        O(config[].interface) and O(config[].table) only); V(rendered) returns the commands
        for O(config) from scratch without touching the host; V(parsed) reads O(running_config).
    type: str
    choices: [merged, replaced, gathered, rendered, parsed]
    default: merged
  running_config:
    description:
      - For O(state=parsed), the output of C(ip -j addr show dev IF), C(ip -j -4 rule show),
        C(ip -j -6 rule show), C(ip -j -4 route show table T), C(ip -j -6 route show table T)
        (one JSON list a line) and C(grep -H . /proc/sys/net/ipv4/conf/IF/{arp_ignore,arp_announce,rp_filter}).
        Text without the address list, or with a line that is neither, is an error.
    type: str
  config:
    description: One entry per rail interface, each interface once.
    type: list
    elements: dict
    suboptions:
      interface:
        description: The netdev of the rail NIC, for example V(enp24s0np0).
        type: str
        required: true
      addresses:
        description: The addresses as C(ADDRESS/PREFIX), IPv4 or IPv6.
        type: list
        elements: str
      link_up:
        description: Whether the link is administratively up.
        type: bool
        default: true
      arp_ignore:
        description: C(net.ipv4.conf.<interface>.arp_ignore) (V(1) - answer ARP only for addresses of this interface).
        type: int
      arp_announce:
        description: C(net.ipv4.conf.<interface>.arp_announce) (V(2) - use the best local source address of this interface).
        type: int
      rp_filter:
        description:
          - C(net.ipv4.conf.<interface>.rp_filter) (V(2) loose, V(0) off - strict V(1) drops
            replies of multi-rail hosts that share a subnet).
        type: int
      table:
        description:
          - Routing table of this rail (1-4294967295 but not 253, 254, 255). Each interface
            gets its own table. Without it no route or rule is managed.
        type: int
      rule_priority:
        description: Priority of the rules of this rail (1-32765); default 1000 + table modulo 30000.
        type: int
      gateways:
        description: A default route via this address in the rail's table, at most one per address family (the leaf).
        type: list
        elements: str
attributes:
  action_group:
    membership:
      - rdma.fabric.rails
  platform:
    description: Linux with iproute2 (C(ip -j), iproute2 4.13 or later).
notes:
  - Needs root (CAP_NET_ADMIN).
seealso:
  - module: rdma.fabric.node_files
  - module: rdma.fabric.rdma_facts
"""

EXAMPLES = r"""
- name: Rail 0 and rail 1 in one subnet each, with their own table and rule
  rdma.fabric.rail_addresses:
    state: replaced
    config:
      - interface: enp24s0np0
        addresses: [10.10.0.1/31]
        arp_ignore: 1
        arp_announce: 2
        rp_filter: 2
        table: 101
      - interface: enp64s0np0
        addresses: [10.10.1.1/31]
        arp_ignore: 1
        arp_announce: 2
        rp_filter: 2
        table: 102
        gateways: [10.10.1.0]

- name: What the rails have now
  rdma.fabric.rail_addresses:
    state: gathered
    config:
      - interface: enp24s0np0
        table: 101
  register: rails_now
"""

RETURN = r"""
before:
  description:
    - Per interface, the state read before any change - C(interface), C(link_up),
      C(addresses) (C(ADDRESS/PREFIX), sorted), C(sysctls) (C(arp_ignore), C(arp_announce),
      C(rp_filter)), C(rules) (C(priority), C(from), C(table)) and C(routes) of the table
      (C(dst) - V(default) or V(default6) for a default route - C(gateway), C(src), C(dev)).
  returned: when state is merged or replaced
  type: list
  elements: dict
  sample:
    - interface: enp24s0np0
      link_up: true
      addresses: [10.10.0.1/31]
      sysctls: {arp_announce: 2, arp_ignore: 1, rp_filter: 2}
      rules: [{priority: 1101, from: 10.10.0.1, table: 101}]
      routes: [{dst: 10.10.0.0/31, gateway: null, src: 10.10.0.1, dev: enp24s0np0}]
commands:
  description: The commands run (or, in check mode, that would run); sysctl writes as C(PATH=VALUE).
  returned: when state is merged or replaced
  type: list
  elements: str
  sample: ["ip addr add 10.10.0.1/31 dev enp24s0np0", "ip -4 rule add priority 1101 from 10.10.0.1 table 101"]
after:
  description: The state of each interface read back after the changes (predicted in check mode), as in RV(before).
  returned: when state is merged or replaced
  type: list
  elements: dict
gathered:
  description: The current state of each interface of O(config), same shape as RV(before).
  returned: when state is gathered
  type: list
  elements: dict
rendered:
  description: The commands for O(config) from scratch.
  returned: when state is rendered
  type: list
  elements: str
parsed:
  description: The state parsed from O(running_config), same keys as one entry of RV(before).
  returned: when state is parsed
  type: dict
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.rdma.fabric.plugins.module_utils.resources._rail_addresses import RailAddressesResource
from ansible_collections.rdma.fabric.plugins.module_utils.resources._resource import MODULE_KWARGS, module_argument_spec, run_module


def argument_spec():
    return module_argument_spec(dict(
        interface=dict(type="str", required=True),
        addresses=dict(type="list", elements="str"),
        link_up=dict(type="bool", default=True),
        arp_ignore=dict(type="int"),
        arp_announce=dict(type="int"),
        rp_filter=dict(type="int"),
        table=dict(type="int"),
        rule_priority=dict(type="int"),
        gateways=dict(type="list", elements="str"),
    ))


def main():
    module = AnsibleModule(argument_spec=argument_spec(), **MODULE_KWARGS)
    run_module(module, RailAddressesResource(module))


if __name__ == "__main__":
    main()
