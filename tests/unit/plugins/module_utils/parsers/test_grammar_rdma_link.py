# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Property tests from iproute2 rdma/link.c (link_parse_cb, link_print_*; before 5.5, 5.5+, -d, -o, -j)."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.parsers import _rdma_link

hypothesis = pytest.importorskip("hypothesis")
st = hypothesis.strategies
given, settings = hypothesis.given, hypothesis.settings

STATES = ["NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER", "UNKNOWN"]
PHYS = ["NOP", "SLEEP", "POLLING", "DISABLED", "ARMED", "LINK_UP", "LINK_ERROR_RECOVER", "PHY_TEST", "UNKNOWN",
        "OPA_OFFLINE", "OPA_TEST"]
CAPS = ["SM", "NOTICE", "TRAP", "CM", "OTHER_LOCAL_CHANGES", "EXTENDED_SPEEDS", "CAP_MASK2", "LINK_SPEED_HDR", "UNKNOWN"]


@st.composite
def _link(draw):
    link = {"device": draw(st.from_regex(r"(mlx5_(bond_)?[0-9]{1,2}|rxe[0-9]|rocep[0-9]s0f[01]|i40iw[0-9])\Z",
                                         fullmatch=True)),
            "port": draw(st.integers(1, 2)), "state": draw(st.sampled_from(STATES)),
            "physical_state": draw(st.sampled_from(PHYS)), "subnet_prefix": None, "lid": None, "sm_lid": None,
            "lmc": None, "netdev": None, "netdev_index": None, "caps": None}
    if draw(st.booleans()):  # IB port
        link.update(subnet_prefix="fe80:0000:0000:0000", lid=draw(st.integers(0, 65535)),
                    sm_lid=draw(st.integers(0, 65535)), lmc=draw(st.integers(0, 7)))
    if draw(st.booleans()):
        link.update(netdev=draw(st.from_regex(r"(ib|eth|ens|enp)[0-9a-z]{1,10}\Z", fullmatch=True)),
                    netdev_index=draw(st.integers(1, 999)))
    if draw(st.booleans()):
        link["caps"] = draw(st.lists(st.sampled_from(CAPS), min_size=1, max_size=6))
    return link


_LINKS = st.lists(_link(), min_size=1, max_size=5, unique_by=lambda link: (link["device"], link["port"]))


def _print(links, layout, details, oneline=False):
    out = []
    for idx, link in enumerate(links):
        line = "%d/%d: %s/%d: " % (idx, link["port"], link["device"], link["port"]) if layout == "old" else \
            "link %s/%d " % (link["device"], link["port"])
        if link["subnet_prefix"]:
            values = (link["subnet_prefix"], link["lid"], link["sm_lid"], link["lmc"])
            line += "subnet_prefix %s lid %d sm_lid %d lmc %d " % values
        line += "state %s physical_state %s " % (link["state"], link["physical_state"])
        if link["netdev"]:
            line += "netdev %s " % link["netdev"] + ("netdev_index %d " % link["netdev_index"] if details else "")
        if details and link["caps"]:
            line += ("\\" if oneline else "\n") + "    caps: <%s>" % ", ".join(link["caps"])
        out.append(line + "\n")
    return "".join(out)


def _expected(links, details):
    out = []
    for link in links:
        link = dict(link)
        if not details:
            link.update(netdev_index=None, caps=None)
        elif not link["netdev"]:
            link["netdev_index"] = None
        out.append(link)
    return out


@settings(max_examples=40, deadline=None)
@given(_LINKS, st.sampled_from(["old", "new"]), st.booleans(), st.booleans())
def test_reads_back_what_rdma_link_prints(links, layout, details, oneline):
    assert _rdma_link.parse(_print(links, layout, details, oneline)) == _expected(links, details)


@settings(max_examples=40, deadline=None)
@given(_LINKS, st.booleans())
def test_reads_back_rdma_json(links, old):
    data = []
    for idx, link in enumerate(links):
        obj = {"ifindex": idx, "ifname": "%s/%d" % (link["device"], link["port"]) if old else link["device"],
               "port": link["port"]}
        obj.update((k, link[k]) for k in ("subnet_prefix", "lid", "sm_lid", "lmc", "state", "physical_state", "netdev",
                                          "netdev_index", "caps") if link[k] is not None)
        data.append(obj)
    expected = [dict(link, netdev_index=link["netdev_index"] if link["netdev"] else None) for link in links]
    assert _rdma_link.parse(json.dumps(data)) == expected
    assert _rdma_link.parse("\n,".join(json.dumps(o) for o in data).join(["[", "\n]\n"])) == expected


@settings(max_examples=40, deadline=None)
@given(_LINKS, st.sampled_from(["lid x", "state", "bogus 1", "lmc -1", "\tstate ACTIVE"]))
def test_a_field_rdma_link_cannot_print_is_refused(links, bad):
    text = _print(links, "new", False).replace(" \n", " %s \n" % bad, 1) if not bad.startswith("\t") else \
        _print(links, "new", False) + bad + "\n"
    with pytest.raises(ValueError):
        _rdma_link.parse(text)


@pytest.mark.parametrize("text", [
    "", "Failed to open NETLINK_RDMA socket\n", "Wrong device name\n", "    caps: <CM>\n",
    "mlx5_0 port 1 ==> ens1f0 (Up)\n", "NIC statistics:\n     rx_packets: 1\n", "[]", "[{\"ifname\": \"mlx5_0\"}]",
    "link mlx5_0/1 state ACTIVE\nlink mlx5_0/1 state DOWN\n",
])
def test_near_misses_are_refused(text):
    with pytest.raises(ValueError):
        _rdma_link.parse(text)
