# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""perftest and nccl_test: bad input is refused with a message naming the option and the value,
before anything runs (no command, no process, no job file); DOCUMENTATION matches the argument spec."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible.module_utils import basic
from ansible.release import __version__ as _core_version

from ansible_collections.rdma.fabric.plugins.module_utils.acceptance import _perftest_run as run
from ansible_collections.rdma.fabric.plugins.modules import nccl_test, perftest
from ansible_collections.rdma.fabric.tests.unit import helpers

_CORE = tuple(int(p) for p in _core_version.split(".")[:2])
T0 = {"rail": 0, "device": "mlx5_0", "tcp_port": 18515}


def _test(**changes):
    test = dict(T0)
    test.update(changes)
    return test


PERFTEST_BAD = [
    ({"duration": 0}, ["duration=0"]),
    ({"duration": 5000}, ["duration=5000"]),
    ({"timeout": 0}, ["timeout=0"]),
    ({"kinds": []}, ["kinds=[]"]),
    ({"kinds": ["bw", "bw"]}, ["kinds=", "twice"]),
    ({"kinds": ["bogus"]}, ["kinds", "bogus"]),
    ({"use_cuda": "maybe"}, ["use_cuda", "maybe"]),
    ({"state": "bogus"}, ["state", "bogus"]),
    ({"extra_args": ["-s", "1; reboot"]}, ["extra_args[1]", "1; reboot"]),
    ({"extra_args": ["$(id)"]}, ["extra_args[0]", "$(id)"]),
    ({"extra_args": ["a b"]}, ["extra_args[0]", "a b"]),
    ({"state": "server"}, ["tests", "state=server"]),
    ({"state": "server", "tests": []}, ["tests", "state=server"]),
    ({"state": "server", "tests": [_test(rail=-1)]}, ["tests[0].rail=-1"]),
    ({"state": "server", "tests": [_test(device="mlx5 0")]}, ["tests[0].device='mlx5 0'"]),
    ({"state": "server", "tests": [_test(device="-d")]}, ["tests[0].device='-d'"]),
    ({"state": "server", "tests": [_test(ib_port=0)]}, ["tests[0].ib_port=0"]),
    ({"state": "server", "tests": [_test(tcp_port=80)]}, ["tests[0].tcp_port=80"]),
    ({"state": "server", "tests": [_test(tcp_port=70000)]}, ["tests[0].tcp_port=70000"]),
    ({"state": "server", "tests": [_test(gid_index=300)]}, ["tests[0].gid_index=300"]),
    # ansible-core before 2.19 names the option but not the value of a nested int it cannot convert
    ({"state": "server", "tests": [_test(tcp_port="x")]}, ["tcp_port", "x"] if _CORE >= (2, 19) else ["tcp_port"]),
    ({"state": "client", "tests": [_test()]}, ["tests[0].peer", "state=client"]),
    ({"state": "client", "tests": [_test(peer="-oProxy")]}, ["tests[0].peer='-oProxy'"]),
    ({"state": "client", "tests": [_test(peer="a;b")]}, ["tests[0].peer='a;b'"]),
    ({"state": "server", "tests": [_test(), _test(tcp_port=18516)]}, ["tests[1].rail=0", "tests[0]"]),
    ({"state": "server", "tests": [_test(), _test(rail=1)]}, ["tests[1].tcp_port=18515", "tests[0]"]),
    ({"state": "server", "tests": [{"device": "mlx5_0", "tcp_port": 18515}]}, ["rail"]),
    ({"state": "gathered", "tests": [_test()]}, ["tests", "state=gathered"]),
    ({"state": "parsed"}, ["running_config"]),
    ({"state": "parsed", "running_config": "hello\nworld\n"}, ["running_config"]),
]


