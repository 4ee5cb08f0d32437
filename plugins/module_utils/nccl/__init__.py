# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""NCCL's rules: its environment derived from a node's facts, validated and rendered; and compared across a
fleet.

- ``_nccl``             the NCCL environment from rdma_facts, validated, /etc/nccl.conf rendered
- ``_nccl_consistency`` NCCL settings compared across a fleet, and a rendered nccl.conf against the intent"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type
