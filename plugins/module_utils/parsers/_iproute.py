# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""iproute2 ``ip -j addr show [dev IF]``: the one parser (``rail_addresses``, ``rdma_health``).

Follows iproute2 ip/ipaddress.c print_linkinfo + print_addrinfo through lib/json_print.c
(github.com/iproute2/iproute2, JSON since v4.17, read at ee2a4a86 / v7.1), samples
``tests/unit/fixtures/samples/ip_addr_json.txt``. Layout: a JSON
array, one object per link with ``ifindex``, ``ifname``, ``flags`` (a list) and
``addr_info`` (always printed by ``ip -j addr``, ``[]`` without addresses; with ``-4``/``-6``
the link objects lose ``link_type``/``address``), ``addr_info`` being a list of
``{family: inet|inet6, local, [address: the peer of a point-to-point address], prefixlen,
scope, [secondary|tentative|...: true], ...}``. ``local`` is the host's own address (the one
the kernel's RoCE GID cache maps to a GID). Standard library only.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ipaddress
import json


def parse_json(text, source="ip -j addr output"):
    """The links of ``ip -j addr`` text; ValueError naming ``source`` when it is not that layout."""
    try:
        data = json.loads(text or "")
    except ValueError as exc:
        raise ValueError("%s: not JSON (%s): %r" % (source, exc, (text or "")[:120]))
    if not isinstance(data, list) or not all(isinstance(link, dict) and "ifname" in link for link in data):
        raise ValueError("%s: not a JSON list of links with ifname (ip -j addr): %r" % (source, (text or "")[:120]))
    for link in data:
        if not isinstance(link.get("addr_info"), list) or not isinstance(link.get("flags", []), list):
            raise ValueError("%s: link %r without a list addr_info (ip -j addr always prints it, [] without "
                             "addresses) or with non-list flags: not ip -j addr output (ip -j link?)"
                             % (source, link.get("ifname")))
        for info in link["addr_info"]:
            if not isinstance(info, dict) or "family" not in info:
                raise ValueError("%s: link %s: address entry %r without family (ip -j addr prints it first)"
                                 % (source, link["ifname"], info))
    return data


def _interface(info):
    if "local" not in info or "prefixlen" not in info:
        raise ValueError("address entry without local/prefixlen: %r" % (info,))
    try:
        return ipaddress.ip_interface("%s/%s" % (info["local"], info["prefixlen"]))
    except ValueError as exc:
        raise ValueError("address entry %r: %s" % (info, exc))


def parse_addr(data, interface):
    """``ip -j addr show dev IF`` -> (link_up, [ADDR/PREFIX]) without link-local IPv6."""
    links = [link for link in data if isinstance(link, dict) and link.get("ifname") == interface]
    if not links:
        raise ValueError("no link %s in the ip -j addr output" % interface)
    link = links[0]
    addresses = []
    for info in link.get("addr_info") or []:
        if info.get("family") not in ("inet", "inet6"):
            continue
        iface = _interface(info)
        if iface.version == 6 and (iface.ip.is_link_local or info.get("scope") == "link"):
            continue
        addresses.append(str(iface))
    return "UP" in (link.get("flags") or []), sorted(addresses)


def ipv4_by_link(data):
    """{ifname: [IPv4 address, ...]} (the local addresses, sorted, without prefix) of every link."""
    out = {}
    for link in data:
        out[link["ifname"]] = sorted(set(str(_interface(info).ip) for info in link.get("addr_info") or []
                                         if info.get("family") == "inet"), key=ipaddress.ip_address)
    return out
