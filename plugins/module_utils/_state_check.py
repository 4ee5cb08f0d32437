# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Several resources checked in one module call (the drift check's only node round trip
per area set): each resource's own reader, planner and prediction through the engine in
check mode. Nothing is written."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.rdma.fabric.plugins.module_utils._resource import check_resource


def _mlnx_qos(module, options):
    from ansible_collections.rdma.fabric.plugins.module_utils._mlnx_qos import MlnxQosResource
    return MlnxQosResource(module)


def _dcqcn(module, options):
    from ansible_collections.rdma.fabric.plugins.module_utils._dcqcn import DcqcnResource
    return DcqcnResource(module)


def _lldp_dcb(module, options):
    from ansible_collections.rdma.fabric.plugins.module_utils._lldp_dcb import LldpDcbResource
    return LldpDcbResource(module, dcbx_check=options.get("dcbx_check", True),
                           switch_dcbx_to_os=options.get("switch_dcbx_to_os", False))


def _node_files(module, options):
    from ansible_collections.rdma.fabric.plugins.module_utils._node_files import NodeFilesResource
    return NodeFilesResource(module, with_content=options.get("content", False))


def _kernel_cmdline(module, options):
    from ansible_collections.rdma.fabric.plugins.module_utils._grub import KernelCmdlineResource
    return KernelCmdlineResource(module)


# kernel_cmdline's config is its module's parameters; these are its argument spec's defaults.
KERNEL_CMDLINE_DEFAULTS = {"backend": "auto", "grub_file": "/etc/default/grub", "update_command": None,
                           "backup": False, "proc_cmdline": "/proc/cmdline"}
RESOURCES = {"mlnx_qos": _mlnx_qos, "dcqcn": _dcqcn, "lldp_dcb": _lldp_dcb, "node_files": _node_files,
             "kernel_cmdline": _kernel_cmdline}


def check_all(module, requests):
    """``[{name, area, resource, state, config, options}]`` -> the same list with ``failed``
    and ``result`` (before/after/commands, or msg) of each. One failing resource does not
    stop the others: its error is its result."""
    out = []
    for index, request in enumerate(requests or []):
        name = request.get("resource")
        entry = {"area": request.get("area"), "resource": name, "name": request.get("name") or name}
        factory = RESOURCES.get(name)
        if factory is None:
            entry.update(failed=True, result={"msg": "resources[%d].resource=%r: one of %s"
                                                     % (index, name, ", ".join(sorted(RESOURCES)))})
        else:
            resource = factory(module, request.get("options") or {})
            config = request.get("config")
            if name == "kernel_cmdline":
                config = dict(KERNEL_CMDLINE_DEFAULTS, **(config or {}))
                config["arguments"] = [dict({"value": None, "state": "present"}, **a) for a in config.get("arguments") or []]
            failed, result = check_resource(module, resource, request.get("state") or "merged", config)
            entry.update(failed=failed, result=result)
        out.append(entry)
    return out


class _ReadOnce(object):
    """The module as the readers see it, with each distinct tool run made once: rdma_facts
    and gdr_readiness both read the GPUs (``nvidia-smi``) and the PCIe tree; in one read-only
    call the second reader gets the first one's output instead of running the tool again."""

    def __init__(self, module):
        self._module = module
        self._runs = {}

    def run_command(self, args, **kwargs):
        key = (tuple(args) if isinstance(args, (list, tuple)) else args,
               tuple(sorted((k, repr(v)) for k, v in kwargs.items())))
        if key not in self._runs:
            self._runs[key] = self._module.run_command(args, **kwargs)
        return self._runs[key]

    def __getattr__(self, name):
        return getattr(self._module, name)


class _WithEnvironment(object):
    """The module as one reader sees it: every command it runs gets ``environment`` on top of
    the task's (``environ_update``)."""

    def __init__(self, module, environment):
        self._module = module
        self._environment = dict((str(k), str(v)) for k, v in (environment or {}).items())

    def run_command(self, args, **kwargs):
        kwargs["environ_update"] = dict(kwargs.get("environ_update") or {}, **self._environment)
        return self._module.run_command(args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._module, name)


