# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How the corpus test reads the samples of ibstat_nodetypes.txt (Router, iWARP RNIC, the lookup panic)."""
from __future__ import absolute_import, division, print_function
__metaclass__ = type

# the same read as ibstat.txt's: a report with no CA is refused
from ansible_collections.rdma.fabric.tests.unit.corpus.ibstat import read  # noqa: F401 pylint: disable=unused-import

TOOL = "ibstat"
PARSER = "_ibstat.parse"
VERSIONS = "rdma-core ibstat.c (Router, one-port form), infiniband-diags 1.3 with pre-2008 libibumad (iWARP RNIC)"
EXPECT_REFUSED = {
    "IBSTAT-RECON-NOT-FOUND": "'ibpanic: ... IB device can't be found' with no CA: an error, not zero CAs",
}
SKIP = {}
