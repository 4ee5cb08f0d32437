# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How the corpus test reads the samples of ibqueryerrors.txt with the collection's parser."""
from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re

from ansible_collections.rdma.fabric.plugins.module_utils.parsers import _ibqueryerrors

TOOL = "ibqueryerrors"
PARSER = "_ibqueryerrors.parse"
VERSIONS = "infiniband-diags of 2021 (linux-rdma list), UCX #9590 (2025), infiniband-diags 44.0 (ibsim)"
EXPECT_REFUSED = {}
SKIP = {}


_PROMPT = re.compile(r"^\[root@[^\]]*\][#$] .*$", re.M)


def read(sample):
    # a local run's [stdout]/[stderr] sections (libibnetdisc's messages are on stderr), a paste's prompt line
    if "[stdout]" in sample.raw:
        return _ibqueryerrors.parse(sample.section("stdout") + sample.section("stderr"))
    return _ibqueryerrors.parse(_PROMPT.sub("", sample.raw))
