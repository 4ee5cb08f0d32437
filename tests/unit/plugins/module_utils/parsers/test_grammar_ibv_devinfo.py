# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Property tests from ibv_devinfo's grammar (rdma-core libibverbs/examples/devinfo.c,
print_hca_cap()): outputs the printing code could produce, printed with its TABs, with the TABs
expanded (a paste) or with the indent lost, read back; near-misses refused."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ipaddress

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.parsers import _ibv_devinfo

hypothesis = pytest.importorskip("hypothesis")
st = hypothesis.strategies
given, settings = hypothesis.given, hypothesis.settings

SETTINGS = settings(max_examples=40, deadline=None)

# devinfo.c's flag words, with the ones that hold spaces or a colon
FLAGS = ["BAD_PKEY_CNTR", "RC_RNR_NAK_GEN", "XRC", "NO SUPPORT", "SUPPORT_SEND", "SUPPORT_SRQ", "ODP_SUPPORT",
         "C-VLAN stripping offload", "Scatter FCS offload", "IP csum offload", "Delay drop", "RAW_SCATTER_FCS",
         "Unknown flags: 0xC8400000", "QP_ATTACH_SEND"]
LIST_KEYS = ["device_cap_flags", "general_odp_caps", "rc_odp_caps", "uc_odp_caps", "ud_odp_caps", "xrc_odp_caps",
             "raw packet caps", "device_cap_flags_ex", "comp_cntr_caps"]
SCALAR_KEYS = ["max_qp", "max_qp_wr", "max_sge", "max_cq", "max_pd", "max_pkeys", "num_comp_vectors"]
NOTES = ["tag matching not supported", "core clock not supported", "completion_timestamp_mask not supported"]
STATES = [("PORT_DOWN", 1), ("PORT_INIT", 2), ("PORT_ARMED", 3), ("PORT_ACTIVE", 4)]
PHYS = [("POLLING", 2), ("DISABLED", 3), ("PORT_CONFIGURATION TRAINNING", 4), ("LINK_UP", 5), ("PHY TEST", 7)]
SPEEDS = [("2.5 Gbps", 1), ("10.0 Gbps", 8), ("25.0 Gbps", 32), ("50.0 Gbps", 64), ("100.0 Gbps", 128), ("200.0 Gbps", 256)]


