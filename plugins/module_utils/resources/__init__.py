# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The resource engine and the resources on it: each reads a node's state once, plans the change, applies it and
reads it back (the modules that change a node).

- ``_resource``       the engine: normalise, read once, plan, apply, read back; check and diff modes
- ``_qos_validate``   input checks the QoS resources share, each naming the field and the value
- ``_mlnx_qos``       ``mlnx_qos``: trust, PFC, ETS, buffers, the DSCP map (its report parser included)
- ``_dcqcn``          DCQCN (mlx5 ECN sysfs), the RoCE ToS and the RDMA-CM default RoCE mode
- ``_lldp_dcb``       the LLDP DCB TLVs set with ``lldptool -T`` (how lldptool prints is
                      ``parsers/_lldptool``)
- ``_kernel_cmdline`` ``kernel_cmdline``: the boot configuration read, edited, the boot loader updated
- ``_kernel_args``    the kernel-argument model ``kernel_cmdline`` plans with (split, validate, satisfied)
- ``_grub_config``    GRUB defaults files and grubby entries as text, parsed and their edits planned
- ``_pcie_acs``       PCIe ACS redirect at runtime (its ``lspci -vvv`` parser and the GDR verdict included)
- ``_kernel_module``  a kernel module loaded (``modprobe``), read as gdr_readiness reads it
- ``_node_files``     the files and systemd units the collection installs on a node
- ``_rail_addresses`` a rail interface's addresses, sysctls and source policy routing (``ip`` JSON read)
- ``_nvconfig``       a ConnectX NIC's non-volatile configuration (``mlxconfig``), next-boot aware"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type
