# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Findings and records, and what writes them: the health judge and its node timer, the fabric checks, the
report writers (table, JSON, JUnit, Prometheus).

- ``_report``       report records and their writers (table, JSON, JUnit XML, Prometheus textfile)
- ``_health``       the fabric health judge: observations in, findings out
- ``_health_timer`` the periodic health check on a node without Ansible (read, judge, textfile)
- ``_ib_fabric``    fabric checks from iblinkinfo and ibqueryerrors: links, counters, GUIDs, cabling"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type
