# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How the corpus test reads the samples of ibdev2netdev.txt with the collection's parser."""
from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re

from ansible_collections.rdma.fabric.plugins.module_utils.facts import _rdma_facts

TOOL = "ibdev2netdev"
PARSER = "_rdma_facts.parse_ibdev2netdev(strict=True)"
VERSIONS = "MLNX_OFED 4.x-24.x ofed_scripts ibdev2netdev, plain and -v (CX-4 SR-IOV, CX-5, CX-6, Azure renamed devices)"
EXPECT_REFUSED = {}
SKIP = {}
_COMMAND = re.compile(r"^(?:.*[#$] ?)?\s*ibdev2netdev(?: -v)?\s*$", re.M)


def read(sample):
    # the command echoed by the paste ('ibdev2netdev ', '$ ibdev2netdev') is not tool output
    return _rdma_facts.parse_ibdev2netdev(_COMMAND.sub("", sample.raw), {}, strict=True)
