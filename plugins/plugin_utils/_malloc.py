# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The control node's malloc, for the ``rdma.fabric.linear`` strategy's workers.

Each worker of a run builds its module's payload (AnsiballZ, about 480 KB for ``state_check``)
and sends it to ssh, in several copies of a few hundred KB each, freed when the task ends.
glibc's malloc serves a block of 128 KB or more with its own ``mmap`` and gives it back at
``free``; but after the first such block is freed it raises that threshold to the block's size
(its dynamic threshold, documented in ``mallopt(3)``, "M_MMAP_THRESHOLD"), so the next copies come
from the heap and stay in the worker's memory after they are freed. Every worker of a batch of
forks holds them at once: measured on the scale lab at 64 nodes and 50 forks, the drift check's
peak memory was 1066 MiB with the dynamic threshold and 924 MiB with it fixed at 128 KB in the
workers (ping's 776 and 741; docs/scale.md, "Twelfth pass").

``fix_mmap_threshold`` sets the threshold with ``mallopt(M_MMAP_THRESHOLD, ...)``, which also
turns off the dynamic one, in every process the main process forks from then on (an
``os.register_at_fork`` hook run in the child): the workers. The main process's own malloc is
left as it is. Only on glibc (``os.confstr("CS_GNU_LIBC_VERSION")``); elsewhere, or where the user
set glibc's own ``MALLOC_MMAP_THRESHOLD_`` or ``GLIBC_TUNABLES=glibc.malloc.mmap_threshold=...``, it
does nothing. ``RDMA_FABRIC_MMAP_THRESHOLD``: bytes (16384 to 33554432, glibc's range on 64-bit
hosts), default 131072 (glibc's own starting value); 0, false, no or off leave malloc alone.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ctypes
import os

from ansible.errors import AnsibleError

MMAP_THRESHOLD_ENV = "RDMA_FABRIC_MMAP_THRESHOLD"
DEFAULT_MMAP_THRESHOLD = 128 * 1024
# glibc's <malloc.h>
M_MMAP_THRESHOLD = -3
# glibc refuses more than HEAP_MAX_SIZE / 2 (32 MiB on 64-bit hosts); below a few pages every
# small buffer would be a system call
MMAP_THRESHOLD_RANGE = (16 * 1024, 32 * 1024 * 1024)
OFF = ("0", "false", "no", "off")

_done = {}


def mmap_threshold_setting(environ=None):
    """The threshold to set (bytes) from the environment, or None to leave malloc alone.
    Raises AnsibleError naming RDMA_FABRIC_MMAP_THRESHOLD and its value when it is not a number
    of bytes in MMAP_THRESHOLD_RANGE."""
    environ = os.environ if environ is None else environ
    text = environ.get(MMAP_THRESHOLD_ENV, "").strip()
    if text.lower() in OFF:
        return None
    # the user's own glibc setting wins (glibc read it when the process started)
    if environ.get("MALLOC_MMAP_THRESHOLD_") or "glibc.malloc.mmap_threshold" in environ.get("GLIBC_TUNABLES", ""):
        return None
    if not text:
        return DEFAULT_MMAP_THRESHOLD
    try:
        value = int(text)
    except ValueError:
        value = None
    if value is None or not MMAP_THRESHOLD_RANGE[0] <= value <= MMAP_THRESHOLD_RANGE[1]:
        raise AnsibleError("%s=%r: expected a number of bytes from %d to %d, or 0 to leave malloc alone"
                           % (MMAP_THRESHOLD_ENV, text, MMAP_THRESHOLD_RANGE[0], MMAP_THRESHOLD_RANGE[1]))
    return value


def is_glibc():
    try:
        return (os.confstr("CS_GNU_LIBC_VERSION") or "").startswith("glibc")
    except (AttributeError, ValueError, OSError):
        return False


def fix_mmap_threshold(environ=None, mallopt=None, at_fork=None):
    """Arranges for malloc's mmap threshold to be set in each child this process forks from now on
    (once per process; later calls return the first result): the value, or None when nothing
    was arranged (not glibc, turned off, or the user's own setting). Tests pass ``mallopt``
    (a callable taking param, value) and ``at_fork`` (as os.register_at_fork)."""
    if "result" in _done:
        return _done["result"]
    value = mmap_threshold_setting(environ)
    result = None
    if value is not None:
        if mallopt is None and is_glibc():
            try:
                mallopt = ctypes.CDLL(None).mallopt
                mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
                mallopt.restype = ctypes.c_int
            except (AttributeError, OSError):
                mallopt = None
        at_fork = at_fork or getattr(os, "register_at_fork", None)
        if mallopt is not None and at_fork is not None:
            at_fork(after_in_child=lambda: mallopt(M_MMAP_THRESHOLD, value))
            result = value
    _done["result"] = result
    return result
