# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Property tests from the grammar of Mellanox/mlnx-tools sbin/show_gids (print_gids): rows the script
can print read back through _rdma_facts.parse_show_gids(strict=True); lines it cannot print are refused."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.facts import _rdma_facts

hypothesis = pytest.importorskip("hypothesis")
st = hypothesis.strategies
FAST = hypothesis.settings(max_examples=40, deadline=None)

HEADER = "DEV\tPORT\tINDEX\tGID\t\t\t\t\tIPv4  \t\tVER\tDEV\n---\t----\t-----\t---\t\t\t\t\t------------  \t---\t---\n"
row_st = st.fixed_dictionaries({
    "index": st.integers(0, 255),
    "ipv4": st.one_of(st.none(), st.tuples(*[st.integers(0, 255)] * 4)),
    "low": st.lists(st.from_regex(r"\A[0-9a-f]{4}\Z"), min_size=4, max_size=4).filter(lambda low: low != ["0000"] * 4),
    "ver": st.sampled_from(["v1", "v2"]),
    "ndev": st.sampled_from(["", "ens1f0np0", "bond0", "net1", "b3.vxlan.30100", "ens1f0np0.100"]),
})


def _row(dev, row):
    if row["ipv4"]:
        gid = "0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x" % row["ipv4"]
        return "%s\t1\t%d\t%s\t%s  \t%s\t%s\n" % (dev, row["index"], gid, "%d.%d.%d.%d" % row["ipv4"], row["ver"], row["ndev"])
    gid = "fe80:0000:0000:0000:" + ":".join(row["low"])
    return "%s\t1\t%d\t%s\t\t\t%s\t%s\n" % (dev, row["index"], gid, row["ver"], row["ndev"])


@FAST
@hypothesis.given(st.lists(row_st, min_size=1, max_size=8, unique_by=lambda r: r["index"]), st.booleans(), st.booleans())
def test_printed_rows_read_back(rows, spaces, roce):
    if not roce:   # an InfiniBand port: IB/RoCE v1 type, no netdev, no IPv4 GID on any row
        rows = [dict(row, ndev="", ipv4=None, ver="v1") for row in rows]
    elif not all(row["ndev"] for row in rows):
        rows = [dict(row, ndev=row["ndev"] or "ens1f0np0") for row in rows]
    text = HEADER + "".join(_row("mlx5_1", r) for r in rows) + "n_gids_found=%d\n" % len(rows)
    if spaces:
        text = text.expandtabs()
    gids = _rdma_facts.parse_show_gids(text, {}, strict=True)["mlx5_1"]["ports"][0]["gids"]
    assert sorted(g["index"] for g in gids) == sorted(r["index"] for r in rows)
    by_index = dict((g["index"], g) for g in gids)
    for row in rows:
        got = by_index[row["index"]]
        assert got["netdev"] == (row["ndev"] or None)
        assert got["ipv4"] == ("%d.%d.%d.%d" % row["ipv4"] if row["ipv4"] else None)
        assert got["type"] == ("IB" if not row["ndev"] and row["ver"] == "v1" else "RoCE " + row["ver"])


NEAR_MISSES = [
    HEADER + "mlx5_0\t1\t0\tfe80:0000:0000\t\t\tv1\t\n",                          # a truncated GID
    HEADER + "mlx5_0\t1\t0\tfe80:0000:0000:0000:946d:ae03:00cd:e72c\t\t\tv3\t\n",  # no v3 in sysfs types
    HEADER + "mlx5_0\tone\t0\tfe80:0000:0000:0000:946d:ae03:00cd:e72c\t\t\tv1\t\n",
    HEADER + "mlx5_0\t1\t0\tfe80:0000:0000:0000:946d:ae03:00cd:e72c\t\t\tv1\tens1\textra\n",
    "GID[  0]:\t\tfe80:0000:0000:0000:946d:ae03:00cd:e72c, RoCE v2\n",            # ibv_devinfo -v
    "mlx5_0 port 1 ==> ib0 (Up)\n",                                                # ibdev2netdev
    "",
]


@pytest.mark.parametrize("text", NEAR_MISSES)
def test_near_misses_are_refused(text):
    with pytest.raises(ValueError, match="show_gids"):
        _rdma_facts.parse_show_gids(text, {}, strict=True)
