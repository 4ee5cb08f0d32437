"""Load the real captured tool outputs in tests/unit/fixtures/samples.

Each file holds blocks::

    === SAMPLE <ID>
    kind: ...
    source: ...
    --- BEGIN RAW
    <exact bytes>
    --- END RAW
"""
import os
import re

SAMPLES_DIR = os.path.join(os.path.dirname(__file__), "fixtures", "samples")
_BLOCK = re.compile(
    r"^=== SAMPLE (?P<id>\S+)\n(?P<meta>.*?)^--- BEGIN RAW\n(?P<raw>.*?)^--- END RAW$",
    re.S | re.M,
)


class Sample(object):
    def __init__(self, sample_id, meta, raw):
        self.id = sample_id
        self.meta = meta
        self.raw = raw

    def section(self, marker):
        """Text after a ``[stdout]``/``[stderr]`` annotation line, up to the next annotation."""
        out, on = [], False
        for line in self.raw.splitlines(True):
            if re.match(r"^\[(stdout|stderr|rc=\d+)\]", line):
                on = line.startswith("[%s]" % marker)
                continue
            if on:
                out.append(line)
        return "".join(out)


def load(filename):
    """Return {sample_id: Sample} for one samples file (e.g. ``mlnx_qos.txt``)."""
    with open(os.path.join(SAMPLES_DIR, filename)) as handle:
        text = handle.read()
    return {
        m.group("id"): Sample(m.group("id"), m.group("meta"), m.group("raw"))
        for m in _BLOCK.finditer(text)
    }
