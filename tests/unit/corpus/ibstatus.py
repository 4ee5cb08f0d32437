# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How the corpus test reads the samples of ibstatus.txt with the collection's parser."""
from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.rdma.fabric.plugins.module_utils.parsers import _ibstatus

TOOL = "ibstatus"
PARSER = "_ibstatus.parse"
VERSIONS = "infiniband-diags 1.6-44 script (mlx4 QDR/FDR, mlx5 EDR/HDR, RoCE), rdma-core HEAD script run"
EXPECT_REFUSED = {}
SKIP = {}


def read(sample):
    return _ibstatus.parse(sample.raw)
