# -*- coding: utf-8 -*-
"""Node text holding control characters (issue 40, medium 4): one node's description with an ESC
sequence, a NUL, a vertical tab or a lone surrogate must not make the fleet's JUnit invalid (or
unwritable), act on the terminal that prints the table, or break the Prometheus textfile; JSON
stays valid. Tested at the writers (module_utils/reports/_report.py)."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import re
import xml.etree.ElementTree as ET

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.reports import _report as R

HOSTILE = ["mlx5_0\x1b[2J\x1b]0;pwned\x07", "node\x00desc", "tab\x0bvt\x0cff", "lone\ud800surrogate",
           "c1\x9bcsi", "bidi\u202egnp.exe", "del\x7f"]


def _records(text):
    return [{"host": "gpu-%02d" % i, "area": "roce_qos", "object": text, "setting": "pfc " + text,
             "expected": text, "actual": {"value": text}} for i in range(2)] + [
        {"host": "gpu-%s" % text, "area": "nccl_env\x1b", "object": "o", "setting": "s", "expected": 1, "actual": 2}]


@pytest.mark.parametrize("text", HOSTILE)
def test_junit_stays_valid_xml_utf8(text):
    records = _records(text)
    xml = R.junit_xml(records, [("gpu-00", "roce_qos")])
    data = xml.encode("utf-8")                         # a lone surrogate would raise here
    root = ET.fromstring(data)                         # and a control character here
    assert root.get("failures") == "3"
    assert not re.search(u"[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff]", xml)
    # what was there stays readable: the escape says which character it was
    messages = [f.get("message") for f in root.iter("failure")]
    assert any("\\x" in m or "\\u" in m or text in m for m in messages)


@pytest.mark.parametrize("text", HOSTILE)
def test_the_table_prints_no_terminal_control(text):
    table = R.table(_records(text))
    assert not re.search(u"[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]", table)
    table.encode("utf-8")
    assert "\\x1b" in R.table(_records("\x1b[31mred"))
    assert R.cell("a\x1b[31mb") == "a\\x1b[31mb" and R.cell("a\ud800") == "a\\ud800"
    # line breaks are still folded, plain text is untouched
    assert R.cell("one\ntwo") == "one; two" and R.cell("node1 mlx5_0 é") == "node1 mlx5_0 é"


def _parse_labels(line):
    """The exposition format's label grammar: only \\\\, \\" and \\n escapes, no raw line break."""
    match = re.match(r'^[a-z_]+\{(.*)\} \S+$', line)
    if match:
        assert re.fullmatch(r'(?:[a-z_]+="(?:[^"\\\n]|\\[\\"n])*",?)*', match.group(1)), line


@pytest.mark.parametrize("text", HOSTILE)
def test_prometheus_label_values_are_escaped(text):
    out = R.prometheus(_records(text), [("gpu-00", "roce_qos")], [], 0.0, {"inventory": text, "limit": "all"})
    out.encode("utf-8")
    for line in out.splitlines():
        if line.startswith("#"):
            continue
        assert not re.search(u"[\x00-\x1f\x7f-\x9f\ud800-\udfff]", line)
        _parse_labels(line)
    assert R.label_value('a"b\\c\nd\x1be') == 'a\\"b\\\\c\\nd\\\\x1be'


@pytest.mark.parametrize("text", HOSTILE)
def test_json_stays_valid_and_ascii(text):
    out = R.to_json(_records(text), {"summary": text})
    out.encode("ascii")
    assert json.loads(out)["meta"]["summary"] == text


def test_the_xml_forbidden_characters_are_the_complement_of_xml_1_0_char():
    """W3C XML 1.0 section 2.2: Char ::= #x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] |
    [#x10000-#x10FFFF]; the JUnit writer escapes every other code point, and only those."""
    from ansible_collections.rdma.fabric.plugins.module_utils.reports import _report

    def char(code):
        return code in (0x9, 0xA, 0xD) or 0x20 <= code <= 0xD7FF or 0xE000 <= code <= 0xFFFD or 0x10000 <= code <= 0x10FFFF
    every = u"".join(chr(code) for code in range(0x110000))
    forbidden = set(ord(c) for c in _report._XML_FORBIDDEN.findall(every))
    assert forbidden == set(code for code in range(0x110000) if not char(code))
    assert len(forbidden) == 2079
