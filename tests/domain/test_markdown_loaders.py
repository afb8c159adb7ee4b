"""Front matter is parsed by libyaml when it can (memory.domain.markdown._load): the fast path must never change what
a file means, nor the error a malformed file reports."""

from __future__ import annotations

import math
import random
from pathlib import Path

import pytest
import yaml

from memory.domain import markdown
from memory.domain.markdown import _Dumper, _dump_with, _FastDumper, _load, parse
from memory.errors import MalformedNodeFile
from tests.domain.test_markdown_emitters import _front_matter

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
needs_libyaml = pytest.mark.skipif(not hasattr(yaml, "CSafeLoader"), reason="PyYAML without libyaml has one parser")


def _same(a, b) -> bool:
    """Equal values, a NaN equal to a NaN."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


@needs_libyaml
def test_both_parsers_read_the_same_values_from_what_either_emitter_writes():
    rng = random.Random(20261127)
    for _ in range(500):
        data = _front_matter(rng)
        for dumper in (_FastDumper, _Dumper):
            text = _dump_with(data, dumper)
            assert _same(yaml.load(text, Loader=yaml.CSafeLoader), yaml.safe_load(text)), text
            assert _same(_load(text), yaml.safe_load(text)), text


@pytest.mark.parametrize("path", sorted(GOLDEN.glob("*.md")), ids=lambda p: p.name)
def test_golden_files_parse_to_the_same_node_with_the_python_parser_alone(path, monkeypatch):
    text = path.read_text(encoding="utf-8")
    fast = parse(text)
    monkeypatch.setattr(markdown, "_CSafeLoader", None)
    assert fast == parse(text)


@pytest.mark.parametrize("front", [
    "id: [unclosed\n",
    "title: 'open quote\n",
    "a: b\n  c: d\n",
    "key: value\n\tindented: tab\n",
    "title: \x07bell\n",
    "title: ok\nid: x\n- list item\n",
    "title: &a [*a]\n",
    "x: !!python/object:os.system ls\n",
])
def test_a_malformed_front_matter_reports_the_error_the_python_parser_reports(front, monkeypatch):
    text = f"---\n{front}---\nbody\n"
    with pytest.raises(MalformedNodeFile) as fast:
        parse(text, source="m.md")
    monkeypatch.setattr(markdown, "_CSafeLoader", None)
    with pytest.raises(MalformedNodeFile) as slow:
        parse(text, source="m.md")
    assert str(fast.value) == str(slow.value)
