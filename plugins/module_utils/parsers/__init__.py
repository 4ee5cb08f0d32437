# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parsers of what a tool prints, each written from the tool's printing code and tested on real outputs
(tests/unit/corpus); pure but for a reader that runs the tool where one says so.

- ``_ibstat``        ``ibstat``
- ``_ibstatus``      ``ibstatus``
- ``_ibv_devinfo``   ``ibv_devinfo [-v]``: ports and the GID table
- ``_rdma_link``     ``rdma link``
- ``_iproute``       ``ip -j addr show``
- ``_ethtool_stats`` ``ethtool -S``
- ``_lldptool``      ``lldptool``: the IEEE/CEE/CIN DCBX TLVs and the neighbour's identity, and their reader
- ``_sm_info``       ``sminfo`` and ``saquery`` (SMInfoRecord, PortInfoRecord), and the SM facts gathered
                     from them
- ``_iblinkinfo``    ``iblinkinfo`` (both layouts)
- ``_ibqueryerrors`` ``ibqueryerrors -r``
- ``_topo``          ``nvidia-smi topo -m``, and the GPU-to-NIC rails derived from it
- ``_mlxconfig``     ``mlxconfig``/``mstconfig`` query and set, and their argument vectors
- ``_mlxfw``         ``flint query`` and ``mlxfwmanager --query``
- ``_perftest``      perftest's ``ib_write_bw``/``ib_write_lat`` text and ``--out_json``
- ``_nccl_tests``    nccl-tests' ``*_perf`` text and ``-J`` JSON"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type
