# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How the corpus test reads the samples of mlnx_qos.txt with the collection's parser."""
from __future__ import absolute_import, division, print_function
__metaclass__ = type
import re

from ansible_collections.rdma.fabric.plugins.module_utils.resources import _mlnx_qos

TOOL = "mlnx_qos"
PARSER = "_mlnx_qos.parse_report"
VERSIONS = "mlnx-tools 2017-06 (80fb22e) .. 2026 (HEAD): MLNX_OFED 4.0-4.6, 5.x, 23.10, DOCA-OFED 3.2"

_NO_REPORT = "error text, not a QoS report: read_state reports it as the tool's failure"
EXPECT_REFUSED = {
    "MQ-REAL-ERR-VLAN": "a VLAN netdev without DCB ops: four 'not supported' lines and rc 1, " + _NO_REPORT,
    "MQ-LOCAL-NODCB": _NO_REPORT,
    "MQ-LOCAL-NOSUCHDEV": "a missing netdev prints the no-DCB lines: " + _NO_REPORT,
    "MQ-LOCAL-LLDPAD-WARN": "lldpad warning + the no-DCB lines: " + _NO_REPORT,
    "MQ-LOCAL-NOIF": "usage error (no -i): " + _NO_REPORT,
    "MQ-LOCAL-BADARGS": "usage error: " + _NO_REPORT,
    "MQ-LOCAL-ARG-_trust_foo": "argument error: " + _NO_REPORT,
    "MQ-LOCAL-ARG-_pfc_0_0_0_1": "argument error: " + _NO_REPORT,
    "MQ-LOCAL-ARG-_pfc_0_0_0_1_0_0_0_0_0": "argument error: " + _NO_REPORT,
    "MQ-LOCAL-ARG-_pfc_0_0_0_2_0_0_0_0": "argument error: " + _NO_REPORT,
    "MQ-LOCAL-ARG-_d_bogus": "argument error: " + _NO_REPORT,
    "MQ-LOCAL-ARG-_dscp2prio_set_70_1": "a silent rc 1 (only the lldpad warning): " + _NO_REPORT,
    "MQ-LOCAL-ARG-_dscp2prio_set_26_3_trust_dscp": "argument error: " + _NO_REPORT,
    "MQ-LOCAL-ARG-_version": "'--version' prints the version, not a report",
    "MQ-LOCAL-HELP": "'--help' prints the usage, not a report",
    "MQ-LOCAL-NOLLDPAD-_pfc_0_0_0_1_0_0_0_0": "a Python traceback: the tool crashed",
    "MQ-LOCAL-NOLLDPAD-_P_3": "a Python traceback: the tool crashed",
    "MQ-LOCAL-NOLLDPAD-_cable_len_70000": "argument error: " + _NO_REPORT,
    "MQ-LOCAL-NOLLDPAD-_dscp2prio_bogus": "a Python traceback: the tool crashed",
    "MQ-LOCAL-NOLLDPAD-_trust_dscp": "set on a netdev without DCB: " + _NO_REPORT,
    "MQ-LOCAL-NOLLDPAD-_prio2buffer_0_0_0_1_0_0_0_0": "set on a netdev without DCB: " + _NO_REPORT,
    "MQ-RECON-GETPFC": "'-P N' prints one 0/1 digit, not a report (the collection never runs -P)",
}
SKIP = {}


def read(sample):
    """The tool's text: the ``[rc=N]`` annotation lines are not output; pasted prompts are
    skipped by the parser itself (it reads pasted ``running_config`` too)."""
    text = "".join(ln for ln in sample.raw.splitlines(True) if not re.match(r"^\[rc=\d+\]", ln))
    state = _mlnx_qos.parse_report(text)
    out = dict(state)
    if out.get("dscp2prio") is not None:
        out["dscp2prio"] = dict((str(k), v) for k, v in sorted(out["dscp2prio"].items()))
    return out
