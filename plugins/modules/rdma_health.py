#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: rdma_health
short_description: Read and judge a GPU node's fabric health in one call (rates, flaps, GID tables, SM, GPUDirect, RoCE mode)
version_added: 0.1.0
author: rdma.fabric contributors (@rdma-fabric)
extends_documentation_fragment: [rdma.fabric.attributes, rdma.fabric.attributes.read_only]
description:
  - Reads, in one call, what the fabric health checks need (M(rdma.fabric.rdma_facts)' devices, GID
    tables, PCIe links, GPUs and port counters, C(ethtool -S) of every RoCE netdev, C(ibv_devinfo -v),
    C(ip -j addr show) (the RoCE netdevs' own IPv4 addresses, each of which needs a RoCE v2 GID),
    C(sminfo) for every active InfiniBand port, M(rdma.fabric.gdr_readiness)' inputs, the RDMA-CM default
    RoCE mode of every RoCE port, the NIC non-volatile values set and not yet current (one C(mlxconfig -e query)
    per adapter, where mlxconfig or mstconfig is installed and O(checks) keeps C(nv_pending)), an optional
    NCCL log) and returns the findings of the same checks the C(rdma.fabric.health_findings) filter runs.
  - The RDMA-CM default RoCE mode (check C(rdma_cm_roce_mode)) is read from the rdma_cm configfs,
    C(/sys/kernel/config/rdma_cm/<device>/ports/<port>/default_roce_mode); C(IB/RoCE v1) on a RoCE port is an
    error finding naming the device and port. The device's configfs group exists only after a C(mkdir)
    (C(cma_roce_mode), C(cma_roce_tos) and M(rdma.fabric.dcqcn) make it and remove it again); this module never
    makes it, so a port whose group is absent, whose configfs is not mounted or whose file cannot be read is in
    RV(skipped_checks) with the reason, never a pass.
  - The rate counters (pause frames, CNPs, C(rx_discards_phy), symbol errors, link downed) are sampled
    twice, O(interval) seconds apart, and judged per second.
  - Flaps are link-downed increments counted from run to run over O(flap_window) seconds, kept in
    O(state_file) on the node (written atomically; not written in check mode). Within O(boot_grace)
    seconds of boot nothing is counted.
  - With O(bundle) nothing is read from the host. The record a support bundle holds
    (see C(playbooks/collect.yml) and O(return_raw)) is judged, giving the findings the node gave online.
  - Changes nothing on the node but its own state file; always reports C(changed=false).
options:
  interval:
    description: Seconds between the two counter samples; V(0) takes one sample (no rates).
    type: float
    default: 5
  state_file:
    description: The flap state kept on the node; an empty string keeps none (no flap judging over time).
    type: path
    default: /var/lib/rdma-fabric/health-state.json
  flap_window:
    description: Seconds over which link-down events are counted as flaps.
    type: int
    default: 21600
  boot_grace:
    description: Seconds after boot during which link-down events are not counted.
    type: int
    default: 600
  sm:
    description: Ask every active InfiniBand port's subnet manager (C(sminfo), C(saquery)) when the tools are there.
    type: bool
    default: true
  gdr:
    description: Read the GPUDirect RDMA inputs (peer memory, ACS on the GPU-NIC paths).
    type: bool
    default: true
  lossless:
    description:
      - Read the host/switch lossless agreement inputs on RoCE ports where lldpad runs (C(lldptool -t -n -i IF),
        C(lldptool -t -i IF), C(mlnx_qos -i IF -a)); without lldpad the check is skipped and RV(skipped_checks) says why.
    type: bool
    default: true
  nccl_log:
    description: Path (on the node) of an C(NCCL_DEBUG=INFO) log to judge (NCCL's choice of HCAs, GPUDirect RDMA per HCA).
    type: path
  nccl_log_text:
    description: The same log as text. Not logged and never returned (C(no_log)), since a log can
      hold tokens and passwords from the job's environment.
    type: str
  bundle:
    description: A support bundle of C(playbooks/collect.yml) to judge instead of the host - the node's directory
      (C(COLLECT_DIR/HOST)), its C(health-raw.json) or its archive C(COLLECT_DIR/HOST.tar.gz).
    type: path
  checks:
    description: Thresholds and switches of the checks (see the C(rdma.fabric.health_findings) filter).
    type: dict
    default: {}
  host:
    description: The C(host) of each finding; default the node's host name.
    type: str
  return_raw:
    description: Return C(raw), every tool output and sysfs value read (what a support bundle holds).
    type: bool
    default: false
attributes:
  action_group:
    membership:
      - rdma.fabric.facts
  check_mode:
    description: Reads and judges the same; the state file is not written.
  platform:
    description: Linux hosts with sysfs (and configfs for the RDMA-CM RoCE mode); each check uses its tools (ethtool, ibv_devinfo,
      ip, sminfo, lldptool) when present.
seealso:
  - module: rdma.fabric.rdma_facts
  - module: rdma.fabric.gdr_readiness
  - module: rdma.fabric.sm_info
"""

EXAMPLES = r"""
- name: Judge the node, sampling counters over 10 s
  rdma.fabric.rdma_health:
    interval: 10
    checks:
      gpu_models: {H100: {ports: 8, min_rate_gbps: 400}}
  register: health

- name: Judge a support bundle on the controller
  rdma.fabric.rdma_health:
    bundle: bundles/node1
  delegate_to: localhost
"""

RETURN = r"""
findings:
  description: One per problem, each with C(host), C(check), C(subject), C(severity) (V(error) or
    V(warning)), C(expected), C(actual), C(diagnosis) and C(remedy). Empty when healthy.
  type: list
  elements: dict
  returned: success
ports:
  description: Per port (C(DEV/PORT)) C(interval), C(rates) (per second), C(deltas), C(counters),
    C(gid_table) (C(size), C(used), C(free), C(occupancy), C(roce_v2_ipv4), C(ipv4_any) (IPv4 addresses of the
    GIDs), C(ipv4_addresses) (the netdev's own IPv4 addresses from C(ip -j addr show), what the C(gid_ipv4) check
    judges; null when unknown, e.g. a netdev of another network namespace)) and C(flaps).
  type: dict
  returned: success
skipped_checks:
  description: Checks that could not run, each C(check), C(reason) and, when it concerns some objects only,
    C(subject) (e.g. C(lossless_agreement) without lldpad running, C(gid_ipv4) for netdevs whose IPv4 addresses
    C(ip -j addr show) does not give, C(rdma_cm_roce_mode) for RoCE ports whose rdma_cm configfs group is absent);
    a skipped check is no healthy verdict. Not named C(skipped) - Ansible
    takes a true C(skipped) in a result for a skipped task.
  type: list
  elements: dict
  returned: success
lossless:
  description: Per RoCE netdev what the lossless agreement compared, C(peer) (the switch's TLVs as lldpad
    sees them, IEEE or CEE), C(host) (C(pfc), C(ets), C(app), C(source)), C(admin_status), C(dcbx_mode)
    (V(os) or V(fw), from mlnx_qos); or C(skipped); null without RoCE ports.
  type: dict
  returned: success
source:
  description: V(host) or V(bundle).
  type: str
  returned: success
raw:
  description: Everything read (with O(return_raw)); a support bundle's C(health-raw.json). Secret-looking
    values are redacted, their names kept (the one list of module_utils/common/_secrets.py, with OpenSM's C(sm_key),
    C(sa_key), C(m_key), C(cc_key), any C(*_key) but the partition key, passwords, tokens, secrets and
    credentials; in every text layout, such as C(NAME=value) in the NCCL log and /proc/cmdline,
    C(name value), JSON).
  type: dict
  returned: when return_raw
"""

import math
import os
import socket

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.rdma.fabric.plugins.module_utils.reports import _health
from ansible_collections.rdma.fabric.plugins.module_utils.facts import _health_read
from ansible_collections.rdma.fabric.plugins.module_utils.nccl import _nccl
from ansible_collections.rdma.fabric.plugins.module_utils.common._common import ToolError


def main():
    module = AnsibleModule(
        argument_spec=dict(
            interval=dict(type="float", default=5),
            state_file=dict(type="path", default="/var/lib/rdma-fabric/health-state.json"),
            flap_window=dict(type="int", default=21600),
            boot_grace=dict(type="int", default=600),
            sm=dict(type="bool", default=True),
            gdr=dict(type="bool", default=True),
            lossless=dict(type="bool", default=True),
            nccl_log=dict(type="path"),
            nccl_log_text=dict(type="str", no_log=True),
            bundle=dict(type="path"),
            checks=dict(type="dict", default={}),
            host=dict(type="str"),
            return_raw=dict(type="bool", default=False),
        ),
        mutually_exclusive=[["nccl_log", "nccl_log_text"], ["bundle", "nccl_log"]],
        supports_check_mode=True,
    )
    params = module.params
    for key in ("interval", "flap_window", "boot_grace"):
        if math.isnan(params[key]) or math.isinf(params[key]) or params[key] < 0:
            module.fail_json(msg="%s=%r: a number of seconds >= 0" % (key, params[key]))
    for key in ("state_file", "nccl_log"):
        if params[key] and not os.path.isabs(params[key]):
            module.fail_json(msg="%s=%r: expected an absolute path" % (key, params[key]))
    try:
        merged = _health.merge_checks(params["checks"], "checks")
        # the NCCL log is read and parsed first: a bad one is refused before the node is read
        # (kept out of params: the invocation AnsibleModule returns must never hold the log's text)
        nccl_text = params["nccl_log_text"]
        if params["nccl_log"]:
            nccl_text = _health_read.read_nccl_log(params["nccl_log"])
            _nccl.parse_log(nccl_text, "nccl_log=%r" % params["nccl_log"])
        elif nccl_text is not None:
            _nccl.parse_log(nccl_text, "nccl_log_text")
        if params["bundle"]:
            raw = _health_read.read_bundle(params["bundle"])
            if nccl_text is not None:
                raw["nccl_log"] = nccl_text
            observations = _health_read.derive(raw, params["flap_window"], params["boot_grace"])[0]
        else:
            raw, observations = _health_read.observe(module, dict(params, nccl_log_text=nccl_text, nv=merged["nv_pending"]),
                                                     save_state=not module.check_mode)
        findings = _health.judge(observations, params["checks"])
    except (ValueError, ToolError) as exc:
        module.fail_json(msg=str(getattr(exc, "msg", exc)))
    except (IOError, OSError) as exc:
        module.fail_json(msg="state_file=%r: cannot be locked or written: %s" % (params["state_file"], exc))
    host = params["host"] or raw.get("hostname") or socket.gethostname()
    for finding in findings:
        finding["host"] = host
    result = dict(changed=False, findings=findings, ports=observations["ports"], source=observations["source"],
                  skipped_checks=_health.skipped(observations, params["checks"]), lossless=observations.get("lossless"))
    if params["return_raw"]:
        result["raw"] = _health_read.redact(raw)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
