"""plain_data: an evidence event's data as plain JSON values, the one copy the day file's line and the evidence
index both use."""

from __future__ import annotations

from memory.domain.evidence import plain_data
from memory.domain.node import FrozenMapping


def test_mappings_become_dicts_with_text_keys_and_tuples_lists():
    data = FrozenMapping({"files": ("a.py", "b.py"), "nested": FrozenMapping({1: [("x", 2)]}), "n": 3, "s": None})
    assert plain_data(data) == {"files": ["a.py", "b.py"], "nested": {"1": [["x", 2]]}, "n": 3, "s": None}


def test_a_plain_value_is_itself():
    assert [plain_data(v) for v in ("text", 1.5, True, None)] == ["text", 1.5, True, None]
