# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How the corpus test reads the samples of ibstat_nodetypes.txt (Router, iWARP RNIC, the lookup panic)."""
from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.rdma.fabric.plugins.module_utils.parsers import _ibstat

TOOL = "ibstat"
PARSER = "_ibstat.parse"
VERSIONS = "rdma-core ibstat.c (Router, one-port form), infiniband-diags 1.3 with pre-2008 libibumad (iWARP RNIC)"
EXPECT_REFUSED = {
    "IBSTAT-RECON-NOT-FOUND": "'ibpanic: ... IB device can't be found' with no CA: an error, not zero CAs",
}
SKIP = {}


def read(sample):
    parsed = _ibstat.parse(sample.raw)
    if not parsed["cas"]:
        raise ValueError("ibstat: no CA in the text; errors: %s" % "; ".join(parsed["errors"])[:200])
    return parsed
