# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""_health.judge, one test per check (healthy -> no finding), and _health_read.update_flaps."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.reports import _health
from ansible_collections.rdma.fabric.plugins.module_utils.facts import _health_read


def _port(netdev, ll="Ethernet", rate=400, gids=None):
    return {"port": 1, "state": "ACTIVE", "phys_state": "LinkUp", "rate_gbps": rate, "link_layer": ll,
            "netdev": netdev, "sm_lid": 1 if ll == "InfiniBand" else 0, "gids": gids or [], "counters": {}}


def node(link_layer="Ethernet"):
    devices = {}
    rails = []
    gpus = []
    for i in range(2):
        name = "mlx5_%d" % i
        devices[name] = {"name": name, "hca_type": "MT4129", "pci_address": "0000:%02x:00.0" % (0x18 + i),
                         "numa_node": 0, "pcie": None,
                         "ports": [_port("eth%d" % i if link_layer == "Ethernet" else "ib%d" % i, link_layer)]}
        gpus.append({"name": "GPU%d" % i, "model": "NVIDIA H100 80GB HBM3", "numa_node": 0, "pci_address": None})
        rails.append({"gpu": "GPU%d" % i, "device": name, "port": 1, "relation": "PIX"})
    facts = {"devices": devices, "gpus": gpus, "rails": rails, "gather_subset": ["devices", "gids", "pci", "gpus"],
             "errors": []}
    ports = {}
    for name in devices:
        ports["%s/1" % name] = {
            "interval": 5.0, "rates": {"rx_pause": 0, "tx_pause": 0, "cnp_sent": 0, "cnp_handled": 0,
                                       "rx_discards_phy": 0, "symbol_errors": 0},
            "deltas": {}, "ethtool": {"rx_crc_errors_phy": 0},
            "gid_table": {"size": 16, "used": 4, "free": 12, "occupancy": 0.25, "roce_v2_ipv4": ["10.0.%s.1" % name[-1]],
                          "ipv4_any": ["10.0.%s.1" % name[-1]]},
            "flaps": {"count": 0, "value": 1, "grace": False, "window": "6h"}}
    return {"facts": facts, "ports": ports, "sm": {}, "gdr": None, "nccl": None}


def found(obs, checks=None):
    return [(f["check"], f["subject"], f["severity"]) for f in _health.judge(obs, checks)]


S0 = "mlx5_0 port 1 (eth0)"


def test_healthy_roce_and_ib_nodes_have_no_finding():
    assert found(node()) == []
    assert found(node("InfiniBand")) == []


def test_every_finding_has_the_record_shape():
    obs = node()
    obs["facts"]["devices"]["mlx5_0"]["ports"][0]["state"] = "DOWN"
    finding = _health.judge(obs)[0]
    assert sorted(finding) == ["actual", "check", "diagnosis", "expected", "remedy", "severity", "subject"]
    assert "ibdiagnet" in finding["diagnosis"] and "cable" in finding["remedy"]


def test_pfc_storm_by_rate_and_by_storm_event():
    obs = node()
    obs["ports"]["mlx5_0/1"]["rates"]["rx_pause"] = 50000.0
    assert found(obs) == [("pfc_storm", S0, "error")]
    assert found(obs, {"max_pause_per_s": 100000}) == []
    obs = node()
    obs["ports"]["mlx5_1/1"]["deltas"]["pause_storm_events"] = 1
    assert found(obs) == [("pfc_storm", "mlx5_1 port 1 (eth1)", "error")]


def test_ecn_cnp_surge_is_a_warning():
    obs = node()
    obs["ports"]["mlx5_0/1"]["rates"]["cnp_sent"] = 90000.0
    assert found(obs) == [("ecn", S0, "warning")]
    assert found(obs, {"severity": {"ecn": "error"}}) == [("ecn", S0, "error")]


def test_discards_and_symbol_errors():
    obs = node()
    obs["ports"]["mlx5_0/1"]["rates"]["rx_discards_phy"] = 3.2
    obs["ports"]["mlx5_1/1"]["rates"]["symbol_errors"] = 0.4
    assert found(obs) == [("discards", S0, "warning"), ("symbol_errors", "mlx5_1 port 1 (eth1)", "warning")]


def test_rates_of_a_down_port_are_not_judged():
    obs = node()
    obs["facts"]["devices"]["mlx5_0"]["ports"][0].update(state="DOWN", phys_state="Polling")
    obs["ports"]["mlx5_0/1"]["rates"]["rx_pause"] = 50000.0
    assert found(obs) == [("link", S0, "error")]


def test_flaps_and_the_boot_grace():
    obs = node()
    obs["ports"]["mlx5_0/1"]["flaps"] = {"count": 2, "value": 7, "grace": False, "window": "6h"}
    assert found(obs) == [("flap", S0, "error")]
    assert found(obs, {"max_flaps": 2}) == []
    obs["ports"]["mlx5_0/1"]["flaps"]["grace"] = True
    assert found(obs) == []