def gather_facts(module, wanted):
    """The readers the areas' expected states start from, in the same call: ``rdma_facts``
    (``{gather_subset}``) as ``rdma``, ``gdr_readiness`` (``{gdr_level}``) as ``gdr``,
    ``opensm`` (``{ibstat}``: the OS family markers, and the ports when discovering) as
    ``opensm``, ``sm_info`` (``{ca, port, timeout, environment}``) as ``sm`` (no SM answering
    is a state: no master).
    Returns ``(facts, errors)``; a reader that fails is an error, not empty facts."""
    facts, errors = {}, {}
    wanted = wanted or {}
    module = _ReadOnce(module)
    if "rdma_facts" in wanted:
        from ansible_collections.rdma.fabric.plugins.module_utils import _rdma_facts
        try:
            facts["rdma"] = _rdma_facts.gather(module, (wanted["rdma_facts"] or {}).get("gather_subset") or ["devices"])
        except Exception as exc:        # any reader failure is reported, never read as healthy
            errors["rdma_facts"] = "%s: %s" % (type(exc).__name__, getattr(exc, "msg", None) or exc)
    if "gdr_readiness" in wanted:
        from ansible_collections.rdma.fabric.plugins.module_utils import _gdr_readiness
        try:
            raw = _gdr_readiness.read_host(module, (wanted["gdr_readiness"] or {}).get("proc_root") or "/proc")
            facts["gdr"] = _gdr_readiness.derive(raw, (wanted["gdr_readiness"] or {}).get("gdr_level") or "PXB")
        except Exception as exc:
            errors["gdr_readiness"] = "%s: %s" % (type(exc).__name__, getattr(exc, "msg", None) or exc)
    if "opensm" in wanted:
        from ansible_collections.rdma.fabric.plugins.module_utils import _ibstat, _opensm_plan
        from ansible_collections.rdma.fabric.plugins.module_utils._common import run_tool
        try:
            # the OS family's marker files (stat only) and, to discover the port, ibstat
            markers = dict((path, {"state": "present" if os.path.exists(path) else "absent"})
                           for path, _family in _opensm_plan.FAMILY_MARKERS)
            facts["opensm"] = {"markers": {"files": markers}}
            if (wanted["opensm"] or {}).get("ibstat"):
                facts["opensm"]["ports"] = _ibstat.port_list(run_tool(module, ["ibstat"])[1])
        except Exception as exc:
            errors["opensm"] = "%s: %s" % (type(exc).__name__, getattr(exc, "msg", None) or exc)
    if "sm_info" in wanted:
        from ansible_collections.rdma.fabric.plugins.module_utils import _sm_info
        from ansible_collections.rdma.fabric.plugins.module_utils._common import ToolError
        args = wanted["sm_info"] or {}
        try:
            # sminfo asks the fabric from a port with no SM: its own environment
            # (opensm_query_environment), the other readers keep the task's
            reader = _WithEnvironment(module, args.get("environment")) if args.get("environment") else module
            facts["sm"] = _sm_info.gather(reader, args.get("ca"), args.get("port"), args.get("timeout"))[0]
        except ToolError as exc:
            # no SM answered: that is the fabric's state (no MASTER), not a failed read
            facts["sm"] = {"master": None, "sm_ports": [], "master_count": 0, "standby_count": 0,
                           "issm_ports": [], "errors": [{"lid": None, "error": exc.msg}]}
        except Exception as exc:
            errors["sm_info"] = "%s: %s" % (type(exc).__name__, getattr(exc, "msg", None) or exc)
    return facts, errors


def check_areas(module, host, specs, facts, facts_errors):
    """The drift check of the areas planned on this node (``_drift_areas.NODE_AREAS``), in the
    call that read their facts: each area's inputs from its spec and the facts, its resources
    checked, and the records judged. ``{drift_records, checked}``; a reader that failed makes
    the host a record of its own, never "no drift"."""
    from ansible_collections.rdma.fabric.plugins.module_utils import _drift_areas as A
    needed = A.readers(specs)
    failed = dict((k, v) for k, v in (facts_errors or {}).items() if k in needed)
    if failed:
        why = "; ".join("%s: %s" % kv for kv in sorted(failed.items()))
        return {"drift_records": [A.host_record(host, "gather failed: %s" % why)], "checked": sorted(specs)}
    inputs, records = [], []
    for area in A.NODE_AREAS:
        if area not in specs:
            continue
        try:
            inputs.append(A.plan_inputs(area, specs[area], facts, host))
        except (KeyError, TypeError, AttributeError, ValueError) as exc:
            # a spec of the wrong shape (not the role's __ROLE_drift_spec): the area's record
            records.append(A.record(host, area, "", "config", "valid", "areas.%s: %s: %s"
                                    % (area, type(exc).__name__, exc)))
    requests, planned = A.requests_of(inputs, host)
    records.extend(planned)
    entries = check_all(module, [A.module_request(r) for r in requests])
    records.extend(A.judge(host, requests, entries))
    return {"drift_records": records, "checked": [area for area in A.NODE_AREAS if area in specs]}
