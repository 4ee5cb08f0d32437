# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""rdma.fabric.switch_qos_plan: one leaf's switch QoS planned on the controller (the switch_qos
area object) from its switch_qos_* variables and the roce_qos settings of the hosts its ports
face; rendered for its OS, checked, written under the report dir with its records.
Documentation in plugins/modules/switch_qos_plan.py."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import json
import os
import time

import yaml
from ansible.errors import AnsibleError
from ansible.module_utils.parsing.convert_bool import boolean
from ansible.plugins.action import ActionBase

from ansible_collections.rdma.fabric.plugins.module_utils.areas import roce_qos as _roce_qos
from ansible_collections.rdma.fabric.plugins.module_utils.areas import switch_qos as _area
from ansible_collections.rdma.fabric.plugins.module_utils.common._common import PlanError
from ansible_collections.rdma.fabric.plugins.module_utils.reports import _report as R
from ansible_collections.rdma.fabric.plugins.module_utils.switch import _agreement, _render
from ansible_collections.rdma.fabric.plugins.plugin_utils import _report_run as RR
from ansible_collections.rdma.fabric.plugins.plugin_utils import _role_specs

_COLLECTION = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_ROCE_DEFAULTS = {}


def roce_defaults():
    """The roce_qos role's defaults: a host's settings where its inventory sets nothing."""
    if not _ROCE_DEFAULTS:
        with open(os.path.join(_COLLECTION, "roles", "roce_qos", "defaults", "main.yml")) as handle:
            _ROCE_DEFAULTS.update(yaml.safe_load(handle))
    return copy.deepcopy(_ROCE_DEFAULTS)


def host_variables(hostvars, hosts):
    """``{host: roce_qos variables}``: the role's defaults under each host's own values."""
    out = {}
    for host in hosts:
        if host not in hostvars:
            continue
        values = roce_defaults()
        own = hostvars[host]
        for name in list(values) + list(_roce_qos.OTHER_VARIABLES):
            if name in own:
                values[name] = own[name]
        out[host] = values
    return out


def write(report_dir, files, mode):
    for item in files:
        path = os.path.join(report_dir, item["name"])
        directory = os.path.dirname(path)
        if not os.path.isdir(directory):
            # exist_ok: the leaves of a run write into the same report_dir at once (one worker each)
            os.makedirs(directory, 0o750, exist_ok=True)
        R.write_atomic(path, item["content"], mode)


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(("report_dir", "report_mode", "write"))

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        task_vars = task_vars or {}
        args = self._task.args
        switch = task_vars.get("inventory_hostname")
        # the task's own arguments first: a bad one is the error, before any variable is read
        writing = args.get("write", True)
        if not isinstance(writing, bool):
            try:
                writing = boolean(writing, strict=True)
            except TypeError:
                raise AnsibleError("switch_qos_plan: write=%r: expected true or false" % (writing,))
        if writing:
            report_dir = args.get("report_dir")
            if not isinstance(report_dir, str) or not report_dir.strip() or any(ord(c) < 32 for c in report_dir):
                raise AnsibleError("switch_qos_plan: report_dir=%r: the directory the renderings and records are "
                                   "written to (switch_qos_report_dir)" % (report_dir,))
            report_dir = os.path.expanduser(report_dir)
            if os.path.exists(report_dir) and not os.path.isdir(report_dir):
                raise AnsibleError("switch_qos_plan: report_dir=%r: not a directory" % (report_dir,))
            mode = RR.report_mode("switch_qos_plan", args, task_vars)
        get = _role_specs.getter(self._templar, task_vars)
        variables = _role_specs.checked_variables("switch_qos", get)
        hostvars = task_vars.get("hostvars") or {}
        ports = variables.get("switch_qos_ports") or []
        hosts = sorted(set(p.get("host") for p in ports if isinstance(p, dict) and p.get("host")))
        # plain data (ansible-core 2.19 tags its strings; YAML writers and pyavd take plain ones)
        settings = json.loads(json.dumps(_area.settings(variables, host_variables(hostvars, hosts))))
        try:
            plan = _area.plan(settings, switch)
        except PlanError as exc:
            result.update(failed=True, msg=str(exc))
            return result
        intent = plan["intent"]
        files = list(plan["files"])
        if plan["os"] == "eos":
            try:
                violations, cli = _render.validate_eos_with_pyavd(plan["rendered"])
            except ImportError:
                violations, cli = [], None
                result.setdefault("warnings", []).append(
                    "switch_qos (%s): pyavd is not installed on the controller: the AVD structured config is "
                    "written, not validated nor rendered to EOS CLI (pip install pyavd)" % switch)
            if violations:
                result.update(failed=True, msg="switch_qos (%s, eos): pyavd refuses the structured config: %s"
                              % (switch, "; ".join(violations)))
                return result
            plan["cli"] = cli
            if cli:
                files.append({"name": "eos/%s.cfg" % switch, "content": cli})
        if plan["os"] == "cumulus":
            plan["nvue_differences"] = [dict(zip(("setting", "ours", "nvidia_default", "why"), d))
                                        for d in _render.nvue_differences(intent)]
        views = dict((h, (hostvars.get(h) or {}).get("switch_qos_lossless")) for h in hosts)
        running = get("switch_qos_running_config", None)
        records = _agreement.fleet_records(switch, intent, views)
        records += _agreement.running_records(switch, plan["os"], running, intent)
        # ECN advice from the hosts' counter rates per netdev (switch_qos_rates: cnp_sent, rx_pause, ecn_marked /s)
        records += _agreement.fleet_advice(switch, intent, dict((h, (hostvars.get(h) or {}).get("switch_qos_rates"))
                                                                for h in hosts))
        records = R.sort_records(records)
        unchecked = [p["name"] for p in intent["ports"] if not (views.get(p.get("host")) or {}).get(
            p.get("host_interface"))]
        meta = RR.meta(task_vars, time.time())
        meta.update(switch=switch, os=plan["os"], unchecked_ports=unchecked,
                    summary="%s: %d disagreement(s); %d port(s) not checked (no host view)"
                    % (switch, len(records), len(unchecked)))
        files.append({"name": "records/%s.json" % switch, "content": R.to_json(records, meta)})
        if writing:
            try:
                write(report_dir, files, mode)
            except (IOError, OSError) as exc:
                raise AnsibleError("switch_qos_plan: writing to report_dir=%r failed: %s" % (report_dir, exc))
            result["report_dir"] = report_dir
        result.update(changed=False, os=plan["os"], intent=intent, rendered=plan["rendered"],
                      cli=plan.get("cli"), files=[f["name"] for f in files], records=records,
                      summary=meta["summary"], nvue_differences=plan.get("nvue_differences"),
                      steps=dict((s["module"].rsplit(".", 1)[1], s) for s in plan["rendered"])
                      if plan["os"] == "dell_sonic" else None)
        if records:
            result.setdefault("warnings", []).append(meta["summary"] + "\n" + R.table(records))
        return result
