# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rail planner, on the controller (netaddr): addresses, leaves and leaf ports of every
node on every rail, kept stable by an allocation the operator stores with the inventory, and
the switch count of a rail-optimised leaf/spine fabric.

Rail *r* of every node is its *r*-th rail NIC (``rdma_facts`` rails are in GPU order) and goes
to a leaf of rail *r*. A node's *slot* (allocated once, recorded) picks its stripe
(``slot // host_ports_per_leaf``: the same leaf index on every rail) and its leaf port
(``slot % host_ports_per_leaf + 1``).

Schemes:

- ``p2p`` (``p2p31`` for IPv4, ``p2p127`` for IPv6): one /31 (/127) per node and rail out of the
  rail's pool, the leaf on the even address, the NIC on the odd one; the leaf is peer and gateway.
- ``shared``: one subnet per rail and stripe (the stripe-th subnet of ``subnet_prefix`` in the
  rail's pool; default the smallest IPv4 subnet that holds a leaf's host ports and the
  gateway, /64 for IPv6); the gateway is the subnet's first address, the nodes follow.

The allocation (``{"version": 1, "scheme": ..., "pools": [...], "nodes": {NAME: {"slot": N,
"rails": ["ADDR/PREFIX", ...]}}}``) is the record: recorded addresses never change; a new node
gets the lowest free slot and the lowest free address of its rail (and stripe); a node that left
the inventory keeps its record until it is named in ``release``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import math
import re

from xml.sax.saxutils import escape

try:
    import netaddr
except ImportError:  # pragma: no cover - netaddr is in requirements.txt
    netaddr = None

SCHEMES = ("p2p", "p2p31", "p2p127", "shared")
ALLOCATION_VERSION = 1


class RailPlanError(ValueError):
    """Bad input or an impossible plan; the message names the field and the value."""


def natural_key(name):
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", str(name))]


def _need_netaddr():
    if netaddr is None:
        raise RailPlanError("the rail planner needs the Python library netaddr on the controller "
                            "(pip install netaddr)")


def _network(value, field):
    _need_netaddr()
    if not isinstance(value, str) or "/" not in value:
        raise RailPlanError("%s: expected a network in CIDR form (10.0.0.0/24, fd00::/48), got %r" % (field, value))
    try:
        net = netaddr.IPNetwork(value)
    except (netaddr.AddrFormatError, ValueError, TypeError):
        raise RailPlanError("%s: %r is not a network in CIDR form" % (field, value))
    if net.ip != net.network:
        raise RailPlanError("%s: %r has host bits set (the network is %s)" % (field, value, net.cidr))
    return net.cidr


def _interface(value, field):
    _need_netaddr()
    if not isinstance(value, str) or "/" not in value:
        raise RailPlanError("%s: expected ADDRESS/PREFIX, got %r" % (field, value))
    try:
        return netaddr.IPNetwork(value)
    except (netaddr.AddrFormatError, ValueError, TypeError):
        raise RailPlanError("%s: %r is not an ADDRESS/PREFIX" % (field, value))


def _positive_int(value, field, minimum=1):
    if isinstance(value, str) and re.fullmatch(r"[0-9]+", value.strip()):
        value = int(value.strip())
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise RailPlanError("%s: expected an integer >= %d, got %r" % (field, minimum, value))
    return value


def _ratio(value, field):
    if isinstance(value, bool):
        raise RailPlanError("%s: expected a number >= 1 (3 for 3:1), got %r" % (field, value))
    if isinstance(value, str):
        text = value.strip()
        match = re.fullmatch(r"(\d+(?:\.\d+)?)(?::(\d+(?:\.\d+)?))?", text)
        if not match:
            raise RailPlanError("%s: expected a number >= 1 or N:M, got %r" % (field, value))
        number = float(match.group(1)) / float(match.group(2) or 1)
    else:
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise RailPlanError("%s: expected a number >= 1 (3 for 3:1), got %r" % (field, value))
    if not math.isfinite(number) or number < 1:
        raise RailPlanError("%s: expected a number >= 1 (3 for 3:1), got %r" % (field, value))
    return number


# --------------------------------------------------------------------------- switch counting

def leaf_split(leaf_ports, oversubscription=1):
    """Host ports and uplink ports of one leaf: host/uplink <= oversubscription, ports all used."""
    ports = _positive_int(leaf_ports, "leaf_ports", 2)
    ratio = _ratio(oversubscription, "oversubscription")
    hosts = int(math.floor(ports * ratio / (ratio + 1) + 1e-9))
    return hosts, ports - hosts


def switch_count(nodes, rails, leaf_ports=64, oversubscription=1, spine_ports=None):
    """Leaves, uplinks and spines of a rail-optimised two-tier fabric.

    Per rail ``nodes`` host ports (one NIC of every node). A leaf of P ports at r:1 keeps
    ``floor(P*r/(r+1))`` ports for hosts (32 of 64 at 1:1) and the rest for uplinks; a leaf
    carrying k hosts needs ``ceil(k/r)`` uplinks. Spines: total uplinks over the spine's ports
    (``spine_ports``, default ``leaf_ports``), at least as many as the uplinks of the busiest
    leaf spread one per spine need not exceed (every leaf reaches every spine).
    """
    count = _positive_int(nodes, "nodes", 0)
    rail_count = _positive_int(rails, "rails")
    ports = _positive_int(leaf_ports, "leaf_ports", 2)
    ratio = _ratio(oversubscription, "oversubscription")
    spine = _positive_int(spine_ports if spine_ports is not None else ports, "spine_ports", 2)
    host_ports, uplink_ports = leaf_split(ports, ratio)
    leaves_per_rail = int(math.ceil(count / float(host_ports))) if count else 0
    per_leaf = []
    for stripe in range(leaves_per_rail):
        hosts = min(host_ports, count - stripe * host_ports)
        per_leaf.append({"stripe": stripe, "hosts": hosts, "uplinks": int(math.ceil(hosts / ratio - 1e-9))})
    uplinks_per_rail = sum(leaf["uplinks"] for leaf in per_leaf)
    leaves = leaves_per_rail * rail_count
    uplinks = uplinks_per_rail * rail_count
    if leaves <= 1:
        spines = 0  # one leaf: nothing to join
        uplinks = 0
        uplinks_per_rail = 0
        for leaf in per_leaf:
            leaf["uplinks"] = 0
    else:
        spines = int(math.ceil(uplinks / float(spine)))
        if leaves > spine:
            raise RailPlanError("spine_ports: %d leaves cannot all reach a spine of %d ports; a third tier "
                                "is needed (more spine ports or fewer leaves)" % (leaves, spine))
    return {
        "nodes": count, "rails": rail_count, "leaf_ports": ports, "oversubscription": ratio,
        "spine_ports": spine, "host_ports_per_leaf": host_ports, "uplink_ports_per_leaf": uplink_ports,
        "host_ports_per_rail": count, "host_ports": count * rail_count,
        "leaves_per_rail": leaves_per_rail, "leaves": leaves, "leaf_hosts": per_leaf,
        "uplinks_per_rail": uplinks_per_rail, "uplinks": uplinks, "spines": spines,
        "switches": leaves + spines,
        "naive_leaves": int(math.ceil(count * rail_count / float(ports))) if count else 0,
    }


def layouts(nodes=64, gpus=8, rail_options=(4, 8), leaf_ports=64, oversubscription=1, spine_ports=None):
    """The switch counts of several rail counts for the same nodes, side by side."""
    gpu_count = _positive_int(gpus, "gpus")
    if not isinstance(rail_options, (list, tuple)) or not rail_options:
        raise RailPlanError("rail_options: expected a list of rail counts, got %r" % (rail_options,))
    result = []
    for rails in rail_options:
        rails = _positive_int(rails, "rail_options")
        if gpu_count % rails:
            raise RailPlanError("rail_options: %d rails do not divide %d GPUs per node evenly" % (rails, gpu_count))
        entry = switch_count(nodes, rails, leaf_ports, oversubscription, spine_ports)
        entry["gpus_per_nic"] = gpu_count // rails
        result.append(entry)
    return result


def layouts_table(entries):
    rows = [("rails", "GPUs/NIC", "host ports", "host ports/leaf", "leaves/rail", "leaves",
             "uplinks", "spines", "switches", "naive leaves")]
    keys = ("rails", "gpus_per_nic", "host_ports", "host_ports_per_leaf", "leaves_per_rail", "leaves", "uplinks",
            "spines", "switches", "naive_leaves")
    for entry in entries:
        rows.append(tuple(str(entry[key]) for key in keys))
    return _text_table(rows)


# --------------------------------------------------------------------------- inputs

def _rail_entry(entry, node, index):
    field = "nodes.%s.rails[%d]" % (node, index)
    if isinstance(entry, str):
        if not entry:
            raise RailPlanError("%s: empty NIC name" % field)
        return {"netdev": entry, "device": None, "address": None, "gpu_index": None}
    if not isinstance(entry, dict):
        raise RailPlanError("%s: expected a NIC name or a dict with netdev/device, got %r" % (field, entry))
    netdev, device = entry.get("netdev"), entry.get("device")
    if not netdev and not device:
        raise RailPlanError("%s: a rail NIC needs a netdev or an RDMA device, got %r" % (field, entry))
    return {"netdev": netdev, "device": device, "address": entry.get("address"), "gpu_index": entry.get("gpu_index")}


def normalize_nodes(nodes):
    """``{NAME: {"rails": [...]}}`` or ``[{"name": NAME, "rails": [...]}]``; rails as NIC names,
    explicit dicts (netdev, device, optional address) or ``rdma_facts`` rails."""
    if isinstance(nodes, dict):
        items = list(nodes.items())
    elif isinstance(nodes, list):
        items = []
        for index, node in enumerate(nodes):
            if not isinstance(node, dict) or not node.get("name"):
                raise RailPlanError("nodes[%d]: expected a dict with name and rails, got %r" % (index, node))
            items.append((node["name"], node))
    else:
        raise RailPlanError("nodes: expected a dict NAME: {rails: [...]} or a list, got %r" % (nodes,))
    result = {}
    for name, node in items:
        name = str(name)
        if name in result:
            raise RailPlanError("nodes: node %s is listed twice" % name)
        if isinstance(node, list):
            node = {"rails": node}
        if not isinstance(node, dict):
            raise RailPlanError("nodes.%s: expected a dict with rails, got %r" % (name, node))
        rails = node.get("rails")
        if rails is None:
            rails = node.get("rdma", {}).get("rails") if isinstance(node.get("rdma"), dict) else None
        if not isinstance(rails, list):
            raise RailPlanError("nodes.%s.rails: expected a list of rail NICs, got %r" % (name, rails))
        entries = [_rail_entry(entry, name, index) for index, entry in enumerate(rails)]
        seen = {}
        for index, entry in enumerate(entries):
            for key in ("netdev", "device"):
                if entry[key]:
                    if (key, entry[key]) in seen:
                        raise RailPlanError("nodes.%s.rails[%d]: %s %s is already rail %d" % (
                            name, index, key, entry[key], seen[(key, entry[key])]))
                    seen[(key, entry[key])] = index
        result[name] = entries
    return result


def _scheme(scheme, version):
    if scheme not in SCHEMES:
        raise RailPlanError("scheme: expected one of %s, got %r" % (", ".join(SCHEMES), scheme))
    if scheme == "p2p31" and version != 4:
        raise RailPlanError("scheme: p2p31 needs IPv4 pools; for IPv6 pools use p2p127 (or p2p)")
    if scheme == "p2p127" and version != 6:
        raise RailPlanError("scheme: p2p127 needs IPv6 pools; for IPv4 pools use p2p31 (or p2p)")
    if scheme == "shared":
        return "shared"
    return "p2p31" if version == 4 else "p2p127"


def _pools(pools, management):
    if isinstance(pools, str):
        pools = [pools]
    if not isinstance(pools, list) or not pools:
        raise RailPlanError("pools: expected a list of one network per rail, got %r" % (pools,))
    nets = [_network(pool, "pools[%d]" % index) for index, pool in enumerate(pools)]
    versions = set(net.version for net in nets)
    if len(versions) > 1:
        raise RailPlanError("pools: mixes IPv4 and IPv6 networks (%s); plan each family separately"
                            % ", ".join(str(net) for net in nets))
    for index, net in enumerate(nets):
        for other in range(index):
            if net in nets[other] or nets[other] in net:
                raise RailPlanError("pools: rail %d pool %s overlaps rail %d pool %s" % (index, net, other, nets[other]))
    if management is None:
        management = []
    if isinstance(management, str):
        management = [management]
    if not isinstance(management, list):
        raise RailPlanError("management: expected a network or a list of networks, got %r" % (management,))
    mgmt = [_network(value, "management[%d]" % index) for index, value in enumerate(management)]
    for index, net in enumerate(nets):
        for mnet in mgmt:
            if mnet.version == net.version and (net in mnet or mnet in net):
                raise RailPlanError("pools: rail %d pool %s overlaps the management network %s" % (index, net, mnet))
    return nets, mgmt


# --------------------------------------------------------------------------- the plan

class _Rail(object):
    """Addresses of one rail: what is taken, and the next free one."""

    def __init__(self, index, pool, scheme, subnet_prefix, host_ports):
        self.index, self.pool, self.scheme = index, pool, scheme
        self.subnet_prefix, self.host_ports = subnet_prefix, host_ports
        self.taken = {}  # address (int) -> node name
        self.next_p2p = pool.first  # lowest /31 or /127 never looked at yet

    def stripe_subnet(self, stripe):
        size = 2 ** ((32 if self.pool.version == 4 else 128) - self.subnet_prefix)
        first = self.pool.first + stripe * size
        if first + size - 1 > self.pool.last:
            return None
        return netaddr.IPNetwork("%s/%d" % (netaddr.IPAddress(first, self.pool.version), self.subnet_prefix))

    def link(self, iface, stripe):
        """(network, gateway) of a NIC address; None when it does not fit the scheme."""
        if self.scheme == "shared":
            subnet = self.stripe_subnet(stripe)
            if subnet is None or iface.prefixlen != self.subnet_prefix or iface.cidr != subnet.cidr:
                return None
            gateway = netaddr.IPAddress(subnet.first + 1, subnet.version)
            if iface.ip == gateway or iface.ip == subnet.network or (
                    subnet.version == 4 and iface.ip == subnet.broadcast):
                return None
            return subnet.cidr, gateway
        prefix = 31 if self.scheme == "p2p31" else 127
        if iface.prefixlen != prefix or int(iface.ip) % 2 != 1 or iface.ip not in self.pool:
            return None
        return iface.cidr, netaddr.IPAddress(int(iface.ip) - 1, iface.version)

    def claim(self, iface, node, field):
        other = self.taken.get(int(iface.ip))
        if other is not None and other != node:
            raise RailPlanError("%s: address %s on rail %d is already %s's" % (field, iface.ip, self.index, other))
        self.taken[int(iface.ip)] = node

    def allocate(self, node, stripe):
        version = self.pool.version
        if self.scheme == "shared":
            subnet = self.stripe_subnet(stripe)
            if subnet is None:
                raise RailPlanError("pools[%d]: rail %d pool %s is exhausted: no /%d subnet left for stripe %d "
                                    "(node %s)" % (self.index, self.index, self.pool, self.subnet_prefix, stripe, node))
            last = subnet.last - (1 if version == 4 else 0)
            for value in range(subnet.first + 2, last + 1):
                if value not in self.taken:
                    self.taken[value] = node
                    return netaddr.IPNetwork("%s/%d" % (netaddr.IPAddress(value, version), self.subnet_prefix))
            raise RailPlanError("pools[%d]: rail %d subnet %s of stripe %d is exhausted (node %s)"
                                % (self.index, self.index, subnet.cidr, stripe, node))
        prefix = 31 if version == 4 else 127
        value = self.next_p2p
        while value + 1 <= self.pool.last:
            if value + 1 not in self.taken and value not in self.taken:
                self.taken[value + 1] = node
                self.next_p2p = value + 2
                return netaddr.IPNetwork("%s/%d" % (netaddr.IPAddress(value + 1, version), prefix))
            value += 2
        raise RailPlanError("pools[%d]: rail %d pool %s is exhausted: no free /%d for node %s"
                            % (self.index, self.index, self.pool, prefix, node))


def _read_allocation(allocation, rail_count):
    if allocation in (None, "", {}):
        return {}
    if not isinstance(allocation, dict):
        raise RailPlanError("allocation: expected the dict a previous plan returned, got %r" % (allocation,))
    version = allocation.get("version", ALLOCATION_VERSION)
    if version != ALLOCATION_VERSION:
        raise RailPlanError("allocation.version: expected %d, got %r" % (ALLOCATION_VERSION, version))
    nodes = allocation.get("nodes") or {}
    if not isinstance(nodes, dict):
        raise RailPlanError("allocation.nodes: expected a dict NAME: {slot, rails}, got %r" % (nodes,))
    result, slots = {}, {}
    for name in sorted(nodes, key=natural_key):
        entry = nodes[name]
        field = "allocation.nodes.%s" % name
        if not isinstance(entry, dict):
            raise RailPlanError("%s: expected {slot, rails}, got %r" % (field, entry))
        slot = entry.get("slot")
        if isinstance(slot, bool) or not isinstance(slot, int) or slot < 0:
            raise RailPlanError("%s.slot: expected an integer >= 0, got %r" % (field, slot))
        if slot in slots:
            raise RailPlanError("%s.slot: slot %d is already %s's" % (field, slot, slots[slot]))
        slots[slot] = name
        rails = entry.get("rails")
        if not isinstance(rails, list) or len(rails) != rail_count:
            raise RailPlanError("%s.rails: expected %d addresses (one per rail), got %r" % (field, rail_count, rails))
        result[str(name)] = {"slot": slot, "rails": [_interface(value, "%s.rails[%d]" % (field, index))
                                                     for index, value in enumerate(rails)]}
    return result


def plan(nodes, pools, scheme="p2p", allocation=None, management=None, release=None, leaf_ports=64,
         oversubscription=1, spine_ports=None, subnet_prefix=None, leaf_name="rail{rail}-leaf{stripe}",
         spine_name="spine{spine}"):
    """Every node's address, peer/gateway, leaf and leaf port on every rail, and the new allocation."""
    nets, mgmt = _pools(pools, management)
    rail_count = len(nets)
    version = nets[0].version
    scheme = _scheme(scheme, version)
    host_ports, uplink_ports = leaf_split(leaf_ports, oversubscription)
    inventory = normalize_nodes(nodes)
    if release is None:
        release = []
    if isinstance(release, str):
        release = [release]
    if not isinstance(release, list):
        raise RailPlanError("release: expected a list of node names, got %r" % (release,))
    for name in release:
        if str(name) in inventory:
            raise RailPlanError("release: node %s is still in the inventory; remove it before releasing its "
                                "addresses" % name)

    if scheme == "shared":
        if subnet_prefix is None:
            if version == 6:
                subnet_prefix = 64
            else:  # network, gateway, the hosts, broadcast
                subnet_prefix = 32 - int(math.ceil(math.log(host_ports + 3, 2)))
        subnet_prefix = _positive_int(subnet_prefix, "subnet_prefix", 1)
        width = 32 if version == 4 else 128
        if subnet_prefix > width - 2:
            raise RailPlanError("subnet_prefix: /%d leaves no room for a gateway and nodes" % subnet_prefix)
        for index, net in enumerate(nets):
            if subnet_prefix < net.prefixlen:
                raise RailPlanError("subnet_prefix: /%d is larger than rail %d pool %s" % (subnet_prefix, index, net))
    rails = [_Rail(index, net, scheme, subnet_prefix, host_ports) for index, net in enumerate(nets)]

    for name, entries in inventory.items():
        if len(entries) < rail_count:
            raise RailPlanError("nodes.%s: has %d rail NICs (%s), the plan has %d rails" % (
                name, len(entries), ", ".join(entry["netdev"] or entry["device"] for entry in entries) or "none",
                rail_count))

    recorded = _read_allocation(allocation, rail_count)
    if isinstance(allocation, dict) and allocation.get("scheme") not in (None, scheme):
        raise RailPlanError("scheme: the allocation was made with %s, not %s; changing the scheme renumbers "
                            "every node" % (allocation.get("scheme"), scheme))
    released = sorted((name for name in recorded if name in [str(n) for n in release]), key=natural_key)
    for name in released:
        del recorded[name]

    def check_address(iface, rail, node, field, stripe):
        for mnet in mgmt:
            if iface.ip in mnet:
                raise RailPlanError("%s: address %s is in the management network %s" % (field, iface, mnet))
        for other in rails:
            if other is not rail and iface.ip in other.pool:
                raise RailPlanError("%s: address %s of rail %d is in rail %d's pool %s"
                                    % (field, iface, rail.index, other.index, other.pool))
        link = rail.link(iface, stripe)
        if link is None:
            if scheme == "shared":
                raise RailPlanError("%s: address %s is not a node address of rail %d stripe %d subnet %s"
                                    % (field, iface, rail.index, stripe, rail.stripe_subnet(stripe)))
            raise RailPlanError("%s: address %s is not the NIC (odd) end of a /%d in rail %d pool %s"
                                % (field, iface, 31 if version == 4 else 127, rail.index, rail.pool))
        rail.claim(iface, node, field)

    # the record first: it never changes
    for name, entry in sorted(recorded.items(), key=lambda item: item[1]["slot"]):
        stripe = entry["slot"] // host_ports
        for index, iface in enumerate(entry["rails"]):
            check_address(iface, rails[index], name, "allocation.nodes.%s.rails[%d]" % (name, index), stripe)

    # addresses pinned in the inventory
    order = sorted(inventory, key=natural_key)
    used_slots = set(entry["slot"] for entry in recorded.values())
    pinned = {}
    for name in order:
        for index, entry in enumerate(inventory[name][:rail_count]):
            if entry["address"] in (None, ""):
                continue
            field = "nodes.%s.rails[%d].address" % (name, index)
            iface = _interface(entry["address"], field)
            if name in recorded:
                if recorded[name]["rails"][index] != iface:
                    raise RailPlanError("%s: %s differs from the allocation (%s); release the node or fix the "
                                        "inventory" % (field, iface, recorded[name]["rails"][index]))
                continue
            pinned.setdefault(name, {})[index] = iface

    new = []
    next_slot = 0
    for name in order:
        if name in recorded:
            continue
        while next_slot in used_slots:
            next_slot += 1
        slot = next_slot
        used_slots.add(slot)
        stripe = slot // host_ports
        addresses = []
        for index, rail in enumerate(rails):
            iface = pinned.get(name, {}).get(index)
            if iface is not None:
                check_address(iface, rail, name, "nodes.%s.rails[%d].address" % (name, index), stripe)
            addresses.append(iface)
        for index, rail in enumerate(rails):
            if addresses[index] is None:
                addresses[index] = rail.allocate(name, stripe)
        recorded[name] = {"slot": slot, "rails": addresses}
        new.append(name)

    # the plan
    stripes = {}
    planned = {}
    table = []
    for name in order:
        entry = recorded[name]
        stripe = entry["slot"] // host_ports
        port = entry["slot"] % host_ports + 1
        stripes[stripe] = stripes.get(stripe, 0) + 1
        node_rails = []
        for index, iface in enumerate(entry["rails"]):
            network, gateway = rails[index].link(iface, stripe)
            nic = inventory[name][index]
            row = {
                "node": name, "rail": index, "netdev": nic["netdev"], "device": nic["device"],
                "address": str(iface.ip), "prefix": iface.prefixlen, "cidr": str(iface), "network": str(network),
                "peer": str(gateway), "gateway": str(gateway),
                "leaf": leaf_name.format(rail=index, stripe=stripe), "leaf_port": port,
                "stripe": stripe, "slot": entry["slot"],
            }
            node_rails.append(row)
            table.append(row)
        planned[name] = {"slot": entry["slot"], "stripe": stripe, "leaf_port": port, "rails": node_rails}

    retained = sorted((name for name in recorded if name not in inventory), key=natural_key)
    top_slot = max([entry["slot"] for entry in recorded.values()] + [-1])
    leaves_per_rail = top_slot // host_ports + 1 if recorded else 0
    counts = switch_count(len(recorded), rail_count, leaf_ports, oversubscription, spine_ports)
    # uplinks follow the hosts each leaf actually carries
    ratio = counts["oversubscription"]
    leaves = []
    for index in range(rail_count):
        for stripe in range(leaves_per_rail):
            hosts = sum(1 for entry in recorded.values() if entry["slot"] // host_ports == stripe)
            leaves.append({"name": leaf_name.format(rail=index, stripe=stripe), "rail": index, "stripe": stripe,
                           "hosts": hosts, "host_ports": host_ports, "uplink_ports": uplink_ports,
                           "uplinks": int(math.ceil(hosts / ratio - 1e-9)) if leaves_per_rail * rail_count > 1 else 0})
    uplinks = sum(leaf["uplinks"] for leaf in leaves)
    spine_count = int(math.ceil(uplinks / float(counts["spine_ports"]))) if uplinks else 0
    counts.update({"nodes": len(recorded), "host_ports_per_rail": len(recorded),
                   "host_ports": len(recorded) * rail_count, "leaves_per_rail": leaves_per_rail,
                   "leaves": len(leaves), "uplinks": uplinks, "uplinks_per_rail": uplinks // rail_count,
                   "spines": spine_count, "switches": len(leaves) + spine_count,
                   "leaf_hosts": [dict((k, leaf[k]) for k in ("stripe", "hosts", "uplinks"))
                                  for leaf in leaves if leaf["rail"] == 0]})
    spines = [spine_name.format(spine=index) for index in range(spine_count)]

    new_allocation = {
        "version": ALLOCATION_VERSION, "scheme": scheme, "pools": [str(net) for net in nets],
        "nodes": dict((name, {"slot": entry["slot"], "rails": [str(iface) for iface in entry["rails"]]})
                      for name, entry in sorted(recorded.items(), key=lambda item: natural_key(item[0]))),
    }
    return {
        "scheme": scheme, "family": version, "rails": rail_count, "pools": [str(net) for net in nets],
        "management": [str(net) for net in mgmt], "subnet_prefix": subnet_prefix if scheme == "shared" else None,
        "nodes": planned, "table": table, "leaves": leaves, "spines": spines, "switches": counts,
        "allocation": new_allocation, "new": new, "retained": retained, "released": released,
        "changed": new_allocation != _canonical(allocation),
    }


def _canonical(allocation):
    if not isinstance(allocation, dict) or not allocation:
        return None
    nodes = allocation.get("nodes") or {}
    return {"version": allocation.get("version", ALLOCATION_VERSION), "scheme": allocation.get("scheme"),
            "pools": allocation.get("pools"),
            "nodes": dict((str(name), {"slot": entry.get("slot"), "rails": list(entry.get("rails") or [])})
                          for name, entry in nodes.items() if isinstance(entry, dict))}


# --------------------------------------------------------------------------- renderings

COLUMNS = ("node", "rail", "netdev", "device", "address", "prefix", "peer", "leaf", "leaf_port")
HEADERS = ("NODE", "RAIL", "NIC", "RDMA DEVICE", "ADDRESS", "PREFIX", "PEER/GATEWAY", "LEAF", "LEAF PORT")


def _check_plan(result):
    if not isinstance(result, dict) or not isinstance(result.get("table"), list):
        raise RailPlanError("expected the dict rail_plan returns, got %r" % (type(result).__name__,))
    return result


def _cell(value):
    return "" if value is None else str(value)


def csv_text(result):
    _check_plan(result)
    import csv
    import io
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for row in result["table"]:
        writer.writerow([_cell(row.get(key)) for key in COLUMNS])
    return out.getvalue()


def _text_table(rows):
    widths = [max(len(row[index]) for row in rows) for index in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(widths[index]) for index, cell in enumerate(row)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(lines)


def text_table(result):
    _check_plan(result)
    rows = [HEADERS]
    for row in result["table"]:
        cells = [_cell(row.get(key)) for key in COLUMNS]
        cells[5] = "/" + cells[5]
        rows.append(tuple(cells))
    counts = result["switches"]
    summary = ("%d nodes, %d rails (%s): %d leaves (%d per rail, %d host ports each), %d uplinks, %d spine(s)"
               % (counts["nodes"], counts["rails"], result["scheme"], counts["leaves"], counts["leaves_per_rail"],
                  counts["host_ports_per_leaf"], counts["uplinks"], counts["spines"]))
    return _text_table(rows) + "\n" + summary


def svg(result):
    """The layout as SVG: spines on top, leaves per rail, nodes with their rail NICs, links."""
    _check_plan(result)
    nodes = sorted(result["nodes"], key=lambda name: result["nodes"][name]["slot"])
    rails = result["rails"]
    leaves = result["leaves"]
    spines = result["spines"]
    colours = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"]
    node_w, nic_h, gap = 150, 18, 20
    node_h = 24 + rails * nic_h
    cols = max(1, min(len(nodes), 8))
    width = max(cols * (node_w + gap) + gap, len(leaves) * 130 + gap, len(spines) * 110 + gap, 400)
    leaf_y, node_y0 = 130, 230
    rows = int(math.ceil(len(nodes) / float(cols))) if nodes else 0
    height = node_y0 + rows * (node_h + gap) + 40
    parts = ['<?xml version="1.0" encoding="UTF-8"?>',
             '<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" '
             'font-family="sans-serif" font-size="11">' % (width, height, width, height),
             '<title>rail plan: %d nodes, %d rails, %d leaves, %d spines</title>' % (
                 len(nodes), rails, len(leaves), len(spines))]
    spine_pos = {}
    step = width / float(len(spines) + 1) if spines else 0
    for index, name in enumerate(spines):
        x = step * (index + 1) - 45
        spine_pos[name] = x + 45
        parts.append('<rect class="spine" x="%.1f" y="20" width="90" height="30" fill="#eeeeee" stroke="#333"/>' % x)
        parts.append('<text x="%.1f" y="40" text-anchor="middle">%s</text>' % (x + 45, escape(name)))
    leaf_pos = {}
    step = width / float(len(leaves) + 1) if leaves else 0
    for index, leaf in enumerate(leaves):
        x = step * (index + 1) - 55
        leaf_pos[(leaf["rail"], leaf["stripe"])] = x + 55
        colour = colours[leaf["rail"] % len(colours)]
        for spine in spine_pos.values():
            parts.append('<line class="uplink" x1="%.1f" y1="%d" x2="%.1f" y2="50" stroke="#999" stroke-width="0.6"/>'
                         % (x + 55, leaf_y, spine))
        parts.append('<rect class="leaf" x="%.1f" y="%d" width="110" height="34" fill="white" stroke="%s" '
                     'stroke-width="2"/>' % (x, leaf_y, colour))
        parts.append('<text x="%.1f" y="%d" text-anchor="middle">%s</text>' % (x + 55, leaf_y + 14, escape(leaf["name"])))
        parts.append('<text x="%.1f" y="%d" text-anchor="middle" font-size="9">%d hosts, %d uplinks</text>'
                     % (x + 55, leaf_y + 27, leaf["hosts"], leaf["uplinks"]))
    for position, name in enumerate(nodes):
        node = result["nodes"][name]
        x = gap + (position % cols) * (node_w + gap)
        y = node_y0 + (position // cols) * (node_h + gap)
        parts.append('<g class="node" id="%s">' % escape(name, {'"': "&quot;"}))
        parts.append('<rect x="%d" y="%d" width="%d" height="%d" fill="#fafafa" stroke="#333"/>' % (x, y, node_w, node_h))
        parts.append('<text x="%d" y="%d" font-weight="bold">%s</text>' % (x + 5, y + 15, escape(name)))
        for row in node["rails"]:
            colour = colours[row["rail"] % len(colours)]
            ny = y + 22 + row["rail"] * nic_h
            label = "%s %s" % (row["netdev"] or row["device"], row["cidr"])
            parts.append('<rect class="nic" x="%d" y="%d" width="%d" height="%d" fill="%s" fill-opacity="0.15" '
                         'stroke="%s"/>' % (x + 4, ny, node_w - 8, nic_h - 2, colour, colour))
            parts.append('<text x="%d" y="%d" font-size="9">%s</text>' % (x + 7, ny + 12, escape(label)))
            lx = leaf_pos.get((row["rail"], row["stripe"]))
            if lx is not None:
                parts.append('<line class="link" x1="%d" y1="%d" x2="%.1f" y2="%d" stroke="%s" stroke-width="0.7" '
                             'stroke-opacity="0.6"><title>%s -&gt; %s port %d</title></line>'
                             % (x + node_w - 4, ny + 8, lx, leaf_y + 34, colour, escape(label), escape(row["leaf"]),
                                row["leaf_port"]))
        parts.append('</g>')
    parts.append('</svg>')
    return "\n".join(parts) + "\n"
