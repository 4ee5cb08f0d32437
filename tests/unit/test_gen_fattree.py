# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""tests/ibsim/gen_fattree.py: two-level fat trees for the ibsim failover bench."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import importlib.util
import os
import re
from collections import Counter

import pytest

HERE = os.path.dirname(__file__)
spec = importlib.util.spec_from_file_location(
    "gen_fattree", os.path.join(HERE, "..", "ibsim", "gen_fattree.py"))
G = importlib.util.module_from_spec(spec)
spec.loader.exec_module(G)


def parse(text):
    """ibsim net file -> {node: (type, nports, {port: (peer, peer_port)})}."""
    nodes, cur = {}, None
    for line in text.splitlines():
        head = re.fullmatch(r'(Switch|Hca)\t(\d+) "([^"]+)"', line)
        if head:
            cur = head.group(3)
            nodes[cur] = (head.group(1), int(head.group(2)), {})
            continue
        link = re.fullmatch(r'\[(\d+)\]\t"([^"]+)"\[(\d+)\]', line)
        if link:
            nodes[cur][2][int(link.group(1))] = (link.group(2), int(link.group(3)))
    return nodes


@pytest.mark.parametrize("radix, hcas, leaves, spines", [
    (36, 36, 2, 1), (36, 108, 6, 3), (36, 648, 36, 18), (64, 2048, 64, 32), (36, 100, 6, 3)])
def test_shape_and_symmetric_links(radix, hcas, leaves, spines):
    text, hosts = G.render(radix, hcas)
    nodes = parse(text)
    kinds = Counter(n[0] for n in nodes.values())
    assert kinds["Hca"] == hcas
    assert kinds["Switch"] == leaves + spines
    for name, (_kind, nports, ports) in nodes.items():
        assert len(ports) <= nports and max(ports) <= nports
        for port, (peer, peer_port) in ports.items():
            assert nodes[peer][2][peer_port] == (name, port)      # every link is written from both ends
    # every leaf reaches every spine; all of a leaf's uplinks are used
    for leaf in (n for n in nodes if n.startswith("L")):
        peers = [p for p, _pp in nodes[leaf][2].values()]
        assert {p for p in peers if p.startswith("S")} == {n for n in nodes if n.startswith("S")}
        assert sum(1 for p in peers if p.startswith("S")) == radix // 2
    assert hosts["A_HOST"].startswith("H01-") and hosts["Q_HOST"].startswith("H01-")
    assert hosts["B_HOST"].startswith("H%02d-" % leaves)
    assert len(set(hosts.values())) == 3


@pytest.mark.parametrize("radix, hcas, message", [
    (36, 649, "does not fit"), (35, 10, "even"), (36, 2, "at least 3")])
def test_refused_sizes(radix, hcas, message, capsys):
    assert G.main(["--radix", str(radix), "--hcas", str(hcas)]) == 2
    assert message in capsys.readouterr().err
