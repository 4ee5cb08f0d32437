# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The drift check: the areas planned on the node from the spec each role leaves, their resources checked in one
call, the records judged; and the node's own periodic run of it.

- ``_drift_areas`` the areas planned on the node: their declared facts, plans, requests and records
- ``_drift_spec``  the spec a role leaves on the node (one JSON file per area, versioned)
- ``_state_check`` several resources checked in one call, and the facts the areas read
- ``_drift_timer`` the drift check on the node without Ansible (the health timer's drift step)"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type
