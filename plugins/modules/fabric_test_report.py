#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: fabric_test_report
short_description: Write the fabric test's verdict once per run, as a table, JSON, JUnit XML and Prometheus textfile
version_added: 0.5.0
author: rdma.fabric contributors (@rdma-fabric)
description:
  - An action plugin, run once on the controller (C(run_once), C(delegate_to localhost)) after the
    rdma.fabric.fabric_test role judged the fleet (its C(fabric_test) filter's V(verdict) step).
  - Prints the findings as a table (host, severity, check, subject - the rail, its device and the peers -
    expected, actual, diagnosis), then the checks that could not run with their reason, and a summary line;
    writes to O(report_dir), each atomically, through the writers the drift check and health use
  - C(fabric_test.json) the findings (C(records)), the skipped checks (C(skipped)) and the run's metadata
    (C(meta.passed), C(meta.failed) the hosts);
  - C(fabric_test-junit.xml) one testcase per host and check, one failure per finding, a C(<skipped/>)
    testcase per check that could not run;
  - C(rdma_fabric_fabric_test.prom) C(rdma_fabric_fabric_test_findings{host,check,severity}) (0 for the checks
    of a host that passed them, so alerts resolve), each check's verdict per host
    C(rdma_fabric_fabric_test_check_failing{host,check,subject,device,port,severity}) (0 when passed),
    C(rdma_fabric_fabric_test_hosts_checked) and the run series.
  - Fails only with O(fail_on=error); the role fails each node that does not pass on its own.
extends_documentation_fragment:
  - rdma.fabric.reports
options:
  verdict:
    description:
      - The verdict, C(__fabric_test_verdict) of the role (C(passed), C(failed), C(findings), C(skipped)); a finding
        may give its subject as C(object) (the records of rdma.fabric.ib_fabric), and C(checks) lists the checks
        that ran (0 in the Prometheus file when they found nothing).
    type: dict
    required: true
  report_name:
    description:
      - The reports' name - C(NAME.json), C(NAME-junit.xml), C(rdma_fabric_NAME.prom) and the metric prefix
        C(rdma_fabric_NAME); V(ib_fabric) for the records of rdma.fabric.ib_fabric (playbooks/ib_fabric.yml).
    type: str
    default: fabric_test
  fail_on:
    description: V(error) fails the task on any finding of severity V(error); V(never) reports only.
    type: str
    choices: [error, never]
    default: never
attributes:
  action_group:
    membership:
      - rdma.fabric.fabric_test
seealso:
  - module: rdma.fabric.perftest
  - module: rdma.fabric.health_report
"""

EXAMPLES = r"""
- name: Write the fabric test report
  rdma.fabric.fabric_test_report:
    report_dir: "{{ fabric_test_report_dir }}"
    verdict: "{{ __fabric_test_verdict }}"
  run_once: true
  delegate_to: localhost
"""

RETURN = r"""
findings:
  description: Every finding of the fabric test (a rail below its figure, a peer unreachable, ...), sorted, each with
    C(host), C(check), C(subject), C(severity), C(expected), C(actual), C(diagnosis) and C(remedy).
  returned: always
  type: list
  elements: dict
skipped_checks:
  description: The checks that could not run, each with C(host), C(check), C(subject) and C(reason).
  returned: always
  type: list
  elements: dict
summary:
  description: The fabric test's summary line (hosts failed, findings, skipped checks).
  returned: always
  type: str
  sample: 1 of 4 hosts failed the fabric test, 2 finding(s); 4 check(s) skipped on 4 host(s)
passed:
  description: The hosts that passed.
  returned: always
  type: list
  elements: str
failed_hosts:
  description: The hosts that did not pass.
  returned: always
  type: list
  elements: str
"""
