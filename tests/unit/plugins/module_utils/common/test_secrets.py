# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""_secrets, the one list of secret names (issue 26): which names are secret and which are
deliberately not, every layout redact_text hides a value in (the name kept), nested redact,
and the real tool outputs of the samples left as they are except their keys."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ast
import json
import os
import re

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.common import _secrets as S
from ansible_collections.rdma.fabric.tests.unit import samples

SECRET_NAMES = [
    "sm_key", "sa_key", "m_key", "cc_key", "SM_Key", "M_Key", "MKey", "Mkey", "SMKey", "smkey", "vendor_n2n_key",
    "NCCL_SOCKET_TOKEN", "GITHUB_TOKEN", "foo.token", "AWS_SECRET_ACCESS_KEY", "NCCL_IB_PASSWORD",
    "NCCL_NET_PLUGIN_PASSWORD", "api-key", "x-api-key", "apiKey", "API_KEY", "private_key", "ssh_key", "passwd",
    "db_password_file", "client_secret", "CLIENTSECRET", "DBPASSWORD", "credentials", "Authorization", "--password",
    "key",
]
PUBLIC_NAMES = [
    "m_key_protection_level", "m_key_lease_period", "m_key_lookup", "MkeyLeasePeriod", "MkeyProtBits", "cc_key_enable",
    "sminfo_polling_timeout", "sm_priority", "pkey", "P_Key", "PKey", "partition", "partition_key", "NCCL_IB_PKEY",
    "max_pkeys", "allow_both_pkeys", "Q_Key", "public_key", "guid", "keepalive", "monkey", "hotkey", "max_tokens",
    "token_ttl", "PWD", "OLDPWD", "rx_xdp_pass", "key_id", "", None, 3,
]


@pytest.mark.parametrize("name", SECRET_NAMES)
def test_secret_names(name):
    assert S.is_secret(name)
    assert S.hide(name, "0xdead") == S.PLACEHOLDER
    assert S.hide(name, None) is None


@pytest.mark.parametrize("name", PUBLIC_NAMES)
def test_names_that_are_not_secret(name):
    assert not S.is_secret(name)
    assert S.hide(name, "0x7fff") == "0x7fff"


def test_every_opensm_key_option_is_secret():
    assert all(S.is_secret(name) for name in S.OPENSM_KEYS)
    assert S.hide("sa_key", "0x1", "(hidden, differs)") == "(hidden, differs)"


@pytest.mark.parametrize("text, expected", [
    ("sm_key 0x00000000c0ffee01\n", "sm_key <redacted>\n"),
    ("sm_key\t0x00000000c0ffee01\n", "sm_key\t<redacted>\n"),
    ("sa_key = 0xbeef\ncc_key:0xfeed\n", "sa_key = <redacted>\ncc_key:<redacted>\n"),
    ("guid 0x1 sm_key 0x2", "guid 0x1 sm_key <redacted>"),
    ("BOOT_IMAGE=/vmlinuz-6.8 root=/dev/sda1 foo.token=s3cr3t quiet",
     "BOOT_IMAGE=/vmlinuz-6.8 root=/dev/sda1 foo.token=<redacted> quiet"),
    ("env: AWS_SECRET_ACCESS_KEY=wJalr/XUtn+FEMI NCCL_IB_PKEY=0x7fff NCCL_FOO_PASSWORD=pw NCCL_IB_GID_INDEX=3",
     "env: AWS_SECRET_ACCESS_KEY=<redacted> NCCL_IB_PKEY=0x7fff NCCL_FOO_PASSWORD=<redacted> NCCL_IB_GID_INDEX=3"),
    ("NCCL INFO NCCL_SOCKET_TOKEN set by environment to abc123\n", "NCCL INFO NCCL_SOCKET_TOKEN <redacted>\n"),
    ('{"sm_key": "0x1234", "guid": "0x1", "api-key": 12345}', '{"sm_key": "<redacted>", "guid": "0x1", "api-key": "<redacted>"}'),
    ("{'sa_key': '0x1234', 'x': 1}", "{'sa_key': '<redacted>', 'x': 1}"),
    ('NAME_TOKEN="a b c" next=1', 'NAME_TOKEN="<redacted>" next=1'),
    ("\t\tSM_Key........................0x00000000c0ffee01\n", "\t\tSM_Key........................<redacted>\n"),
    ("Mkey:............................0x00000000000000ab\nMkeyLeasePeriod:.................15\n",
     "Mkey:............................<redacted>\nMkeyLeasePeriod:.................15\n"),
    ("--password hunter2", "--password <redacted>"),
    ("https://x/api?token=abc&page=1", "https://x/api?token=<redacted>&page=1"),
    ("m_key_protection_level 2\nm_key_lease_period 60\nP_Key 0x7fff\nmonkey business\n",
     "m_key_protection_level 2\nm_key_lease_period 60\nP_Key 0x7fff\nmonkey business\n"),
    ("sm_key\n", "sm_key\n"),
])
def test_redact_text_hides_the_value_and_keeps_the_name(text, expected):
    assert S.redact_text(text) == expected


