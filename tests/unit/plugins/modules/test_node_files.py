# -*- coding: utf-8 -*-
"""rdma.fabric.node_files on a temporary directory, with systemctl faked."""
from __future__ import absolute_import, division, print_function

import os

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.resources import _node_files
from ansible_collections.rdma.fabric.plugins.modules import node_files
from ansible_collections.rdma.fabric.tests.unit import helpers

ME = __import__("pwd").getpwuid(os.geteuid()).pw_name
GROUP = __import__("grp").getgrgid(os.getegid()).gr_name


class FakeSystemctl(object):
    def __init__(self):
        self.enabled = {}
        self.calls = []

    def __call__(self, argv, **kwargs):
        self.calls.append(argv[1:])
        verb, names = argv[1], argv[2:]
        if verb == "is-enabled":
            return 0, "".join(("enabled" if self.enabled.get(n) else "disabled") + "\n" for n in names), ""
        if verb == "is-active":
            return 3, "".join("inactive\n" for _n in names), ""
        if verb == "enable":
            self.enabled[names[0]] = True
        return 0, "", ""


@pytest.fixture
def systemd(monkeypatch):
    monkeypatch.setattr(_node_files, "systemd_running", lambda: True)
    return FakeSystemctl()


def run(monkeypatch, systemctl, args, check_mode=False, diff=False):
    return helpers.run_module(monkeypatch, node_files.main, args, check_mode=check_mode, diff=diff,
                              run_command=systemctl, bin_dir="/usr/bin/")


def files_args(tmp_path, content="a=1\n", mode="0644"):
    return {"files": [{"path": str(tmp_path / "etc" / "x.conf"), "content": content, "mode": mode,
                       "owner": ME, "group": GROUP},
                      {"path": str(tmp_path / "old.conf"), "state": "absent"}],
            "units": [{"name": "rdma-fabric-x.service", "enabled": True}]}


def test_quartet_and_converged_reads_only(monkeypatch, tmp_path, systemd):
    (tmp_path / "old.conf").write_text("stale\n")
    args = files_args(tmp_path)
    kind, res = run(monkeypatch, systemd, args, check_mode=True, diff=True)
    assert kind == "exit" and res["changed"] is True
    assert not (tmp_path / "etc").exists() and (tmp_path / "old.conf").exists()
    assert res["diff"]["after"]["files"][str(tmp_path / "etc" / "x.conf")]["content"] == "a=1\n"
    planned = res["commands"]
    assert planned == ["mkdir -p %s" % (tmp_path / "etc"),
                       "write %s (mode 0644, %s:%s)" % (tmp_path / "etc" / "x.conf", ME, GROUP),
                       "rm %s" % (tmp_path / "old.conf"),
                       "systemctl enable rdma-fabric-x.service"]
    kind, res = run(monkeypatch, systemd, args)
    assert kind == "exit" and res["changed"] is True and res["commands"] == planned
    assert (tmp_path / "etc" / "x.conf").read_text() == "a=1\n"
    assert oct(os.stat(str(tmp_path / "etc" / "x.conf")).st_mode & 0o7777) == "0o644"
    assert not (tmp_path / "old.conf").exists()
    assert res["after"]["units"]["rdma-fabric-x.service"]["enabled"] is True
    systemd.calls = []
    mtime = os.stat(str(tmp_path / "etc" / "x.conf")).st_mtime_ns
    kind, res = run(monkeypatch, systemd, args)
    assert kind == "exit" and res["changed"] is False and res["commands"] == []
    assert systemd.calls == [["is-enabled", "rdma-fabric-x.service"], ["is-active", "rdma-fabric-x.service"]]
    assert os.stat(str(tmp_path / "etc" / "x.conf")).st_mtime_ns == mtime
    kind, res = run(monkeypatch, systemd, args, check_mode=True)
    assert kind == "exit" and res["changed"] is False


def test_mode_only_change_is_a_chmod_and_content_change_a_write(monkeypatch, tmp_path, systemd):
    run(monkeypatch, systemd, files_args(tmp_path))
    kind, res = run(monkeypatch, systemd, files_args(tmp_path, mode="0755"))
    assert res["commands"] == ["chmod 0755 %s" % (tmp_path / "etc" / "x.conf")]
    kind, res = run(monkeypatch, systemd, files_args(tmp_path, content="a=2\n", mode="0755"))
    assert res["commands"] == ["write %s (mode 0755, %s:%s)" % (tmp_path / "etc" / "x.conf", ME, GROUP)]
    assert (tmp_path / "etc" / "x.conf").read_text() == "a=2\n"


