#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: drift_report
short_description: Write the fleet drift report (table, JSON, JUnit XML, Prometheus textfile) once per run
version_added: 0.2.0
author: rdma.fabric contributors (@rdma-fabric)
description:
  - An action plugin, run once on the controller (C(run_once), C(delegate_to localhost))
    after M(rdma.fabric.drift_check). It reads each play host's registered drift_check
    result (Python, linear in hosts) and adds a record C(area host) for every host that
    could not be checked (unreachable, failed), so such a host never reads as "no drift".
  - Prints the records as a table sorted by host, area, object and setting, with a summary
    line (C(3 of 120 hosts drifted, 7 settings; 1 unreachable)), and writes to
    O(report_dir), each atomically (temporary file, then rename)
  - C(drift.json) the records and the run's metadata (time, inventory, limit, collection
    version, summary);
  - C(drift-junit.xml) one testcase per host and area checked, one failure per drifted setting;
  - C(rdma_fabric_drift.prom) node_exporter textfile metrics C(rdma_fabric_drift_settings{host,area}),
    C(rdma_fabric_drift_hosts_checked), C(rdma_fabric_drift_hosts_unreachable),
    C(rdma_fabric_drift_last_run_timestamp_seconds) and C(rdma_fabric_drift_info).
  - Fails when there is any record and O(fail_on_drift) is true, so the run's exit code is non-zero.
extends_documentation_fragment:
  - rdma.fabric.reports
options:
  result_var:
    description: The variable each host registered the drift_check result in.
    type: str
    default: drift_check_result
  started_var:
    description:
      - A variable each host sets or registers when the drift check starts on it
        (C(playbooks/drift_check.yml) passes C(drift_check_result), registered by its one check
        task, also for an unreachable host); hosts without it (failed in an earlier play of the run, such
        as an onboarding gate) are left out instead of being reported unreachable. When no host
        has it, every play host counts.
    type: str
    default: drift_check_started
  fail_on_drift:
    description: Fail when anything drifted or a host could not be checked.
    type: bool
    default: true
  return_records:
    description:
      - Return every record in RV(records). The reports hold them all whatever this says.
      - V(false) leaves them out of the result. A run_once result is kept for every host of the play and
        passed to every callback, and a fleet's first check has thousands of records;
        C(playbooks/drift_check.yml) asks for them only for the scheduler gate.
    type: bool
    default: true
attributes:
  action_group:
    membership:
      - rdma.fabric.drift
  check_mode:
    description: Writes the reports in check mode too (they are the point of a check run).
seealso:
  - module: rdma.fabric.drift_check
"""

EXAMPLES = r"""
- name: Write the reports
  rdma.fabric.drift_report:
    report_dir: "{{ drift_report_dir }}"
  run_once: true
  delegate_to: localhost
"""

RETURN = r"""
records:
  description: Every record, sorted.
  returned: when O(return_records) is true
  type: list
  elements: dict
unchecked_hosts:
  description: The hosts reached but not checked (their check failed), to converge every area of.
  returned: always
  type: list
  elements: str
summary:
  description: The summary line.
  returned: always
  type: str
  sample: 1 of 6 hosts drifted, 2 settings; 0 unreachable
areas_by_host:
  description: The drifted areas of each host (for remediation).
  returned: always
  type: dict
host_groups:
  description:
    - Per host with something to converge, in the play's order, the groups C(playbooks/site.yml)
      converges it by (one C(add_host) per host).
    - C(drift_AREA) for each drifted area, C(drift_unchecked) for a host reached but not checked (every
      area), C(drift_apply_deferred) for a host whose check was made with
      O(rdma.fabric.drift_check#module:apply) but whose areas were not applied in that call
      (RV(rdma.fabric.drift_check#module:apply_deferred)).
  returned: always
  type: list
  elements: dict
  sample: [{host: node-07, groups: [drift_roce_qos, drift_nccl_env]}]
unreachable_hosts:
  description:
    - The hosts that could not be checked.
    - Not named C(unreachable), which Ansible reads as this task's own host being unreachable.
  returned: always
  type: list
  elements: str
"""
