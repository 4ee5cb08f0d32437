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
  - Before the first fork of a task of this collection's roles, or of a task that names the
    collection (C(rdma.fabric.)) in its arguments, variables, conditions or loop, it imports the
    collection's filter and lookup plugins in the control node's main process, once per run, so
    that the workers inherit them; ansible-core imports them in every worker that templates one
    (more than half of the fabric test's worker CPU). An include or import of one of the
    collection's roles does not count by the role's name; the role's tasks do when they are queued.
    C(RDMA_FABRIC_PRELOAD_FILTERS=0) turns this off.
  - On glibc, in every worker it forks, it fixes malloc's mmap threshold at 128 KiB (C(mallopt(3)),
    M_MMAP_THRESHOLD), which also turns off glibc's dynamic threshold, so that each worker gives
    back the module payload buffers it freed instead of keeping them. The drift check's peak
    memory at 64 nodes and 50 forks fell from 1066 to 924 MiB (1.25x a ping play's, from 1.37x).
    The main process's malloc is left as it is. C(RDMA_FABRIC_MMAP_THRESHOLD) sets another
    threshold in bytes (16384 to 33554432); C(0) leaves malloc alone, as does glibc's own
    C(MALLOC_MMAP_THRESHOLD_) or C(GLIBC_TUNABLES=glibc.malloc.mmap_threshold=...) when set.
  - It wraps internals of ansible-core (the workers list and the results deque, listed in the
    collection's C(plugins/plugin_utils/_core_compat.py)), and runs only on the ansible-core
    versions CI tests it on, 2.16 to 2.19 (C(>=2.16.0,<2.20), as the collection's
    C(requires_ansible)). On any other version it refuses to start the play, with an error naming
    that range and the version found; use P(ansible.builtin.linear#strategy) there. Where the
    internals are not what it expects, it waits as the builtin strategy does.
notes:
  - ansible-core 2.19 prints a deprecation warning for every strategy plugin outside
    C(ansible.builtin), once per run; it says such plugins have no compatibility guarantee and
    may stop being loadable in a later release. When that happens, or on an ansible-core this
    strategy refuses, set C(strategy = linear) again, and the plays run as before, at the
    controller cost of the builtin.
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

from ansible.plugins.strategy.linear import StrategyModule as _LinearStrategy

from ansible_collections.rdma.fabric.plugins.plugin_utils import _core_compat


class StrategyModule(_core_compat.waiting_strategy(_LinearStrategy)):
    """ansible.builtin.linear with blocking waits; every private name it uses, and the version
    check (an AnsibleError when the play starts on an ansible-core outside
    _core_compat.STRATEGY_CORE_RANGE), are in _core_compat."""
