# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fabric acceptance tests: which nodes test against which and the thresholds (controller), and the perftest
pair tests run on the nodes.

- ``_acceptance``   which nodes test against which, in rounds; the thresholds; which node a failure points at
- ``_perftest_run`` perftest pair tests on a node: the server as a detached job, the client, the results"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type
