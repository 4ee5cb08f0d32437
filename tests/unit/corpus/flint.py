# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How the corpus test reads the samples of flint.txt with the collection's parser."""
from __future__ import absolute_import, division, print_function
__metaclass__ = type
from ansible_collections.rdma.fabric.plugins.module_utils.parsers import _mlxfw

TOOL = "flint / mstflint query"
PARSER = "_mlxfw.parse_flint_query"
VERSIONS = "MFT 4.26.1 and unstated versions, mstflint 4.36 (reconstructed); FS3, FS4"
EXPECT_REFUSED = {
    "FLINT-INNOVA2-7-CX5-MARKDOWN": "the paste wraps a line in Markdown bold ('**FW Version: ...**'): not tool output",
    "FLINT-RECON-CANNOT-OPEN": "'-E- Cannot open Device' is an error, not a device with no fields",
}
SKIP = {}


def read(sample):
    return _mlxfw.parse_flint_query(sample.raw)