def _key(key, value, column=40, indent=8):
    """'\\tkey:' and devinfo.c's TABs to the value column."""
    col = indent + len(key) + 1
    return "%s%s:%s%s\n" % ("\t" * (indent // 8), key, "\t" * max(1, (column - col // 8 * 8) // 8), value)


gids = st.lists(st.tuples(st.integers(0, 255), st.sampled_from(["v1", "v2", None]),
                          st.one_of(st.integers(1, 2 ** 32 - 1).map(lambda n: "ipv4"), st.just("ll"))),
                max_size=5, unique_by=lambda g: g[0])


@st.composite
def devices(draw):
    out = []
    for number in range(draw(st.integers(1, 3))):
        dev = {"name": draw(st.sampled_from(["mlx5_%d", "rocep%ds0f1", "irdma%d", "mlx5_bond_%d"])) % number,
               "fw": "%d.%d.%d" % (draw(st.integers(12, 40)), draw(st.integers(0, 45)), draw(st.integers(0, 9999))),
               "scalars": [(k, str(draw(st.integers(0, 2 ** 31))))
                           for k in draw(st.lists(st.sampled_from(SCALAR_KEYS), unique=True, max_size=4))],
               "lists": [(k, draw(st.lists(st.sampled_from(FLAGS), min_size=1, max_size=5, unique=True)))
                         for k in draw(st.lists(st.sampled_from(LIST_KEYS), unique=True, max_size=5))],
               "notes": draw(st.lists(st.sampled_from(NOTES), unique=True, max_size=2)),
               "ofed4": draw(st.booleans()), "ports": []}
        for port in range(1, draw(st.integers(1, 2)) + 1):
            eth = draw(st.booleans())
            dev["ports"].append({"port": port, "eth": eth, "state": draw(st.sampled_from(STATES)),
                                 "phys": draw(st.sampled_from(PHYS)), "speed": draw(st.sampled_from(SPEEDS)),
                                 "size": draw(st.integers(1, 256)), "lid": draw(st.integers(0, 49151)),
                                 "effective": draw(st.booleans()), "typed": draw(st.booleans()), "gids": draw(gids)})
        out.append(dev)
    return out


def _gid(port, index, kind, family):
    addr = ipaddress.IPv6Address("::ffff:10.%d.%d.1" % (port["port"], index)) if family == "ipv4" else \
        ipaddress.IPv6Address("fe80::%x" % (index + 1))
    if port["eth"] and port["typed"] and kind == "v2":
        return addr, str(addr) if not addr.ipv4_mapped else "::ffff:%s" % addr.ipv4_mapped, "RoCE v2"
    return addr, addr.exploded, ("RoCE v1" if port["eth"] and port["typed"] else None)


def render(devs):
    """What devinfo.c prints with -v (MLNX_OFED 4.x: a 'Device ports:' header)."""
    out = []
    for dev in devs:
        out.append("hca_id:\t%s\n" % dev["name"] + _key("transport", "InfiniBand (0)") + _key("fw_ver", dev["fw"]))
        out.append(_key("phys_port_cnt", str(len(dev["ports"]))))
        for key, value in dev["scalars"]:
            out.append(_key(key, value))
        for key, flags in dev["lists"]:
            out.append(_key(key, "0x1F") if "flags" in key else "\t%s:\n" % key)
            out.extend("\t\t\t\t\t%s\n" % flag for flag in flags)
        out.extend("\t%s\n" % note for note in dev["notes"])
        if dev["ofed4"]:
            out.append("\tDevice ports:\n")
        for port in dev["ports"]:
            out.append("\t\tport:\t%d\n" % port["port"])
            out.append(_key("state", "%s (%d)" % port["state"], 48, 24) + _key("sm_lid", "0", 48, 24))
            out.append(_key("port_lid", str(port["lid"]), 48, 24))
            out.append(_key("link_layer", "Ethernet" if port["eth"] else "InfiniBand", 48, 24))
            out.append(_key("gid_tbl_len", str(port["size"]), 48, 24))
            out.append(_key("active_speed", "%s (%d)" % port["speed"], 48, 24))
            if port["effective"]:
                out.append("\t\t\teffective_speed:\t%s\n" % port["speed"][0])
            out.append(_key("phys_state", "%s (%d)" % port["phys"], 48, 24))
            for index, kind, family in sorted(port["gids"]):
                dummy, text, suffix = _gid(port, index, kind, family)
                out.append("\t\t\tGID[%3d]:\t\t%s%s\n" % (index, text, ", " + suffix if suffix else ""))
            out.append("\n")
    return "".join(out)


def _pasted(text, how):
    if how == "tabs":
        return text
    if how == "expanded":
        return "\n".join(line.expandtabs(8) for line in text.split("\n"))
    return "\n".join(line.strip() for line in text.split("\n"))     # the indent lost


@SETTINGS
@given(devices(), st.sampled_from(["tabs", "expanded", "flush"]))
def test_reads_back_what_devinfo_prints(devs, how):
    got = _ibv_devinfo.parse(_pasted(render(devs), how))
    assert sorted(got) == sorted(d["name"] for d in devs)
    for dev in devs:
        device = got[dev["name"]]
        assert device["fw_ver"] == dev["fw"]
        for key, value in dev["scalars"]:
            assert device[key] == value
        assert dict((k, v) for k, v in device["lists"].items()) == dict(dev["lists"])
        assert device["notes"] == dev["notes"]
        for port in dev["ports"]:
            seen = device["ports"][port["port"]]
            assert (seen["state"], seen["phys_state"], seen["gid_tbl_len"], seen["port_lid"]) == (
                port["state"][0], port["phys"][0], port["size"], port["lid"])
            assert seen["active_speed"] == float(port["speed"][0].split()[0])
            if port["effective"]:
                assert seen["effective_speed"] == seen["active_speed"]
            want = [(i, _gid(port, i, k, f)[0].exploded, _gid(port, i, k, f)[2]) for i, k, f in sorted(port["gids"])]
            assert [(g["index"], g["gid"], g["type"]) for g in seen["gids"]] == want
            table = _ibv_devinfo.gid_table(seen)
            assert table["used"] == len(port["gids"]) and table["size"] == port["size"]


NEAR_MISSES = [
    ("prose at the device indent", lambda text: text.replace("\tphys_port_cnt:", "\tthis is prose\n\tphys_port_cnt:", 1)),
    ("a truncated number", lambda text: text.replace("gid_tbl_len:\t\t", "gid_tbl_len:\t\t0x", 1)),
    ("a GID that is no address", lambda text: text.replace("\t\t\tstate:", "\t\t\tGID[  9]:\t\tfe80::zz\n\t\t\tstate:", 1)),
    ("a port line the tool cannot print", lambda text: text.replace("\t\t\tstate:", "\t\t\tlink is fine\n\t\t\tstate:", 1)),
    ("stderr of a failure", lambda text: text + "Failed to query port 2 props\n"),
    ("a device twice", lambda text: text + text.split("\n\n")[0] + "\n"),
]


@SETTINGS
@given(devices(), st.sampled_from(NEAR_MISSES), st.sampled_from(["tabs", "expanded"]))
def test_near_misses_are_refused(devs, miss, how):
    dummy, change = miss
    text = change(render(devs))
    with pytest.raises(ValueError):
        _ibv_devinfo.parse(_pasted(text, how))


@pytest.mark.parametrize("text", [
    "",
    "2 HCAs found:\n\tmlx5_0\n\tmlx5_1\n\n",                                       # ibv_devinfo -l
    "CA 'mlx5_0'\n\tCA type: MT4129\n\tNumber of ports: 1\n",                     # ibstat
    "    device                 node GUID\n    ------              ----------------\n",   # ibv_devices
    "IB device 'mlx5_9' wasn't found\n",
    "No IB devices found\n",
    "hca_id:\tmlx5_0\n\ttransport:\t\t\tInfiniBand (0)\n\tthe HCA is fine\n",
])
def test_other_outputs_are_refused(text):
    with pytest.raises(ValueError):
        _ibv_devinfo.parse(text)
