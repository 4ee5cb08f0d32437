# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How the corpus test reads the samples of ethtool_S_mlx5.txt with the collection's parser."""
from __future__ import absolute_import, division, print_function
__metaclass__ = type
import re

from ansible_collections.rdma.fabric.plugins.module_utils.parsers import _ethtool_stats

TOOL = "ethtool -S"
PARSER = "_ethtool_stats.parse"
VERSIONS = "ethtool 6.1; mlx5_core of Linux 5.15 and 6.5, MLNX_OFED 5.x"
EXPECT_REFUSED = {
    "ETHS-LOCAL-ERRORS": "'no stats available' / 'Cannot get stats strings information' are errors, not zero counters",
}
SKIP = {
    "HWCNT-REAL-H100-IB-SYSFS": "an RDMA hw_counters sysfs listing kept as a name reference, not ethtool output",
}
_ELIDED = re.compile(r"^\s*\[\.\.\. .*\]\s*$", re.M)


def read(sample):
    # '[... elided ...]' / '[... truncated ...]' lines are the sample's own elision marks, not tool output
    return _ethtool_stats.parse(_ELIDED.sub("", sample.raw))
