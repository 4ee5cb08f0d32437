# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How the corpus test reads the samples of cma_roce_mode.txt with the collection's reader.

The collection does not run mlnx-tools' cma_roce_mode: it reads the file the script cats
(rdma_cm/DEV/ports/PORT/default_roce_mode), whose text is all the script prints on success,
and _dcqcn.roce_mode_name names it (RoCE v2 -> v2, IB/RoCE v1 -> v1). Any other
text stays as it is so that it differs from every wanted mode; read refuses it here, to pin
that no error line of the script is taken for a mode. Shell prompt lines ($ /# ) of a
transcript and the stderr section are not the script's stdout."""
from __future__ import absolute_import, division, print_function
__metaclass__ = type
from ansible_collections.rdma.fabric.plugins.module_utils.resources import _dcqcn

TOOL = "cma_roce_mode (rdma_cm default_roce_mode)"
PARSER = "_dcqcn.roce_mode_name"
VERSIONS = "mlnx-tools HEAD 8fbfd9c; MLNX_OFED (ConnectX-4 Lx, fw 14.23)"
EXPECT_REFUSED = {
    "CMA-LOCAL-HELP": "the usage text (-h), not a mode",
    "CMA-LOCAL-NOT-ROOT": "'You must be root to run this' is an error",
    "CMA-LOCAL-NO-CONFIGFS": "'Failed to mount configfs' is an error",
    "CMA-EXEC-NO-RDMACM": "'Module rdma_cm is not loaded ...' is an error",
    "CMA-EXEC-BAD-PORT": "'Device mlx5_0 port 2 does not exist' is an error",
    "CMA-RECON-BAD-DEVICE": "'Failed to create configuration for mlx5_9' is an error",
}
SKIP = {
    "CMA-RECON-TOS": "cma_roce_tos (the ToS, an integer), not cma_roce_mode: _dcqcn.parse_tree reads that file",
}


def read(sample):
    text = sample.section("stdout") if "[stdout]" in sample.raw else sample.raw
    lines = [line for line in text.splitlines() if line.strip() and not line.startswith(("$ ", "# "))]
    if not lines:
        raise ValueError("cma_roce_mode: no output")
    modes = [_dcqcn.roce_mode_name(line) for line in lines]
    for line, mode in zip(lines, modes):
        if mode not in _dcqcn.ROCE_MODES:
            raise ValueError("cma_roce_mode: %r is not a RoCE mode the kernel prints ('RoCE v2', 'IB/RoCE v1')" % line)
    return modes
