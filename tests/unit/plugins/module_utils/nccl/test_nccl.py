# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""NCCL derivation: NCCL_IB_HCA, GID index, TC arithmetic, GDR level, names, nccl.conf (samples nccl.txt)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.nccl import _nccl
from ansible_collections.rdma.fabric.tests.unit import samples

NCCL = samples.load("nccl.txt")


def rail(device, port=1, port_count=1, link_layer="Ethernet", netdev=None, gids=()):
    return {"device": device, "port": port, "port_count": port_count, "link_layer": link_layer,
            "netdev": netdev, "ipv4_gids": list(gids)}


def gid(index, ipv4, netdev, gtype="RoCE v2"):
    return {"index": index, "ipv4": ipv4, "netdev": netdev, "type": gtype}


# ------------------------------------------------------------------ NCCL_IB_HCA

def test_ib_hca_exact_form_in_rail_order():
    rails = [rail("mlx5_0"), rail("mlx5_3"), rail("mlx5_10"), rail("mlx5_2")]
    assert _nccl.ib_hca(rails) == "=mlx5_0,mlx5_3,mlx5_10,mlx5_2"


def test_ib_hca_shared_nic_listed_once_and_names_accepted():
    assert _nccl.ib_hca(["mlx5_0", "mlx5_0", "mlx5_1"]) == "=mlx5_0,mlx5_1"


def test_ib_hca_port_suffix_where_it_matters():
    rails = [rail("mlx4_0", port=1, port_count=2), rail("mlx4_0", port=2, port_count=2), rail("mlx5_1")]
    assert _nccl.ib_hca(rails) == "=mlx4_0:1,mlx4_0:2,mlx5_1"
    assert _nccl.ib_hca([rail("mlx5_0", port=2)]) == "=mlx5_0:2"
    assert _nccl.ib_hca(rails, ports="always") == "=mlx4_0:1,mlx4_0:2,mlx5_1:1"
    assert _nccl.ib_hca(rails, ports="never") == "=mlx4_0,mlx5_1"


def test_ib_hca_matches_doc_example_shape():
    doc = NCCL["NCCL-DOC-IB-HCA-EXAMPLES"].raw  # "=mlx5_0:1,mlx5_1:1    : Use ports 1 of cards ..."
    expected = doc.splitlines()[1].split()[0]
    assert _nccl.ib_hca([rail("mlx5_0"), rail("mlx5_1")], ports="always") == expected


def test_ib_hca_excludes_and_refuses_empty():
    assert _nccl.ib_hca([rail("mlx5_0"), rail("mlx5_1")], exclude=["mlx5_1"]) == "=mlx5_0"
    with pytest.raises(_nccl.NcclError, match="no compute rail left"):
        _nccl.ib_hca([rail("mlx5_0")], exclude=["mlx5_0"])
    with pytest.raises(_nccl.NcclError, match="no compute rail"):
        _nccl.ib_hca([])


def test_ib_hca_bad_inputs():
    with pytest.raises(_nccl.NcclError, match="ports must be one of"):
        _nccl.ib_hca(["mlx5_0"], ports="some")
    with pytest.raises(_nccl.NcclError, match=r"device name 'mlx5_0,mlx5_1' cannot be written"):
        _nccl.ib_hca(["mlx5_0,mlx5_1"])
    with pytest.raises(_nccl.NcclError, match=r"rails\[0\] \(mlx5_0\): port must be 1 or more"):
        _nccl.ib_hca([rail("mlx5_0", port=0)])
    with pytest.raises(_nccl.NcclError, match="at most 32"):
        _nccl.ib_hca(["mlx5_%d" % i for i in range(33)])


# ------------------------------------------------------------------ NCCL_IB_GID_INDEX

def test_gid_index_roce_v2_ipv4_of_rail_netdev():
    rails = [
        rail("mlx5_0", netdev="ens1np0", gids=[gid(2, "10.0.0.1", "ens1np0", "RoCE v1"), gid(3, "10.0.0.1", "ens1np0")]),
        rail("mlx5_1", netdev="ens2np0", gids=[gid(3, "10.0.1.1", "ens2np0"), gid(11, "10.100.0.1", "ens2np0.100")]),
    ]
    assert _nccl.gid_index(rails) == 3


