"""The node's own address for the fabric test's out-of-band exchange (/proc/net/route, SIOCGIFADDR)."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.facts import _node_address as A

# /proc/net/route of a podman container (the lab's nodes), and of a host with two default routes;
# the layout is net/ipv4/fib_trie.c fib_route_seq_show ("%-127s\n" padded lines, hex fields)
CONTAINER = """Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT
eth0\t00000000\t0158580A\t0003\t0\t0\t0\t00000000\t0\t0\t0
eth0\t0058580A\t00000000\t0001\t0\t0\t0\t0000FFFF\t0\t0\t0
"""
TWO = """Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT
eno2\t00000000\t0101A8C0\t0003\t0\t0\t200\t00000000\t0\t0\t0
eno1\t00000000\t0100000A\t0003\t0\t0\t100\t00000000\t0\t0\t0
ib0\t000010AC\t00000000\t0001\t0\t0\t0\t0000FFFF\t0\t0\t0
"""


def test_default_interfaces_lowest_metric_first():
    assert A.default_interfaces(CONTAINER) == ["eth0"]
    assert A.default_interfaces(TWO) == ["eno1", "eno2"]
    assert A.default_interfaces(TWO.splitlines()[0] + "\n") == []


def test_text_that_is_not_the_route_table_is_refused():
    with pytest.raises(ValueError):
        A.default_interfaces("Inter-|   Receive\n face |bytes\n")


def test_node_address_of_this_machine_and_none_without_a_route(tmp_path):
    route = tmp_path / "route"
    route.write_text(TWO.splitlines()[0] + "\n")
    assert A.node_address(str(route)) is None
    assert A.node_address(str(tmp_path / "absent")) is None
    route.write_text(CONTAINER.replace("eth0", "lo"))
    assert A.node_address(str(route)) is None        # loopback never: a peer cannot reach it
    assert A.interface_ipv4("no-such-if0") is None
