# -*- coding: utf-8 -*-
"""lab/scale/instructions.py: the figures of a callgrind-counted run (the main process whole, each
forked worker from its fork on), read from callgrind's own output files."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import importlib.util
import os

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("instructions", os.path.join(HERE, "..", "..", "lab", "scale", "instructions.py"))
I = importlib.util.module_from_spec(spec)
spec.loader.exec_module(I)

# the head of a callgrind output file (valgrind 3.19, --dump-instr=no), its last line the total
CALLGRIND = """# callgrind format
version: 1
creator: callgrind-3.19.0
pid: %(pid)d
cmd:  /work/main/.venv/bin/python3 /work/main/.venv/bin/ansible-playbook -i inv play.yml
part: 1

desc: I1 cache:
desc: Timerange: Basic block 0 - 1
positions: line
events: Ir
summary: %(ir)d

fl=(1) ???
fn=(1) 0x0000000000001234
0 4
totals: %(ir)d
"""


def test_the_main_process_is_the_first_pid_and_each_worker_is_counted(tmp_path):
    for pid, ir in ((4102, 61000000), (4100, 3258000000), (4101, 160000000), (4203, 42000000)):
        (tmp_path / ("callgrind.%d" % pid)).write_text(CALLGRIND % {"pid": pid, "ir": ir})
    (tmp_path / "run.log").write_text("PLAY RECAP\n")
    figures = I.count(str(tmp_path), 4100)
    assert figures == {"main": 3258000000, "main_pid": 4100, "workers": [160000000, 61000000, 42000000]}
    assert I.report(figures) == "main 3.258 G, 3 workers 0.263 G (87.7 M each), total 3.521 G instructions"
    # without the main's pid (an older run's directory): the process with the most instructions
    assert I.count(str(tmp_path)) == figures
    with pytest.raises(SystemExit) as error:
        I.count(str(tmp_path), 999)
    assert "no callgrind output of the main process (pid 999)" in str(error.value)


def test_pids_that_wrapped_around_do_not_make_a_worker_the_main(tmp_path):
    # the main process started at pid 99990, its workers after the wrap
    for pid, ir in ((99990, 3400000000), (310, 61000000), (311, 61000000)):
        (tmp_path / ("callgrind.%d" % pid)).write_text(CALLGRIND % {"pid": pid, "ir": ir})
    assert I.count(str(tmp_path), 99990)["main"] == 3400000000
    assert I.count(str(tmp_path))["workers"] == [61000000, 61000000]


def test_a_directory_without_callgrind_output_is_an_error(tmp_path):
    (tmp_path / "run.log").write_text("valgrind: not found\n")
    with pytest.raises(SystemExit) as error:
        I.count(str(tmp_path))
    assert "no callgrind output in %s" % tmp_path in str(error.value)
