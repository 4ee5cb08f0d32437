# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""#40 medium 1 and 6: nccl_test runs a binary from the fixed build directories only when no one but
root (or this user) can write it or any directory above it; its output is read bounded."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import shutil
import sys
import tempfile

import pytest

from ansible.module_utils import basic

from ansible_collections.rdma.fabric.plugins.modules import nccl_test
from ansible_collections.rdma.fabric.tests.unit import helpers

OTHER_UID = 4321


@pytest.fixture
def trusted_dir():
    """A directory whose every ancestor is root's and 0755 or tighter (tmp_path is under /tmp, 1777)."""
    for base in ("/root", "/var/lib"):
        try:
            path = tempfile.mkdtemp(prefix="rdma-fabric-test-", dir=base)
        except OSError:
            continue
        if nccl_test.untrusted(path) is None:
            os.chmod(path, 0o755)
            yield path
            shutil.rmtree(path, ignore_errors=True)
            return
        shutil.rmtree(path, ignore_errors=True)
    pytest.skip("no directory with trusted ancestors to test in")


def _binary(directory, text="#!/bin/sh\necho hello\n"):
    build = os.path.join(directory, "build")
    os.makedirs(build, 0o755)
    os.chmod(build, 0o755)
    path = os.path.join(build, "all_reduce_perf")
    with open(path, "w") as handle:
        handle.write(text)
    os.chmod(path, 0o755)
    return build, path


@pytest.fixture
def module_env(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setattr(basic.AnsibleModule, "get_bin_path",
                        lambda self, name, *a, **k: shutil.which(name, path=os.environ["PATH"]))
    monkeypatch.setattr(nccl_test, "gpu_count", lambda module: 0)


@pytest.mark.skipif(os.geteuid() != 0, reason="chown to another uid needs root")
def test_untrusted_owner_of_the_binary_or_a_directory_is_named(trusted_dir):
    build, path = _binary(trusted_dir)
    assert nccl_test.untrusted(path) is None
    os.chown(path, OTHER_UID, -1)
    assert nccl_test.untrusted(path) == "%s is owned by uid %d, not by root or this user (uid 0)" % (path, OTHER_UID)
    os.chown(path, 0, -1)
    os.chown(build, OTHER_UID, -1)
    assert nccl_test.untrusted(path) == "%s is owned by uid %d, not by root or this user (uid 0)" % (build, OTHER_UID)


def test_group_or_world_writable_binary_or_directory_is_named(trusted_dir):
    build, path = _binary(trusted_dir)
    os.chmod(build, 0o777)
    assert nccl_test.untrusted(path) == "%s is writable by group and others (mode 0777)" % build
    os.chmod(build, 0o755)
    os.chmod(path, 0o775)
    assert nccl_test.untrusted(path) == "%s is writable by group (mode 0775)" % path
    os.chmod(path, 0o755)
    assert nccl_test.untrusted(path) is None


def test_a_symlink_into_an_untrusted_tree_is_refused(trusted_dir, tmp_path):
    evil = tmp_path / "evil"
    evil.mkdir()
    target = evil / "all_reduce_perf"
    target.write_text("#!/bin/sh\n")
    target.chmod(0o755)
    build = os.path.join(trusted_dir, "build")
    os.makedirs(build)
    os.symlink(str(target), os.path.join(build, "all_reduce_perf"))
    why = nccl_test.untrusted(os.path.join(build, "all_reduce_perf"))
    assert why and "writable by group and others" in why       # /tmp, 1777


@pytest.mark.skipif(os.geteuid() != 0, reason="chown to another uid needs root")
def test_module_refuses_a_fixed_directory_binary_of_another_owner(monkeypatch, module_env, trusted_dir):
    build, path = _binary(trusted_dir)
    os.chown(path, OTHER_UID, -1)
    monkeypatch.setattr(nccl_test, "OPT_DIRS", [build])
    how, res = helpers.run_module(monkeypatch, nccl_test.main, {}, run_command=lambda argv, **kw: (1, "", ""))
    assert how == "fail", res
    assert res["msg"].startswith("binary=all_reduce_perf: found only as %s, which is not run: %s is owned by uid %d"
                                 % (path, path, OTHER_UID)), res["msg"]
    assert res["ok"] is False and res["rc"] is None


def test_module_uses_a_trusted_fixed_directory_binary_and_path_first(monkeypatch, module_env, trusted_dir, tmp_path):
    build, path = _binary(trusted_dir)
    monkeypatch.setattr(nccl_test, "OPT_DIRS", [build])
    how, res = helpers.run_module(monkeypatch, nccl_test.main, {}, run_command=lambda argv, **kw: (1, "", ""))
    assert how == "exit" and res["skipped"] and res["reason"] == "no NVIDIA GPU on this host", res
    os.chmod(build, 0o777)                       # untrusted, but the one in PATH wins and is never looked at
    in_path = tmp_path / "empty"
    in_path.mkdir()
    (in_path / "all_reduce_perf").write_text("#!/bin/sh\n")
    (in_path / "all_reduce_perf").chmod(0o755)
    how, res = helpers.run_module(monkeypatch, nccl_test.main, {}, run_command=lambda argv, **kw: (1, "", ""))
    assert how == "exit" and res["reason"] == "no NVIDIA GPU on this host", res


def test_module_output_is_bounded_keeping_the_tail(monkeypatch, module_env, tmp_path):
    script = tmp_path / "flood"
    script.write_text("#!%s\nimport sys\nline = b'#  NCCL INFO ' + b'z' * 1011 + b'\\n'\n"
                      "for i in range(6 * 1024): sys.stdout.buffer.write(line)\n"
                      "sys.stdout.buffer.write(b'# Avg bus bandwidth    : 12.5 \\n')\n" % sys.executable)
    script.chmod(0o755)
    monkeypatch.setattr(nccl_test, "gpu_count", lambda module: 1)
    how, res = helpers.run_module(monkeypatch, nccl_test.main, {"binary": str(script), "args": [], "timeout": 60})
    assert how == "exit", res
    assert res["output_dropped_bytes"] >= 6 * 1024 * 1024 + 32 - nccl_test.OUTPUT_LIMIT
    assert res["output"].startswith("[rdma.fabric: %d bytes of output dropped" % res["output_dropped_bytes"])
    assert res["output"].rstrip().endswith("# Avg bus bandwidth    : 12.5") and res["ok"] is False
