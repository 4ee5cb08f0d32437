# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Readers of a node: one read of the host (or of a support bundle), then a pure derivation into the facts the
modules return and the areas plan from.

- ``_rdma_facts``    RDMA devices, GIDs, PCIe placement and GPU rails (``rdma_facts``)
- ``_gdr_readiness`` GPUDirect RDMA readiness (``gdr_readiness``)
- ``_health_read``   what ``rdma_health`` reads and derives, and the flap state
- ``_bundle``        support bundles read back as one more source of the readers' raw inputs"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type
