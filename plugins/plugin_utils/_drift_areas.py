# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The drift check's areas, on the controller: from an area's inputs (its role's settings,
given by the role's ``drift_inputs`` tasks) and the node's facts, the resource checks to run
(``rdma.fabric.state_check`` requests), computed by the same filters the roles converge with.

Each area: ``AREAS[area](inputs, facts, host) -> [request]``, where ``facts`` holds what the
readers ``FACTS[area](inputs)`` names returned (``rdma``: rdma_facts, ``gdr``: gdr_readiness).
A request is a ``state_check`` resource (its records are the smallest settings that differ
between ``before`` and ``after``), or carries ``judge(host, result) -> records`` to read the
result itself, or ``records`` already judged from the facts (no module call).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.rdma.fabric.plugins.filter.roce_qos import roce_qos_config


def roce_qos_requests(inputs, facts, host):
    plan = roce_qos_config(facts["rdma"], inputs["settings"])
    requests = []
    if plan["ports"]:
        requests.append({"area": "roce_qos", "resource": "mlnx_qos", "state": "replaced", "config": plan["mlnx_qos"]})
        requests.append({"area": "roce_qos", "resource": "dcqcn", "state": "replaced", "config": plan["dcqcn"]})
        if inputs["settings"].get("lldp"):
            requests.append({"area": "roce_qos", "resource": "lldp_dcb", "state": "merged", "config": plan["lldp"]})
    if inputs.get("persist"):
        files = [{"path": inputs["state_file"], "content": plan["state_file"]}] + list(inputs.get("files") or [])
        requests.append({"area": "roce_qos", "resource": "node_files", "name": "boot applier",
                         "config": {"files": files, "units": list(inputs.get("units") or [])}})
    return requests




def _record(host, area, obj, setting, expected, actual):
    return {"host": host, "area": area, "object": obj, "setting": setting, "expected": expected, "actual": actual}


def _config_records(host, area, errors):
    return [_record(host, area, "", "config", "valid", error) for error in errors]


def gpudirect_requests(inputs, facts, host):
    """Kernel arguments in the boot configuration (and booted or pending), runtime ACS redirect
    on the GPU-NIC paths, nvidia_peermem loaded (judged from the gdr_readiness read), the ACS
    boot unit and its files (node_files)."""
    from ansible_collections.rdma.fabric.plugins.filter.gpudirect import plan as gpudirect_plan
    config = inputs["config"]
    gdr = facts["gdr"]
    plan = gpudirect_plan(gdr, config)
    if plan["errors"]:
        return [{"records": _config_records(host, "gpudirect", plan["errors"])}]
    judged = []
    if plan["acs_paths"]:
        for bridge in (gdr.get("acs") or {}).get("targets_redirect_enabled") or []:
            judged.append(_record(host, "gpudirect", bridge, "acs_redirect", "off", "on"))
    if plan["modprobe"]:
        judged.append(_record(host, "gpudirect", plan["modprobe"], "loaded", True, False))
    requests = [{"records": judged}]
    if plan["kernel_arguments"]:
        cmdline = {"arguments": plan["kernel_arguments"], "backend": config.get("gpudirect_kernel_backend") or "auto"}
        if config.get("gpudirect_grub_file"):
            cmdline["grub_file"] = config["gpudirect_grub_file"]

        def judge_cmdline(host, result, wanted=plan["kernel_arguments"]):
            records = []
            before = (result.get("before") or {}).get("arguments") or []
            after = (result.get("after") or {}).get("arguments") or []
            for word in sorted(set(after) - set(before)):
                records.append(_record(host, "gpudirect", "boot configuration", word.split("=", 1)[0], word,
                                       next((b for b in before if b.split("=", 1)[0] == word.split("=", 1)[0]), None)))
            for word in sorted(set(before) - set(after)):
                if not any(a.split("=", 1)[0] == word.split("=", 1)[0] for a in after):
                    records.append(_record(host, "gpudirect", "boot configuration", word.split("=", 1)[0], None, word))
            if not records:
                # in the boot configuration but not in the running kernel: set, not yet booted
                for item in result.get("running") or []:
                    name = item.get("name") if isinstance(item, dict) else str(item)
                    value = item.get("value") if isinstance(item, dict) else None
                    records.append(_record(host, "gpudirect", "/proc/cmdline", name,
                                           "%s=%s" % (name, value) if value is not None else name, "pending reboot"))
            return records
        requests.append({"area": "gpudirect", "resource": "kernel_cmdline", "name": "kernel arguments",
                         "config": cmdline, "judge": judge_cmdline})
    files = (list(inputs.get("acs_files") or []) if plan["acs_install"] else []) + list(plan["files"] or [])
    if files or plan["units"]:
        requests.append({"area": "gpudirect", "resource": "node_files", "name": "ACS boot unit",
                         "config": {"files": files, "units": plan["units"]}})
    return requests


def nccl_env_requests(inputs, facts, host):
    """nccl.conf (and the environment file) key by key against what the node's topology gives
    today; a missing file is drift of every key."""
    from ansible_collections.rdma.fabric.plugins.filter.nccl_env import node as nccl_env_node
    from ansible_collections.rdma.fabric.plugins.module_utils import _nccl
    from ansible_collections.rdma.fabric.plugins.module_utils._nccl_consistency import as_text
    config = inputs["config"]
    plan = nccl_env_node(facts["rdma"], config, host)
    if plan["errors"]:
        return [{"records": _config_records(host, "nccl_env", plan["errors"])}]
    if not plan["active"]:
        return []
    paths = [config.get("nccl_env_conf_path") or "/etc/nccl.conf"]
    if config.get("nccl_env_environment_file"):
        paths.append(config["nccl_env_environment_file"])
    owner, group = config.get("nccl_env_file_owner") or "root", config.get("nccl_env_file_group") or "root"
    files = [{"path": p, "content": plan["text"], "mode": "0644", "owner": owner, "group": group} for p in paths]
    expected = dict((k, as_text(v)) for k, v in plan["settings"].items())

    def judge(host, result):
        records = []
        for path in paths:
            have = ((result.get("before") or {}).get("files") or {}).get(path) or {}
            if have.get("state") != "present":
                records.extend(_record(host, "nccl_env", path, key, value, None) for key, value in sorted(expected.items()))
                continue
            found = _nccl.parse_conf(have.get("content") or "")
            for key in sorted(set(expected) | set(found)):
                if expected.get(key) != found.get(key):
                    records.append(_record(host, "nccl_env", path, key, expected.get(key), found.get(key)))
            for key, want in (("mode", "0644"), ("owner", owner), ("group", group)):
                if have.get(key) != want:
                    records.append(_record(host, "nccl_env", path, key, want, have.get(key)))
        return records
    return [{"area": "nccl_env", "resource": "node_files", "name": "NCCL files", "options": {"content": True},
             "config": {"files": files, "units": []}, "judge": judge}]


AREAS = {"roce_qos": roce_qos_requests, "gpudirect": gpudirect_requests, "nccl_env": nccl_env_requests}
FACTS = {
    "roce_qos": lambda inputs: {"rdma_facts": {"gather_subset": ["devices"]}},
    "gpudirect": lambda inputs: {"gdr_readiness": {"gdr_level": inputs["config"].get("gpudirect_gdr_level") or "PXB"}},
    "nccl_env": lambda inputs: {"rdma_facts": {"gather_subset": ["all"]}},
}
