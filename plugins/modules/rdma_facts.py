#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: rdma_facts
short_description: Gather RDMA devices, GID tables, PCIe placement and GPU rails as facts
version_added: 0.1.0
author: rdma.fabric contributors (@rdma-fabric)
extends_documentation_fragment: [rdma.fabric.attributes, rdma.fabric.attributes.read_only]
description:
  - Returns everything other rdma.fabric roles need about the RDMA side of a GPU node under
    C(ansible_facts.rdma), in one call.
  - Reads sysfs first (C(/sys/class/infiniband), C(/sys/bus/pci/devices)), honouring the
    E(SYSFS_PATH) environment variable as libibverbs does. Runs C(nvidia-smi topo -m) and
    C(nvidia-smi --query-gpu) only for what sysfs lacks (GPU indexes and the GPU to NIC
    relation matrix).
  - No RDMA device and no GPU (no C(nvidia-smi)) are normal, empty answers. A tool that is
    present but fails is reported in C(errors) with its stderr; the module does not fail.
  - With O(captured) the facts are derived from captured tool outputs only (support bundles,
    tests); the host is not read at all.
  - With O(bundle) the facts are derived from a support bundle of C(playbooks/collect.yml) - the
    node's own sysfs and C(nvidia-smi) read, kept in the bundle, gives the facts the node gave online
    (for the same O(gather_subset)); the host is not read at all.
  - Device lists are sorted naturally (C(mlx5_2) before C(mlx5_10)), unlike sysfs and
    C(show_gids) which list them lexicographically; device names are kept as they are.
  - Each GPU's rail is its nearest NIC (C(PIX) < C(PXB) < C(PHB) < C(NODE) < C(SYS)); when
    several NICs tie, GPUs in index order take the least used one, then the first in matrix
    order. NICs nearest to no GPU (storage, management) are C(extra), not rails.
options:
  gather_subset:
    description:
      - What to gather. V(devices) (devices, ports, netdevs, GUIDs, PCI address and NUMA
        node) is always gathered.
      - V(gids) adds the GID table of each port; V(pci) adds the PCIe link capability and
        status of NICs and GPUs; V(gpus) runs C(nvidia-smi) and derives the GPU list, the
        relation matrix and the rails.
      - V(counters) adds each port's C(counters/) and C(hw_counters/) values as
        C(counters) (name to integer). Not part of V(all).
      - The live QoS of a RoCE port is not a fact here; read it with the QoS modules
        (M(rdma.fabric.mlnx_qos), M(rdma.fabric.dcqcn)) and their gathered state.
    type: list
    elements: str
    choices: [all, devices, gids, pci, gpus, counters]
    default: [all]
  captured:
    description:
      - Captured tool outputs to derive facts from instead of reading the host.
      - Give any subset; facts only hold what the given texts contain (for example no PCIe
        link data, which only sysfs has).
    type: dict
    suboptions:
      nvidia_smi_topo:
        description: Output of C(nvidia-smi topo -m) (TABs or expanded spaces, ANSI escapes allowed).
        type: str
      nvidia_smi_gpus:
        description: Output of C(nvidia-smi --query-gpu=index,pci.bus_id,name,uuid --format=csv,noheader).
        type: str
      ibstat:
        description: Output of C(ibstat) (devices, ports, state, rate, link layer, firmware, GUIDs).
        type: str
      show_gids:
        description: Output of C(show_gids) (GID tables with type, netdev and IPv4 address).
        type: str
      ibdev2netdev:
        description: Output of C(ibdev2netdev) or C(ibdev2netdev -v) (netdevs, PCI addresses).
        type: str
  bundle:
    description:
      - A support bundle written by C(playbooks/collect.yml) on the controller to derive the facts
        from instead of reading the host - the node's directory (C(COLLECT_DIR/HOST)), its
        C(health-raw.json), or its archive C(COLLECT_DIR/HOST.tar.gz).
      - It holds everything every subset reads (also V(counters), as the node read them when collected).
      - Mutually exclusive with O(captured).
    type: path
attributes:
  action_group:
    membership:
      - rdma.fabric.facts
  platform:
    description: Linux hosts with sysfs.
notes:
  - Port GUIDs are the interface ID of GID 0 (sysfs has no port GUID attribute), as C(ibstat) shows them.
  - GPU indexes follow C(nvidia-smi) (PCI bus order). When C(nvidia-smi --query-gpu) fails, GPU PCI
    addresses come from NVIDIA display and 3D controllers in sysfs, in bus order.
seealso:
  - name: NCCL environment variables
    description: NCCL_IB_HCA, NCCL_IB_GID_INDEX and NCCL_NET_GDR_LEVEL semantics.
    link: https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html
"""

EXAMPLES = r"""
- name: Gather RDMA facts
  rdma.fabric.rdma_facts:

- name: Only devices and GID tables (no nvidia-smi)
  rdma.fabric.rdma_facts:
    gather_subset: [devices, gids]

- name: Derive facts from a support bundle
  rdma.fabric.rdma_facts:
    captured:
      nvidia_smi_topo: "{{ lookup('file', 'bundle/nvidia-smi-topo.txt') }}"
      show_gids: "{{ lookup('file', 'bundle/show_gids.txt') }}"
      ibstat: "{{ lookup('file', 'bundle/ibstat.txt') }}"
  delegate_to: localhost

- name: The facts of a support bundle (playbooks/collect.yml), on the controller
  rdma.fabric.rdma_facts:
    bundle: "bundles/{{ inventory_hostname }}.tar.gz"
  delegate_to: localhost

