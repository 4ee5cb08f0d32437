# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How the corpus test reads the samples of ip_addr_json.txt with the collection's parser."""
from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.rdma.fabric.plugins.module_utils.parsers import _iproute

TOOL = "ip -j addr"
PARSER = "_iproute.parse_json + ipv4_by_link"
VERSIONS = "iproute2 6.1 (JSON layout unchanged since 4.17)"
EXPECT_REFUSED = {"IP-J-ADDR-NODEV": "'Device \"X\" does not exist.' is an error, not JSON"}
SKIP = {}


def read(sample):
    text = sample.section("stdout") if "[stdout]" in sample.raw or "[stderr]" in sample.raw else sample.raw
    data = _iproute.parse_json(text)
    return {"links": [link["ifname"] for link in data], "ipv4": _iproute.ipv4_by_link(data),
            "addr": {link["ifname"]: _iproute.parse_addr(data, link["ifname"]) for link in data}}
