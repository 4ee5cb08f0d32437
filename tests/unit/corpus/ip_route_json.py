# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How the corpus test reads the samples of ip_route_json.txt with the collection's parser."""
from __future__ import absolute_import, division, print_function
__metaclass__ = type
import json

from ansible_collections.rdma.fabric.plugins.module_utils.resources import _rail_addresses

TOOL = "ip -j route"
PARSER = "_rail_addresses.parse_routes"
VERSIONS = "iproute2 6.1, and one public iproute2 of 2020 (invalid JSON)"
EXPECT_REFUSED = {
    "IPRJ-LOCAL-NO-TABLE": "a table that does not exist: stdout is a lone '[', rc 2 (read_state handles it by rc)",
    "IPRJ-REAL-GH37-TABLE-LOCAL": "iproute2 printed invalid JSON (iproute2/iproute2#37)",
}
SKIP = {}


def read(sample):
    text = sample.section("stdout") if "[stdout]" in sample.raw else sample.raw
    data = json.loads(text)  # ValueError (json.JSONDecodeError) refuses
    family = 6 if any(":" in (r.get("dst", "") + (r.get("gateway") or "")) for r in data if isinstance(r, dict)) else 4
    return _rail_addresses.parse_routes(data, family)
