# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Property tests from ethtool's printing code (ethtool.c dump_stats: '     %.*s: %llu\\n' after 'NIC statistics:')."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.parsers import _ethtool_stats

hypothesis = pytest.importorskip("hypothesis")
st = hypothesis.strategies
given, settings = hypothesis.given, hypothesis.settings

# driver strings: mlx5 names, other drivers' '[0]: rx_bytes' / 'rxq0: rx_pkts', names with spaces or dots
_NAME = st.one_of(
    st.from_regex(r"(rx|tx)_prio[0-7]_(bytes|packets|pause|pause_duration|discards)\Z", fullmatch=True),
    st.from_regex(r"(rx|tx|ch)[0-9]{1,2}_[a-z_]{2,20}\Z", fullmatch=True),
    st.from_regex(r"\[[0-9]\]: [a-z_]{2,20}\Z", fullmatch=True),
    st.from_regex(r"[a-z][a-z0-9_. -]{0,25}[a-z0-9]\Z", fullmatch=True),
)
_COUNTERS = st.dictionaries(_NAME, st.integers(0, 2 ** 64 - 1), min_size=1, max_size=25)


def _print(counters):
    return "NIC statistics:\n" + "".join("     %s: %d\n" % (name, value) for name, value in counters.items())


@settings(max_examples=40, deadline=None)
@given(_COUNTERS)
def test_reads_back_what_ethtool_prints(counters):
    assert _ethtool_stats.parse(_print(counters)) == dict((name.strip(), value) for name, value in counters.items())


@settings(max_examples=40, deadline=None)
@given(_COUNTERS, st.sampled_from(["-1", "12abc", "1.5", "18446744073709551616", "", "0x10"]))
def test_a_value_ethtool_cannot_print_is_refused(counters, bad):
    name = sorted(counters)[0]
    text = _print(counters).replace("     %s: %d\n" % (name, counters[name]), "     %s: %s\n" % (name, bad), 1)
    with pytest.raises(ValueError):
        _ethtool_stats.parse(text)


@pytest.mark.parametrize("text", [
    "",
    "no stats available\n",
    "Cannot get stats strings information: No such device\n",
    "NIC statistics:\n",
    "NIC statistics:\n     rx_packets: 1\nNIC statistics:\n     rx_packets: 2\n",
    "Settings for eth0:\n\tSpeed: 100000Mb/s\n",
    "link mlx5_0/1 state ACTIVE physical_state LINK_UP netdev eth0 \n",
    "Standard stats for eth0:\neth-mac-FramesTransmittedOK: 1\n",
])
def test_near_misses_are_refused(text):
    with pytest.raises(ValueError):
        _ethtool_stats.parse(text)
