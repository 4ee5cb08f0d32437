# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Lab tool, not part of the collection: count the tasks that reached each node.

    ANSIBLE_CALLBACK_PLUGINS=lab/callback_plugins ANSIBLE_CALLBACKS_ENABLED=node_tasks \
        ansible-playbook -i inventories/lab playbooks/site.yml

A task reaches the node unless it was skipped or its action runs on the controller only
(assert, debug, set_fact, include_vars, meta, ...). Prints one line per host at the end:
``node_tasks: HOST reached=N changed=M`` and the names of the reaching tasks with -v.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = """
name: node_tasks
type: aggregate
short_description: count the tasks that reached each node (lab tool)
description: Counts per host the task results that were not skipped and whose action is not controller-only.
"""

from ansible.plugins.callback import CallbackBase

CONTROLLER_ONLY = {
    "assert", "debug", "set_fact", "include_vars", "meta", "fail", "add_host", "group_by",
    "include_role", "import_role", "include_tasks", "import_tasks", "set_stats", "pause",
    "validate_argument_spec",
}


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "node_tasks"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self):
        super(CallbackModule, self).__init__()
        self.reached = {}
        self.changed = {}
        self.names = {}

    def _count(self, result):
        action = result._task.action.split(".")[-1]
        if action in CONTROLLER_ONLY:
            return
        host = result._host.get_name()
        self.reached[host] = self.reached.get(host, 0) + 1
        if result._result.get("changed"):
            self.changed[host] = self.changed.get(host, 0) + 1
        self.names.setdefault(host, []).append("%s (%s)" % (result._task.get_name(), action))

    def v2_runner_on_ok(self, result):
        self._count(result)

    def v2_runner_on_failed(self, result, ignore_errors=False):
        self._count(result)

    def v2_playbook_on_stats(self, stats):
        for host in sorted(self.reached):
            self._display.display("node_tasks: %s reached=%d changed=%d" % (host, self.reached[host],
                                                                            self.changed.get(host, 0)))
            for name in self.names[host]:
                self._display.vvv("node_tasks:   %s: %s" % (host, name))
