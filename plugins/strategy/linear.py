# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""rdma.fabric.linear: ansible's linear strategy, waiting for its workers instead of polling them."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: linear
author: rdma.fabric contributors (@rdma-fabric)
short_description: The linear strategy, without its busy waits (for fleets larger than forks)
version_added: 0.3.0
description:
  - Runs plays exactly as P(ansible.builtin.linear#strategy) does (it is that strategy, task by
    task, host by host, with its results, handlers, includes and errors), and changes only how the
    control node waits.
  - When every fork is busy, the builtin strategy looks for a free one in a loop that sleeps
    0.1 ms per pass over the workers, for as long as hosts wait for a fork. On a fleet larger than
    C(forks) that loop runs for most of each task's wall time, and costs controller CPU in
    proportion to how long the nodes take. This strategy blocks on the workers' process
    sentinels instead, and the kernel wakes it when one ends.
  - At the end of each task the builtin strategy polls for results every
    C(internal_poll_interval) (1 ms by default). This one blocks until a result arrives or a worker
    ends, whichever comes first, with a 1 s safety timeout.
  - The figures are in the collection's README ("Fleet scale"); C(examples/ansible.cfg) sets it.
  - A task with C(throttle) below C(forks) whose throttled workers are all busy while others are
    free waits as the builtin strategy does.
  - It wraps internals of ansible-core 2.19 (the workers list and the results deque). Where
    those are not what it expects, it waits as the builtin strategy does.
notes:
  - ansible-core 2.19 prints a deprecation warning for every strategy plugin outside
    C(ansible.builtin), once per run; it says such plugins have no compatibility guarantee and
    may stop being loadable in a later release. When that happens, set C(strategy = linear)
    again, and the plays run as before, at the controller cost of the builtin.
  - Select it with C(strategy = rdma.fabric.linear) in C(ansible.cfg), C(ANSIBLE_STRATEGY), or
    C(strategy:) on a play.
"""

EXAMPLES = r"""
# In the ansible.cfg of a control node for fleets (examples/ansible.cfg):
#   [defaults]
#   forks = 50
#   strategy = rdma.fabric.linear
# or for one run (the drift check and health plays follow the configured strategy):
#   ANSIBLE_STRATEGY=rdma.fabric.linear ansible-playbook -i INVENTORY rdma.fabric.drift_check

- name: Converge the fleet's RoCE QoS
  hosts: gpu_nodes
  strategy: rdma.fabric.linear
  gather_facts: false
  roles:
    - rdma.fabric.roce_qos
"""

import os
from collections import deque
from multiprocessing.connection import wait as _wait_for

from ansible.errors import AnsibleError
from ansible.plugins.strategy.linear import StrategyModule as _LinearStrategy

# A wait never blocks longer than this: what a missed wake-up can cost at most.
SAFETY_TIMEOUT = 1.0


class _WakingDeque(deque):
    """The strategy's results deque: each append also writes a byte to a pipe the strategy
    waits on (the results thread appends under the strategy's lock, and nothing else does)."""

    def __init__(self, items, wake_fd):
        super(_WakingDeque, self).__init__(items)
        self._wake_fd = wake_fd

    def append(self, x):
        super(_WakingDeque, self).append(x)
        try:
            os.write(self._wake_fd, b"r")
        except (BlockingIOError, OSError):
            pass   # the pipe is full (a wake-up is pending) or closed (the run is ending)


def busy_sentinels(workers):
    """The sentinels of the workers still running, and whether every slot is busy."""
    sentinels = []
    for worker in workers:
        if worker is not None and worker.is_alive():
            sentinels.append(worker.sentinel)
    return sentinels, bool(workers) and len(sentinels) == len(workers)


class StrategyModule(_LinearStrategy):

    def __init__(self, tqm):
        super(StrategyModule, self).__init__(tqm)
        self._wake_r = self._wake_w = None
        results = getattr(self, "_results", None)
        if isinstance(results, deque):
            self._wake_r, self._wake_w = os.pipe()
            os.set_blocking(self._wake_r, False)
            os.set_blocking(self._wake_w, False)
            os.set_inheritable(self._wake_r, False)
            os.set_inheritable(self._wake_w, False)
            with self._results_lock:
                self._results = _WakingDeque(self._results, self._wake_w)

    def cleanup(self):
        try:
            super(StrategyModule, self).cleanup()
        finally:
            for fd in (self._wake_r, self._wake_w):
                if fd is not None:
                    os.close(fd)
            self._wake_r = self._wake_w = None

    def _drain_wakeups(self):
        try:
            while os.read(self._wake_r, 4096):
                pass
        except (BlockingIOError, OSError):
            pass

    def _queue_task(self, host, task, task_vars, play_context):
        # While every slot is busy the builtin loop would spin until one ends; after this wait
        # its first pass finds the ended one.
        while True:
            try:
                sentinels, full = busy_sentinels(self._workers)
            except (AttributeError, TypeError, ValueError):
                break   # not the workers this strategy knows: the builtin loop waits
            if not full:
                break
            _wait_for(sentinels, timeout=SAFETY_TIMEOUT)
        return super(StrategyModule, self)._queue_task(host, task, task_vars, play_context)

    def _wait_on_pending_results(self, iterator):
        """The builtin's loop (ansible.plugins.strategy.StrategyBase), with a blocking wait in
        place of its sleep of internal_poll_interval."""
        if self._wake_r is None:
            return super(StrategyModule, self)._wait_on_pending_results(iterator)
        ret_results = []
        while self._pending_results > 0 and not self._tqm._terminated:
            if self._tqm.has_dead_workers():
                raise AnsibleError("A worker was found in a dead state")
            self._drain_wakeups()
            ret_results.extend(self._process_pending_results(iterator))
            if self._pending_results > 0:
                sentinels = busy_sentinels(self._workers)[0]
                # A result that arrived after the drain above is a byte in the pipe: no wake-up
                # is lost between the check and the wait.
                _wait_for([self._wake_r] + sentinels, timeout=SAFETY_TIMEOUT)
        return ret_results
