# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How the corpus test reads the samples of ibv_devinfo.txt with the collection's parser."""
from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re

from ansible_collections.rdma.fabric.plugins.module_utils.parsers import _ibv_devinfo

TOOL = "ibv_devinfo"
PARSER = "_ibv_devinfo.parse"
VERSIONS = "rdma-core 1x-39 (CentOS 7 .. Ubuntu 22.04), MLNX_OFED 4.x, rdma-core 28+ GID types; -v, -vv, non-verbose"
EXPECT_REFUSED = {
    "IBVDEV-REAL-COMMIT-BBCE02EA3": "an excerpt: the author elided the 'port:' line, so its GIDs stand outside a port",
    "IBVDEV-REAL-PIB-NODEV": "'No IB devices found' is an error, not zero devices",
    "IBVDEV-REAL-K8S-VF-OPENFAIL": "'Failed to open device' for 8 VFs: ibv_devinfo failed (rc != 0), not a partial answer",
}
SKIP = {}

# what the person typed, not what the tool printed: a prompt + command line, dossier elision marks
_NOT_OUTPUT = re.compile(r"\s*(?:(?:\[[^\]]*\]#|\S*[#$])\s*)?ibv_devinfo\b|\s*\[\.\.\.|\s*\.+\s*\Z")


def read(sample):
    text = "".join(line for line in sample.raw.splitlines(True) if not _NOT_OUTPUT.match(line))
    return _ibv_devinfo.parse(text)
