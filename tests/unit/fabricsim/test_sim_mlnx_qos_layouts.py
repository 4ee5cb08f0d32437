"""fabricsim's mlnx_qos prints the layouts of the real corpus (tests/unit/fixtures/samples/mlnx_qos.txt):
each mlnx-tools release variant reads back through the collection's parser, and two real pastes are
reproduced byte for byte (TABs turned to 8 spaces, as in the pastes)."""
import re

import pytest

import samples
from ansible_collections.rdma.fabric.plugins.module_utils.resources import _mlnx_qos

MQ = samples.load("mlnx_qos.txt")
IF = "enp24s0np0"
DESCENDING = [[5, d >> 3, d] for d in range(63, -1, -1)]
DEFAULT_PRIO_TC = [1, 0, 2, 3, 4, 5, 6, 7]


def paste_of(sample_id):
    return "".join(ln for ln in MQ[sample_id].raw.splitlines(True) if not re.match(r"^\S*[$#] ?mlnx_qos|^\[rc=", ln))


def setup(sim, variant, **values):
    sim.edit_profile(lambda d: d.__setitem__("mlnx_qos_variant", variant), reset=False)

    def fn(nic):
        nic["qos"][IF].update(values)
    sim.edit(fn)


def test_ofed42_layout_matches_the_netarbiter_paste(sim):
    sim.init("hgx-h100-roce")
    setup(sim, "ofed42", dcbx="os", apps=DESCENDING, pfc_en=8, prio_tc=DEFAULT_PRIO_TC, tsa=["vendor"] * 8,
          maxrate=[0] * 8, delay=7)
    out, _err, rc = sim.run("mlnx_qos", "-i", IF)
    assert rc == 0
    assert out.replace("\t", "        ") == paste_of("MQ-REAL-NETARBITER-OFED42-DSCP")


def test_ofed46_layout_matches_the_centos12_paste(sim):
    sim.init("hgx-h100-roce")
    setup(sim, "ofed46", dcbx="os", apps=DESCENDING, pfc_en=0, prio_tc=DEFAULT_PRIO_TC, tsa=["vendor"] * 8,
          maxrate=[0] * 8, delay=7, buffer_size=[524160, 0, 0, 0, 0, 0, 0, 0], prio2buffer=[0] * 8)
    out, _err, rc = sim.run("mlnx_qos", "-i", IF)
    assert rc == 0
    assert out.replace("\t", "        ") == paste_of("MQ-REAL-CENTOS12-DSCP-BARE-COMMA")


@pytest.mark.parametrize("variant", ["head", "2023", "2022", "old", "norate", "ofed5", "ofed46", "ofed42", "2017-trust", "2017"])
def test_every_variant_reads_back(sim, variant):
    sim.init("hgx-h100-roce")
    setup(sim, variant, apps=DESCENDING, pfc_en=8, prio_tc=DEFAULT_PRIO_TC)
    out, _err, rc = sim.run("mlnx_qos", "-i", IF, "-a")
    assert rc == 0
    state = _mlnx_qos.parse_report(out)
    assert state["pfc"] == [3]
    if variant == "2017":
        assert state["trust"] is None
    else:
        assert state["trust"] == "dscp"
    assert state["prio_tc"] == DEFAULT_PRIO_TC
