# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""_iproute on real ``ip -j addr`` output (tests/unit/fixtures/samples/ip_addr_json.txt, iproute2
6.1.0), and the health read's use of it (the gid_ipv4 check judges the netdev's addresses)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.reports import _health
from ansible_collections.rdma.fabric.plugins.module_utils.facts import _health_read
from ansible_collections.rdma.fabric.plugins.module_utils.parsers import _iproute
from ansible_collections.rdma.fabric.plugins.module_utils.resources import _rail_addresses
from ansible_collections.rdma.fabric.tests.unit import samples

SAMPLES = samples.load("ip_addr_json.txt")


def test_one_parser_for_both_modules():
    assert _rail_addresses.parse_addr is _iproute.parse_addr


def test_addresses_of_a_roce_netdev():
    data = _iproute.parse_json(SAMPLES["IP-J-ADDR-DEV-ROCE"].raw)
    # the local address of the point-to-point entry (its "address" is the peer), the secondary one too;
    # link-local IPv6 dropped
    assert _iproute.parse_addr(data, "enp24s0np0") == (
        True, ["10.10.0.11/24", "10.10.0.99/24", "10.200.0.1/31", "2001:db8:10::11/64"])
    assert _iproute.ipv4_by_link(data) == {"enp24s0np0": ["10.10.0.11", "10.10.0.99", "10.200.0.1"]}


def test_every_link_and_a_link_without_address():
    data = _iproute.parse_json(SAMPLES["IP-J-ADDR-ALL"].raw)
    assert _iproute.ipv4_by_link(data) == {"lo": [], "fsp0": [], "enp24s0np0": ["10.10.0.11", "10.10.0.99", "10.200.0.1"],
                                           "fsp1": [], "enp64s0np0": []}
    data = _iproute.parse_json(SAMPLES["IP-J-ADDR-DEV-NOADDR"].raw)
    assert _iproute.parse_addr(data, "enp64s0np0") == (False, [])
    with pytest.raises(ValueError, match="no link enp24s0np0"):
        _iproute.parse_addr(data, "enp24s0np0")


@pytest.mark.parametrize("text", ["", "Device \"x\" does not exist.", "{}", '[{"flags": []}]', "[1]"])
def test_what_is_not_ip_json_is_refused(text):
    with pytest.raises(ValueError, match="ip -j addr"):
        _iproute.parse_json(text)


def test_a_bad_address_entry_is_refused():
    with pytest.raises(ValueError, match="local/prefixlen"):
        _iproute.ipv4_by_link([{"ifname": "x", "addr_info": [{"family": "inet", "prefixlen": 24}]}])


def _raw(ip_addr):
    """A minimal rdma_health raw record: one RoCE port with a v2 GID for 10.10.0.11 only."""
    gids = [{"index": 3, "gid": "0000:0000:0000:0000:0000:ffff:0a0a:000b", "type": "RoCE v2", "netdev": "enp24s0np0",
             "ipv4": "10.10.0.11"}]
    port = {"port": 1, "state": "ACTIVE", "phys_state": "LinkUp", "rate": "400 Gb/sec (4X NDR)", "rate_gbps": 400,
            "link_layer": "Ethernet", "port_guid": None, "lid": 0, "sm_lid": 0, "netdev": "enp24s0np0",
            "gids": gids, "ipv4": ["10.10.0.11"]}
    device = {"name": "mlx5_0", "node_guid": None, "sys_image_guid": None, "fw_ver": None, "hca_type": None,
              "board_id": None, "node_type": None, "pci_address": None, "numa_node": None, "pcie": None,
              "netdevs": ["enp24s0np0"], "role": None, "ports": [port]}
    return {"version": 1, "rdma": {"devices": {"mlx5_0": device}, "topo_text": None, "gpu_list": None,
                                   "gpu_pci": {}, "errors": []},
            "gid_table_size": {"mlx5_0/1": 16}, "samples": [], "ip_addr": ip_addr}


def test_health_read_judges_the_netdevs_own_addresses():
    obs, _state = _health_read.derive(_raw(SAMPLES["IP-J-ADDR-ALL"].raw))
    assert obs["ports"]["mlx5_0/1"]["gid_table"]["ipv4_addresses"] == ["10.10.0.11", "10.10.0.99", "10.200.0.1"]
    findings = _health.judge(obs)
    assert [(f["check"], f["actual"]) for f in findings] == [("gid_ipv4", "none for 10.10.0.99, 10.200.0.1")]
    assert _health.skipped(obs) == []


@pytest.mark.parametrize("ip_addr, why, error", [
    (None, "not installed", None),
    ({"rc": 1, "error": "boom"}, "failed", "ip -j addr show failed (rc=1): boom"),
    ("garbage", "not its JSON layout", "ip -j addr show output: not JSON"),
    ('[{"ifname": "eth0", "addr_info": []}]', "not in this network namespace", None),
])
def test_unknown_addresses_are_a_skipped_check_never_a_healthy_one(ip_addr, why, error):
    obs, _state = _health_read.derive(_raw(ip_addr))
    assert obs["ports"]["mlx5_0/1"]["gid_table"]["ipv4_addresses"] is None
    skipped = _health.skipped(obs)
    assert [(s["check"], s["subject"]) for s in skipped] == [("gid_ipv4", "enp24s0np0")]
    assert why in skipped[0]["reason"]
    facts = [f["actual"] for f in _health.judge(obs) if f["check"] == "facts"]
    assert (facts[0].startswith(error) if error else facts == []), facts
    assert [f["check"] for f in _health.judge(obs) if f["check"] != "facts"] == []
