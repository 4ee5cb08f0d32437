# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""rdma.fabric.switch_qos_rates: rdma_health's per-port rates mapped to netdevs, and from there
to the switch_qos ECN advice of the leaf port facing that netdev."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.rdma.fabric.plugins.filter.switch_qos import FilterModule
from ansible_collections.rdma.fabric.plugins.module_utils.areas import switch_qos
from ansible_collections.rdma.fabric.plugins.module_utils.switch import _agreement

RATES = FilterModule().filters()["switch_qos_rates"]
RDMA = {"devices": {"mlx5_0": {"ports": [{"port": 1, "netdev": "eth0", "link_layer": "Ethernet"}]},
                    "mlx5_1": {"ports": [{"port": 1, "netdev": "eth1", "link_layer": "Ethernet"}]},
                    "mlx5_2": {"ports": [{"port": 1, "netdev": None, "link_layer": "InfiniBand"}]}}}
PORTS = {"mlx5_0/1": {"interval": 5.0, "rates": {"cnp_sent": 4000.0, "rx_pause": 0.0, "cnp_handled": 10.0}},
         "mlx5_1/1": {"interval": 5.0, "rates": {}},
         "mlx5_2/1": {"interval": 5.0, "rates": {"cnp_sent": 1.0}}}


def test_rates_by_netdev():
    assert RATES(PORTS, RDMA) == {"eth0": {"cnp_sent": 4000.0, "rx_pause": 0.0, "ecn_marked": None}}


def test_bad_input_is_a_filter_error():
    with pytest.raises(AnsibleFilterError) as exc:
        RATES([], RDMA)
    assert "switch_qos_rates: expected rdma_health's ports" in str(exc.value)


def test_the_rates_reach_the_ecn_advice():
    port = {"name": "Ethernet0", "speed": 400, "host": "h", "host_interface": "eth0",
            "ecn": dict(switch_qos.default_ecn_table()[400])}
    intent = {"ports": [port]}
    records = _agreement.fleet_advice("leaf", intent, {"h": RATES(PORTS, RDMA)})
    assert [(r["object"], r["setting"]) for r in records] == [("Ethernet0", "ecn.min_kb")]
    assert "4000 CNPs/s" in records[0]["actual"]
    # pauses and no CNP at all, thresholds far above the BDP: too high (no ecn_marked rate: the CNPs stand for it)
    deep = dict(port, ecn={"min_kb": 5000, "max_kb": 20000, "probability": 100})
    rec = _agreement.ecn_advice("leaf", deep, {"cnp_sent": 0.0, "rx_pause": 50.0, "ecn_marked": None})
    assert "too high for the link speed" in rec["actual"]
