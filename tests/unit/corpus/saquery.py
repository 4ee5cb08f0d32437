# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How the corpus test reads the samples of saquery.txt with the collection's parser."""
from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.rdma.fabric.plugins.module_utils.parsers import _sm_info

TOOL = "saquery"
PARSER = "_sm_info.parse"
VERSIONS = "infiniband-diags 44.0 (ibsim, OpenSM 3.3.23)"
EXPECT_REFUSED = {
    "SAQUERY-HELP": "the usage text is not an answer",
}
SKIP = {}


def read(sample):
    return _sm_info.parse(sample.raw)
