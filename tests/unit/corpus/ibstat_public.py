# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How the corpus test reads the samples of ibstat_public.txt with the collection's parser."""
from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.rdma.fabric.plugins.module_utils.parsers import _ibstat

TOOL = "ibstat"
PARSER = "_ibstat.parse"
VERSIONS = "OFED 2.x (mlx4 fw 2.10), RHEL 8 rdma-core (mlx4 fw 2.42, umad debug), MLNX_OFED 5.x (CX-6 VF, CX-6 Dx)"
EXPECT_REFUSED = {}
SKIP = {}


def read(sample):
    return _ibstat.parse(sample.raw)
