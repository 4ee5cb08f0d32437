# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How the corpus test reads the samples of rdma_link.txt with the collection's parser."""
from __future__ import absolute_import, division, print_function
__metaclass__ = type
import re

from ansible_collections.rdma.fabric.plugins.module_utils.parsers import _rdma_link

TOOL = "rdma link"
PARSER = "_rdma_link.parse"
VERSIONS = "iproute2 4.18-5.4 (IDX/PORT: layout) and 5.5-6.1 (link DEV/PORT), MLNX_OFED 23.07, -d/-o/-j from source"
EXPECT_REFUSED = {
    "RDMA-LOCAL-NOSOCK": "'Failed to open NETLINK_RDMA socket' is an error, not zero links",
    "RDMA-REAL-IPOIB-WRAPPED": "the commit message wraps the one printed line into two",
    "RDMA-RECON-WRONGDEV": "'Wrong device name' is an error, not zero links",
}
SKIP = {}
_PROMPT = re.compile(r"^\s*(?:\S*[#$] |~# )?rdma (?:-\S+ )*link.*$", re.M)
_ELIDED = re.compile(r"^\s*\.{3,}\s*$", re.M)


def read(sample):
    # the command lines ('rdma link', 'root@host# rdma link show', '~# rdma link') and the author's '.......' are not tool output
    return _rdma_link.parse(_ELIDED.sub("", _PROMPT.sub("", sample.raw)))