- name: GPU0's rail
  ansible.builtin.debug:
    msg: "{{ ansible_facts.rdma.rails[0].device }} port {{ ansible_facts.rdma.rails[0].port }}"
"""

RETURN = r"""
ansible_facts:
  description: Facts to add to ansible_facts, C(rdma).
  returned: always
  type: complex
  contains:
    rdma:
      description: RDMA facts of the host.
      returned: always
      type: complex
      contains:
        source:
          description: V(host) when read from the host, V(captured) when derived from O(captured),
            V(bundle) when derived from O(bundle).
          type: str
          returned: always
          sample: host
        gather_subset:
          description: Subsets actually gathered.
          type: list
          elements: str
          returned: always
          sample: [all, devices, gids, pci, gpus]
        device_names:
          description: RDMA device names, naturally sorted.
          type: list
          elements: str
          returned: always
          sample: [mlx5_0, mlx5_1, mlx5_2, mlx5_10]
        devices:
          description:
            - RDMA devices by name, in natural order. Each has C(name), C(node_guid),
              C(sys_image_guid) (C(0x) + 16 hex digits), C(fw_ver), C(hca_type), C(board_id),
              C(node_type), C(pci_address), C(numa_node), C(pcie), C(netdevs), C(role)
              (V(compute), V(extra), or null without GPU topology) and C(ports).
            - C(pcie) (subset V(pci)) has C(current_link_speed), C(max_link_speed) (GT/s),
              C(current_link_width), C(max_link_width), the capability of the port above it
              C(upstream_max_link_speed) and C(upstream_max_link_width) (null when the
              function sits on a root bus) and C(downgraded), true when the link runs below
              what both ends can do (a Gen4 NIC in a Gen3 slot at 8 GT/s is not downgraded).
            - Each port has C(port), C(state) (V(ACTIVE), V(DOWN), V(INIT), V(ARMED)),
              C(phys_state) (V(LinkUp), V(Disabled)...), C(rate), C(rate_gbps), C(link_layer)
              (V(InfiniBand) or V(Ethernet)), C(port_guid), C(lid), C(sm_lid), C(netdev),
              C(ipv4) (addresses of IPv4-mapped GIDs), C(gids) and, with subset V(counters),
              C(counters).
            - Each GID has C(index), C(gid) (8 groups of 4 hex digits), C(type) (V(IB),
              V(RoCE v1), V(RoCE v2)), C(netdev) and C(ipv4).
          type: dict
          returned: always
        gpus:
          description:
            - GPUs in index order, each with C(index), C(name) (V(GPU0)), C(model), C(uuid),
              C(pci_address), C(numa_node), C(gpu_numa_id), C(cpu_affinity), C(pcie),
              C(nearest_nics), C(nearest_relation) and C(rail) (the device chosen).
          type: list
          elements: dict
          returned: always
        topology:
          description:
            - The C(nvidia-smi topo -m) matrix, or null without it. C(nics) lists the NIC
              columns as device names, C(nic_legend) maps V(NIC0) to its device on newer
              drivers, C(matrix) maps row to column to legend code (V(X), V(SYS), V(NODE),
              V(PHB), V(PXB), V(PIX), V(NV12)...) with rows and columns named V(GPU#) or by device.
          type: dict
          returned: always
        rails:
          description:
            - One entry per GPU with a NIC, in GPU order, each with C(gpu), C(gpu_index),
              C(device), C(port), C(port_count), C(netdev), C(link_layer), C(state),
              C(numa_node), C(relation) and C(ipv4_gids) (the GIDs of the port that carry an
              IPv4 address).
          type: list
          elements: dict
          returned: always
        compute_nics:
          description: Devices nearest to at least one GPU, naturally sorted.
          type: list
          elements: str
          returned: always
        extra_nics:
          description: Devices nearest to no GPU (storage, management), naturally sorted.
          type: list
          elements: str
          returned: always
        sysfs_root:
          description: The sysfs the facts were read from (C($SYSFS_PATH), default C(/sys)); for O(bundle) the
            node's, as the bundle records it; absent for captured text.
          type: str
          returned: when read from the host or a bundle
        errors:
          description: Tools that were present but failed, each with C(tool), C(cmd), C(rc), C(stderr) and C(msg).
          type: list
          elements: dict
          returned: always
          sample: [{"tool": "nvidia-smi", "cmd": ["nvidia-smi", "topo", "-m"], "rc": 9, "stderr": "No devices were found",
                    "msg": "nvidia-smi topo -m failed (rc=9): No devices were found"}]
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.rdma.fabric.plugins.module_utils.common._common import captured_option, captured_texts
from ansible_collections.rdma.fabric.plugins.module_utils.facts._rdma_facts import CAPTURED_KEYS, SUBSETS, gather


def main():
    module = AnsibleModule(
        argument_spec=dict(
            gather_subset=dict(type="list", elements="str", choices=list(SUBSETS), default=["all"]),
            captured=captured_option(CAPTURED_KEYS),
            bundle=dict(type="path"),
        ),
        mutually_exclusive=[["captured", "bundle"]],
        supports_check_mode=True,
    )
    captured = captured_texts(module, CAPTURED_KEYS)
    try:
        facts = gather(module, module.params["gather_subset"], captured, module.params["bundle"])
    except ValueError as exc:
        module.fail_json(msg=str(exc))
    module.exit_json(changed=False, ansible_facts={"rdma": facts})


if __name__ == "__main__":
    main()
