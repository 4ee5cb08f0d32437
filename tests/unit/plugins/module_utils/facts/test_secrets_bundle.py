# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The support bundle's redaction (_health_read.redact, issue 26): every secret the one list
(_secrets) knows leaves no bundle file, in an NCCL log, /proc/cmdline and the IB tools' text;
the names stay visible, and what is not secret is left as it was."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.rdma.fabric.plugins.module_utils.facts import _health_read

SECRETS = ("tok-5f3a9c", "pw-77e1b0", "wJalrXUtnFEMI-K7MDENG", "0x00000000beefcafe", "0x00000000cc0ffee0",
           "0x00000000c0ffee01", "cmdline-tok-91", "0x000000005ca1ab1e")

NCCL_LOG = (
    "node1:1234:1234 [0] NCCL INFO NCCL_SOCKET_IFNAME set by environment to eth0\n"
    "node1:1234:1234 [0] NCCL INFO NCCL_NET_PLUGIN_TOKEN set by environment to tok-5f3a9c\n"
    "node1:1234:1234 [0] NCCL INFO env NCCL_IB_PASSWORD=pw-77e1b0 NCCL_IB_PKEY=0x7fff NCCL_IB_GID_INDEX=3\n"
    "node1:1234:1234 [0] NCCL INFO AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI-K7MDENG\n"
    "opensm.conf: sa_key 0x00000000beefcafe\n"
    "opensm.conf: cc_key\t0x00000000cc0ffee0\n"
    "sm_key 0x00000000c0ffee01\n"
)
CMDLINE = "BOOT_IMAGE=/vmlinuz-6.8.0 root=/dev/nvme0n1p2 ro iommu=pt rdma.token=cmdline-tok-91 quiet\n"
SMIR = ("SMInfoRecord dump:\n\tRID\n\t\tLID...........................1\n\tSMInfo dump:\n"
        "\t\tGUID..........................0x0000000000100001\n"
        "\t\tSM_Key........................0x000000005ca1ab1e\n"
        "\t\tPriority......................14\n")


def _raw():
    return {"version": _health_read.RAW_VERSION, "source": "host", "errors": [], "samples": [],
            "nccl_log": NCCL_LOG, "gdr": {"proc_cmdline": CMDLINE},
            "sm": {"mlx5_0/1": {"text": SMIR, "facts": {"sm_key": "0x000000005ca1ab1e", "priority": 14}}},
            "rdma": {"devices": {}, "topo_text": "GPU0 X NIC0 PIX\n"}}


def test_the_bundle_holds_no_secret_and_keeps_the_names():
    raw = _raw()
    redacted = _health_read.redact(raw)
    text = "".join(entry["content"] for entry in _health_read.bundle_files(redacted))
    leaked = [secret for secret in SECRETS if secret in text]
    assert not leaked, leaked
    for name in ("NCCL_NET_PLUGIN_TOKEN", "NCCL_IB_PASSWORD", "AWS_SECRET_ACCESS_KEY", "sa_key", "cc_key", "sm_key",
                 "rdma.token", "SM_Key"):
        assert name in text, name
    # not secret: the partition key, the GID index, the interface, the boot line, the GUID
    for kept in ("NCCL_IB_PKEY=0x7fff", "NCCL_IB_GID_INDEX=3", "set by environment to eth0", "iommu=pt",
                 "0x0000000000100001", "Priority......................14"):
        assert kept in text, kept
    assert raw["nccl_log"] == NCCL_LOG                     # the raw record itself is not changed


def test_each_text_of_the_bundle():
    redacted = _health_read.redact(_raw())
    assert redacted["gdr"]["proc_cmdline"] == (
        "BOOT_IMAGE=/vmlinuz-6.8.0 root=/dev/nvme0n1p2 ro iommu=pt rdma.token=<redacted> quiet\n")
    assert "\t\tSM_Key........................<redacted>\n" in redacted["sm"]["mlx5_0/1"]["text"]
    assert redacted["sm"]["mlx5_0/1"]["facts"] == {"sm_key": "<redacted>", "priority": 14}
    log = redacted["nccl_log"].splitlines()
    assert log[1] == "node1:1234:1234 [0] NCCL INFO NCCL_NET_PLUGIN_TOKEN <redacted>"
    assert log[2] == "node1:1234:1234 [0] NCCL INFO env NCCL_IB_PASSWORD=<redacted> NCCL_IB_PKEY=0x7fff NCCL_IB_GID_INDEX=3"
    assert log[5] == "opensm.conf: cc_key\t<redacted>"
