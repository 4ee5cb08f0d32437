# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""rdma.fabric.qos_pending on the real mlnx_qos report MQ-MOCK-B-ROCE (samples/mlnx_qos.txt:
mlnx-tools HEAD run unmodified on stubbed kernel data) and grep-style ECN/ToS trees."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.rdma.fabric.plugins.filter.qos import FilterModule
from ansible_collections.rdma.fabric.tests.unit import samples

qos_pending = FilterModule().filters()["qos_pending"]

# trust dscp, PFC on 3, ETS tc0/tc3 50/50, tc6 strict, default DSCP map, [rc=0] line dropped
REPORT = samples.load("mlnx_qos.txt")["MQ-MOCK-B-ROCE"].raw.split("[rc=")[0]
MLNX = {"trust": "dscp", "pfc": [3]}
ECN = "".join("/sys/class/net/eth2/ecn/roce_%s/enable/%d:%d\n" % (point, prio, 1 if prio == 3 else 0)
              for point in ("np", "rp") for prio in range(8))
ECN += ("/sys/class/net/eth2/ecn/roce_np/cnp_dscp:48\n/sys/class/net/eth2/ecn/roce_np/cnp_802p_prio:6\n"
        "/sys/class/net/eth2/ecn/roce_rp/rpg_gd:11\n"
        "/sys/class/infiniband/mlx5_0/tc/1/traffic_class:Global tclass=106\n"
        "/sys/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_tos:106\n")
DCQCN = {"np": {"enabled_priorities": [3], "params": {"cnp_dscp": 48, "cnp_802p_prio": 6}},
         "rp": {"enabled_priorities": [3], "params": {}}, "roce_tos": 106, "rdma_cm_tos": 106}
PORTS = [{"netdev": "eth2", "device": "mlx5_0", "port": 1}]


def facts(report=REPORT, files=ECN, errors=()):
    return {"eth2": {"device": "mlx5_0", "port": 1, "mlnx_qos": report, "dcqcn": files, "errors": list(errors)}}


def test_converged_port_is_not_pending():
    assert qos_pending(facts(), PORTS, MLNX, DCQCN) == {"mlnx_qos": [], "dcqcn": []}


@pytest.mark.parametrize("mlnx, dcqcn, files, expected", [
    (dict(MLNX, pfc=[3, 4]), DCQCN, ECN, ["mlnx_qos"]),
    (dict(MLNX, trust="pcp"), DCQCN, ECN, ["mlnx_qos"]),
    (MLNX, DCQCN, ECN.replace("roce_rp/enable/3:1", "roce_rp/enable/3:0"), ["dcqcn"]),
    (MLNX, DCQCN, ECN.replace("roce_np/enable/5:0", "roce_np/enable/5:1"), ["dcqcn"]),   # replaced
    (MLNX, DCQCN, ECN.replace("default_roce_tos:106", "default_roce_tos:0"), ["dcqcn"]),
    (MLNX, DCQCN, ECN.replace("tclass=106", "tclass=0"), ["dcqcn"]),
    (MLNX, dict(DCQCN, rp={"params": {"rpg_gd": 12}}), ECN, ["dcqcn"]),
])
def test_one_difference_makes_the_port_pending(mlnx, dcqcn, files, expected):
    result = qos_pending(facts(files=files), PORTS, mlnx, dcqcn)
    assert sorted(k for k, v in result.items() if v == ["eth2"]) == expected
    assert all(v in ([], ["eth2"]) for v in result.values())


def test_merged_ignores_other_priorities():
    files = ECN.replace("roce_np/enable/5:0", "roce_np/enable/5:1")
    assert qos_pending(facts(files=files), PORTS, MLNX, DCQCN, "merged")["dcqcn"] == []
    assert qos_pending(facts(files=files), PORTS, MLNX, DCQCN, "replaced")["dcqcn"] == ["eth2"]


@pytest.mark.parametrize("live", [
    facts(report=None, errors=["mlnx_qos -i eth2 -a failed (rc=1): Netlink error"]),
    facts(report="Traceback (most recent call last):\n  File x\nKeyError: 'x'\n"),
    facts(files=None, errors=["interface=eth2: .../ecn does not exist"]),
    facts(files=ECN.replace("/sys/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_tos:106\n", "")),
    {},
])
def test_what_cannot_be_judged_is_pending(live):
    result = qos_pending(live, PORTS, MLNX, DCQCN)
    assert result["mlnx_qos"] == ["eth2"] or result["dcqcn"] == ["eth2"]
    if live and live["eth2"]["mlnx_qos"] is None:
        assert result["mlnx_qos"] == ["eth2"]
    if live and live["eth2"]["dcqcn"] != ECN:
        assert result["dcqcn"] == ["eth2"]


def test_bad_config_is_pending_so_the_module_reports_it():
    assert qos_pending(facts(), PORTS, dict(MLNX, pfc=[9]), DCQCN)["mlnx_qos"] == ["eth2"]
    assert qos_pending(facts(), PORTS, MLNX, dict(DCQCN, np={"params": {"no_such": 1}}))["dcqcn"] == ["eth2"]


def test_null_config_skips_the_module():
    assert qos_pending(facts(report=None), PORTS, None, DCQCN) == {"mlnx_qos": [], "dcqcn": []}


def test_bad_input_is_refused():
    with pytest.raises(AnsibleFilterError, match="ansible_facts.rdma.qos"):
        qos_pending(None, PORTS, MLNX, DCQCN)
    with pytest.raises(AnsibleFilterError, match="state='deleted'"):
        qos_pending(facts(), PORTS, MLNX, DCQCN, "deleted")
