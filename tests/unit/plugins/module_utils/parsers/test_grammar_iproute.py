# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Property tests from iproute2's JSON printers: ip/ipaddress.c (addr), ip/iproute.c print_route, ip/iprule.c print_rule."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ipaddress
import json

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.parsers import _iproute
from ansible_collections.rdma.fabric.plugins.module_utils.resources import _rail_addresses

hypothesis = pytest.importorskip("hypothesis")
st = hypothesis.strategies
given, settings = hypothesis.given, hypothesis.settings

_V4 = st.builds(lambda n, p: ipaddress.ip_interface("10.%d.%d.%d/%d" % (n // 65536 % 256, n // 256 % 256, n % 254 + 1, p)),
                st.integers(0, 2 ** 24 - 1), st.integers(8, 32))
_NAME = st.from_regex(r"(enp[0-9]{1,3}s0f[01]np[01]|ib[0-9]|eth[0-9]|bond0\.[0-9]{2})\Z", fullmatch=True)


@st.composite
def _links(draw):
    names = draw(st.lists(_NAME, min_size=1, max_size=4, unique=True))
    out = []
    for index, name in enumerate(names, 1):
        addrs = draw(st.lists(_V4, max_size=3, unique_by=lambda i: i.ip))
        info = [{"family": "inet", "local": str(a.ip), "prefixlen": a.network.prefixlen, "scope": "global",
                 "label": name, "valid_life_time": 4294967295, "preferred_life_time": 4294967295} for a in addrs]
        if draw(st.booleans()):
            info.append({"family": "inet6", "local": "fe80::%x" % index, "prefixlen": 64, "scope": "link",
                         "valid_life_time": 4294967295, "preferred_life_time": 4294967295})
        flags = draw(st.sampled_from([["BROADCAST", "MULTICAST", "UP", "LOWER_UP"], ["NO-CARRIER", "BROADCAST", "MULTICAST", "UP"],
                                      ["BROADCAST", "MULTICAST"]]))
        link = {"ifindex": index, "ifname": name, "flags": flags,
                "mtu": 9000, "qdisc": "mq", "operstate": "UP", "group": "default", "txqlen": 1000}
        if draw(st.booleans()):  # without -4/-6 the link layer keys are printed too
            link.update(link_type="ether", address="02:00:00:00:00:%02x" % index, broadcast="ff:ff:ff:ff:ff:ff")
        link["addr_info"] = info
        out.append((link, addrs))
    return out


@settings(max_examples=40, deadline=None)
@given(_links(), st.booleans())
def test_ip_addr_reads_back(links, pretty):
    text = json.dumps([link for link, dummy in links], indent=4 if pretty else None, separators=None if pretty else (",", ":"))
    data = _iproute.parse_json(text)
    for link, addrs in links:
        up, got = _iproute.parse_addr(data, link["ifname"])
        assert up == ("UP" in link["flags"])
        assert got == sorted(str(a) for a in addrs)


@pytest.mark.parametrize("text", [
    "", 'Device "x" does not exist.', "[", "{}", "[1]", '[{"ifname": "x"}]',
    '[{"ifindex": 1, "ifname": "x", "flags": "UP", "addr_info": []}]',
    '[{"ifindex": 1, "ifname": "x", "flags": [], "addr_info": [{"local": "10.0.0.1"}]}]',
    '[{"priority": 0, "src": "all", "table": "local"}]',
])
def test_ip_addr_near_misses_are_refused(text):
    with pytest.raises(ValueError):
        _iproute.parse_json(text)


@st.composite
def _rule(draw):
    rule = {"priority": draw(st.integers(0, 32767))}
    if draw(st.booleans()):
        rule["not"] = None
    kind = draw(st.sampled_from(["all", "host", "net"]))
    iface = draw(_V4)
    rule["src"] = "all" if kind == "all" else str(iface.ip if kind == "host" else iface.network.network_address)
    if kind == "net":
        rule["srclen"] = iface.network.prefixlen
    if draw(st.booleans()):
        rule.update(fwmark="0x10", fwmask="0xff")
    if draw(st.booleans()):
        rule["table"] = draw(st.sampled_from(["main", "local", "default", "101", "4294967294"]))
    else:
        rule[draw(st.sampled_from(["goto", "action"]))] = draw(st.sampled_from([32766, "blackhole", "prohibit"]))
    return rule


@settings(max_examples=40, deadline=None)
@given(st.lists(_rule(), max_size=8))
def test_ip_rule_reads_back(rules):
    got = _rail_addresses.parse_rules(json.loads(json.dumps(rules)))
    for rule, read in zip(rules, got):
        src = rule["src"] + ("/%d" % rule["srclen"] if "srclen" in rule else "")
        assert read["from"] == ("not " if "not" in rule else "") + src
        assert read["priority"] == rule["priority"]
        table = rule.get("table")
        assert read["table"] == (int(table) if table and table.isdigit() else table)


@st.composite
def _route(draw):
    iface = draw(_V4)
    route = {}
    if draw(st.booleans()):
        route["type"] = draw(st.sampled_from(["local", "broadcast", "blackhole", "unreachable"]))
    route["dst"] = draw(st.sampled_from(["default", str(iface.network), str(iface.ip)]))
    if draw(st.booleans()):
        route["gateway"] = str(iface.ip)
    multipath = draw(st.booleans())
    if not multipath:
        route["dev"] = draw(_NAME)
    if draw(st.booleans()):
        route.update(protocol="kernel", scope="link", prefsrc=str(iface.ip))
    route["flags"] = draw(st.sampled_from([[], ["onlink"], ["linkdown"]]))
    if multipath:
        route["nexthops"] = [{"gateway": str(iface.ip), "dev": "eth0", "weight": 1, "flags": []}]
    return route


@settings(max_examples=40, deadline=None)
@given(st.lists(_route(), max_size=8))
def test_ip_route_reads_back(routes):
    got = _rail_addresses.parse_routes(json.loads(json.dumps(routes)), 4)
    for route, read in zip(routes, got):
        dst = route["dst"]
        assert read["dst"] == dst if dst == "default" or "/" in dst else read["dst"] == dst + "/32"
        assert (read["gateway"], read["dev"], read["src"]) == (route.get("gateway"), route.get("dev"), route.get("prefsrc"))


@pytest.mark.parametrize("data", [{}, [1], [{"src": "all", "table": "main"}], [{"priority": "x", "src": "all"}],
                                  [{"priority": 1, "src": 5}], [{"priority": 1, "src": "all", "table": ["main"]}]])
def test_ip_rule_near_misses_are_refused(data):
    with pytest.raises(ValueError):
        _rail_addresses.parse_rules(data)


@pytest.mark.parametrize("data", [{}, [1], [{"dev": "eth0"}], [{"dst": ""}], [{"dst": "default", "gateway": 1}],
                                  [{"dst": "default", "nexthops": {}}]])
def test_ip_route_near_misses_are_refused(data):
    with pytest.raises(ValueError):
        _rail_addresses.parse_routes(data, 4)
