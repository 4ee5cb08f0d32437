# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Property tests from the grammar of rdma-core infiniband-diags/scripts/ibstatus (port_status):
outputs the script can print read back; lines it cannot print are refused."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.parsers import _ibstatus

hypothesis = pytest.importorskip("hypothesis")
st = hypothesis.strategies
FAST = hypothesis.settings(max_examples=40, deadline=None)

STATES = ["1: DOWN", "2: INIT", "3: ARMED", "4: ACTIVE", "5: ACTIVE_DEFER"]
PHYS = ["1: Sleep", "2: Polling", "3: Disabled", "4: PortConfigurationTraining", "5: LinkUp", "6: LinkErrorRecovery"]
RATES = ["10 Gb/sec (4X)", "40 Gb/sec (4X QDR)", "56 Gb/sec (4X FDR)", "25 Gb/sec (1X EDR)", "100 Gb/sec (4X EDR)",
         "200 Gb/sec (4X HDR)", "400 Gb/sec (4X NDR)", "2.5 Gb/sec (1X SDR)"]
port_st = st.fixed_dictionaries({
    "dev": st.from_regex(r"\A(mlx4|mlx5|hfi1|bnxt_re|irdma)_[0-9]{1,2}\Z"),
    "port": st.integers(1, 2),
    "gid": st.one_of(st.just("unknown"), st.lists(st.from_regex(r"\A[0-9a-f]{4}\Z"), min_size=8, max_size=8).map(":".join)),
    "lid": st.one_of(st.just("unknown"), st.integers(0, 0xffff).map(hex)),
    "smlid": st.integers(0, 0xffff).map(hex),
    "state": st.sampled_from(STATES + ["unknown"]),
    "phys": st.sampled_from(PHYS),
    "rate": st.sampled_from(RATES),
    "ll": st.sampled_from(["InfiniBand", "Ethernet", "IB", None]),   # None: before the link_layer line existed
})


def _print(port, indent):
    """What port_status echoes (TAB, key, TAB(s), the space echo puts between its arguments)."""
    lines = ["Infiniband device '%s' port %d status:" % (port["dev"], port["port"]),
             "%sdefault gid:\t %s" % (indent, port["gid"]), "%sbase lid:\t %s" % (indent, port["lid"]),
             "%ssm lid:\t\t %s" % (indent, port["smlid"]), "%sstate:\t\t %s" % (indent, port["state"]),
             "%sphys state:\t %s" % (indent, port["phys"]), "%srate:\t\t %s" % (indent, port["rate"])]
    if port["ll"]:
        lines.append("%slink_layer:\t %s" % (indent, port["ll"]))
    return "\n".join(lines) + "\n\n"


@FAST
@hypothesis.given(st.lists(port_st, min_size=1, max_size=4), st.sampled_from(["\t", "        "]))
def test_printed_ports_read_back(ports, indent):
    parsed = _ibstatus.parse("".join(_print(p, indent) for p in ports))
    assert parsed["errors"] == [] and len(parsed["ports"]) == len(ports)
    for port, got in zip(ports, parsed["ports"]):
        assert (got["device"], got["port"]) == (port["dev"], port["port"])
        assert got["base_lid"] == (None if port["lid"] == "unknown" else int(port["lid"], 16))
        assert got["sm_lid"] == int(port["smlid"], 16)
        assert got["state"] == (None if port["state"] == "unknown" else
                                {"id": int(port["state"][0]), "name": port["state"][3:]})
        assert got["phys_state"]["name"] == port["phys"].split(": ")[1]
        assert got["rate"]["text"] == port["rate"] and got["rate"]["gbps"] == float(port["rate"].split()[0])
        assert got["link_layer"] == {"IB": "InfiniBand", None: None}.get(port["ll"], port["ll"])


NEAR_MISSES = [
    "\tbase lid:\t 17\n",                                                 # a field before any device line
    "Infiniband device 'mlx5_0' port 1 status:\n\tbase lid:\t 17\n",      # decimal lid: the script prints sysfs hex
    "Infiniband device 'mlx5_0' port 1 status:\n\tstate:\t\t ACTIVE\n",    # state without its number
    "Infiniband device 'mlx5_0' port 1 status:\n\trate:\t\t 100\n",       # ibstat's rate, not sysfs's
    "Infiniband device 'mlx5_0' port 1 status:\n\tdefault gid:\t fe80:0000\n",   # a truncated GID
    "Infiniband device 'mlx5_0' port 1 status:\n\tlink_layer:\t RoCE\n",
    "Infiniband device 'mlx5_0' port 1 status:\n\tport_lid:\t 1\n",       # ibv_devinfo's key
    "CA 'mlx5_0'\n\tCA type: MT4129\n",                                   # ibstat output
    "mlx5_0 port 1 ==> ib0 (Up)\n",                                       # ibdev2netdev output
    "",
]


@pytest.mark.parametrize("text", NEAR_MISSES)
def test_near_misses_are_refused(text):
    with pytest.raises(ValueError, match="ibstatus"):
        _ibstatus.parse(text)


def test_fatal_error_is_an_error_not_a_port():
    assert _ibstatus.parse("Fatal error:  No devices\n") == {"ports": [], "errors": ["Fatal error:  No devices"]}