def test_gid_table_full_is_an_error_nearly_full_a_warning():
    obs = node()
    obs["ports"]["mlx5_0/1"]["gid_table"].update(used=16, free=0)
    assert found(obs) == [("gid_table", S0, "error")]
    obs["ports"]["mlx5_0/1"]["gid_table"].update(used=15, free=1)
    assert found(obs) == [("gid_table", S0, "warning")]
    assert found(obs, {"gid_occupancy_max": 0.95}) == []


def test_ipv4_without_roce_v2_gid():
    obs = node()
    # the netdev's addresses (ip -j addr) are what is judged, not the GIDs' own IPv4
    obs["ports"]["mlx5_0/1"]["gid_table"].update(ipv4_addresses=["10.0.0.1", "10.0.0.7"])
    assert found(obs) == [("gid_ipv4", S0, "error")]
    assert [f["actual"] for f in _health.judge(obs)] == ["none for 10.0.0.7"]
    obs["ports"]["mlx5_0/1"]["gid_table"].update(ipv4_addresses=["10.0.0.1"], ipv4_any=["10.0.0.1", "10.9.9.9"])
    assert found(obs) == []
    obs["ports"]["mlx5_0/1"]["gid_table"].update(roce_v2_ipv4=[], ipv4_addresses=["10.0.0.1"])
    assert found(obs) == [("gid_ipv4", S0, "error")]
    obs["ports"]["mlx5_0/1"]["gid_table"].update(roce_v2_ipv4=[], ipv4_any=[])    # a rail with no IPv4 GID
    assert found(obs) == [("gid_ipv4", S0, "error")]


def test_subnet_manager():
    obs = node("InfiniBand")
    obs["facts"]["devices"]["mlx5_0"]["ports"][0]["sm_lid"] = 0
    assert found(obs) == [("sm", "mlx5_0 port 1 (ib0)", "error")]
    obs = node("InfiniBand")
    obs["sm"]["mlx5_0/1"] = {"error": "no subnet manager answered"}
    assert found(obs) == [("sm", "mlx5_0 port 1 (ib0)", "error")]
    two = {"facts": {"master_count": 2, "master": {"lid": 1, "priority": 15},
                     "sm_ports": [{"lid": 1, "priority": 15, "state": "master"}, {"lid": 9, "priority": 0,
                                                                                  "state": "master"}]}}
    obs = node("InfiniBand")
    obs["sm"]["mlx5_1/1"] = two
    assert found(obs) == [("sm_master", "mlx5_1 port 1 (ib1)", "error")]
    one = copy.deepcopy(two)
    one["facts"].update(master_count=1, sm_ports=two["facts"]["sm_ports"][:1])
    obs["sm"]["mlx5_1/1"] = one
    assert found(obs) == []
    assert found(obs, {"sm_priority": 14}) == [("sm_priority", "mlx5_1 port 1 (ib1)", "warning")]


def _gdr(method="nvidia_peermem", redirect=False, dma_buf=False):
    return {"gpu_count": 2, "peer_memory": {"method": method, "modules_loaded": [method] if method else [],
                                            "dma_buf": dma_buf},
            "gpus": [{"gpu": "GPU0", "nic": "mlx5_0", "acs_redirect": redirect,
                      "acs_path": [{"bdf": "0000:17:00.0", "redirect": redirect}]}]}


def test_gpudirect_peer_memory_acs_and_dmabuf():
    obs = node()
    obs["gdr"] = _gdr()
    assert found(obs) == []
    obs["gdr"] = _gdr(method=None)
    assert found(obs) == [("gdr", "peer memory", "error")]
    obs["gdr"] = _gdr(redirect=True)
    assert found(obs) == [("gdr", "GPU0 -> mlx5_0 ACS", "error")]
    obs["gdr"] = _gdr(dma_buf=False)
    assert found(obs, {"dmabuf_enable": 1}) == [("dmabuf", "NCCL_DMABUF_ENABLE", "warning")]
    obs["gdr"] = _gdr(dma_buf=True)          # nvidia_peermem loaded: nccl_env sets 0
    assert found(obs, {"dmabuf_enable": 1}) == [("dmabuf", "NCCL_DMABUF_ENABLE", "warning")]
    assert found(obs, {"dmabuf_enable": 0}) == []
    obs["gdr"]["peer_memory"] = {"method": "dma_buf", "modules_loaded": [], "dma_buf": True}
    assert found(obs, {"dmabuf_enable": 1}) == []
    assert found(obs, {"dmabuf_enable": 0}) == [("dmabuf", "NCCL_DMABUF_ENABLE", "warning")]


def _hca(name, index, used=True, enabled=True):
    return {"index": index, "name": name, "port": 1, "link_layer": "RoCE", "gdr_enabled": enabled,
            "gdr_used": used, "channels": 2}


