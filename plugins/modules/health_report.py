#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: health_report
short_description: Write the fabric health findings of every host once per run, as a table, JSON, JUnit XML and Prometheus textfile
version_added: 0.2.0
author: rdma.fabric contributors (@rdma-fabric)
description:
  - An action plugin, run once on the controller (C(run_once), C(delegate_to localhost)) after
    M(rdma.fabric.rdma_health). It reads each play host's registered result (Python, linear in
    hosts) and adds a finding C(check host) for every host that could not be checked.
  - Prints the findings as a table sorted by host, check and subject, then the checks that could
    not run (each host's C(skipped_checks) of M(rdma.fabric.rdma_health), e.g. the lossless agreement
    where lldpad does not run) in a C(skipped) section with the reason, and a summary line that
    counts them; writes to O(report_dir), each atomically, through the writers the drift check uses
  - C(health.json) the findings (C(records)), the skipped checks (C(skipped), each C(host), C(check),
    C(subject), C(reason)) and the run's metadata (C(meta.skipped) counts them);
  - C(health-junit.xml) one testcase per host and check, one failure per finding; a check that could
    not run is a C(<skipped/>) testcase with the reason (a case of its own, C(CHECK (skipped)), when the
    check also failed on other objects of that host);
  - C(rdma_fabric_health.prom) C(rdma_fabric_health_findings{host,check,severity}) (0 for checks
    without findings), C(rdma_fabric_health_port_findings{host,port,check}),
    each check's verdict C(rdma_fabric_health_check_failing{host,check,subject,device,port,severity})
    (per port observed for the port checks, per host for the others; 0 when healthy),
    C(rdma_fabric_health_hosts_checked),
    C(rdma_fabric_health_hosts_unreachable), C(rdma_fabric_health_last_run_timestamp_seconds)
    and C(rdma_fabric_health_info).
  - Fails on any finding of severity V(error) (O(fail_on)), so the run's exit code is non-zero.
extends_documentation_fragment:
  - rdma.fabric.reports
options:
  result_var:
    description: The variable each host registered the rdma_health result in.
    type: str
    default: health_result
  fail_on:
    description: V(error) fails on an error finding (or a host not checked), V(warning) on any finding, V(never) reports only.
    type: str
    choices: [error, warning, never]
    default: error
attributes:
  action_group:
    membership:
      - rdma.fabric.health
seealso:
  - module: rdma.fabric.rdma_health
  - module: rdma.fabric.drift_report
"""

EXAMPLES = r"""
- name: Write the health reports
  rdma.fabric.health_report:
    report_dir: "{{ health_report_dir }}"
  run_once: true
  delegate_to: localhost
"""

RETURN = r"""
findings:
  description: Every finding, sorted, each with C(host), C(check), C(subject), C(severity), C(expected), C(actual),
    C(diagnosis) and C(remedy).
  returned: always
  type: list
  elements: dict
skipped_checks:
  description: The checks that could not run, sorted, each with C(host), C(check), C(subject) and C(reason).
  returned: always
  type: list
  elements: dict
summary:
  description: The summary line; it ends in C(; N check(s) skipped on M host(s)) when checks could not run.
  returned: always
  type: str
  sample: 1 of 6 hosts with findings, 2 error(s), 0 warning(s); 0 unreachable; 6 check(s) skipped on 6 host(s)
unreachable_hosts:
  description:
    - The hosts that could not be checked.
    - Not named C(unreachable), which Ansible reads as this task's own host being unreachable.
  returned: always
  type: list
  elements: str
"""