def test_redact_text_keeps_json_valid():
    text = json.dumps({"sm_key": "0x00000000c0ffee01", "n": {"cc_key": 7, "ok": [1, 2]}, "guid": "0x1"})
    out = json.loads(S.redact_text(text))
    assert out == {"sm_key": "<redacted>", "n": {"cc_key": "<redacted>", "ok": [1, 2]}, "guid": "0x1"}


def test_redact_nested_hides_secret_keys_and_secret_text():
    raw = {"sm_key": "0x1", "text": "sa_key 0xdead", "list": ["cc_key=0xfeed", ("x", "M_Key 0xab")],
           "P_Key": "0x7fff", "credentials": {"user": "bob"}, "absent_token": None, "count": 3}
    assert S.redact(raw) == {"sm_key": "<redacted>", "text": "sa_key <redacted>",
                             "list": ["cc_key=<redacted>", ("x", "M_Key <redacted>")], "P_Key": "0x7fff",
                             "credentials": "<redacted>", "absent_token": None, "count": 3}
    assert raw["sm_key"] == "0x1"


def test_secret_values_for_masking_an_output():
    found = S.secret_values({"sm_key": "0x00000000c0ffee01", "files": [{"content": "sa_key 0xdeadbeef\nguid 0x1\n"}],
                             "m_key": "0x0", "pw": {"api_key": 123456}})
    assert found == {"0x00000000c0ffee01", "0xdeadbeef", "123456"}


def test_real_tool_outputs_lose_nothing_but_their_keys():
    """The captured outputs the bundle carries (ethtool -S, ibv_devinfo, lspci, ip -j, lldptool,
    mlnx_qos, sysfs, NCCL, the IB tools): no line is touched but those naming an SM_Key or M_Key
    (the dumps' values, and the tools' usage text, which loses its tail: the safe side)."""
    changed = []
    for name in ("ethtool_S_mlx5.txt", "ibv_devinfo.txt", "lspci_pcie.txt", "ip_addr_json.txt", "lldptool.txt",
                 "mlnx_qos.txt", "mlx5_sysfs_dcqcn.txt", "nccl.txt", "nvidia_smi_topo.txt", "ibstat.txt", "sminfo.txt",
                 "saquery.txt", "show_gids.txt", "rdma_link.txt"):
        for sample in samples.load(name).values():
            changed.extend(line for line in sample.raw.splitlines() if S.redact_text(line) != line)
    assert changed, "the samples hold SM_Key dumps: nothing hidden means the dotted layout is missed"
    assert all(re.match(r"\s*(--)?(SM_Key|Mkey|m_key|smkey)\b", line) for line in changed), changed
    assert all("0x0000000000000000" not in S.redact_text(line) for line in changed)


def test_standard_library_only_and_python36_syntax():
    path = S.__file__
    with open(path) as handle:
        tree = ast.parse(handle.read(), feature_version=(3, 6))
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            imported.add(node.module.split(".")[0])
    assert imported <= {"__future__", "re"}, imported
    assert os.path.basename(path) == "_secrets.py"
