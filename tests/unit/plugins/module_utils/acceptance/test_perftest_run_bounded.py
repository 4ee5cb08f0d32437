# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""#40 medium 6: tool output read bounded, keeping the tail (results are printed last), saying how
much was dropped; the timeout still honoured."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess
import sys
import time

from ansible_collections.rdma.fabric.plugins.module_utils.acceptance import _perftest_run as run
from ansible_collections.rdma.fabric.plugins.module_utils.common import _fileio

MiB = 1024 * 1024
FLOOD = [sys.executable, "-c",
         "import sys\nline = b'x' * 1023 + b'\\n'\nfor i in range(50 * 1024): sys.stdout.buffer.write(line)\n"
         "sys.stdout.buffer.write(b'FINAL LINE 42\\n')\n"]
TOTAL = 50 * MiB + len(b"FINAL LINE 42\n")


def test_tail_buffer_keeps_the_last_bytes_and_counts_the_rest():
    buf = _fileio.TailBuffer(10)
    for chunk in (b"abcdef", b"ghijkl", b"", b"mnop"):
        buf.add(chunk)
    assert buf.data() == b"ghijklmnop" and buf.dropped == 6 and buf.size == 10
    buf.add(b"0123456789ABC")
    assert buf.data() == b"3456789ABC" and buf.dropped == 19


def test_fifty_megabytes_keep_the_final_line_and_the_dropped_count():
    rc, out, dropped = run.run_capture(FLOOD, dict(os.environ), 60, run.OUTPUT_LIMIT)
    assert rc == 0
    assert len(out) == run.OUTPUT_LIMIT and dropped == TOTAL - run.OUTPUT_LIMIT
    assert out.endswith(b"FINAL LINE 42\n")
    text = run.tail_text(out, dropped)
    assert text.endswith("FINAL LINE 42\n") and text.startswith("x") and len(text) < len(out)
    note = run.output_with_note(text, dropped, run.OUTPUT_LIMIT, 100)
    assert note.startswith("[rdma.fabric: %d bytes of output dropped, the last %d bytes kept]\n" % (dropped, run.OUTPUT_LIMIT))
    assert note.endswith("FINAL LINE 42\n")


MEASURE = r"""
import json, os, resource, sys
from ansible_collections.rdma.fabric.plugins.module_utils.acceptance import _perftest_run as run
argv = json.loads(sys.argv[1])
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
rc, out, dropped = run.run_capture(argv, dict(os.environ), 60, run.OUTPUT_LIMIT)
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"grew_kib": after - before, "dropped": dropped, "kept": len(out), "rc": rc}))
"""


def test_memory_stays_bounded_while_reading_fifty_megabytes():
    """In a fresh process (its own high-water mark): reading 50 MB grows it by far less than 50 MB."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    out = json.loads(subprocess.check_output([sys.executable, "-c", MEASURE, json.dumps(FLOOD)], env=env).decode())
    assert out["rc"] == 0 and out["dropped"] == TOTAL - run.OUTPUT_LIMIT and out["kept"] == run.OUTPUT_LIMIT
    assert out["grew_kib"] < 12 * 1024, out


def test_the_timeout_is_honoured_while_output_floods():
    start = time.time()
    rc, out, dropped = run.run_capture([sys.executable, "-c", "import sys\nwhile True: sys.stdout.write('y' * 4096)\n"],
                                       dict(os.environ), 1.5, 64 * 1024)
    assert time.time() - start < 1.5 + run.KILL_AFTER + 2
    assert rc == -9 and len(out) <= 64 * 1024 and dropped > 0
    assert run.run_bounded(["/bin/sleep", "30"], dict(os.environ), 0.5)[0] == 137


def test_run_one_reports_the_dropped_bytes():
    item = {"kind": "bw", "argv": FLOOD, "pinning": "none: numa=false"}
    rc, text, attempts, extra = run.run_one(item, 60, retry=0)
    assert rc == 0 and text.endswith("FINAL LINE 42\n") and extra["dropped"] >= TOTAL - run.OUTPUT_LIMIT
    assert len(text) <= run.OUTPUT_LIMIT


def test_small_output_is_whole_with_nothing_dropped():
    rc, out, dropped = run.run_bounded(["/bin/sh", "-c", "echo one; echo two >&2; exit 3"], dict(os.environ), 10)
    assert (rc, dropped) == (3, 0) and out == b"one\ntwo\n"
    assert run.tail_text(out, 0) == "one\ntwo\n" and run.output_with_note("one\n", 0, 10, 100) == "one\n"