def test_unit_file_change_reloads_before_enabling(monkeypatch, tmp_path, systemd):
    monkeypatch.setattr(_node_files, "UNIT_DIRS", (str(tmp_path),))
    args = {"files": [{"path": str(tmp_path / "rdma-fabric-x.service"), "content": "[Unit]\n",
                       "owner": ME, "group": GROUP}],
            "units": [{"name": "rdma-fabric-x.service", "enabled": True}]}
    kind, res = run(monkeypatch, systemd, args)
    assert res["commands"][1:] == ["systemctl daemon-reload", "systemctl enable rdma-fabric-x.service"]


def test_failed_write_leaves_the_old_file_and_reports(monkeypatch, tmp_path, systemd):
    run(monkeypatch, systemd, files_args(tmp_path))

    def refuse(*args, **kwargs):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(_node_files.os, "rename", refuse)
    kind, res = run(monkeypatch, systemd, files_args(tmp_path, content="a=3\n"))
    assert kind == "fail" and "No space left on device" in res["msg"] and "previous file" in res["msg"]
    assert res["applied"] == [] and res["changed"] is False
    assert (tmp_path / "etc" / "x.conf").read_text() == "a=1\n"
    assert os.listdir(str(tmp_path / "etc")) == ["x.conf"]        # no temporary file left behind


@pytest.mark.parametrize("entry, words", [
    ({"path": "etc/x", "content": ""}, "files[0].path='etc/x': expected an absolute path"),
    ({"path": "/etc/../x", "content": ""}, "not a normalised file path"),
    ({"path": "/etc/x\n", "content": ""}, "not a normalised file path"),
    ({"path": "/etc/x", "content": "", "mode": "rwx"}, "files[0].mode='rwx': expected an octal mode"),
    ({"path": "/etc/x"}, "files[0].content: required"),
])
def test_bad_input_names_the_field_and_touches_nothing(monkeypatch, systemd, entry, words):
    kind, res = run(monkeypatch, systemd, {"files": [entry]})
    assert kind == "fail" and words in res["msg"], res["msg"]
    assert systemd.calls == []


def test_bad_unit_name(monkeypatch, systemd):
    kind, res = run(monkeypatch, systemd, {"units": [{"name": "x; reboot", "enabled": True}]})
    assert kind == "fail" and "units[0].name='x; reboot'" in res["msg"]


def test_without_systemd_units_are_reported_not_managed(monkeypatch, tmp_path):
    monkeypatch.setattr(_node_files, "systemd_running", lambda: False)
    warnings = []
    monkeypatch.setattr(helpers.basic.AnsibleModule, "warn", lambda self, w: warnings.append(w))
    kind, res = helpers.run_module(monkeypatch, node_files.main, files_args(tmp_path))
    assert kind == "exit" and "systemctl" not in " ".join(res["commands"])
    assert warnings and "systemd does not run" in warnings[0]


def test_documentation_matches_argspec():
    helpers.assert_doc_matches_argspec(node_files)


def test_two_files_in_one_missing_directory_make_one_mkdir(monkeypatch, tmp_path, systemd):
    args = {"files": [{"path": str(tmp_path / "new" / "a"), "content": "a\n", "owner": ME, "group": GROUP},
                      {"path": str(tmp_path / "new" / "b"), "content": "b\n", "owner": ME, "group": GROUP}]}
    kind, res = run(monkeypatch, systemd, args)
    assert kind == "exit", res
    assert [c for c in res["commands"] if c.startswith("mkdir")] == ["mkdir -p %s" % (tmp_path / "new")]
    assert (tmp_path / "new" / "b").read_text() == "b\n"


@pytest.mark.parametrize("path, unit", [
    ("/etc/systemd/system/opensm.service", True),
    ("/etc/systemd/system/opensm@.service.d/10-rdma-fabric.conf", True),
    ("/usr/lib/systemd/system/x.timer.d/override.conf", True),
    ("/etc/systemd/system/opensm@.service.d/notes.txt", False),
    ("/etc/systemd/system/not-a-unit.d/x.conf", False),
    ("/etc/opensm/opensm.conf", False),
])
def test_a_drop_in_is_a_unit_file(path, unit):
    """A changed drop-in (the OpenSM role's 10-rdma-fabric.conf) needs a daemon-reload as a
    unit file does: without it a restart runs the old [Service] (issue 26: OpenSM's stdout,
    keys included, went on reaching the journal after the drop-in sent it to null)."""
    assert bool(_node_files.is_unit_file(path)) is unit
