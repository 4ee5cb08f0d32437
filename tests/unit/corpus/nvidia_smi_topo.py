# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How the corpus test reads the samples of nvidia_smi_topo.txt with the collection's parser."""
from __future__ import absolute_import, division, print_function
__metaclass__ = type
from ansible_collections.rdma.fabric.plugins.module_utils.parsers import _topo

TOOL = "nvidia-smi topo -m"
PARSER = "_topo.parse"
VERSIONS = "K80/DGX-1-era drivers (CPU Affinity only) to R570/R575 (NIC Legend, GPU NUMA ID); K80, V100, A100, H100, RTX 6000 Ada, RTX 5090"
EXPECT_REFUSED = {}
SKIP = {}


def read(sample):
    # a "$ nvidia-smi topo -m" prompt line is the capture's annotation, not tool output
    text = "".join(line for line in sample.raw.splitlines(True) if not line.startswith("$ "))
    return _topo.parse(text)
