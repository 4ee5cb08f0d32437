# -*- coding: utf-8 -*-
"""_lazy_re: a module-level pattern compiled at its first use behaves as re.compile's, and the
node areas' parsers and resources the drift check's action imports compile none at import."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re
import subprocess
import sys

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.common import _lazy_re


def test_a_lazy_pattern_is_compiled_once_at_its_first_use(monkeypatch):
    compiled = []
    real = re.compile
    monkeypatch.setattr(re, "compile", lambda *a: compiled.append(a) or real(*a))
    pattern = _lazy_re.compile(r"prio:\s*(?P<prio>\d+)", re.I)
    assert compiled == []
    assert pattern.match("PRIO: 3").group("prio") == "3"
    assert pattern.fullmatch("prio: 3 x") is None and pattern.search("x prio:4").group(1) == "4"
    assert pattern.sub("p", "prio: 1, prio: 2") == "p, p" and pattern.findall("prio: 1 prio: 2") == ["1", "2"]
    assert [m.group(1) for m in pattern.finditer("prio:5 prio:6")] == ["5", "6"]
    assert pattern.split("a prio:1 b") == ["a ", "1", " b"] and pattern.subn("", "prio:1") == ("", 1)
    assert (pattern.pattern, pattern.flags & re.I, pattern.groups, dict(pattern.groupindex)) == (
        r"prio:\s*(?P<prio>\d+)", re.I, 1, {"prio": 1})
    assert len(compiled) == 1
    assert pattern.compiled() is real(r"prio:\s*(?P<prio>\d+)", re.I)
    with pytest.raises(AttributeError):
        pattern.no_such_method   # pylint: disable=pointless-statement


def test_a_bad_pattern_fails_at_its_first_use_as_re_compile_fails():
    pattern = _lazy_re.compile(r"(unclosed")
    with pytest.raises(re.error):
        pattern.match("x")


def test_the_drift_checks_action_compiles_no_parser_pattern_when_imported():
    """The main process of every drift check imports these; only the node matches their patterns."""
    code = r"""
import re, sys
from ansible.plugins.loader import init_plugin_loader
init_plugin_loader([sys.argv[1]])
compiled = []
real = re.compile
re.compile = lambda *a, **k: compiled.append(sys._getframe(1).f_code.co_filename) or real(*a, **k)
from ansible_collections.rdma.fabric.plugins.action import drift_check, drift_report
print("\n".join(f for f in compiled if "/parsers/" in f or "/resources/" in f or "/nccl/" in f))
"""
    root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "..", ".cache", "collections"))
    proc = subprocess.run([sys.executable, "-c", code, root], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == ""
