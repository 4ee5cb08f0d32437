# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How the corpus test reads the samples of mlxconfig.txt with the collection's parser."""
from __future__ import absolute_import, division, print_function
__metaclass__ = type
import re

from ansible_collections.rdma.fabric.plugins.module_utils.parsers import _mlxconfig

TOOL = "mlxconfig / mstconfig"
PARSER = "_mlxconfig.parse_query, _mlxconfig.parse_set"
VERSIONS = "mlxconfig and mstconfig, layouts <= 4.25 and 4.26-4.35 (MFT 4.26.1, mstflint 4.35 reconstructed)"
EXPECT_REFUSED = {
    "MLXCONFIG-TERRENCEMIAO-QUERY-CX4-TRIMMED": "the author trimmed the table and left '...' for the elided rows",
    "MLXCONFIG-RECON-UNKNOWN-PARAMETER": "'-E- Unknown Parameter' is an error of a query: no device is printed",
}
SKIP = {}

_SET = re.compile(r"^Configurations:.*\bNew\s*$|Apply new Configuration\?", re.M)


def read(sample):
    """A set output (a New column, the apply prompt) with parse_set, a query with parse_query."""
    if _SET.search(sample.raw):
        return _mlxconfig.parse_set(sample.raw)
    return _mlxconfig.parse_query(sample.raw)
