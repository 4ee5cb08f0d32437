# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How the corpus test reads the samples of mlxfwmanager.txt with the collection's parser."""
from __future__ import absolute_import, division, print_function
__metaclass__ = type
from ansible_collections.rdma.fabric.plugins.module_utils.parsers import _mlxfw

TOOL = "mlxfwmanager / mlxup --query"
PARSER = "_mlxfw.parse_mlxfwmanager_query"
VERSIONS = "WinMFT (ConnectX-3 Pro), mlxup 4.30 and unstated, mstflint 4.36 (reconstructed)"
EXPECT_REFUSED = {
    "MLXFWMANAGER-RECON-NO-DEVICES": "'-E- No devices found or specified' is an error, not an empty device list",
}
SKIP = {}


def read(sample):
    return _mlxfw.parse_mlxfwmanager_query(sample.raw)
