# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The corpus test (issue #29): every real output in tests/unit/fixtures/samples is read by the
collection's own parser, and what the parser made of it is pinned.

* ``tests/unit/corpus/<stem>.py`` says how the samples of ``fixtures/samples/<stem>.txt`` are
  read: ``read(sample)`` (-> JSON-able, or ValueError to refuse), ``TOOL``, ``PARSER``,
  ``VERSIONS``, ``EXPECT_REFUSED`` ({id: why}) and ``SKIP`` ({id: why}, a block that is not
  tool output).
* ``tests/unit/fixtures/corpus/<stem>/<ID>.json`` pins the result: ``{"result": ...}`` or
  ``{"refused": "<message>"}``. A parser change that reads a real output differently fails here.
* A refusal is allowed only where the adapter lists it in EXPECT_REFUSED (an error output, a
  paste mangled by Markdown): a parser must never refuse a real output silently.

``RDMA_FABRIC_CORPUS_PIN=1`` writes the pins that are missing (``=all`` rewrites every pin, for
a deliberate change); read every pin written: it is a claim about a real output.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import importlib.util
import json
import os

import pytest

from ansible_collections.rdma.fabric.tests.unit.samples import SAMPLES_DIR, load

HERE = os.path.dirname(os.path.abspath(__file__))
ADAPTERS = os.path.join(HERE, "corpus")
PINS = os.path.join(HERE, "fixtures", "corpus")
PIN = os.environ.get("RDMA_FABRIC_CORPUS_PIN", "")

# samples files that hold no tool output read by a parser, and why
NOT_READ = {
    "mlx5_sysfs_dcqcn.txt": "a sysfs/debugfs layout reference, no samples",
    "ibnetdiscover.txt": ("ibsim runs of several infiniband-diags tools, a reference: the failover drill reads "
                          "'ibnetdiscover -p' with a pattern (playbooks/opensm_failover_drill.yml) and fails when no line matches"),
    "opensm.txt": "OpenSM config sections, stdout and log lines: the collection writes opensm.conf whole and parses none of them",
}


def _adapter(stem):
    path = os.path.join(ADAPTERS, stem + ".py")
    spec = importlib.util.spec_from_file_location("rdma_fabric_corpus_" + stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _stems():
    return sorted(name[:-4] for name in os.listdir(SAMPLES_DIR) if name.endswith(".txt") and name not in NOT_READ)


def _adapted():
    return sorted(name[:-3] for name in os.listdir(ADAPTERS) if name.endswith(".py")) if os.path.isdir(ADAPTERS) else []


def _cases():
    out = []
    for stem in _adapted():
        for sample_id in sorted(load(stem + ".txt")):
            out.append(pytest.param(stem, sample_id, id="%s/%s" % (stem, sample_id)))
    return out


def _canonical(value):
    """JSON round trip: tuples become lists, keys strings, so a pin compares like the result."""
    return json.loads(json.dumps(value, sort_keys=True, default=str))


def _outcome(adapter, sample):
    try:
        return {"result": _canonical(adapter.read(sample))}
    except ValueError as exc:
        return {"refused": str(exc)}


@pytest.mark.parametrize("stem,sample_id", _cases())
def test_sample_reads_as_pinned(stem, sample_id):
    adapter = _adapter(stem)
    if sample_id in getattr(adapter, "SKIP", {}):
        assert adapter.SKIP[sample_id], "a skipped sample says why"
        return
    sample = load(stem + ".txt")[sample_id]
    outcome = _outcome(adapter, sample)
    refused_ok = getattr(adapter, "EXPECT_REFUSED", {})
    if "refused" in outcome:
        assert sample_id in refused_ok, "%s refuses the real sample %s: %s" % (adapter.PARSER, sample_id, outcome["refused"])
    else:
        assert sample_id not in refused_ok, "%s listed in EXPECT_REFUSED but %s reads it" % (sample_id, adapter.PARSER)
    path = os.path.join(PINS, stem, sample_id + ".json")
    if PIN == "all" or (PIN and not os.path.exists(path)):
        if not os.path.isdir(os.path.dirname(path)):
            os.makedirs(os.path.dirname(path))
        with open(path, "w") as handle:
            handle.write(json.dumps(outcome, sort_keys=True, indent=1) + "\n")
    assert os.path.exists(path), "no pin for %s (RDMA_FABRIC_CORPUS_PIN=1 writes it; then read it)" % path
    with open(path) as handle:
        assert outcome == json.load(handle)


def test_every_samples_file_has_an_adapter():
    missing = sorted(set(_stems()) - set(_adapted()))
    assert not missing, "samples files no parser reads in the corpus test: %s" % missing


@pytest.mark.parametrize("stem", _adapted())
def test_adapter_names_its_tool_and_no_stale_entries(stem):
    adapter = _adapter(stem)
    assert adapter.TOOL and adapter.PARSER and adapter.VERSIONS
    ids = set(load(stem + ".txt"))
    assert ids, "%s.txt holds no samples" % stem
    for table in ("EXPECT_REFUSED", "SKIP"):
        stale = sorted(set(getattr(adapter, table, {})) - ids)
        assert not stale, "%s.%s names samples that do not exist: %s" % (stem, table, stale)
    pinned = set(name[:-5] for name in os.listdir(os.path.join(PINS, stem))) if os.path.isdir(os.path.join(PINS, stem)) else set()
    stale = sorted(pinned - ids)
    assert not stale, "pins without a sample in %s.txt: %s" % (stem, stale)


def _kind(sample):
    for line in sample.meta.splitlines():
        if line.startswith("kind:"):
            return line.split(":", 1)[1].strip()
    return ""


def corpus_table():
    """The README's table: per tool, how many samples its parser is tested on, how many of
    them real (``kind: real-...`` or ``doc``), and the versions they span."""
    rows = {}
    for stem in _adapted():
        adapter = _adapter(stem)
        samples = [s for i, s in load(stem + ".txt").items() if i not in getattr(adapter, "SKIP", {})]
        row = rows.setdefault(adapter.TOOL, {"all": 0, "real": 0, "versions": [], "parsers": []})
        row["all"] += len(samples)
        row["real"] += sum(1 for s in samples if _kind(s).startswith(("real", "doc")))
        for field, value in (("versions", adapter.VERSIONS), ("parsers", adapter.PARSER)):
            if value not in row[field]:
                row[field].append(value)
    lines = ["| tool | samples | real | versions | parser |", "|---|---:|---:|---|---|"]
    for tool in sorted(rows):
        row = rows[tool]
        parsers = ", ".join("`%s`" % p for p in row["parsers"])
        lines.append("| `%s` | %d | %d | %s | %s |" % (tool, row["all"], row["real"], "; ".join(row["versions"]), parsers))
    return "\n".join(lines)


def test_readme_lists_the_corpus():
    """docs/corpus.md holds the table between ``<!-- corpus -->`` markers, as corpus_table() makes
    it; when it is out of date the failure prints the table to paste."""
    with open(os.path.join(HERE, "..", "..", "docs", "corpus.md")) as handle:
        text = handle.read()
    assert "<!-- corpus -->" in text and "<!-- /corpus -->" in text, "docs/corpus.md has no corpus table"
    block = text.split("<!-- corpus -->", 1)[1].split("<!-- /corpus -->", 1)[0].strip()
    table = corpus_table()
    assert block == table, "docs/corpus.md: the corpus table is out of date; paste this between the markers:\n" + table
