# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The run of a fleet report action (drift_report, health_report) on the controller: each
play host's registered result from ``hostvars``, the hosts that could not be checked, the
meta block, and the report files written atomically through module_utils/reports/_report.py's
writers. The actions keep only what differs: which key holds a host's records, how a host
that was not checked reads, and which writers they call."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime
import json
import os
import re
from collections.abc import Mapping

from ansible.errors import AnsibleError
from ansible.utils.display import Display

from ansible_collections.rdma.fabric.plugins.module_utils.reports import _report as R

display = Display()


def report_dir(action, args):
    """The required ``report_dir`` argument of ``action``."""
    directory = args.get("report_dir")
    if not directory:
        raise AnsibleError("%s: report_dir is required" % action)
    return directory


def variable_name(action, option, value):
    """``value`` of ``option``: the name of a variable (registered by an earlier task), or an
    AnsibleError naming the option and the value (a name no task can register matches no host)."""
    if not isinstance(value, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", value):
        raise AnsibleError("%s: %s=%r: not a variable name (letters, digits, _)" % (action, option, value))
    return value


def play_results(task_vars, result_var, started_var=None):
    """``(hosts_all, hosts_alive, results)``: the play's hosts, those still in it, and each
    host's ``result_var`` from ``hostvars``. With ``started_var``, hosts that failed in an
    earlier play of the same run (an onboarding gate) never started this one: when any host
    carries ``started_var``, only those hosts count (not checked, not "unreachable")."""
    hosts_all = list(task_vars.get("ansible_play_hosts_all") or [])
    hosts_alive = list(task_vars.get("ansible_play_hosts") or [])
    own = host_vars(task_vars.get("hostvars") or {}, hosts_all)
    if started_var:
        started = [h for h in hosts_all if own[h].get(started_var)]
        if started:
            hosts_all = started
    results = dict((h, own[h].get(result_var)) for h in hosts_all)
    return hosts_all, hosts_alive, results


def host_vars(hostvars, hosts):
    """``{host: its variables}``, each host's read once. ``HostVars.raw_get`` where there is one:
    the registered results are data, and templating every host's variables again (what
    ``hostvars[host]`` does) was most of the report task's controller CPU at fleet size."""
    raw_get = getattr(hostvars, "raw_get", None)
    out = {}
    for host in hosts:
        found = raw_get(host) if raw_get else hostvars.get(host)
        out[host] = found if isinstance(found, Mapping) else {}
    return out


def host_results(hosts_all, hosts_alive, results, key, skip_skipped=False):
    """``(host, result, why)`` for every host in order: ``why`` is None for a host whose
    result holds ``key``, else ``"unreachable"`` or ``"not checked: <msg>"`` (and ``result``
    is what there was). With ``skip_skipped``, a live host whose result was skipped (nothing
    to check) is left out."""
    alive = set(hosts_alive)
    for host in hosts_all:
        result = results.get(host)
        if isinstance(result, dict) and key in result:
            yield host, result, None
            continue
        if skip_skipped and host in alive and isinstance(result, dict) and result.get("skipped"):
            continue
        why = "unreachable" if host not in alive or (result or {}).get("unreachable") else \
            "not checked: %s" % ((result or {}).get("msg") or "no result")
        yield host, result, why


def meta(task_vars, now, version=False):
    """The meta block's run fields: time (UTC, ISO 8601), inventory sources and limit, and
    with ``version`` the collection version (``rdma_fabric_version`` or the installed one)."""
    out = {"time": datetime.datetime.fromtimestamp(now, datetime.timezone.utc).isoformat(),
           "inventory": ",".join(task_vars.get("ansible_inventory_sources") or []),
           "limit": task_vars.get("ansible_limit") or ""}
    if version:
        out["collection_version"] = task_vars.get("rdma_fabric_version") or collection_version()
    return out


def report_mode(action, args, task_vars):
    """The mode of the report files: the action's ``report_mode``, else the inventory's
    ``rdma_fabric_report_mode``, else 0640 (octal string like C("0640") or an int)."""
    value = args.get("report_mode")
    name = "report_mode"
    if value is None:
        value, name = task_vars.get("rdma_fabric_report_mode"), "rdma_fabric_report_mode"
    if value is None or value == "":
        return 0o640
    try:
        mode = int(value, 8) if isinstance(value, str) else int(value)
    except (TypeError, ValueError):
        mode = -1
    if isinstance(value, bool) or not 0 <= mode <= 0o777:
        raise AnsibleError("%s: %s=%r: not a file mode (an octal string such as '0640')" % (action, name, value))
    return mode


def write_reports(action, directory, files, mode=0o640):
    """Write ``[(file name, text)]`` into ``directory`` (made 0750 if missing), each atomically
    with ``mode`` (``_fileio.write_atomic``: set on the descriptor, whatever the umask; no
    symlink followed); a failure is an AnsibleError naming ``action`` and the directory."""
    try:
        os.makedirs(directory, 0o750, exist_ok=True)
        for name, text in files:
            R.write_atomic(os.path.join(directory, name), text, mode)
    except (IOError, OSError) as exc:
        raise AnsibleError("%s: writing the reports to report_dir %s failed: %s" % (action, directory, exc))


def show(title, table_text, summary, directory):
    """Print the report's table (when there is one), its summary and where the files are."""
    text = (table_text + "\n" if table_text else "") + summary
    display.display("\n%s\n%s\nreports: %s\n" % (title, text, directory))


def finish(result, summary, failing):
    """Set the action result's ``msg`` to the summary, and ``failed`` when ``failing``."""
    if failing:
        result.update(failed=True, msg=summary)
    else:
        result["msg"] = summary
    return result


def collection_version():
    """The installed collection's version: MANIFEST.json, else galaxy.yml (a source tree)."""
    top = os.path.join(os.path.dirname(__file__), "..", "..")
    try:
        with open(os.path.join(top, "MANIFEST.json")) as handle:
            return json.load(handle)["collection_info"]["version"]
    except (IOError, OSError, ValueError, KeyError):
        pass
    try:
        with open(os.path.join(top, "galaxy.yml")) as handle:
            for line in handle:
                if line.startswith("version:"):
                    return line.split(":", 1)[1].strip()
    except (IOError, OSError):
        pass
    return "unknown"
