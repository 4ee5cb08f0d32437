# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How the corpus test reads the samples of nccl.txt with the collection's parsers: NCCL_DEBUG=INFO
logs with _nccl.parse_log (what rdma_health judges), nccl.conf files and env assignments with
_nccl.parse_conf (how NCCL reads /etc/nccl.conf)."""
from __future__ import absolute_import, division, print_function
__metaclass__ = type
from ansible_collections.rdma.fabric.plugins.module_utils.nccl import _nccl

TOOL = "NCCL (NCCL_DEBUG=INFO log, nccl.conf)"
PARSER = "_nccl.parse_log, _nccl.parse_conf"
VERSIONS = "NCCL 2.3-2.24 (logs 2.4.8, 2.16.2, 2.16.5, 2.18.3)"
EXPECT_REFUSED = {
    "NCCL-RECON-ENV-LOG-LINES": "only 'set by environment' lines: a log cut before NCCL chose its transport, nothing to judge",
}
SKIP = {
    "NCCL-DOC-IB-HCA-EXAMPLES": "the NCCL_IB_HCA table of the NCCL docs (value : meaning), not a file or log NCCL reads or prints",
    "NCCL-DOC-GDR-LEVEL": "the NCCL_NET_GDR_LEVEL table of the NCCL docs (level : meaning), not a file or log",
}

_CONF = ("NCCL-DOC-NCCLCONF-CURRENT", "NCCL-DOC-NCCLCONF-OLD")
_ENV = ("NCCL-REAL-ENV-ROCE-H100",)


def read(sample):
    if sample.id in _CONF:
        return _nccl.parse_conf(sample.raw)
    if sample.id in _ENV:  # NAME=value words of one shell command line: one assignment per word
        return _nccl.parse_conf("\n".join(sample.raw.split()))
    return _nccl.parse_log(sample.raw)
