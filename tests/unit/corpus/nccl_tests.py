# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How the corpus test reads the samples of nccl_tests.txt with the collection's parser."""
from __future__ import absolute_import, division, print_function
__metaclass__ = type
from ansible_collections.rdma.fabric.plugins.module_utils.parsers import _nccl_tests

TOOL = "nccl-tests (all_reduce_perf and the other *_perf)"
PARSER = "_nccl_tests.parse"
VERSIONS = "nccl-tests 1.x, 2.0-2.11, 2.13.6, 2.14-2.17; NCCL 1.0 - 2.19"
# failures (CUDA/NCCL errors) are read into result["errors"], not refused.
EXPECT_REFUSED = {}
SKIP = {}


def read(sample):
    return _nccl_tests.parse(sample.raw)