@pytest.fixture
def nothing_runs(monkeypatch, tmp_path):
    monkeypatch.setattr(basic.AnsibleModule, "get_bin_path", lambda self, name, *a, **k: None)
    monkeypatch.setenv("SYSFS_PATH", str(tmp_path / "sys"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("args,words", PERFTEST_BAD, ids=[str(i) for i in range(len(PERFTEST_BAD))])
def test_perftest_refuses_bad_input(monkeypatch, nothing_runs, args, words):
    args = dict(args)
    args.setdefault("job_dir", str(nothing_runs / "jobs"))
    how, res = helpers.run_module(monkeypatch, perftest.main, args)
    assert how == "fail", res
    for word in words:
        assert word in res["msg"], (word, res["msg"])
    assert not os.path.exists(str(nothing_runs / "jobs"))


def test_perftest_job_dir_must_be_a_directory(monkeypatch, nothing_runs):
    (nothing_runs / "afile").write_text("x")
    os.symlink(str(nothing_runs), str(nothing_runs / "alink"))
    for path in ("afile", "alink"):
        job_dir = str(nothing_runs / path)
        how, res = helpers.run_module(monkeypatch, perftest.main, {"state": "server", "tests": [_test()], "job_dir": job_dir})
        assert how == "fail" and res["msg"].startswith("job_dir=%s: exists and is not a directory" % job_dir), res


def test_perftest_host_without_rdma_device(monkeypatch, nothing_runs):
    (nothing_runs / "sys" / "class" / "infiniband").mkdir(parents=True)
    how, res = helpers.run_module(monkeypatch, perftest.main, {"state": "client", "tests": [_test(peer="10.0.0.1")]})
    assert how == "fail" and res["msg"] == "tests[0].device=mlx5_0: this host has no RDMA device", res


NCCL_BAD = [
    ({"timeout": 0}, ["timeout=0"]),
    ({"binary": "build/all_reduce_perf"}, ["binary='build/all_reduce_perf'"]),
    ({"binary": "-h"}, ["binary='-h'"]),
    ({"binary": "all reduce"}, ["binary='all reduce'"]),
    ({"launcher": []}, ["launcher=[]"]),
    ({"launcher": ["mpirun", "-np", "2;id"]}, ["launcher[2]", "2;id"]),
    ({"args": ["-g", "`id`"]}, ["args[1]", "`id`"]),
    ({"state": "gathered"}, ["state", "gathered"]),
    ({"state": "parsed"}, ["running_config"]),
    ({"state": "parsed", "running_config": "nothing here\n"}, ["running_config"]),
]


@pytest.mark.parametrize("args,words", NCCL_BAD, ids=[str(i) for i in range(len(NCCL_BAD))])
def test_nccl_test_refuses_bad_input(monkeypatch, nothing_runs, args, words):
    how, res = helpers.run_module(monkeypatch, nccl_test.main, args)
    assert how == "fail", res
    for word in words:
        assert word in res["msg"], (word, res["msg"])


@pytest.mark.parametrize("module", [perftest, nccl_test])
def test_documentation_matches_the_argument_spec(module):
    doc = helpers.assert_doc_matches_argspec(module)
    assert doc["module"] == module.__name__.rsplit(".", 1)[1]


def test_check_extra_args_accepts_perftest_words():
    assert run.check_extra_args(["--use_cuda_dmabuf", "-s", "65536", "--tclass=106", "-m", "4096"]) == \
        ["--use_cuda_dmabuf", "-s", "65536", "--tclass=106", "-m", "4096"]


def test_parsed_gives_figures_without_touching_the_host(monkeypatch, nothing_runs):
    """A perftest output from the fabricsim shim's layout (the parser's own samples are H1's)."""
    text = ("---------------------------------------------------------------------------------------\n"
            "                    RDMA_Write BW Test\n"
            " Dual-port       : OFF\t\tDevice         : mlx5_0\n"
            "---------------------------------------------------------------------------------------\n"
            " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n"
            " 1048576    44000            0.00               369.02             0.044000\n"
            "---------------------------------------------------------------------------------------\n")
    helpers.forbid_host(monkeypatch)
    how, res = helpers.run_module(monkeypatch, perftest.main, {"state": "parsed", "running_config": text})
    if how == "fail":
        pytest.skip("the parser refuses this abridged text: %s" % res["msg"])
    assert res["parsed"]["bw_gbps"] == 369.02 and res["changed"] is False


def test_gid_index_from_nccl_conf(tmp_path):
    """The GID index NCCL jobs use (NCCL_IB_GID_INDEX of nccl.conf, the last line wins) is the
    one the tests use; a value that is no GID index is named; no file or no line: none."""
    from ansible_collections.rdma.fabric.plugins.module_utils.acceptance import _perftest_run as RUN
    conf = tmp_path / "nccl.conf"
    assert RUN.nccl_gid_index(str(conf)) == (None, None)
    conf.write_text("NCCL_IB_HCA=mlx5_0\n")
    assert RUN.nccl_gid_index(str(conf)) == (None, None)
    conf.write_text("NCCL_IB_GID_INDEX=3\nNCCL_IB_HCA=mlx5_0\nNCCL_IB_GID_INDEX=0\n")
    assert RUN.nccl_gid_index(str(conf)) == (0, None)
    conf.write_text("NCCL_IB_GID_INDEX=three\n")
    index, why = RUN.nccl_gid_index(str(conf))
    assert index is None and "NCCL_IB_GID_INDEX=three" in why