def test_gid_index_addresses_pick_the_vlan_gid():
    rails = [rail("mlx5_1", netdev="ens2np0", gids=[gid(3, "10.0.1.1", "ens2np0"), gid(11, "10.100.0.1", "ens2np0.100")])]
    assert _nccl.gid_index(rails, addresses={"mlx5_1": "10.100.0.1"}) == 11
    with pytest.raises(_nccl.NcclError, match="mlx5_1 port 1 has no RoCE v2 GID for IPv4 10.9.9.9"):
        _nccl.gid_index(rails, addresses={"mlx5_1": "10.9.9.9"})
    with pytest.raises(_nccl.NcclError, match=r"addresses\[mlx5_1\]: 'fe80::1' is not an IPv4"):
        _nccl.gid_index(rails, addresses={"mlx5_1": "fe80::1"})


def test_gid_index_missing_ipv4_names_the_device():
    rails = [rail("mlx5_0", netdev="ens1np0", gids=[gid(3, "10.0.0.1", "ens1np0")]),
             rail("mlx5_7", netdev="ens7np0", gids=[gid(2, "10.0.7.1", "ens7np0", "RoCE v1")])]
    with pytest.raises(_nccl.NcclError, match=r"mlx5_7 port 1 \(netdev ens7np0\) has no RoCE v2 GID with an IPv4"):
        _nccl.gid_index(rails)


def test_gid_index_disagreement_is_an_error():
    rails = [rail("mlx5_0", netdev="a", gids=[gid(3, "10.0.0.1", "a")]),
             rail("mlx5_1", netdev="b", gids=[gid(5, "10.0.1.1", "b")])]
    with pytest.raises(_nccl.NcclError, match="mlx5_0=3, mlx5_1=5"):
        _nccl.gid_index(rails)


def test_gid_index_two_addresses_on_one_netdev_is_ambiguous():
    rails = [rail("mlx5_0", netdev="a", gids=[gid(3, "10.0.0.1", "a"), gid(5, "10.0.0.2", "a")])]
    with pytest.raises(_nccl.NcclError, match="several IPv4 RoCE v2 GIDs"):
        _nccl.gid_index(rails)


def test_gid_index_infiniband_rails_give_none():
    assert _nccl.gid_index([rail("mlx5_0", link_layer="InfiniBand")]) is None


# ------------------------------------------------------------------ NCCL_IB_TC

@pytest.mark.parametrize("dscp, ecn, expected", [
    (26, 0, 104), (26, 2, 106), (26, "ect0", 106), (26, "ECT(0)", 106), (26, True, 106),
    (26, False, 104), (0, 0, 0), (63, 3, 255), (48, 0, 192), ("26", "2", 106), (24, "ce", 99),
])
def test_traffic_class_arithmetic(dscp, ecn, expected):
    assert _nccl.traffic_class(dscp, ecn) == expected


def test_traffic_class_matches_real_roce_env():
    env = NCCL["NCCL-REAL-ENV-ROCE-H100"].raw  # NCCL_IB_TC=106 for DSCP 26 with ECT(0)
    assert "NCCL_IB_TC=%d" % _nccl.traffic_class(26, "ect0") in env


@pytest.mark.parametrize("dscp, ecn, message", [
    (64, 0, "dscp must be an integer 0-63, got 64"), (-1, 0, "dscp must be"), (True, 0, "dscp must be"),
    (26, 4, "ecn must be 0-3, got 4"), (26, "ect2", "ecn must be 0-3, true/false or one of"),
])
def test_traffic_class_bad_inputs(dscp, ecn, message):
    with pytest.raises(_nccl.NcclError, match=message.replace("(", r"\(")):
        _nccl.traffic_class(dscp, ecn)


# ------------------------------------------------------------------ NCCL_NET_GDR_LEVEL

@pytest.mark.parametrize("value, expected", [("PIX", "PIX"), ("SYS", "SYS"), ("PXN", "PXN"), ("C2C", "C2C"),
                                             ("P2C", "P2C"), ("LOC", "LOC"), (2, "2"), ("5", "5")])
def test_gdr_level_valid(value, expected):
    assert _nccl.gdr_level(value) == expected


@pytest.mark.parametrize("value, message", [
    ("NODE", "NODE is an nvidia-smi topo code"), ("pix", "case-sensitive: write 'PIX'"),
    ("FOO", "must be one of LOC"), (-1, "0 or more"), ("03", "leading zero"), (True, "must be one of"),
])
def test_gdr_level_invalid(value, message):
    with pytest.raises(_nccl.NcclError, match=message):
        _nccl.gdr_level(value)


# ------------------------------------------------------------------ names

