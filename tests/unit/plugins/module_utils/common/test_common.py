# -*- coding: utf-8 -*-
"""_common: captured_option / captured_texts (the ``captured`` option of rdma_facts and gdr_readiness), read_text."""
from __future__ import absolute_import, division, print_function

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.facts import _gdr_readiness, _rdma_facts
from ansible_collections.rdma.fabric.plugins.module_utils.common._common import captured_option, captured_texts, read_text


class Failed(Exception):
    pass


class Module(object):
    def __init__(self, captured):
        self.params = {"captured": captured}

    def fail_json(self, **result):
        raise Failed(result["msg"])


def test_option_is_one_str_per_key():
    assert captured_option(("ibstat", "show_gids")) == {"type": "dict", "options": {
        "ibstat": {"type": "str"}, "show_gids": {"type": "str"}}}


def test_texts_drop_empty_and_none_stays_none():
    assert captured_texts(Module(None), _rdma_facts.CAPTURED_KEYS) is None
    assert captured_texts(Module({"ibstat": "CA 'mlx5_0'", "show_gids": "", "ibdev2netdev": None}),
                          _rdma_facts.CAPTURED_KEYS) == {"ibstat": "CA 'mlx5_0'"}


@pytest.mark.parametrize("keys, listed", [
    (_rdma_facts.CAPTURED_KEYS, "nvidia_smi_topo, nvidia_smi_gpus, ibstat, show_gids, ibdev2netdev"),
    (_gdr_readiness.CAPTURED_KEYS, "nvidia_smi_topo, nvidia_smi_gpus, ibdev2netdev, ibstat, lspci, proc_modules, "
                                   "nvidia_driver_version, kernel_release, proc_cmdline"),
])
def test_all_empty_fails_naming_the_keys(keys, listed):
    with pytest.raises(Failed) as err:
        captured_texts(Module(dict((key, "") for key in keys)), keys)
    assert str(err.value) == "captured: give at least one of " + listed


def test_read_text_or_none(tmp_path):
    path = tmp_path / "boot_id"
    path.write_text("abc\n")
    assert read_text(str(path)) == "abc\n"
    assert read_text(str(tmp_path / "missing")) is None
    assert read_text(str(tmp_path)) is None     # a directory
