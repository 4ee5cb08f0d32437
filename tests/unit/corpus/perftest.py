# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How the corpus test reads the samples of perftest.txt with the collection's parser."""
from __future__ import absolute_import, division, print_function
__metaclass__ = type
from ansible_collections.rdma.fabric.plugins.module_utils.parsers import _perftest

TOOL = "perftest (ib_write_bw, ib_write_lat, ib_read_bw, ib_send_bw)"
PARSER = "_perftest.parse"
VERSIONS = "perftest 2.x (2014), 4.x, 5.60 - 26.x; MB/sec and Gb/sec; IB and RoCE (bond, rdma_cm); CUDA (peermem, DMA-BUF), ROCm"
# perftest's error outputs are read, not refused: the lines go to result["errors"] (the acceptance
# role reports them), so no sample is expected to be refused.
EXPECT_REFUSED = {}
SKIP = {}


def read(sample):
    return _perftest.parse(sample.raw)