def test_known_names_pass_and_are_sorted():
    assert _nccl.validate_names(["NCCL_IB_TC", "NCCL_IB_HCA"]) == ["NCCL_IB_HCA", "NCCL_IB_TC"]


def test_typo_refused_with_suggestion():
    with pytest.raises(_nccl.NcclError, match="NCCL_IB_HCAS is not a known NCCL variable; did you mean NCCL_IB_HCA"):
        _nccl.validate_names(["NCCL_IB_HCAS"])
    # the real typo seen in NCCL-REAL-OPENSHIFT-ROCE
    with pytest.raises(_nccl.NcclError, match="did you mean NCCL_IB_HCA"):
        _nccl.validate_names(["NCCL_IB_HBA"])


def test_typo_allowed_explicitly():
    assert _nccl.validate_names(["NCCL_IB_HCAS"], allowed=["NCCL_IB_HCAS"]) == ["NCCL_IB_HCAS"]


def test_bad_name_syntax():
    with pytest.raises(_nccl.NcclError, match="'export NCCL_DEBUG' is not a valid variable name"):
        _nccl.validate_names(["export NCCL_DEBUG"])


def test_all_variables_of_the_real_env_sample_but_nccl_timeout_are_known():
    env = NCCL["NCCL-REAL-ENV-ROCE-H100"].raw
    names = [item.split("=", 1)[0] for item in env.split()]
    unknown = [n for n in names if n not in _nccl.KNOWN_VARIABLES]
    assert unknown == ["NCCL_TIMEOUT"]  # set by the launcher, not read by NCCL


# ------------------------------------------------------------------ nccl.conf

def test_render_conf_sorted_plain_lines_round_trip():
    settings = {"NCCL_IB_TC": 106, "NCCL_IB_HCA": "=mlx5_0,mlx5_3", "NCCL_SOCKET_IFNAME": "=ens1f0",
                "NCCL_IB_DISABLE": False, "NCCL_DEBUG": None}
    text = _nccl.render_conf(settings, header="Managed by Ansible\n")
    assert text == ("# Managed by Ansible\nNCCL_IB_DISABLE=0\nNCCL_IB_HCA==mlx5_0,mlx5_3\n"
                    "NCCL_IB_TC=106\nNCCL_SOCKET_IFNAME==ens1f0\n")
    assert _nccl.parse_conf(text) == {"NCCL_IB_DISABLE": "0", "NCCL_IB_HCA": "=mlx5_0,mlx5_3",
                                      "NCCL_IB_TC": "106", "NCCL_SOCKET_IFNAME": "=ens1f0"}


def test_parse_conf_doc_example():
    parsed = _nccl.parse_conf(NCCL["NCCL-DOC-NCCLCONF-CURRENT"].raw)
    assert parsed == {"NCCL_DEBUG": "WARN", "NCCL_SOCKET_IFNAME": "=ens1f0"}


@pytest.mark.parametrize("value, message", [
    ("a\nNCCL_DEBUG=INFO", "contains a newline"), (" PIX", "leading or trailing whitespace"),
    ("PIX ", "leading or trailing whitespace"), ('"=mlx5_0"', "is quoted"), ("", "empty value"),
    ("010", r"leading zero.*\('010' is 8\)"), (1.5, "string or an integer"),
])
def test_render_conf_rejects_values(value, message):
    with pytest.raises(_nccl.NcclError, match=message):
        _nccl.render_conf({"NCCL_IB_TIMEOUT": value})


def test_render_conf_rejects_unknown_name():
    with pytest.raises(_nccl.NcclError, match="NCCL_IB_TIMOUT is not a known NCCL variable; did you mean NCCL_IB_TIMEOUT"):
        _nccl.render_conf({"NCCL_IB_TIMOUT": 22})


def test_render_empty():
    assert _nccl.render_conf({}) == ""


def test_dmabuf_enable_decision_and_bad_input():
    from ansible_collections.rdma.fabric.plugins.module_utils.nccl import _nccl
    assert _nccl.dmabuf_enable({"dma_buf": True, "modules_loaded": []}) == 1
    assert _nccl.dmabuf_enable({"dma_buf": True, "modules_loaded": ["nvidia_peermem"]}) == 0
    assert _nccl.dmabuf_enable({"dma_buf": False, "modules_loaded": []}) == 0
    with pytest.raises(_nccl.NcclError, match="peer_memory"):
        _nccl.dmabuf_enable({"method": None})
