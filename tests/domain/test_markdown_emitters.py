"""Front matter goes through libyaml's emitter when it writes what PyYAML's pure-Python emitter would, byte for byte
(memory.domain.markdown._dump): the fast path must never change a file's bytes."""

from __future__ import annotations

import random
import string
from datetime import UTC, date, datetime
from pathlib import Path

import pytest
import yaml

from memory.domain import markdown
from memory.domain.markdown import _Dumper, _dump, _dump_with, _FastDumper, parse, render

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
TRICKY = ["yes", "no", "on", "off", "null", "~", "-", "---", "...", "1e3", "0x1F", "0o17", "1_000", ".inf", "-.nan",
          "2026-01-01", "12:30", "true", "False", " lead", "trail ", "a: b", "# c", "- d", "? e", "@f", "`g", "!h",
          "&i", "*j", "|k", ">l", "%m", "'n'", '"o"', "p\\q", "\\U0001F642", "", " ", "\t", "\n", "\r\n", "x" * 300,
          "é", "中", "\u2028", "\x85", "\ufeff", "\u00a0", "\x7f", "\x00", "\x1b", "\ud7ff", "\ue000", "\ufffd", "\ufffe",
          "[", "]", "{", "}", ",", "=", "<<"]


def _text(rng: random.Random) -> str:
    return "".join(rng.choice(TRICKY) if rng.random() < 0.5 else rng.choice(string.printable)
                   for _ in range(rng.randint(0, 6)))


def _front_matter(rng: random.Random) -> dict:
    return {"id": _text(rng), "title": _text(rng), "tags": [_text(rng), _text(rng)], "space": _text(rng),
            "confidence": rng.choice([0.1, 1e-7, 1e20, float("inf"), float("nan"), -0.0, 3.0]),
            "access_count": rng.choice([0, -1, 2**70]), "created": datetime(2026, 1, 2, 3, 4, 5, 6, tzinfo=UTC),
            "day": date(2026, 1, 2), "extra_key": {"nested": [_text(rng), {"b": _text(rng)}], "empty": [], "m": {}},
            "connections": [{"target": _text(rng), "weight": 0.5, "reason": _text(rng)}], "valid_until": None}


@pytest.mark.skipif(not hasattr(yaml, "CSafeDumper"), reason="PyYAML without libyaml has only the one emitter")
def test_both_emitters_write_the_same_bytes_for_plain_keys_and_characters_of_the_bmp():
    rng = random.Random(20261127)
    compared = 0
    for _ in range(3000):
        data = _front_matter(rng)
        fast = _dump_with(data, _FastDumper)
        if "\\U" in fast:
            continue
        assert fast == _dump_with(data, _Dumper), data
        compared += 1
    assert compared > 2000


@pytest.mark.parametrize("data", [
    {"title": "Cake 🙂 recipe", "id": "x"},  # libyaml would escape the emoji
    {"weird\nkey": "value", "id": "x"},  # libyaml would write a complex `? ` key
    {"title": "a literal \\U0001F642 in text"},
])
def test_what_libyaml_writes_differently_takes_the_python_emitter(data):
    assert _dump(data) == _dump_with(data, _Dumper)


@pytest.mark.parametrize("path", sorted(GOLDEN.glob("*.md")), ids=lambda p: p.name)
def test_golden_files_render_to_the_same_bytes_as_with_the_python_emitter_alone(path, monkeypatch):
    node = parse(path.read_text(encoding="utf-8"))
    fast = render(node)
    monkeypatch.setattr(markdown, "_CSafeDumper", None)
    assert fast == render(node)
