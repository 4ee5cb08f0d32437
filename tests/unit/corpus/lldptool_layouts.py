# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How the corpus test reads the samples of lldptool_layouts.txt with the collection's parser."""
from __future__ import absolute_import, division, print_function
__metaclass__ = type
from ansible_collections.rdma.fabric.plugins.module_utils.parsers import _lldptool

TOOL = "lldptool"
PARSER = "_lldptool.parse_tlvs, parse_identity"
VERSIONS = "openlldp 0.9.4x (2011, CEE/CIN, old APP) .. 1.1 (2020) / HEAD 00b3c78f (new APP); IEEE, CEE, CIN"
EXPECT_REFUSED = {}
SKIP = {}


def read(sample):
    """Every block is one ``lldptool -t [-n]`` dump: the TLVs the collection reads and the neighbour identity."""
    result = _lldptool.parse_tlvs(sample.raw)
    result.update(_lldptool.parse_identity(sample.raw))
    return result
