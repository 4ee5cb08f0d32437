# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The opensm role's lean path (plugins/module_utils/areas/opensm.py): the one read's spec, the OS family from
it, and the pure decision (opensm_node_plan) against states read by node_files' own reader from
real files, so a converged node is recognised as converged and every kind of drift is not."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.areas import opensm as F
from ansible_collections.rdma.fabric.plugins.module_utils.resources import _node_files as NF

ROLE = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "..", "roles", "opensm")


def role_vars():
    """The area's families, markers and binaries (they were the role's vars)."""
    return {"__opensm_families": F.FAMILIES, "__opensm_family_markers": [p for p, _f in F.FAMILY_MARKERS],
            "__opensm_binaries": list(F.BINARIES)}


def gathered_from(root, spec, units=None):
    """What node_files state=gathered returns, read by its own reader under ``root``."""
    files = {}
    for entry in spec["files"]:
        state = NF.read_file(root + entry["path"])
        state = dict((k, v) for k, v in state.items() if k != "dir")
        if "mode" in state:
            state["mode"] = "%04o" % state["mode"]
        files[entry["path"]] = state
    return {"files": files, "units": units or {}}


def write(root, path, content, mode=0o644):
    full = root + path
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "w") as handle:
        handle.write(content)
    os.chmod(full, mode)


def me():
    import grp
    import pwd
    return pwd.getpwuid(os.getuid()).pw_name, grp.getgrgid(os.getgid()).gr_name


def want(root_owner):
    owner, group = root_owner
    return [
        {"path": "/etc/opensm/opensm.conf", "content": "guid 0x0000000000100001\nsm_key 0x00000000c0ffee01\n",
         "mode": "0600", "owner": owner, "group": group},
        {"path": "/etc/opensm/partitions.conf", "content": "Default=0x7fff,ipoib : ALL=full ;\n",
         "mode": "0644", "owner": owner, "group": group},
    ]


UNITS_RUNNING = {"opensm.service": {"enabled": True, "active": True, "unit_state": "enabled"}}
WANT_UNITS = [{"name": "opensm.service", "enabled": True, "active": True}]


@pytest.fixture
def node(tmp_path):
    root = str(tmp_path)
    for path in ("/usr/sbin/opensm", "/usr/sbin/ibstat", "/etc/debian_version"):
        write(root, path, "x\n", 0o755)
    for entry in want(me()):
        write(root, entry["path"], entry["content"], int(entry["mode"], 8))
    return root


def spec():
    v = role_vars()
    return F.read_spec(v["__opensm_families"], v["__opensm_family_markers"], v["__opensm_binaries"])


def test_read_spec_covers_every_family_path_once():
    v = role_vars()
    s = spec()
    paths = [e["path"] for e in s["files"]]
    assert len(paths) == len(set(paths))
    for family in v["__opensm_families"].values():
        for key in ("config_file", "partitions_file", "dropin_file"):
            assert family[key] in paths
        if family["ports_file"]:
            assert family["ports_file"] in paths
    assert set(v["__opensm_binaries"]) <= set(paths)
    assert all(e["state"] == "absent" for e in s["files"])   # gathered: no content needed
    assert s["units"] == [{"name": "opensm.service"}]


def test_family_from_markers_and_facts(node):
    g = gathered_from(node, spec())
    assert F.os_family(g) == {"family": "Debian"}
    assert F.os_family(g, "RedHat") == {"family": "RedHat"}
    assert "not supported" in F.os_family(g, "Suse")["error"]
    os.unlink(node + "/etc/debian_version")
    write(node, "/etc/redhat-release", "Rocky Linux release 9.4\n")
    assert F.os_family(gathered_from(node, spec())) == {"family": "RedHat"}
    os.unlink(node + "/etc/redhat-release")
    err = F.os_family(gathered_from(node, spec()))["error"]
    assert "/etc/debian_version" in err and "/etc/redhat-release" in err


