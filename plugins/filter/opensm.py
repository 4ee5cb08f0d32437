# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""rdma.fabric.opensm_ha_errors: the master/standby layout of the SMs of every fabric, checked
across hosts (documentation in opensm_ha_errors.yml). The one opensm filter: the role's
preflight runs it once per play, and an operator can run it on an inventory before adding or
moving an SM. Everything else the opensm role decides is the opensm area object
(plugins/module_utils/areas/opensm.py), reached through the rdma.fabric.area_* filters.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.rdma.fabric.plugins.module_utils.areas import opensm


def opensm_ha_errors(members, allow_equal_priority=False):
    """Messages, one per problem of the HA layout of ``members``; [] when it is sound."""
    if not isinstance(members, list):
        raise AnsibleFilterError("opensm_ha_errors: expected a list of SM dicts, got %s" % type(members).__name__)
    return opensm.ha_errors(members, allow_equal_priority)


class FilterModule(object):
    def filters(self):
        return {"opensm_ha_errors": opensm_ha_errors}
