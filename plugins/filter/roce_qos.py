# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The roce_qos role's rollback of a failed apply, on the controller. Everything else the
role decides is its area object (plugins/module_utils/areas/roce_qos.py, through the
rdma.fabric.area_* filters).

- ``roce_qos_rollback(results, failed, enabled)``: what to restore, per module;
- ``roce_qos_rollback_report(rollback, failed, restored)``: the failure and the rollback, one message.

Documentation in the .yml files of the same names.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.rdma.fabric.plugins.module_utils.areas import _roce_qos_rollback


def roce_qos_rollback(results, failed=None, enabled=True):
    """What to restore after the apply failed midway on an interface (the role's rescue):
    ``module_utils/areas/_roce_qos_rollback.py`` ``rollback``, which state_check's apply runs too.

    ``results``: ``{module: registered result}`` of the mlnx_qos, dcqcn and lldp_dcb tasks
    (a task that did not run: an empty dict); ``failed``: ``ansible_failed_result``.
    Returns ``{interfaces, order, mlnx_qos, dcqcn, lldp_dcb, reason}``."""
    return _roce_qos_rollback.rollback(results, failed, enabled)


def roce_qos_rollback_report(rollback, failed=None, restored=None):
    """The message the role fails the host with after a rollback: the failure (the
    module's own message) and what the rollback did, per module (``restored``: the
    registered results of the restore tasks, by module): ``_roce_qos_rollback.report``."""
    return _roce_qos_rollback.report(rollback, failed, restored)


class FilterModule(object):
    def filters(self):
        return {"roce_qos_rollback": roce_qos_rollback, "roce_qos_rollback_report": roce_qos_rollback_report}