def test_converged_node_needs_nothing(node):
    plan = F.node_plan(gathered_from(node, spec(), UNITS_RUNNING), want(me()), WANT_UNITS,
                       role_vars()["__opensm_binaries"])
    assert plan == {"install": False, "files": [], "units": [], "change": False, "reasons": []}


def test_fresh_node_installs_and_writes(tmp_path):
    root = str(tmp_path)
    write(root, "/etc/debian_version", "12.5\n")
    units = {"opensm.service": {"enabled": False, "active": False, "unit_state": "not-found"}}
    plan = F.node_plan(gathered_from(root, spec(), units), want(me()), WANT_UNITS,
                       ["/usr/sbin/opensm", "/usr/sbin/ibstat"])
    assert plan["install"] and plan["change"]
    assert plan["files"] == ["/etc/opensm/opensm.conf", "/etc/opensm/partitions.conf"]
    assert plan["units"] == ["opensm.service"]
    assert plan["reasons"][0] == "not installed: /usr/sbin/opensm, /usr/sbin/ibstat, opensm.service (unit not found)"
    # opensm_install: false never installs, but still writes.
    plan = F.node_plan(gathered_from(root, spec(), units), want(me()), WANT_UNITS, ["/usr/sbin/opensm"], False)
    assert not plan["install"] and plan["change"]


def test_unit_not_found_means_install(node):
    units = {"opensm.service": {"enabled": False, "active": False, "unit_state": "not-found"}}
    plan = F.node_plan(gathered_from(node, spec(), units), want(me()), WANT_UNITS, ["/usr/sbin/ibstat"])
    assert plan["install"]
    assert plan["reasons"][0] == "not installed: opensm.service (unit not found)"


@pytest.mark.parametrize("drift, reason", [
    (lambda r: write(r, "/etc/opensm/opensm.conf", "guid 0x0000000000100001\nsm_key 0x1\n", 0o600),
     "/etc/opensm/opensm.conf: content differs"),
    (lambda r: os.chmod(r + "/etc/opensm/opensm.conf", 0o644),
     "/etc/opensm/opensm.conf: mode 0644, should be 0600"),
    (lambda r: os.unlink(r + "/etc/opensm/partitions.conf"),
     "/etc/opensm/partitions.conf: missing"),
])
def test_each_file_drift_is_found(node, drift, reason):
    drift(node)
    plan = F.node_plan(gathered_from(node, spec(), UNITS_RUNNING), want(me()), WANT_UNITS)
    assert plan["change"] and not plan["install"]
    assert plan["reasons"] == [reason]


def test_owner_drift_is_found(node):
    owner, group = me()
    files = want((owner, group))
    files[1]["group"] = "nogroup-" + group
    plan = F.node_plan(gathered_from(node, spec(), UNITS_RUNNING), files, WANT_UNITS)
    assert plan["files"] == ["/etc/opensm/partitions.conf"]
    assert "owner" in plan["reasons"][0]


def test_stopped_service_and_absent_file(node):
    units = {"opensm.service": {"enabled": True, "active": False, "unit_state": "enabled"}}
    files = want(me()) + [{"path": "/etc/default/opensm", "state": "absent"}]
    plan = F.node_plan(gathered_from(node, spec(), units), files, WANT_UNITS)
    assert plan["units"] == ["opensm.service"] and plan["files"] == []
    write(node, "/etc/default/opensm", 'PORTS="ALL"\n')
    plan = F.node_plan(gathered_from(node, spec(), units), files, WANT_UNITS)
    assert plan["files"] == ["/etc/default/opensm"]


def test_a_path_outside_the_read_is_an_error(node):
    files = want(me()) + [{"path": "/etc/other.conf", "content": "x"}]
    with pytest.raises(ValueError, match="/etc/other.conf was not read"):
        F.node_plan(gathered_from(node, spec(), UNITS_RUNNING), files, WANT_UNITS)
