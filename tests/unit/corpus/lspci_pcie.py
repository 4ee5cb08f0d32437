# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How the corpus test reads the samples of lspci_pcie.txt with the collection's parser."""
from __future__ import absolute_import, division, print_function
__metaclass__ = type
from ansible_collections.rdma.fabric.plugins.module_utils.resources import _pcie_acs

TOOL = "lspci -vvv"
PARSER = "_pcie_acs.parse_lspci"
VERSIONS = "pciutils 3.6/3.7 (ok/downgraded on every port) and >= 3.8 (notes only when not equal); ConnectX-6 Dx/7, H100, RTX 6000 Ada, PEX890xx"
EXPECT_REFUSED = {
    "LSPCI-REAL-ACSCTL-ENABLED": "'lspci -vvv | grep ACSCtl': a lone ACSCtl line without its function header is not lspci output",
}
SKIP = {
    "SETPCI-LOCAL-NOACS": "setpci output (stdout/stderr annotated), not lspci",
    "SETPCI-RECON-ACS": "setpci output reconstructed from setpci.c, not lspci",
    "SETPCI-DOC-NCCL-ACS-LOOP": "a shell loop from the NCCL guide, not tool output",
}


def read(sample):
    text = "".join(line for line in sample.raw.splitlines(True) if not line.startswith("$ "))
    return _pcie_acs.parse_lspci(text)
