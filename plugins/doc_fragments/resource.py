# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What every module that changes a node through the resource engine (module_utils/resources/_resource.py)
shares: check and diff mode, and the lifecycle and failure result the engine gives them all.
Return values cannot come from a fragment, so the failure keys are described here once, in the
notes, and each module's RETURN describes its own successful result."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    DOCUMENTATION = r"""
attributes:
  check_mode:
    description: Computes the commands and the predicted state; changes nothing.
    support: full
  diff_mode:
    description: Returns the state before and after as a diff, one per object that changed.
    support: full
notes:
  - Every wanted object is validated, read and planned before the first change, so a bad value or
    a planning error stops the run before anything is applied; a converged host gets the reads
    only. C(changed) compares RV(before) with RV(after) as read back from the host, whatever the
    tools said.
  - "A failure midway stops the run at the failed command. The failed result then also has
    C(applied) (list of str, the commands that ran), C(failed_command) (str, the one that
    failed), C(not_attempted) (list of str, the commands not run), for a module that takes a
    list of objects C(failed_on) (dict, the identity of the object it failed on, what a
    rollback restores), and RV(before), RV(commands) and RV(after) read back from the host."
"""
