# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""rdma.fabric.perftest on the controller: runs the module on the node and drops what a node's
result could use to change the controller's state (plugin_utils/_untrusted.py). A node under test
(onboarding) runs code the controller does not trust. Documentation in plugins/modules/perftest.py."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.plugins.action import ActionBase

from ansible_collections.rdma.fabric.plugins.plugin_utils import _untrusted


class ActionModule(ActionBase):
    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        result.update(self._execute_module(task_vars=task_vars, wrap_async=self._task.async_val))
        return _untrusted.node_result(result)
