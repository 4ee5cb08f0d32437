# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How the corpus test reads the samples of show_gids.txt with the collection's parser."""
from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re

from ansible_collections.rdma.fabric.plugins.module_utils.facts import _rdma_facts

TOOL = "show_gids"
PARSER = "_rdma_facts.parse_show_gids(strict=True)"
VERSIONS = "mlnx-tools HEAD show_gids (executed), MLNX_OFED 4.x-5.x pastes (CX-5, Huawei hiroce3)"
EXPECT_REFUSED = {}
SKIP = {}
_COMMAND = re.compile(r"^\s*\S*[#$] ?show_gids.*$", re.M)


def read(sample):
    # the shell prompt and command line of a paste ('root@pod:/# show_gids') are not tool output
    return _rdma_facts.parse_show_gids(_COMMAND.sub("", sample.raw), {}, strict=True)
