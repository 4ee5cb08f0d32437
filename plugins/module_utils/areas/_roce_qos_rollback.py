# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The roce_qos rollback of an apply that failed midway on an interface: what to restore, per
module, from the modules' results. The role's rescue (the ``rdma.fabric.roce_qos_rollback``
filter, on the controller) and ``state_check`` with ``apply`` (on the node) both call
``rollback``, and ``report`` for the message the host fails with."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.rdma.fabric.plugins.module_utils.resources import _dcqcn, _mlnx_qos


# What each module's ``before`` entry holds that its ``config`` takes back (state: replaced).
_LLDP_KEYS = {"pfc": ("willing", "enabled", "enable_tx"),
              "ets_cfg": ("willing", "up2tc", "tsa", "tcbw", "enable_tx"),
              "ets_rec": ("up2tc", "tsa", "tcbw", "enable_tx")}
ROLLBACK_ORDER = ("lldp_dcb", "dcqcn", "mlnx_qos")      # the reverse of the apply order


def _entry_for(states, interface):
    for entry in states if isinstance(states, list) else []:
        if isinstance(entry, dict) and entry.get("interface") == interface:
            return entry
    return None


def _restore_config(module, before):
    """One ``before`` entry -> the ``config`` entry that puts it back (None: nothing to put)."""
    if module == "mlnx_qos":
        config = dict((k, v) for k, v in before.items() if v is not None and k in _mlnx_qos.CONFIG_KEYS)
    elif module == "dcqcn":
        config = dict((k, before[k]) for k in ("rdma_device", "port") if before.get(k) is not None)
        for point in _dcqcn.POINTS:
            if isinstance(before.get(point), dict):
                config[point] = {"enabled_priorities": list(before[point].get("enabled_priorities") or []),
                                 "params": dict(before[point].get("params") or {})}
        for key in ("roce_tos", "rdma_cm_tos", "rdma_cm_roce_mode"):
            # an unset ToS (None) cannot be written back, nor a mode the kernel showed as neither
            # v2 nor v1: it stays as this run left it
            if before.get(key) is not None and config.get("rdma_device") and (
                    key != "rdma_cm_roce_mode" or before[key] in _dcqcn.ROCE_MODES):
                config[key] = before[key]
    else:
        config = {}
        if before.get("admin_status") is not None:
            config["admin_status"] = before["admin_status"]
        for key, fields in _LLDP_KEYS.items():
            if isinstance(before.get(key), dict):
                entry = dict((f, before[key][f]) for f in fields if before[key].get(f) is not None)
                if entry:
                    config[key] = entry
        if isinstance(before.get("app"), list):
            config["app"] = [dict((f, a[f]) for f in ("priority", "selector", "protocol")) for a in before["app"]]
        if before.get("app_enable_tx") is not None:
            config["app_enable_tx"] = before["app_enable_tx"]
    if not config or (module == "dcqcn" and set(config) <= {"rdma_device", "port"}):
        return None
    return dict(config, interface=before["interface"])


def rollback(results, failed=None, enabled=True):
    """What to restore after the apply failed midway on an interface (the role's rescue).

    ``results``: ``{module: registered result}`` of the mlnx_qos, dcqcn and lldp_dcb tasks
    (a task that did not run: an empty dict); ``failed``: ``ansible_failed_result``.

    The interfaces restored are those the failure happened on (the engine's ``failed_on``).
    For each, every module whose read-back differs from its ``before`` there gets a
    ``config`` entry that puts ``before`` back through the same module (``state: replaced``),
    in the reverse of the apply order. Returns ``{interfaces, order, mlnx_qos, dcqcn,
    lldp_dcb, reason}``; ``reason`` says why nothing is restored when the lists are empty."""
    out = {"interfaces": [], "order": list(ROLLBACK_ORDER), "mlnx_qos": [], "dcqcn": [], "lldp_dcb": [],
           "reason": ""}
    results = results if isinstance(results, dict) else {}
    failed = failed if isinstance(failed, dict) else {}
    failed_on = failed.get("failed_on") or {}
    if not failed_on:
        for result in results.values():
            if isinstance(result, dict) and result.get("failed") and result.get("failed_on"):
                failed_on = result["failed_on"]
                break
    interface = failed_on.get("interface") if isinstance(failed_on, dict) else None
    if not enabled:
        out["reason"] = "roce_qos_rollback_on_failure is false"
        return out
    if not interface:
        out["reason"] = ("the failure was not midway on an interface (nothing of the failed call was applied, "
                         "or it names no interface)")
        return out
    out["interfaces"] = [interface]
    for module in ROLLBACK_ORDER:
        result = results.get(module)
        if not isinstance(result, dict) or result.get("skipped"):
            continue
        before = _entry_for(result.get("before"), interface)
        after = _entry_for(result.get("after"), interface)
        if before is None or before == after:
            continue
        config = _restore_config(module, before)
        if config is not None:
            out[module].append(config)
    if not any(out[m] for m in ROLLBACK_ORDER):
        out["reason"] = "%s reads back as it was before the run: nothing to restore" % interface
    return out


def report(rollback, failed=None, restored=None):
    """The message the role fails the host with after a rollback: the failure (the
    module's own message) and what the rollback did, per module (``restored``: the
    registered results of the restore tasks, by module)."""
    failed = failed if isinstance(failed, dict) else {}
    restored = restored if isinstance(restored, dict) else {}
    rollback = rollback if isinstance(rollback, dict) else {}
    text = "roce_qos: applying failed: %s" % (failed.get("msg") or "(no message)")
    interfaces = rollback.get("interfaces") or []
    done, broken = [], []
    for module in rollback.get("order") or ROLLBACK_ORDER:
        if not rollback.get(module):
            continue
        result = restored.get(module) or {}
        if result.get("failed"):
            broken.append("%s: %s" % (module, result.get("msg") or "failed"))
        elif result.get("skipped") or not result:
            broken.append("%s: not run" % module)
        else:
            done.append(module)
    if not done and not broken:
        text += " || Rollback: none (%s)." % (rollback.get("reason") or "nothing to restore")
    elif not broken:
        text += (" || Rolled back %s to the state read before this run through %s (read back after the restore)."
                 % (", ".join(interfaces), ", ".join(done)))
    else:
        text += (" || Rollback of %s INCOMPLETE: restored through %s; FAILED %s. The interface is in neither the old "
                 "nor the new state: check it before re-running." % (", ".join(interfaces), ", ".join(done) or "none",
                                                                     "; ".join(broken)))
    return text
