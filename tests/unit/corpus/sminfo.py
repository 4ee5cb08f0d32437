# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How the corpus test reads the samples of sminfo.txt with the collection's parser."""
from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.rdma.fabric.plugins.module_utils.parsers import _sm_info

TOOL = "sminfo"
PARSER = "_sm_info.parse"
VERSIONS = "infiniband-diags 44.0 (ibsim, OpenSM 3.3.23), OFED 1.2 (2008 list post), UFM SM paste"
EXPECT_REFUSED = {
    "SMINFO-HELP": "the usage text is not an answer",
    "SMINFO-PUB-OMPI-2008-WRAPPED": "the mail client wrapped the one printed line into two",
    "SMINFO-PUB-UFM-REDACTED": "the author redacted the GUID ('0x...xxxxx'): not a GUID sminfo can print",
}
SKIP = {}


def read(sample):
    return _sm_info.parse(sample.raw)
