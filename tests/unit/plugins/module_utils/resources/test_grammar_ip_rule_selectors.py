# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""``ip -j rule show`` rules with selectors (iproute2 ip/iprule.c print_rule): parse_rules keeps every
key it does not model in ``selectors``, so the rails plan never takes such a rule for the plain
``from ADDRESS lookup TABLE`` it wants: that rule is then missing (added), the other one left alone
(merged) or deleted with all its selectors (replaced), never by a command that could match the
rail's own rule."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import shutil
import subprocess

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.resources import _rail_addresses as ra
from ansible_collections.rdma.fabric.tests.unit import samples

hypothesis = pytest.importorskip("hypothesis")
st = hypothesis.strategies
FAST = hypothesis.settings(max_examples=60, deadline=None)

RAIL = {"priority": 1101, "from": "10.10.0.11", "table": 101}
RULES = samples.load("ip_rule_json.txt")

# one selector (or option, action) at a time, with its JSON keys and values as print_rule prints them
SELECTOR_ST = st.sampled_from([
    {"fwmark": "0x1", "fwmask": "0xff"}, {"fwmark": "0x2"}, {"iif": "enp24s0np0"}, {"iif": "enp24s0np0", "iif_detached": None},
    {"oif": "enp64s0np0"}, {"tos": "0x10"}, {"dst": "10.20.0.0", "dstlen": 16}, {"ipproto": "udp", "dport": 4791},
    {"ipproto": "tcp", "sport_start": 1000, "sport_end": 2000}, {"sport": 4096, "sport_mask": "0xf000"},
    {"uid_start": 1000, "uid_end": 1999}, {"l3mdev": None}, {"tun_id": 7}, {"suppress_prefixlen": 0},
    {"suppress_ifgroup": "1"}, {"flow_from": "2", "flow_to": "3"}, {"protocol": "static"}, {"dscp": "cs1"},
    {"flowlabel": "0x1", "flowlabel_mask": "0xfffff"}, {"goto": 32766}, {"action": "blackhole"}, {"nop": None},
])


def _want(rules, table=101):
    return {"link_up": True, "sysctls": {}, "addresses": [], "table": table, "routes": [], "rules": rules}


def _have(rules):
    return {"link_up": True, "sysctls": {}, "addresses": [], "routes": [], "rules": rules}


@FAST
@hypothesis.given(SELECTOR_ST, st.booleans())
def test_a_rule_with_a_selector_is_not_the_rail_rule(selector, invert):
    printed = dict({"priority": 1101}, **({"not": None} if invert else {}))
    printed.update(src="10.10.0.11")
    printed.update(selector)
    if not any(key in selector for key in ("goto", "action", "nop", "l3mdev")):
        printed["table"] = "101"
    (rule,) = ra.parse_rules(json.loads(json.dumps([printed])))
    assert rule["selectors"] == selector
    assert rule != RAIL
    merged = ra.plan("enp24s0np0", _want([RAIL]), _have([rule]), "merged", "/proc/sys")
    assert merged == [["ip", "-4", "rule", "add", "priority", "1101", "from", "10.10.0.11", "table", "101"]]
    replaced = ra.plan("enp24s0np0", _want([RAIL]), _have([rule, RAIL]), "replaced", "/proc/sys")
    assert len(replaced) == 1 and replaced[0][:4] == ["ip", "-4", "rule", "del"]
    assert replaced[0] == ra._rule_cmd("del", rule) and len(replaced[0]) > 8 + ("table" in printed) * 2


def test_plain_rule_reads_as_before():
    assert ra.parse_rules([{"priority": 1101, "src": "10.10.0.11", "table": "101"}]) == [RAIL]


def test_real_rules_sharing_the_rail_rules_source_and_table():
    """IPRU-LOCAL-V4-RAIL-SELECTORS (iproute2 6.1): 16 rules from 10.10.0.11, one of them the
    rail's own. Merged: nothing to do; replaced: each other rule deleted with its selectors."""
    rules = ra.parse_rules(json.loads(RULES["IPRU-LOCAL-V4-RAIL-SELECTORS"].raw))
    scope = [r for r in rules if r["table"] == 101 or r["from"] == "10.10.0.11"]
    assert sum(1 for r in scope if r == RAIL) == 1 and len(scope) == 16
    assert ra.plan("enp24s0np0", _want([RAIL]), _have(scope), "merged", "/proc/sys") == []
    deleted = [" ".join(c) for c in ra.plan("enp24s0np0", _want([RAIL]), _have(scope), "replaced", "/proc/sys")]
    assert len(deleted) == 15
    for line in ("ip -4 rule del priority 1101 from 10.10.0.11 fwmark 0x1/0xff table 101",
                 "ip -4 rule del priority 1106 from 10.10.0.11 ipproto tcp sport 1000-2000 table 101",
                 "ip -4 rule del priority 1108 not from 10.10.0.11 table 101",
                 "ip -4 rule del priority 1109 from 10.10.0.11 l3mdev",
                 "ip -4 rule del priority 1112 from 10.10.0.11 protocol static table 101",
                 "ip -4 rule del priority 1115 from 10.10.0.11 realms 2/3 table 101"):
        assert line in deleted


@pytest.mark.parametrize("data,message", [
    ([{"priority": 1, "src": "all", "table": "main", "deleted": True}], "deleted, which ip -j rule show never prints"),
    ([{"priority": 1, "src": "all", "table": "main", "fwmark_x": "0x1"}], "fwmark_x"),
    ([{"priority": 1, "src": "all", "table": "main", "fwmark": ["0x1"]}], "a fwmark ip -j rule cannot print"),
    ([{"priority": 1, "src": "all", "table": "main", "l3mdev": True}], "a l3mdev ip -j rule cannot print"),
])
def test_keys_and_values_print_rule_cannot_print_are_refused(data, message):
    with pytest.raises(ValueError, match=message):
        ra.parse_rules(data)


def _netns_ok():
    if not shutil.which("unshare") or not shutil.which("ip"):
        return False
    return subprocess.run(["unshare", "-rn", "true"], capture_output=True, check=False).returncode == 0


@pytest.mark.skipif(not _netns_ok(), reason="no unprivileged network namespace (unshare -rn) here")
def test_commands_add_and_delete_exactly_that_rule_on_a_real_kernel():
    """In a fresh network namespace: each rule of the real sample deleted with _rule_cmd('del')
    leaves none behind, and _rule_cmd('add') of each gives back the same ip -j rule show."""
    script = ["ip link add enp24s0np0 type veth peer name enp24s0np1",
              "ip link add enp64s0np0 type veth peer name enp64s0np1"]
    rules = [r for r in ra.parse_rules(json.loads(RULES["IPRU-LOCAL-V4-RAIL-SELECTORS"].raw)) if 1100 < r["priority"] < 1200]
    script += [" ".join(ra._rule_cmd("add", r)) for r in rules]
    script += ["ip -j -4 rule show", "echo ==="]
    script += [" ".join(ra._rule_cmd("del", r)) for r in rules] + ["ip -j -4 rule show"]
    out = subprocess.run(["unshare", "-rn", "sh", "-ec", "\n".join(script)], capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    added, left = out.stdout.split("===\n")
    assert [r for r in ra.parse_rules(json.loads(added)) if 1100 < r["priority"] < 1200] == rules
    assert [r for r in ra.parse_rules(json.loads(left)) if 1100 < r["priority"] < 1200] == []
