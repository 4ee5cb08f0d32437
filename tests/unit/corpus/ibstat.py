# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How the corpus test reads the samples of ibstat.txt with the collection's parser."""
from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.rdma.fabric.plugins.module_utils.parsers import _ibstat

TOOL = "ibstat"
PARSER = "_ibstat.parse"
VERSIONS = "infiniband-diags 44.0 (Debian, ibsim), rdma-core 39/47 on cloud A100/H100 nodes"
EXPECT_REFUSED = {
    "IBSTAT-SIM-ibstat_l": "'ibstat -l' lists CA names only: another mode than the report parse() reads",
    "IBSTAT-SIM-ibstat_p": "'ibstat -p' lists port GUIDs only: another mode than the report parse() reads",
    "IBSTAT-SIM-BADDEV": "'ibpanic: ... '<ca>' IB device can't be found' with no CA: an error, not zero CAs",
    "IBSTAT-HELP": "the usage text is not a report",
}
SKIP = {}


def read(sample):
    parsed = _ibstat.parse(sample.raw)
    if not parsed["cas"]:
        raise ValueError("ibstat: no CA in the text; errors: %s" % "; ".join(parsed["errors"])[:200])
    return parsed
