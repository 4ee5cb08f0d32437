# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The schedulers the gate knows, one row each: name -> the module that reads the scheduler's
node states, plans the change from a verdict (scheduler/_gate) and applies it (``gate``).
The scheduler_gate module's ``scheduler`` choices are these names (a unit test holds them to
it). A Kubernetes row would read the Node objects and plan a condition and a taint from the
same verdicts (docs/scheduler.md)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.rdma.fabric.plugins.module_utils.scheduler import _slurm

SCHEDULERS = {_slurm.NAME: _slurm}
