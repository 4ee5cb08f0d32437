#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: gdr_readiness
short_description: GPUDirect RDMA readiness of every GPU, with the reasons when it is not ready
version_added: 0.1.0
author: rdma.fabric contributors (@rdma-fabric)
extends_documentation_fragment: [rdma.fabric.attributes, rdma.fabric.attributes.read_only]
description:
  - Returns C(ansible_facts.gdr) - for every GPU, its nearest NIC (the rail of
    M(rdma.fabric.rdma_facts)), their C(nvidia-smi topo -m) relation, the NUMA node of both,
    the ACS state of each PCIe bridge on the path between them (the audit of
    M(rdma.fabric.pcie_acs)), the peer-memory state, and a verdict - GPUDirect RDMA expected
    to work, or not, with every reason.
  - Reads the host once - sysfs (honouring E(SYSFS_PATH)), C(nvidia-smi), C(lspci -D -nn -vvv),
    C($SYSFS_PATH/module/*/initstate) (C(/proc/modules) only when that sysfs has no C(module)
    directory; in a container C(/proc/modules) is the host's), C(/proc/driver/nvidia/version),
    C(/proc/sys/kernel/osrelease), C(/proc/cmdline), whether C(/run/systemd/system) exists and, when
    the NVIDIA driver is not loaded, C(modinfo nvidia). Changes nothing.
  - Peer memory is V(nvidia_peermem) or V(nv_peer_mem) when that module is loaded, else
    V(dma_buf) when the NVIDIA open kernel module runs on Linux 5.12 or later, else null.
  - Also returns the bridges whose ACS redirect the C(rdma.fabric.gpudirect) role clears
    (C(ansible_facts.gdr.acs.targets)), one list for the runtime write, the boot-time unit and
    C(pci=disable_acs_redir=).
  - A missing tool is not a failure - without C(nvidia-smi) there is no GPU to check; without
    C(lspci) the ACS state is unknown and every verdict says so.
options:
  gdr_level:
    description:
      - The farthest GPU-NIC relation at which GPUDirect RDMA counts as usable, as
        C(NCCL_NET_GDR_LEVEL) (NCCL's default is V(PXB)). A farther NIC is a reason in the verdict.
    type: str
    choices: [PIX, PXB, PHB, SYS]
    default: PXB
  proc_root:
    description:
      - Where procfs is mounted (tests and simulated hosts).
    type: path
    default: /proc
  captured:
    description:
      - Captured outputs to derive the facts from instead of reading the host (support bundles).
      - Give any subset; what is not given is unknown (for example no C(lspci) means the ACS
        state is not audited).
    type: dict
    suboptions:
      nvidia_smi_topo:
        description: Output of C(nvidia-smi topo -m).
        type: str
      nvidia_smi_gpus:
        description: Output of C(nvidia-smi --query-gpu=index,pci.bus_id,name,uuid --format=csv,noheader).
        type: str
      ibdev2netdev:
        description: Output of C(ibdev2netdev -v) (gives the NICs' PCI addresses).
        type: str
      ibstat:
        description: Output of C(ibstat).
        type: str
      lspci:
        description: Output of C(lspci -vvv) as root (with or without C(-D)/C(-nn)).
        type: str
      proc_modules:
        description: Content of C(/proc/modules).
        type: str
      nvidia_driver_version:
        description: Content of C(/proc/driver/nvidia/version).
        type: str
      kernel_release:
        description: Output of C(uname -r).
        type: str
      proc_cmdline:
        description: Content of C(/proc/cmdline).
        type: str
  bundle:
    description:
      - A support bundle written by C(playbooks/collect.yml) on the controller to derive the facts from
        instead of reading the host - the node's directory (C(COLLECT_DIR/HOST)), its C(health-raw.json),
        or its archive C(COLLECT_DIR/HOST.tar.gz). It holds what this module reads on the node (sysfs,
        C(nvidia-smi), C(lspci), the sysfs bridge chains, C(/proc) files, C(modinfo)), so the verdicts,
        the ACS paths and the peer-memory decision are the ones the node gave online.
      - Mutually exclusive with O(captured); O(proc_root) is not used.
    type: path
attributes:
  action_group:
    membership:
      - rdma.fabric.gpudirect
  platform:
    description: Linux hosts; root is needed for lspci to print the ACS lines.
notes:
  - The IOMMU mode (RV(ansible_facts.gdr.iommu)) is reported, not judged - with ACS redirect off
    on the switch ports, GPU-NIC traffic below a PCIe switch does not reach the IOMMU.
  - dma-buf detection is a necessary condition (open kernel module, Linux >= 5.12); NCCL also
    needs rdma-core and a NIC driver with dma-buf support.
seealso:
  - module: rdma.fabric.rdma_facts
  - module: rdma.fabric.pcie_acs
"""

EXAMPLES = r"""
- name: GPUDirect RDMA readiness
  rdma.fabric.gdr_readiness:
  become: true

- name: Say which GPUs are not ready and why
  ansible.builtin.debug:
    msg: "{{ ansible_facts.gdr.summary }}"
  when: not ansible_facts.gdr.ready

- name: Judge a support bundle of playbooks/collect.yml (the node's verdicts, offline)
  rdma.fabric.gdr_readiness:
    bundle: "bundles/{{ inventory_hostname }}.tar.gz"
  delegate_to: localhost

- name: Judge captured tool outputs
  rdma.fabric.gdr_readiness:
    captured:
      nvidia_smi_topo: "{{ lookup('file', 'bundle/nvidia-smi-topo.txt') }}"
      ibdev2netdev: "{{ lookup('file', 'bundle/ibdev2netdev-v.txt') }}"
      lspci: "{{ lookup('file', 'bundle/lspci-vvv.txt') }}"
      proc_modules: "{{ lookup('file', 'bundle/proc-modules.txt') }}"
  delegate_to: localhost
"""

RETURN = r"""
ansible_facts:
  description: Facts to add to ansible_facts, C(gdr) (the verdicts and what they rest on).
  returned: always
  type: complex
  contains:
    gdr:
      description: GPUDirect RDMA readiness of the host.
      returned: always
      type: complex
      contains:
        ready:
          description: True when there is at least one GPU and every GPU is expected to work.
          type: bool
          returned: always
        gpu_count:
          description: Number of GPUs checked.
          type: int
          returned: always
        not_ready:
          description: Names of the GPUs not expected to work.
          type: list
          elements: str
          returned: always
          sample: [GPU5]
        gpus:
          description:
            - Per GPU, in index order - C(gpu) (V(GPU0)), C(index), C(pci_address), C(numa_node),
              C(nic), C(nic_pci_address), C(nic_numa_node), C(relation) (V(PIX), V(PXB), V(PHB),
              V(NODE), V(SYS)), C(acs_path) (the bridges on the path, each with C(bdf), C(port_type),
              C(acs), C(ctl_word), C(redirect); null when not audited), C(acs_redirect) (any
              redirect bit set on the path, null when unknown), C(peer_memory),
              C(expected_to_work) and C(reasons).
          type: list
          elements: dict
          returned: always
          sample: [{"gpu": "GPU5", "index": 5, "nic": "mlx5_5", "relation": "PIX", "numa_node": 1,
                    "nic_numa_node": 0, "expected_to_work": false,
                    "reasons": ["NIC on NUMA node 0, GPU on NUMA node 1"]}]
        summary:
          description: One line per GPU for humans.
          type: list
          elements: str
          returned: always
        gdr_level:
          description: The O(gdr_level) the verdicts used.
          type: str
          returned: always
        peer_memory:
          description: C(method) (V(nvidia_peermem), V(nv_peer_mem), V(dma_buf) or null),
            C(modules_loaded) and C(dma_buf).
          type: dict
          returned: always
        nvidia_driver:
          description: C(loaded), C(installed) (loaded, or C(modinfo nvidia) finds it), C(version),
            C(open_kernel_module) and C(peermem_available) (C(modinfo nvidia_peermem) finds it).
          type: dict
          returned: always
        acs:
          description:
            - C(audited), C(error) (why not), C(bridges) (audit entries by BDF, as M(rdma.fabric.pcie_acs)
              returns them), C(paths) (each GPU with each of its nearest NICs - C(gpu), C(nic),
              C(gpu_pci_address), C(nic_pci_address), C(bridges) (the ACS-capable ones on the path) and
              C(redirect) (a redirect bit set, or unknown, on one of them)), C(targets) (the bridges of
              all C(paths), sorted), C(redirect_enabled) (every audited bridge with a redirect bit set)
              and C(targets_redirect_enabled) (targets with a redirect bit set or unknown).
            - A path to a farther NIC (across the root complex) is not a target - root ports above a
              shared switch keep their ACS isolation.
          type: dict
          returned: always
        iommu:
          description: C(passthrough) (true, false, or null when the command line does not say)
            and C(arguments) (the IOMMU and C(pci=) words of C(/proc/cmdline)).
          type: dict
          returned: always
        systemd:
          description: Whether systemd is the service manager (C(/run/systemd/system) is a directory,
            as C(sd_booted) tests); null for captured outputs.
          type: bool
          returned: always
        source:
          description: V(host), V(captured) or V(bundle).
          type: str
          returned: always
        errors:
          description: Tools that were present but failed (from rdma_facts and lspci).
          type: list
          elements: dict
          returned: always
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.rdma.fabric.plugins.module_utils.facts import _gdr_readiness as gdr
from ansible_collections.rdma.fabric.plugins.module_utils.common._common import ToolError, captured_option, captured_texts


def main():
    module = AnsibleModule(
        argument_spec=dict(
            gdr_level=dict(type="str", choices=list(gdr.GDR_LEVELS), default="PXB"),
            proc_root=dict(type="path", default="/proc"),
            captured=captured_option(gdr.CAPTURED_KEYS),
            bundle=dict(type="path"),
        ),
        mutually_exclusive=[["captured", "bundle"]],
        supports_check_mode=True,
    )
    captured = captured_texts(module, gdr.CAPTURED_KEYS)
    try:
        if module.params["bundle"]:
            raw = gdr.read_bundle(module.params["bundle"])
        elif captured is not None:
            raw = gdr.read_captured(module, captured)
        else:
            raw = gdr.read_host(module, module.params["proc_root"])
        facts = gdr.derive(raw, module.params["gdr_level"])
    except (ValueError, ToolError) as exc:
        module.fail_json(msg=getattr(exc, "msg", None) or str(exc))
    module.exit_json(changed=False, ansible_facts={"gdr": facts})


if __name__ == "__main__":
    main()
