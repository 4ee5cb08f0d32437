#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: scheduler_gate
short_description: Drain a node in the scheduler when it fails a check, resume it after it recovers
version_added: 0.4.0
author: rdma.fabric contributors (@rdma-fabric)
extends_documentation_fragment: [rdma.fabric.attributes]
description:
  - Sets each node's state in the workload scheduler from a verdict - the findings of the health
    check, the fabric test, onboarding's admission or the drift check, or a maintenance step (a
    reboot to come). Slurm (O(scheduler=slurm)) is the one scheduler today.
  - Reads once with C(sinfo --json -N) (Slurm 22.05 and later) and changes with
    C(scontrol update NodeName=N State=DRAIN Reason=...) or C(State=UNDRAIN) (C(RESUME) is refused
    on an idle node). Run it where C(scontrol) works as a Slurm administrator - the slurmctld host,
    or any node with slurm-client and the cluster's munge key (C(delegate_to)).
  - >-
    A failing node is drained with the reason C(<reason_prefix> <check> <subject> <figure>), for
    example C(rdma.fabric: perftest.write_bw rail3/mlx5_3 fail: 180 Gb/s with gpu-02 (expected ...)).
  - A drain whose reason does not start with O(reason_prefix) is someone else's (an administrator's,
    or Slurm's own C(Not responding)) - never changed, never lifted. A node with such a reason is
    not drained either, because C(scontrol) would silently replace its reason.
  - Only our drains are lifted, only by a verdict of the kind of check that set them (a healthy
    health check does not lift a fabric test's drain), and only after O(recovery_runs) consecutive
    healthy verdicts and O(recovery_seconds). The count lives in the reason
    (C([healthy 1/3 since 2026-12-06T07:30:00Z])), so the node's HealthCheckProgram and this module
    share it.
  - Makes no call when the state is already right; check mode computes the commands and changes
    nothing.
options:
  scheduler:
    description:
      - The workload scheduler - V(slurm). Any other value is an error naming it
        (the playbooks set it from C(scheduler_gate)).
    type: str
    required: true
  nodes:
    description:
      - One verdict per node.
    type: list
    elements: dict
    required: true
    suboptions:
      name:
        description: The node's name in the scheduler (the playbooks use C(scheduler_gate_node_name)).
        type: str
        required: true
      state:
        description:
          - V(fail) drains, V(pass) counts a healthy verdict (and lifts our drain after the recovery
            window), V(maintenance) drains before a reboot and waits for the jobs (O(wait_timeout)),
            V(unknown) changes nothing.
          - Unset, it comes from O(nodes[].findings) - V(fail) when one is of severity error, else V(pass).
        type: str
        choices: [fail, pass, maintenance, unknown]
      findings:
        description:
          - The node's findings (records with C(check), C(subject), C(severity), C(expected), C(actual)),
            as the health check and the fabric test report them. The first error finding (by check and
            subject) names the reason - C(<check_prefix><check> <subject> <actual> (expected <expected>)),
            with C(+N more) when there are more; warnings do not drain.
        type: list
        elements: dict
      check_prefix:
        description: Put before a finding's check name when it has no scope of its own (V(health.) for the health checks); one word.
        type: str
      scopes:
        description:
          - The kinds of check the verdict judged - V(health), V(fabric_test), V(drift),
            V(maintenance). A pass lifts only a drain made by a check of one of them.
        type: list
        elements: str
        required: true
      check:
        description:
          - The failing check (V(perftest.write_bw), V(health.link), ...); a fail's reason starts with it.
          - One word of a scope (C(health.), C(perftest.), C(nccl.), C(fabric_test.), C(drift.), C(maintenance), or
            the scope's name) - any other is an error, as its drain could never be lifted.
        type: str
      subject:
        description: What failed (a rail and device, a port).
        type: str
      figure:
        description: The figure that failed, with what was expected.
        type: str
      time:
        description:
          - When the verdict was reached (Unix seconds, >= 0); default now. A pass no newer than the
            drain's last change is not counted twice.
        type: float
  reason_prefix:
    description:
      - What our drain reasons start with; how our drains are told from the others (Slurm's user
        field is only the uid that ran C(scontrol)). Non-empty, without C(=) or C([).
    type: str
    default: "rdma.fabric:"
  recovery_runs:
    description: Consecutive healthy verdicts before our drain is lifted; >= 1.
    type: int
    default: 1
  recovery_seconds:
    description: Seconds the node must stay healthy (from its first healthy verdict) before our drain is lifted.
    type: float
    default: 0
  wait_timeout:
    description:
      - Seconds to wait for the jobs of the nodes with a V(maintenance) verdict to end once drained;
        the module fails naming the nodes whose jobs still run then (they stay drained). 0 waits not.
    type: float
    default: 0
attributes:
  action_group:
    membership:
      - rdma.fabric.scheduler
  platform:
    description: A host where C(sinfo) and C(scontrol) reach slurmctld, as a Slurm administrator (root or SlurmUser).
  check_mode:
    description: Computes the commands (and the states after) and changes nothing.
    support: full
  diff_mode:
    description: Shows each node's state and reason before and after.
    support: full
notes:
  - The HealthCheckProgram of the C(rdma.fabric.health) role (C(health_scheduler_gate)) applies
    the same rules on each node from its node timer's last verdict, without Ansible.
  - An unreachable slurmctld, or a node name Slurm does not know, fails the task before anything
    is changed.
seealso:
  - module: rdma.fabric.rdma_health
  - module: rdma.fabric.perftest
"""

EXAMPLES = r"""
- name: Drain a node whose rail failed the fabric test
  rdma.fabric.scheduler_gate:
    scheduler: slurm
    nodes:
      - name: gpu-07
        state: fail
        scopes: [fabric_test]
        check: perftest.write_bw
        subject: rail3/mlx5_3
        figure: "180 Gb/s (expected >= 360 Gb/s)"
  delegate_to: slurm-head
  run_once: true

- name: Drain before a reboot and wait up to an hour for the jobs
  rdma.fabric.scheduler_gate:
    scheduler: slurm
    nodes: [{name: gpu-07, state: maintenance, scopes: [maintenance], subject: reboot, figure: nic_firmware}]
    wait_timeout: 3600
  delegate_to: slurm-head
"""

RETURN = r"""
before:
  description: Per node, its state (idle, mixed, allocated, drained, draining, down+drain; a * when slurmd does not answer), flags and reason before.
  returned: always
  type: dict
after:
  description: Per node, the same after (what it will be, in check mode).
  returned: always
  type: dict
commands:
  description: The scontrol argv run (or to run, in check mode), in order.
  returned: always
  type: list
  elements: list
nodes:
  description: Per node, the action (none, drain, update, undrain) and why.
  returned: always
  type: dict
changed:
  description: True when a command was run (or would be, in check mode).
  returned: always
  type: bool
"""

import time

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.rdma.fabric.plugins.module_utils.scheduler import _gate
from ansible_collections.rdma.fabric.plugins.module_utils.scheduler._registry import SCHEDULERS

C_LOCALE = {"LANG": "C", "LC_ALL": "C"}


def argument_spec():
    return {
        "scheduler": {"type": "str", "required": True},
        "nodes": {"type": "list", "elements": "dict", "required": True, "options": {
            "name": {"type": "str", "required": True},
            "state": {"type": "str", "choices": list(_gate.STATES)},
            "findings": {"type": "list", "elements": "dict"},
            "check_prefix": {"type": "str"},
            "scopes": {"type": "list", "elements": "str", "required": True},
            "check": {"type": "str"},
            "subject": {"type": "str"},
            "figure": {"type": "str"},
            "time": {"type": "float"},
        }},
        "reason_prefix": {"type": "str", "default": _gate.PREFIX},
        "recovery_runs": {"type": "int", "default": 1},
        "recovery_seconds": {"type": "float", "default": 0},
        "wait_timeout": {"type": "float", "default": 0},
    }


def _diff(result):
    def lines(states):
        return "".join("%s: %s %s\n" % (name, (s or {}).get("state"), (s or {}).get("reason") or "")
                       for name, s in sorted(states.items()))
    return {"before_header": "scheduler (before)", "after_header": "scheduler (after)",
            "before": lines(result["before"]), "after": lines(result["after"])}


def main():
    module = AnsibleModule(argument_spec=argument_spec(), supports_check_mode=True)
    params = module.params
    names = ("scheduler", "reason_prefix", "recovery_runs", "recovery_seconds", "wait_timeout")
    settings = dict((k, params[k]) for k in names)
    now = time.time()
    verdicts, errors = [], []
    for index, n in enumerate(params["nodes"]):
        given = _gate.node_errors(index, n)
        if given:
            errors.extend(given)
            verdicts.append({"node": n["name"], "state": n["state"] or "unknown", "scopes": n["scopes"]})
            continue
        when = n["time"] if n.get("time") is not None else now
        item = {"node": n["name"], "state": n["state"], "scopes": n["scopes"], "check": n.get("check"),
                "subject": n.get("subject"), "figure": n.get("figure"), "time": when}
        if n.get("findings") is not None and n["state"] in (None, "fail", "pass") and not n.get("check"):
            found = _gate.verdict(n["name"], (n["scopes"] or ["health"])[0], n["findings"],
                                  passed={"pass": True, "fail": False}.get(n["state"]), now=when, check_prefix=n.get("check_prefix"))
            item.update((k, found[k]) for k in ("state", "check", "subject", "figure"))
        elif n["state"] is None:
            errors.append("nodes[%d] (%s): give state or findings" % (index, n["name"]))
        verdicts.append(item)
    errors = _gate.settings_errors(settings, SCHEDULERS) + errors + _gate.verdict_errors(verdicts)
    if errors:
        module.fail_json(msg="scheduler_gate: " + "; ".join(errors), changed=False)
    scheduler = SCHEDULERS[settings["scheduler"]]

    def run(argv):
        return module.run_command(argv, environ_update=C_LOCALE)

    try:
        result = scheduler.gate(run, verdicts, settings, check_mode=module.check_mode, now=now)
    except _gate.GateError as exc:
        module.fail_json(msg="scheduler_gate: %s; nothing was changed" % exc, changed=False)
    except scheduler.Unreachable as exc:
        module.fail_json(msg="scheduler_gate: cannot read the node states (is slurmctld reachable from here, and "
                             "are sinfo and the munge key installed?): %s; nothing was changed" % exc, changed=False)
    out = dict((k, result[k]) for k in ("before", "after", "commands", "nodes", "changed"))
    if module._diff:
        out["diff"] = _diff(result)
    if result["failed"]:
        module.fail_json(msg="scheduler_gate: %s" % result["msg"], **out)
    module.exit_json(**out)


if __name__ == "__main__":
    main()
