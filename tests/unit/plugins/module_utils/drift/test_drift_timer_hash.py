# -*- coding: utf-8 -*-
"""The node's drift timer publishes each area's spec version in a 0644 textfile; the opensm spec
holds ``sm_key`` (and the other keys): a plain hash of it is an offline guessing oracle for a weak
key (issue 40, low). The published version is the hash of the spec with the secrets removed."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

from ansible_collections.rdma.fabric.plugins.module_utils.areas import _spec
from ansible_collections.rdma.fabric.plugins.module_utils.drift import _drift_timer


def _opensm_spec(key):
    conf = "guid 0x0000000000100001\nsm_priority 14\nsm_key %s\nsa_key\t0x00000000000000aa\n" % key
    return {"settings": {"sm_key": key, "sm_priority": 14}, "conf": conf}


def _published(tmp_path, spec):
    with open(os.path.join(str(tmp_path), "opensm.json"), "w") as handle:
        handle.write(_spec.content("opensm", spec))
    specs, versions, errors = _drift_timer.read_specs(str(tmp_path))
    assert errors == {} and specs == {"opensm": spec}
    text = _drift_timer.prometheus("sm-01", [], {}, versions, ["opensm"], 0.0)
    return re.search(r'spec_version="([0-9a-f]{16})"', text).group(1), text


def test_the_published_spec_version_is_no_oracle_for_the_keys(tmp_path):
    weak = _opensm_spec("0x0000000000000001")
    published, text = _published(tmp_path, weak)
    # not the hash of the spec with its key (what one would guess keys against) ...
    assert published != _spec.version(weak)
    for guess in ("0x0000000000000001", "0x0000000000000002", "0x00000000c0ffee01"):
        assert published != _spec.version(_opensm_spec(guess))
    # ... but the same whatever the key is: nothing in it depends on a secret
    other = tmp_path / "other"
    other.mkdir()
    assert _published(other, _opensm_spec("0x00000000c0ffee01"))[0] == published
    assert "0x0000000000000001" not in text


def test_a_spec_without_secrets_publishes_its_own_version(tmp_path):
    spec = {"settings": {"trust": "dscp", "pfc": [3]}}
    with open(os.path.join(str(tmp_path), "roce_qos.json"), "w") as handle:
        handle.write(_spec.content("roce_qos", spec))
    _specs, versions, _errors = _drift_timer.read_specs(str(tmp_path))
    assert versions["roce_qos"][0] == _spec.version(spec)
