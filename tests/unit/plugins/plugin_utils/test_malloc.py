# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""rdma.fabric.linear fixes glibc's mmap threshold before its first fork, so that each worker
gives back the payload buffers it freed (issue 44: the drift check's peak memory at 64 nodes)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import subprocess
import sys

import pytest

from ansible.errors import AnsibleError

from ansible_collections.rdma.fabric.plugins.plugin_utils import _malloc


@pytest.fixture(autouse=True)
def fresh():
    _malloc._done.clear()
    yield
    _malloc._done.clear()


def test_default_is_glibcs_starting_threshold():
    assert _malloc.mmap_threshold_setting({}) == 131072
    assert _malloc.mmap_threshold_setting({"RDMA_FABRIC_MMAP_THRESHOLD": " 65536 "}) == 65536


@pytest.mark.parametrize("off", ["0", "false", "No", "OFF"])
def test_turned_off(off):
    assert _malloc.mmap_threshold_setting({"RDMA_FABRIC_MMAP_THRESHOLD": off}) is None


@pytest.mark.parametrize("environ", [
    {"MALLOC_MMAP_THRESHOLD_": "262144"},
    {"GLIBC_TUNABLES": "glibc.malloc.arena_max=2:glibc.malloc.mmap_threshold=262144"},
    {"MALLOC_MMAP_THRESHOLD_": "262144", "RDMA_FABRIC_MMAP_THRESHOLD": "65536"},
])
def test_the_users_own_glibc_setting_wins(environ):
    assert _malloc.mmap_threshold_setting(environ) is None


@pytest.mark.parametrize("value", ["abc", "1.5", "-1", "4096", "33554433", "128k"])
def test_a_bad_value_names_the_variable_and_the_value(value):
    with pytest.raises(AnsibleError) as err:
        _malloc.mmap_threshold_setting({"RDMA_FABRIC_MMAP_THRESHOLD": value})
    assert "RDMA_FABRIC_MMAP_THRESHOLD=%r" % value in str(err.value)


def test_fix_arranges_mallopt_in_each_child_once():
    calls, hooks = [], []

    def mallopt(param, value):
        calls.append((param, value))
        return 1

    def at_fork(after_in_child):
        hooks.append(after_in_child)

    assert _malloc.fix_mmap_threshold({}, mallopt=mallopt, at_fork=at_fork) == 131072
    assert _malloc.fix_mmap_threshold({"RDMA_FABRIC_MMAP_THRESHOLD": "65536"}, mallopt=mallopt, at_fork=at_fork) == 131072
    # nothing in this process; the hook, run in a child, sets it
    assert calls == [] and len(hooks) == 1
    hooks[0]()
    assert calls == [(-3, 131072)]


def test_turned_off_arranges_nothing():
    hooks = []

    def at_fork(after_in_child):
        hooks.append(after_in_child)

    assert _malloc.fix_mmap_threshold({"RDMA_FABRIC_MMAP_THRESHOLD": "0"}, mallopt=lambda *a: 1, at_fork=at_fork) is None
    assert hooks == []


# In a fresh interpreter: a 2 MiB block freed raises glibc's dynamic threshold to 2 MiB, so a
# 500 KB block after it comes from the heap (mallinfo2's count of mmapped blocks unchanged) and
# stays there once freed; with the threshold fixed it is mmapped (and unmapped when freed). A
# forked child (a worker) has the threshold fixed; the main process is left as it is.
PROBE = r"""
import ctypes, os, sys
from ansible_collections.rdma.fabric.plugins.plugin_utils import _malloc
class Info(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in
                "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost".split()]
libc = ctypes.CDLL(None)
libc.mallinfo2.restype = Info

def mmapped():
    before = libc.mallinfo2().hblks
    block = bytes(500000)
    return libc.mallinfo2().hblks - before

print(_malloc.fix_mmap_threshold())
big = bytes(2 << 20)
del big
sys.stdout.flush()
pid = os.fork()
if pid == 0:
    print(mmapped())
    sys.stdout.flush()
    os._exit(0)
os.waitpid(pid, 0)
print(mmapped())
"""


@pytest.mark.skipif(not _malloc.is_glibc(), reason="glibc's malloc only")
@pytest.mark.parametrize("setting, expected", [("", ["131072", "1", "0"]), ("0", ["None", "0", "0"])])
def test_a_freed_payload_sized_block_is_given_back_only_in_a_child_with_the_threshold_fixed(setting, expected):
    try:
        import ctypes
        ctypes.CDLL(None).mallinfo2
    except AttributeError:
        pytest.skip("glibc older than 2.33 (no mallinfo2)")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p), RDMA_FABRIC_MMAP_THRESHOLD=setting)
    for name in ("MALLOC_MMAP_THRESHOLD_", "GLIBC_TUNABLES"):
        env.pop(name, None)
    out = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == expected