def test_nccl_log_judgement():
    obs = node()
    obs["nccl"] = {"nodes": {"n1": {"hcas": [_hca("mlx5_0", 0), _hca("mlx5_1", 1)], "no_device": False}}}
    assert found(obs) == []
    obs["nccl"]["nodes"]["n1"]["hcas"][1]["gdr_used"] = False
    assert found(obs) == [("nccl_gdr", "NCCL log (n1) HCA mlx5_1", "error")]
    obs["nccl"] = {"nodes": {"n1": {"hcas": [_hca("mlx5_0", 0)], "no_device": False}}}
    assert found(obs) == [("nccl_hca", "NCCL log (n1)", "warning")]
    obs["nccl"] = {"nodes": {"": {"hcas": [], "no_device": True, "network": "Socket"}}}
    assert found(obs) == [("nccl_hca", "NCCL log", "error")]


def test_ports_and_rate_per_gpu_model():
    models = {"H100": {"ports": 2, "min_rate_gbps": 400}}
    obs = node()
    assert found(obs, {"gpu_models": models}) == []
    obs["facts"]["devices"]["mlx5_1"]["ports"][0]["rate_gbps"] = 200
    assert sorted(found(obs, {"gpu_models": models})) == [
        ("ports", "rail ports (NVIDIA H100 80GB HBM3)", "error"), ("rate", "mlx5_1 port 1 (eth1)", "error")]
    # without model data the peer rate (fastest port of the model) still catches it
    assert found(obs) == [("rate", "mlx5_1 port 1 (eth1)", "error")]
    assert found(node(), {"gpu_models": {"H100": {"ports": 8, "min_rate_gbps": 400}}}) == [
        ("ports", "rail ports (NVIDIA H100 80GB HBM3)", "error")]


def test_numa_across_is_a_warning_and_ethtool_errors_counted():
    obs = node()
    obs["facts"]["devices"]["mlx5_1"]["numa_node"] = 1
    obs["ports"]["mlx5_0/1"]["ethtool"]["rx_crc_errors_phy"] = 3
    assert sorted(found(obs)) == [("counters", S0 + " rx_crc_errors_phy", "warning"), ("numa", "GPU1 -> mlx5_1", "warning")]


@pytest.mark.parametrize("checks, words", [
    ({"colour": 1}, "unknown check 'colour'"),
    ({"max_pause_per_s": -1}, "max_pause_per_s=-1"),
    ({"max_pause_per_s": float("nan")}, "max_pause_per_s=nan"),
    ({"gpu_models": {"H100": {"ports": "eight"}}}, "gpu_models.H100.ports='eight'"),
    ({"gpu_models": {"H100": {"colour": 1}}}, "gpu_models.H100"),
    ({"severity": {"ecn": "fatal"}}, "severity.ecn='fatal'"),
    ({"ethtool_limits": {"rx_crc_errors_phy": True}}, "ethtool_limits.rx_crc_errors_phy=True"),
])
def test_bad_checks_are_refused(checks, words):
    with pytest.raises(_health.HealthError) as exc:
        _health.judge(node(), checks)
    assert words in str(exc.value)


def test_input_shape_refused():
    for bad in (None, [], {"ports": {}}, {"facts": {"devices": None}}):
        with pytest.raises(_health.HealthError):
            _health.judge(bad)


# ---------------------------------------------------------------- flap state

def test_flaps_counted_run_to_run_over_the_window():
    state, flaps = _health_read.update_flaps({}, {"mlx5_0/1": 3}, 1000.0, 5000, "b1", 3600, 600)
    assert flaps["mlx5_0/1"]["count"] == 0                 # first run: the baseline
    state, flaps = _health_read.update_flaps(state, {"mlx5_0/1": 5}, 2000.0, 6000, "b1", 3600, 600)
    assert flaps["mlx5_0/1"]["count"] == 2
    state, flaps = _health_read.update_flaps(state, {"mlx5_0/1": 5}, 2500.0, 6500, "b1", 3600, 600)
    assert flaps["mlx5_0/1"]["count"] == 2                 # still inside the window
    state, flaps = _health_read.update_flaps(state, {"mlx5_0/1": 5}, 6000.0, 10000, "b1", 3600, 600)
    assert flaps["mlx5_0/1"]["count"] == 0                 # the events left the window


def test_flaps_boot_grace_new_boot_and_reset():
    state, flaps = _health_read.update_flaps({}, {"p": 1}, 100.0, 100, "b1", 3600, 600)
    state, flaps = _health_read.update_flaps(state, {"p": 4}, 200.0, 200, "b1", 3600, 600)
    assert flaps["p"] == {"count": 0, "value": 4, "grace": True, "window": "1h"}
    state, flaps = _health_read.update_flaps(state, {"p": 9}, 900.0, 900, "b2", 3600, 600)
    assert flaps["p"]["count"] == 0                        # a new boot: a new baseline
    state, flaps = _health_read.update_flaps(state, {"p": 2}, 1000.0, 1000, "b2", 3600, 600)
    assert flaps["p"]["count"] == 0 and state["ports"]["p"]["link_downed"] == 2   # counter reset
