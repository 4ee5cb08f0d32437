# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""#40 bad inputs, two classes: a job directory with ``..`` components, and perftest options that
perftest itself refuses (checked against its own option table). Each is refused naming the option
and the value, before anything runs or is created."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible.module_utils import basic

from ansible_collections.rdma.fabric.plugins.module_utils.acceptance import _perftest_run as run
from ansible_collections.rdma.fabric.plugins.modules import perftest
from ansible_collections.rdma.fabric.tests.unit import helpers

T0 = {"rail": 0, "device": "mlx5_0", "tcp_port": 18515}


@pytest.fixture
def nothing_runs(monkeypatch, tmp_path):
    monkeypatch.setattr(basic.AnsibleModule, "get_bin_path", lambda self, name, *a, **k: None)
    monkeypatch.setenv("SYSFS_PATH", str(tmp_path / "sys"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("state", ["server", "collect"])
def test_job_dir_with_dotdot_is_refused_and_nothing_created(monkeypatch, nothing_runs, state):
    job_dir = str(nothing_runs / "run" / ".." / "escaped")
    how, res = helpers.run_module(monkeypatch, perftest.main, {"state": state, "tests": [T0], "job_dir": job_dir})
    assert how == "fail", res
    assert res["msg"] == "job_dir=%s: a '..' component is refused (name the directory itself)" % job_dir
    assert not os.path.exists(str(nothing_runs / "escaped")) and not os.path.exists(str(nothing_runs / "run"))


EXTRA_BAD = [
    (["--bogus"], ["extra_args[0]='--bogus'", "perftest has no option --bogus"]),
    (["-k", "1", "-%"], ["extra_args[2]='-%'", "no option -%"]),
    (["-m"], ["extra_args[0]='-m'", "needs an argument"]),
    (["--tclass"], ["extra_args[0]='--tclass'", "needs an argument"]),
    (["--report_gbits=1"], ["extra_args[0]='--report_gbits=1'"]),
    (["--use-srq=yes"], ["extra_args[0]='--use-srq=yes'", "takes no argument"]),
    (["-d", "mlx5_1"], ["extra_args[0]='-d'", "set by the module", "tests[].device"]),
    (["--ib-dev=mlx5_1"], ["extra_args[0]='--ib-dev=mlx5_1'", "set by the module"]),
    (["-i2"], ["extra_args[0]='-i2'", "set by the module"]),
    (["-p", "1"], ["extra_args[0]='-p'", "tests[].tcp_port"]),
    (["--size=4096"], ["extra_args[0]='--size=4096'", "set by the module"]),
    (["-q", "4"], ["extra_args[0]='-q'", "set by the module"]),
    (["-D", "5"], ["extra_args[0]='-D'", "duration"]),
    (["-x", "3"], ["extra_args[0]='-x'", "gid_index"]),
    (["-aF"], ["extra_args[0]='-aF'", "-F is set by the module"]),
    (["--use_cuda=1"], ["extra_args[0]='--use_cuda=1'", "use_cuda"]),
    (["--use_cuda_dmabuf"], ["extra_args[0]='--use_cuda_dmabuf'", "use_cuda"]),
    (["--bind_source_ip=10.0.0.1"], ["extra_args[0]='--bind_source_ip=10.0.0.1'", "bind_address"]),
    (["10.0.0.9"], ["extra_args[0]='10.0.0.9'", "tests[].peer"]),
    (["-m", "4096", "host"], ["extra_args[2]='host'", "positional"]),
    (["-C"], ["extra_args[0]='-C'", "ib_write_bw refuses -C"]),
    (["-X", "1"], ["extra_args[0]='-X'", "WRITE verb"]),
    (["-h"], ["extra_args[0]='-h'", "help"]),
]


@pytest.mark.parametrize("extra,words", EXTRA_BAD, ids=[str(i) for i in range(len(EXTRA_BAD))])
def test_extra_args_perftest_refuses_are_refused_by_name(monkeypatch, nothing_runs, extra, words):
    how, res = helpers.run_module(monkeypatch, perftest.main, {"state": "server", "tests": [T0], "extra_args": extra,
                                                               "job_dir": str(nothing_runs / "jobs")})
    assert how == "fail", res
    for word in words:
        assert word in res["msg"], (word, res["msg"])
    assert not os.path.exists(str(nothing_runs / "jobs"))


@pytest.mark.parametrize("kinds,extra,words", [
    (["lat"], ["-b"], ["extra_args[0]='-b'", "ib_write_lat refuses -b", "Bidirectional"]),
    (["lat"], ["--noPeak"], ["extra_args[0]='--noPeak'", "ib_write_lat refuses -N"]),
    (["bw", "lat"], ["-U"], ["extra_args[0]='-U'", "ib_write_bw refuses -U"]),
])
def test_extra_args_refused_by_one_kind(monkeypatch, nothing_runs, kinds, extra, words):
    how, res = helpers.run_module(monkeypatch, perftest.main, {"state": "client", "tests": [dict(T0, peer="10.0.0.1")],
                                                               "kinds": kinds, "extra_args": extra})
    assert how == "fail", res
    for word in words:
        assert word in res["msg"], (word, res["msg"])


def test_extra_args_perftest_accepts_pass():
    good = ["--tclass=106", "-m", "4096", "-t", "128", "--use-srq", "-l", "8", "-n", "5000", "--cpu_util", "-T", "106"]
    assert run.check_perftest_args(good, ["bw"]) == good
    assert run.check_perftest_args(["-C", "-H"], ["lat"]) == ["-C", "-H"]
    assert run.check_perftest_args(["-b", "-N"], ["bw"]) == ["-b", "-N"]
    assert run.check_perftest_args(["-m4096"], ["bw", "lat"]) == ["-m4096"]


@pytest.mark.parametrize("value", ["::1", "host.example", "10.0.0.256", "10.0.0", "-10.0.0.1"])
def test_bind_address_not_an_ipv4_address_is_refused(monkeypatch, nothing_runs, value):
    how, res = helpers.run_module(monkeypatch, perftest.main, {"state": "server", "tests": [T0], "bind_address": value,
                                                               "job_dir": str(nothing_runs / "jobs")})
    assert how == "fail" and res["msg"].startswith("bind_address=%r: expected an IPv4 address" % value), res
