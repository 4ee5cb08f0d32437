# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The opensm area's records (the drift check's and the role's) never print a key (issue 26): opensm.conf read as OpenSM
reads it (the name is the first word, split on spaces and tabs; ``#`` starts a comment), every
secret of the one list (_secrets: sm_key, m_key, sa_key, cc_key, any *_key) hidden, and no key
value anywhere in the records, whatever the node's file holds."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

from ansible_collections.rdma.fabric.plugins.module_utils.drift import _drift_areas as A
from ansible_collections.rdma.fabric.plugins.module_utils.areas import opensm

PATH = "/etc/opensm/opensm.conf"
HIDDEN = "(hidden, differs)"
# what the role renders: its own keys, and sa_key / cc_key through opensm_extra_options
WANTED = ("guid 0x0000000000100001\nsm_priority 14\nsm_key 0x00000000c0ffee01\nm_key 0x00000000000000ab\n"
          "m_key_protection_level 2\nsa_key 0x00000000beefcafe\ncc_key 0x00000000cc0ffee0\nsweep_interval 10\n")
SECRETS = ("0x00000000c0ffee01", "0x00000000000000ab", "0x00000000beefcafe", "0x00000000cc0ffee0",
           "0x00000000deadbeef", "0x0000000012345678", "0x00000000abad1dea")


def _judge(found):
    meta = {"state": "present", "mode": "0600", "owner": "root", "group": "root"}
    result = {"before": {"files": {PATH: dict(meta, content=found)}, "units": {}},
              "after": {"files": {PATH: dict(meta, content=WANTED)}, "units": {}}}
    records = opensm.records("sm1", [("node_files", result)])
    # the drift check judges the same result with the same records
    entry = {"area": "opensm", "resource": "node_files", "name": "OpenSM files", "failed": False, "result": result}
    assert A.judge("sm1", [{}], [entry]) == records
    return records


def _rows(records):
    return [(r["setting"], r["expected"], r["actual"]) for r in records]


def test_tab_separated_keys_are_the_keys_and_hidden():
    # the node's file: tabs between name and value, a changed sm_key and sa_key, the same cc_key
    found = ("guid\t0x0000000000100001\nsm_priority 14\nsm_key\t0x00000000deadbeef\nm_key\t\t0x00000000000000ab\n"
             "m_key_protection_level\t2\nsa_key\t0x0000000012345678\ncc_key\t0x00000000cc0ffee0  # same key\n"
             "sweep_interval 10\n")
    records = _judge(found)
    assert _rows(records) == [("sa_key", HIDDEN, HIDDEN), ("sm_key", HIDDEN, HIDDEN)]
    text = json.dumps(records)
    assert not [s for s in SECRETS if s in text], text


def test_a_key_the_node_lacks_or_has_extra_is_hidden_too():
    found = ("guid 0x0000000000100001\nsm_priority 14\nsm_key 0x00000000c0ffee01\nm_key_protection_level 2\n"
             "sweep_interval\t10\nsa_key 0x00000000beefcafe\ncc_key 0x00000000cc0ffee0\n"
             "m_key 0x00000000000000ab\nvendor_n2n_key 0x00000000abad1dea\n")
    records = _judge(found)
    assert _rows(records) == [("vendor_n2n_key", None, HIDDEN)]
    assert _rows(_judge(found.replace("sa_key 0x00000000beefcafe\n", ""))) == [
        ("sa_key", HIDDEN, None), ("vendor_n2n_key", None, HIDDEN)]
    text = json.dumps(records)
    assert not [s for s in SECRETS if s in text], text


def test_no_key_value_in_any_record_whatever_the_file_holds():
    """Broken lines: a key on a line of its own, ``name=value``, a quoted value; OpenSM's quote
    stripping makes ``"0x.."`` the same value."""
    found = WANTED.replace("sm_key 0x00000000c0ffee01", 'sm_key "0x00000000c0ffee01"') + (
        "sa_key=0x00000000deadbeef\n0x0000000012345678\n")
    records = _judge(found)
    assert "sm_key" not in [r["setting"] for r in records]
    text = json.dumps(records)
    assert not [s for s in SECRETS if s in text], text
