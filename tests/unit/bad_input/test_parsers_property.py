# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Property-based (hypothesis): every parser, given any text, returns a result or raises
ValueError with a message; never another exception (a traceback in a module).

The texts are arbitrary strings and, to reach past the first line, lists of lines taken
from the real samples of that tool (tests/unit/fixtures/samples), mutated (a digit turned
into a letter, a line cut short, a number grown) and shuffled."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

hypothesis = pytest.importorskip("hypothesis")

from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

from ansible_collections.rdma.fabric.plugins.module_utils.common import _bdf, _guid  # noqa: E402
from ansible_collections.rdma.fabric.plugins.module_utils.resources import _dcqcn, _grub_config, _kernel_args, _mlnx_qos, _pcie_acs  # noqa: E402
from ansible_collections.rdma.fabric.plugins.module_utils.parsers import (  # noqa: E402
    _ethtool_stats, _ibstat, _ibv_devinfo, _lldptool, _rdma_link, _sm_info, _topo,
)
from ansible_collections.rdma.fabric.plugins.module_utils.facts import _gdr_readiness, _rdma_facts  # noqa: E402
from ansible_collections.rdma.fabric.plugins.module_utils.nccl import _nccl  # noqa: E402

SAMPLES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "samples")
FAST = settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))


def _lines(*names):
    out = []
    for name in names:
        path = os.path.join(SAMPLES, name)
        if os.path.exists(path):
            with open(path) as handle:
                out.extend(line for line in handle.read().splitlines()
                           if line.strip() and not line.startswith(("===", "---", "kind:", "source:", "caveats:")))
    return out or ["x"]


def _mutate(line, how):
    if how == 0:
        return line
    if how == 1:
        return "".join("x" if c.isdigit() else c for c in line)
    if how == 2:
        return line[:len(line) // 2]
    if how == 3:
        return line.replace("0", "00000000000000000", 1)
    if how == 4:
        return line.replace(":", "", 1)
    return line + " " + line


def texts(*sample_files):
    vocabulary = _lines(*sample_files)
    line = st.one_of(
        st.builds(_mutate, st.sampled_from(vocabulary), st.integers(0, 5)),
        st.text(max_size=40),
    )
    return st.one_of(st.text(max_size=200), st.lists(line, max_size=40).map("\n".join))


def _never_raises_other(function, text):
    try:
        function(text)
    except ValueError as exc:
        assert str(exc), "a ValueError without a message"


def _rdma_captured(key):
    def parse(text):
        return _rdma_facts.read_captured({key: text}, _rdma_facts.expand_subsets(["all"]))
    return parse


def _gdr_captured(key):
    def parse(text):
        return _gdr_readiness.derive(_gdr_readiness.read_captured(None, {key: text}))
    return parse


PARSERS = [
    ("lspci", _pcie_acs.parse_lspci, ("lspci_pcie.txt",)),
    ("sm_info", _sm_info.parse, ("sminfo.txt", "saquery.txt")),
    ("ibstat", _ibstat.parse, ("ibstat.txt",)),
    ("topo", _topo.parse_topo, ("nvidia_smi_topo.txt",)),
    ("mlnx_qos", _mlnx_qos.parse_report, ("mlnx_qos.txt",)),
    ("lldp_tlvs", _lldptool.parse_tlvs, ("lldptool.txt",)),
    ("lldp_app", _lldptool.parse_app_config, ("lldptool.txt",)),
    ("dcqcn", _dcqcn.parse_running_config, ("mlx5_sysfs_dcqcn.txt",)),
    ("guid", _guid.normalize_guid, ("ibstat.txt",)),
    ("bdf", _bdf.parse_bdf, ("lspci_pcie.txt",)),
    ("gpu_query", _rdma_facts.parse_gpu_query, ("nvidia_smi_topo.txt",)),
    ("rdma_ibstat", _rdma_captured("ibstat"), ("ibstat.txt",)),
    ("rdma_show_gids", _rdma_captured("show_gids"), ("show_gids.txt",)),
    ("rdma_ibdev2netdev", _rdma_captured("ibdev2netdev"), ("ibdev2netdev.txt",)),
    ("rdma_topo", _rdma_captured("nvidia_smi_topo"), ("nvidia_smi_topo.txt",)),
    ("proc_modules", _gdr_readiness.parse_proc_modules, ()),
    ("driver_version", _gdr_readiness.parse_driver_version, ()),
    ("kernel_version", _gdr_readiness.kernel_version, ()),
    ("iommu_state", _gdr_readiness.iommu_state, ()),
    ("gdr_lspci", _gdr_captured("lspci"), ("lspci_pcie.txt",)),
    ("gdr_proc_modules", _gdr_captured("proc_modules"), ()),
    ("cmdline_split", _kernel_args.split_kernel_cmdline, ()),
    ("grub_file", lambda text: _grub_config.parse_grub_assignments(text, "/etc/default/grub"), ()),
    ("grubby_info", _grub_config.parse_grubby_info, ()),
    ("nccl_conf", _nccl.parse_conf, ("nccl.txt",)),
    ("ethtool_stats", _ethtool_stats.parse, ("ethtool_S_mlx5.txt",)),
    ("ibv_devinfo", lambda text: [_ibv_devinfo.gid_table(p) for d in _ibv_devinfo.parse(text).values()
                                  for p in d["ports"].values()], ("ibv_devinfo.txt",)),
    ("lspci_link", _pcie_acs.parse_lspci, ("lspci_pcie.txt",)),
    ("rdma_link", _rdma_link.parse, ("rdma_link.txt",)),
    ("nccl_log", _nccl.parse_log, ("nccl.txt",)),
]


@pytest.mark.parametrize("function, sample_files", [p[1:] for p in PARSERS], ids=[p[0] for p in PARSERS])
def test_parser_gives_a_result_or_a_clear_error(function, sample_files):
    @FAST
    @given(texts(*sample_files))
    def check(text):
        _never_raises_other(function, text)
    check()


@FAST
@given(st.lists(st.fixed_dictionaries({"name": st.text(max_size=12), "value": st.one_of(st.none(), st.text(max_size=12)),
                                       "state": st.sampled_from(["present", "absent"])}), max_size=4))
def test_kernel_arguments_validate_or_refuse(items):
    _never_raises_other(_kernel_args.validate_arguments, items)


@FAST
@given(st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=8), st.integers(), st.booleans(),
                 st.none()))
def test_numbers_are_checked_or_refused(value):
    from ansible_collections.rdma.fabric.plugins.module_utils.resources import _qos_validate as V
    _never_raises_other(lambda v: V.int_in_range("f", v, 0, 63), value)
    _never_raises_other(lambda v: _mlnx_qos.normalize_want({"ratelimit": [v] * 8}), value)
