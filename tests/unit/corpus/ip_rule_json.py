# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How the corpus test reads the samples of ip_rule_json.txt with the collection's parser."""
from __future__ import absolute_import, division, print_function
__metaclass__ = type
import json

from ansible_collections.rdma.fabric.plugins.module_utils.resources import _rail_addresses

TOOL = "ip -j rule"
PARSER = "_rail_addresses.parse_rules"
VERSIONS = "iproute2 6.1 (JSON layout since 4.17), rules with every selector ip rule add takes"
EXPECT_REFUSED = {}
SKIP = {}


def read(sample):
    return _rail_addresses.parse_rules(json.loads(sample.raw))
